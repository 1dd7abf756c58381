/**
 * `GET /`: JSON for programs, a small page for browsers, both pointing to /docs, /openapi.json,
 * /console and /health. The page is opened in Chromium (skipped without /usr/bin/chromium), checked
 * with axe-core and screenshotted under test-output/.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import { createRequire } from "node:module"
import { API_VERSION } from "../../domain/Version.ts"
import { HAS_CHROMIUM, launchChromium } from "../support/Browser.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const axePath = createRequire(import.meta.url).resolve("axe-core/axe.min.js")

describe("the service's root", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("GET /", (it) => {
    it.effect("answers JSON pointing to the reference, the console and the health check", () =>
      Effect.gen(function*() {
        const { fetch } = yield* TestApp
        const response = yield* Effect.promise(() => fetch("/"))
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("application/json")
        expect(yield* Effect.promise(() => response.json())).toEqual({
          object: "service",
          name: "Merchant payments and loyalty API",
          api_version: API_VERSION,
          links: { docs: "/docs", openapi: "/openapi.json", console: "/console", health: "/health" }
        })
        const wrongMethod = yield* Effect.promise(() => fetch("/", { method: "DELETE" }))
        expect(wrongMethod.status).toBe(405)
        expect(wrongMethod.headers.get("allow")).toBe("GET")
      }))

    it.effect("answers a browser with a page of the same links", () =>
      Effect.gen(function*() {
        const { fetch } = yield* TestApp
        const response = yield* Effect.promise(() => fetch("/", { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } }))
        expect(response.headers.get("content-type")).toContain("text/html")
        const html = yield* Effect.promise(() => response.text())
        for (const href of ["/docs", "/openapi.json", "/console", "/health"]) expect(html).toContain(`href="${href}"`)
      }))

    it.effect.skipIf(!HAS_CHROMIUM)("is accessible in Chromium (axe-core: no serious or critical violation)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const browser = yield* Effect.promise(() => launchChromium())
        try {
          const page = yield* Effect.promise(() => browser.newPage())
          yield* Effect.promise(() => page.goto(`${app.baseUrl}/`))
          expect(yield* Effect.promise(() => page.locator("a[href='/docs']").textContent())).toContain("API reference")
          // The page's CSP admits only its own nonce; axe is injected through the browser's protocol instead.
          yield* Effect.promise(() => page.context().addInitScript({ path: axePath }))
          yield* Effect.promise(() => page.reload())
          const violations = yield* Effect.promise(() =>
            page.evaluate(async () => {
              const result = await (globalThis as any).axe.run()
              return result.violations.filter((violation: any) => violation.impact === "serious" || violation.impact === "critical")
                .map((violation: any) => `${violation.id}: ${violation.help}`)
            })
          )
          expect(violations).toEqual([])
          mkdirSync("test-output/system", { recursive: true })
          yield* Effect.promise(() => page.screenshot({ path: "test-output/system/home.png", fullPage: true }))
        } finally {
          yield* Effect.promise(() => browser.close())
        }
      }))
  })
})
