/**
 * The served OpenAPI document as the ecosystem's tools take it: Redocly's linter with its recommended
 * rules finds nothing (beyond the two findings .redocly.lint-ignore.yaml explains), openapi-typescript
 * generates types from it, and each protected operation names the credential it really takes — checked
 * by calling every one of them with a session token and with an API key.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { API_VERSION } from "../../domain/Version.ts"
import { serverUrlOf } from "../../src/system/Reference.ts"
import { makeCall } from "../support/Http.ts"
import { newMerchant } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const root = resolve(import.meta.dirname, "..", "..")
const bin = (name: string) => join(root, "node_modules", ".bin", name)
const run = promisify(execFile)
const call = makeCall()

/** A directory holding the served document as openapi.json, beside the project's Redocly configuration. */
const lintDirectoryOf = (document: unknown) => {
  const directory = mkdtempSync(join(tmpdir(), "openapi-"))
  writeFileSync(join(directory, "openapi.json"), JSON.stringify(document))
  copyFileSync(join(root, "redocly.yaml"), join(directory, "redocly.yaml"))
  copyFileSync(join(root, ".redocly.lint-ignore.yaml"), join(directory, ".redocly.lint-ignore.yaml"))
  return directory
}

const operationsOf = (document: any) =>
  Object.entries<any>(document.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operation
    }))
  )

describe("the OpenAPI document and the tools", () => {
  describe("its server", () => {
    it("is PUBLIC_BASE_URL as configured, localhost written as the loopback address", () => {
      expect(serverUrlOf("https://pay.example.com/")).toBe("https://pay.example.com")
      expect(serverUrlOf("https://pay.example.com/khqr/")).toBe("https://pay.example.com/khqr")
      expect(serverUrlOf("http://localhost:3000")).toBe("http://127.0.0.1:3000")
    })
  })

  layer(testAppLayer(), { timeout: 180_000, excludeTestServices: true })("served at /openapi.json", (it) => {
    const documentOf = Effect.gen(function*() {
      const { fetch } = yield* TestApp
      return yield* Effect.promise(() => fetch("/openapi.json").then((response) => response.json() as Promise<any>))
    })

    it.effect("names the server it was fetched from, the API version and a license", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const document = yield* documentOf
        expect(document.servers).toEqual([{ url: app.baseUrl, description: "This service" }])
        expect(document.info.version).toBe(API_VERSION)
        expect(document.info.license.name).toEqual(expect.any(String))
        for (const tag of document.tags) expect(tag.description, tag.name).toEqual(expect.any(String))
      }))

    it.effect("documents numeric query parameters as integers", () =>
      Effect.gen(function*() {
        const document = yield* documentOf
        const limit = document.paths["/v1/payments"].get.parameters.find((parameter: any) => parameter.name === "limit")
        expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, default: 20 })
        const days = document.paths["/dashboard/stores/{storeId}/analytics/forecast"].get.parameters
          .find((parameter: any) => parameter.name === "days")
        expect(days.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 90 })
      }))

    it.effect("passes redocly lint with the recommended rules: 0 errors, 0 warnings", () =>
      Effect.gen(function*() {
        const directory = lintDirectoryOf(yield* documentOf)
        try {
          const { stdout } = yield* Effect.promise(() =>
            run(bin("redocly"), ["lint", "openapi.json", "--format=json"], { cwd: directory, maxBuffer: 64 * 1024 * 1024 })
              .catch((failure) => ({ stdout: String(failure.stdout) }))
          )
          const report = JSON.parse(stdout)
          expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
          // Exactly the two findings the ignore file explains, and nothing else hidden.
          expect(report.totals.ignored).toBe(2)
        } finally {
          rmSync(directory, { recursive: true, force: true })
        }
      }), 120_000)

    it.effect("generates TypeScript types with openapi-typescript from the served document", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const directory = mkdtempSync(join(tmpdir(), "openapi-ts-"))
        try {
          const output = join(directory, "api.d.ts")
          yield* Effect.promise(() =>
            run(bin("openapi-typescript"), [`${app.baseUrl}/openapi.json`, "-o", output, "--redocly", join(root, "redocly.yaml")])
          )
          const types = readFileSync(output, "utf8")
          expect(types).toContain(`"/v1/payments": {`)
          expect(types).toMatch(/limit\?: number/)
        } finally {
          rmSync(directory, { recursive: true, force: true })
        }
      }), 120_000)

    it.effect("names on each protected operation the credentials it takes, and only those", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const document = yield* documentOf
        expect(Object.keys(document.components.securitySchemes).sort()).toEqual(["apiKey", "metricsToken", "session"])
        const merchant = yield* newMerchant(app)
        const sessionRefused = /needs an API key/
        const apiKeyRefused = /needs a user session token|An API key cannot/
        let checked = 0
        for (const { method, operation, path } of operationsOf(document)) {
          if (operation.security.length === 0 || path === "/metrics") continue
          const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) =>
            /store/i.test(name)
              ? merchant.storeId
              : /org/i.test(name)
              ? merchant.owner.organizationId
              : name === "key"
              ? "bakong_api_token"
              : name === "channel"
              ? "sms"
              : "x_missing")
          const body = operation.requestBody?.content?.["application/json"]?.example
          // The store's id where a query names a store, and each other required query parameter's example.
          const query = new URLSearchParams(
            operation.parameters
              .filter((parameter: any) => parameter.in === "query" && (parameter.required || parameter.name === "store_id"))
              .map((parameter: any) => [
                parameter.name,
                parameter.name === "store_id"
                  ? merchant.storeId
                  : String(parameter.schema.examples?.[0] ?? parameter.schema.enum?.[0] ?? "")
              ])
          ).toString()
          const asSession = yield* call(app, method, query === "" ? concrete : `${concrete}?${query}`, { token: merchant.owner.token, body })
          const asKey = yield* call(app, method, query === "" ? concrete : `${concrete}?${query}`, { token: merchant.key, body })
          const documented = operation.security.map((requirement: object) => Object.keys(requirement)[0])
          const name = `${method} ${path}`
          expect(documented.includes("session"), `${name}: ${asSession.status} ${asSession.body?.error?.message}`)
            .toBe(!(asSession.status === 403 && sessionRefused.test(asSession.body.error.message)))
          expect(documented.includes("apiKey"), `${name}: ${asKey.status} ${asKey.body?.error?.message}`)
            .toBe(!(asKey.status === 403 && apiKeyRefused.test(asKey.body.error.message)))
          checked++
        }
        expect(checked).toBeGreaterThan(150)
        expect(document.paths["/metrics"].get.security).toEqual([{ metricsToken: [] }, { session: [] }])
      }), 120_000)

    it.effect("answers every response with the API version header", () =>
      Effect.gen(function*() {
        const { fetch } = yield* TestApp
        for (const path of ["/health", "/openapi.json", "/no-such-path", "/checkout/pay_missing/events"]) {
          const response = yield* Effect.promise(() => fetch(path))
          yield* Effect.promise(() => response.arrayBuffer())
          expect(response.headers.get("api-version"), path).toBe(API_VERSION)
        }
      }))
  })
})
