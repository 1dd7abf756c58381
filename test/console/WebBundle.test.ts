/**
 * The console's browser bundle, built as `npm run build` builds it: it imports domain/ and UI libraries
 * only (never the server's src/, runtime/ or a Node module), its initial JavaScript is measured, and its
 * HTML names content-hashed assets with no inline script. Its initial JavaScript is the entry and every
 * chunk the entry imports statically.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BARRELS, buildConsole, importModules, initialScripts, markApiGroupsPure, initialScriptsGzipped, namespacesOf } from "../../scripts/build.mjs"

/** The budget for the initial JavaScript, gzipped; bench/console.ts reports the figure against it. */
const INITIAL_JS_BUDGET_KB = 250

const NODE_BUILTINS = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)])

/** Where a module of the bundle comes from, when it is somewhere the browser code must not reach. */
export const forbiddenModule = (path: string): string | undefined => {
  if (path.startsWith("node:") || NODE_BUILTINS.has(path)) return "a Node built-in"
  if (path.startsWith("runtime/")) return "the server's runtime/"
  if (path.startsWith("src/") && !path.startsWith("src/console/web/")) return "the server's src/"
  return undefined
}

describe("console web bundle", () => {
  it("reaches only domain/, src/console/web/ and packages, and stays small", { timeout: 120_000 }, async () => {
    // Built aside: dist/console/ may be serving another suite's browser at this moment.
    const outDir = mkdtempSync(join(tmpdir(), "console-build-"))
    try {
      await check(outDir)
    } finally {
      rmSync(outDir, { recursive: true, force: true })
    }
  })

  const check = async (outDir: string) => {
    const metafile = await buildConsole(outDir)
    const reached: Array<string> = []
    for (const [path, input] of Object.entries(metafile.inputs)) {
      const reason = forbiddenModule(path)
      if (reason !== undefined) reached.push(`${path} (${reason})`)
      for (const imported of input.imports) {
        const importReason = forbiddenModule(imported.path)
        if (importReason !== undefined) reached.push(`${path} imports ${imported.path} (${importReason})`)
      }
    }
    expect(reached).toEqual([])
    expect(Object.keys(metafile.inputs).some((path) => path.startsWith("domain/"))).toBe(true)

    const html = readFileSync(join(outDir, "index.html"), "utf8")
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(html).not.toMatch(/\sstyle=/)
    const script = /src="\/console\/assets\/(app-[A-Z0-9]+\.js)"/.exec(html)?.[1]
    expect(script).toBeDefined()
    // What the first screen needs: the entry and every chunk it imports statically (pages load later).
    const initial = initialScripts(metafile)
    expect(initial.some((path: string) => path.endsWith(script!))).toBe(true)
    const gzipped = initialScriptsGzipped(metafile)
    console.info(`console initial JavaScript: ${(gzipped / 1024).toFixed(0)} KB gzipped in ${initial.length} files (budget ${INITIAL_JS_BUDGET_KB} KB)`)
    expect(gzipped).toBeGreaterThan(0)
  }

  it("reads a source's imports of Effect's indexes as imports of their modules", () => {
    const namespaces = new Map(BARRELS.map((pkg) => [pkg, namespacesOf(pkg)]))
    expect(importModules(`import { type Brand, Schema, pipe, Effect as E } from "effect"\nconst x = 1`, namespaces)).toBe(
      `import * as Schema from "effect/Schema"; import * as E from "effect/Effect"; import { pipe } from "effect"\nconst x = 1`
    )
    expect(importModules(`import {\n  HttpApiEndpoint,\n  OpenApi\n} from "@effect/platform"`, namespaces)).toBe(
      `import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"; import * as OpenApi from "@effect/platform/OpenApi"`
    )
    // Type-only imports are left alone: they are gone from the JavaScript anyway.
    expect(importModules(`import type { Scope } from "effect"`, namespaces)).toBe(`import type { Scope } from "effect"`)
  })

  it("marks the REST API's group definitions pure, so the browser's bundle can leave them out", () => {
    expect(markApiGroupsPure(`export class PaymentsGroup extends HttpApiGroup.make("payments")\n  .add(x) {}`)).toBe(
      `export class PaymentsGroup extends /* @__PURE__ */ HttpApiGroup.make("payments")\n  .add(x) {}`
    )
    expect(markApiGroupsPure(`export const Api = HttpApi.make("api").add(PaymentsGroup)`)).toBe(
      `export const Api = /* @__PURE__ */ HttpApi.make("api").add(PaymentsGroup)`
    )
  })

  it("tells the server's modules and Node's from the browser's", () => {
    expect(forbiddenModule("src/payments/Service.ts")).toBe("the server's src/")
    expect(forbiddenModule("runtime/Http.ts")).toBe("the server's runtime/")
    expect(forbiddenModule("node:fs")).toBe("a Node built-in")
    expect(forbiddenModule("crypto")).toBe("a Node built-in")
    expect(forbiddenModule("src/console/web/App.tsx")).toBeUndefined()
    expect(forbiddenModule("domain/Console.ts")).toBeUndefined()
    expect(forbiddenModule("node_modules/react/index.js")).toBeUndefined()
  })
})
