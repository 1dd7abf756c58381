/**
 * scripts/stacks.mjs: `npm start` runs the bundle without `--enable-source-maps`, and stacks through the
 * bundle still name the sources' files and lines, read from the bundle's map only once the bundle has
 * loaded. Each case runs in a child process, since the mapping is process-wide (`Error.prepareStackTrace`).
 */
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const STACKS = fileURLToPath(new URL("../../scripts/stacks.mjs", import.meta.url))

// Lines of the source that the stacks must name (1-based).
const SOURCE = [
  "// a module of the product, as the bundle carries it",
  "const padding = [1, 2, 3].map((n) => n * 2)",
  "",
  "export const stackAtLoad = new Error(\"while loading\").stack",
  "",
  "const inner = (label: string): never => {",
  "  throw new Error(`failed: ${label} ${padding.length}`)",
  "}",
  "",
  "export const failDeep = () => inner(\"deep\")",
  ""
].join("\n")
const THROW_LINE = 7
const CALL_LINE = 10

const RUNNER = `
import { pathToFileURL } from "node:url"
import { mapStacksOf } from ${JSON.stringify(STACKS)}
const bundle = process.argv[2]
const loaded = mapStacksOf(bundle)
const module = await import(pathToFileURL(bundle).href)
loaded()
let deep
try {
  module.failDeep()
} catch (error) {
  deep = error.stack
}
console.log(JSON.stringify({ atLoad: module.stackAtLoad, deep }))
`

let dir: string
let bundle: string

const stacksOf = (): { atLoad: string; deep: string } =>
  JSON.parse(execFileSync(process.execPath, [join(dir, "runner.mjs"), bundle], { encoding: "utf8" }))

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "stacks-test-"))
  writeFileSync(join(dir, "thrower.ts"), SOURCE)
  writeFileSync(join(dir, "entry.ts"), "export * from \"./thrower.ts\"\n")
  writeFileSync(join(dir, "runner.mjs"), RUNNER)
  bundle = join(dir, "dist", "bundle.mjs")
  // As scripts/build.mjs bundles the service: a map beside the bundle, without the sources' text, and a
  // banner that moves every line of the bundle away from its source line.
  await build({
    absWorkingDir: dir,
    entryPoints: [join(dir, "entry.ts")],
    outfile: bundle,
    bundle: true,
    platform: "node",
    format: "esm",
    sourcemap: true,
    sourcesContent: false,
    banner: { js: "// banner\n// banner\n// banner" },
    logLevel: "silent"
  })
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe("stacks of the bundle", () => {
  it("name the source file, line and column of each frame once the bundle has loaded", () => {
    const { deep } = stacksOf()
    const frames = deep.split("\n")
    expect(frames[0]).toBe("Error: failed: deep 3")
    expect(frames[1]).toMatch(new RegExp(`at inner \\(${escape(join(dir, "thrower.ts"))}:${THROW_LINE}:\\d+\\)$`))
    expect(frames[2]).toMatch(new RegExp(`at (Module\\.)?failDeep \\(${escape(join(dir, "thrower.ts"))}:${CALL_LINE}:\\d+\\)$`))
    expect(deep).not.toContain("bundle.mjs")
  })

  it("leave stacks formatted while the bundle loads as they are, so start-up never reads the map", () => {
    const { atLoad } = stacksOf()
    expect(atLoad).toContain("Error: while loading")
    expect(atLoad).toContain("bundle.mjs:")
    expect(atLoad).not.toContain("thrower.ts")
  })

  it("show the bundle's own positions when its map is missing", () => {
    rmSync(`${bundle}.map`)
    const { deep } = stacksOf()
    expect(deep.split("\n")[0]).toBe("Error: failed: deep 3")
    expect(deep.split("\n")[1]).toMatch(/at inner \(file:\/\/.*bundle\.mjs:\d+:\d+\)$/)
  })
})

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
