/**
 * The layering of the design, checked on the source so it stays true: `domain/` is the contract that
 * typed clients import on their own, so it must not pull in the server (`src/`) or the process wiring
 * (`runtime/`); `src/` holds the rules and must run under any wiring, so it must not reach into `runtime/`.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"

const root = resolve(import.meta.dirname, "..", "..")
const layers = ["domain", "src", "runtime"] as const
type Layer = (typeof layers)[number]

/**
 * What each layer must never import. Migrations are history: running code owns its names and constants, and a
 * migration keeps the literal values it wrote, so today's code never depends on how a table came to be.
 */
const forbidden: Record<Layer, ReadonlyArray<string>> = {
  domain: ["src", "runtime", "migrations"],
  src: ["runtime", "migrations"],
  runtime: []
}

// An import or re-export clause is identifiers, braces, commas, `*`, `as` and `type`: limiting the clause to
// those characters keeps a match from running on from an unrelated `export const …` into a later string.
const staticImport = /^\s*(?:import|export)\s+(?:type\s+)?[\w$*\s{},]*?\bfrom\s*["']([^"']+)["']/gm
const sideEffectImport = /^\s*import\s*["']([^"']+)["']/gm
const dynamicImport = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g

const specifiersOf = (source: string): ReadonlyArray<string> =>
  [staticImport, sideEffectImport, dynamicImport].flatMap((pattern) =>
    Array.from(source.matchAll(pattern), (match) => match[1]!)
  )

const typeScriptFilesUnder = (layer: Layer): ReadonlyArray<string> =>
  readdirSync(join(root, layer), { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts"))
    .map((path) => join(root, layer, path))

/** The top-level folder a relative specifier of `file` lands in; packages (`effect`, `node:fs`) have none. */
const layerOf = (file: string, specifier: string): string | undefined =>
  specifier.startsWith(".") ? relative(root, resolve(dirname(file), specifier)).split(sep)[0] : undefined

const importsOf = (layer: Layer) =>
  typeScriptFilesUnder(layer).flatMap((file) =>
    specifiersOf(readFileSync(file, "utf8")).map((specifier) => ({
      file: relative(root, file),
      specifier,
      target: layerOf(file, specifier)
    }))
  )

describe("layering", () => {
  it("finds the imports it checks (a scanner that sees nothing would pass anything)", () => {
    expect(importsOf("src").some((i) => i.target === "domain")).toBe(true)
    expect(importsOf("runtime").some((i) => i.target === "src")).toBe(true)
    expect(specifiersOf(`import {\n  a,\n  type B\n} from "../src/x.ts"\nexport * from "./y.ts"`)).toEqual([
      "../src/x.ts",
      "./y.ts"
    ])
  })

  for (const layer of layers) {
    const banned = forbidden[layer]
    if (banned.length === 0) continue
    it(`nothing in ${layer}/ imports from ${banned.map((b) => `${b}/`).join(" or ")}`, () => {
      const violations = importsOf(layer)
        .filter((i) => i.target !== undefined && banned.includes(i.target))
        .map((i) => `${i.file} imports ${i.specifier}`)
      expect(violations).toEqual([])
    })
  }
})
