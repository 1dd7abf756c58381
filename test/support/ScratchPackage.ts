/**
 * A scratch package outside the checkout that depends on this one through a `file:` dependency, as a
 * merchant's project would: its node_modules links `khqr-merchant-platform` to the checkout (what npm
 * does for a `file:` dependency) and the libraries the code there imports to the checkout's copies, so
 * nothing is fetched from a registry.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"

export const checkoutRoot = resolve(import.meta.dirname, "..", "..")

export interface ScratchPackage {
  readonly directory: string
  readonly remove: () => void
}

export const makeScratchPackage = (linked: ReadonlyArray<string>): ScratchPackage => {
  const directory = mkdtempSync(join(tmpdir(), "khqr-scratch-"))
  writeFileSync(
    join(directory, "package.json"),
    JSON.stringify(
      {
        name: "scratch-merchant-backend",
        private: true,
        type: "module",
        dependencies: { "khqr-merchant-platform": `file:${checkoutRoot}` }
      },
      null,
      2
    )
  )
  const link = (name: string, target: string) => {
    const path = join(directory, "node_modules", name)
    mkdirSync(dirname(path), { recursive: true })
    symlinkSync(target, path, "dir")
  }
  link("khqr-merchant-platform", checkoutRoot)
  for (const name of linked) link(name, join(checkoutRoot, "node_modules", name))
  return { directory, remove: () => rmSync(directory, { recursive: true, force: true }) }
}
