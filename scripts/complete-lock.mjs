#!/usr/bin/env node
/**
 * Completes package-lock.json with the platform packages of other systems.
 *
 * `npm ci` refuses a lock file that lacks any optional dependency named by a locked package, even one
 * for another platform. npm writes only the platform packages its registry can resolve, and the registry
 * this project is installed from carries the Linux x64 builds only for some of them (deno, rollup,
 * msgpackr-extract), so the lock it writes is refused by `npm ci`. This script adds an entry for every
 * optional dependency still missing, marked optional and with the os/cpu/libc read from its name, so npm
 * skips it on other platforms and installs it where it belongs (an entry without `integrity` is checked
 * against the registry's own at install time).
 *
 * Run it after `npm install` changes the lock: `node scripts/complete-lock.mjs`.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const lockPath = fileURLToPath(new URL("../package-lock.json", import.meta.url))
const lock = JSON.parse(readFileSync(lockPath, "utf8"))
const packages = lock.packages

const OS = ["darwin", "linux", "win32", "android", "freebsd", "openbsd", "netbsd", "openharmony", "sunos", "aix"]
const CPU = ["arm64", "x64", "arm", "ia32", "ppc64", "s390x", "riscv64", "loong64", "mips64el"]

/** The platform a package's name says it is for: `@rollup/rollup-linux-arm64-musl` → linux, arm64, musl. */
const platformOf = (name) => {
  const tokens = name.split("/").pop().split("-")
  const os = tokens.find((token) => OS.includes(token))
  const cpu = tokens.find((token) => CPU.includes(token)) ?? (tokens.includes("eabi") || tokens.includes("gnueabihf") || tokens.includes("musleabihf") ? "arm" : undefined)
  const libc = tokens.some((token) => token === "musl" || token === "musleabihf") ? "musl"
    : os === "linux" && tokens.some((token) => token === "gnu" || token === "glibc" || token === "gnueabihf") ? "glibc"
    : undefined
  return { os, cpu, libc }
}

/** Where npm would place a dependency of the package at `parentPath`: beside it, hoisted to the top. */
const locationOf = (name) => `node_modules/${name}`

let added = 0
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path}/node_modules/${name}`
    if (packages[nested] !== undefined || packages[locationOf(name)] !== undefined) continue
    if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) {
      console.error(`complete-lock: ${name}@${spec} (from ${path || "the project"}) is not an exact version; add it by hand`)
      process.exitCode = 1
      continue
    }
    const { os, cpu, libc } = platformOf(name)
    if (os === undefined || cpu === undefined) {
      console.error(`complete-lock: cannot tell the platform of ${name}; add it by hand`)
      process.exitCode = 1
      continue
    }
    packages[locationOf(name)] = {
      version: spec,
      cpu: [cpu],
      ...(entry.dev === true ? { dev: true } : {}),
      ...(libc !== undefined ? { libc: [libc] } : {}),
      optional: true,
      os: [os]
    }
    added += 1
  }
}

lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))))
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n")
console.log(`complete-lock: ${added} platform package(s) added`)
