import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const json = (response: Response) => response.json() as Promise<any>

describe("HTTP platform", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("the running service", (it) => {
    it.effect("answers /health and /ready through the typed client", () =>
      Effect.gen(function*() {
        const { client } = yield* TestApp
        expect(yield* client.system.health()).toEqual({ status: "ok" })
        const ready = yield* client.system.ready()
        expect(ready.checks).toEqual({ database: "ok", cluster: "ok" })
      }))

    it.effect("serves a valid OpenAPI 3.1 document and the interactive reference", () =>
      Effect.gen(function*() {
        const { fetch } = yield* TestApp
        const doc = yield* Effect.promise(() => fetch("/openapi.json").then(json))
        expect(doc.openapi).toBe("3.1.0")
        expect(doc.paths["/health"].get.responses["200"]).toBeDefined()
        expect(doc.paths["/ready"].get.responses["503"]).toBeDefined()
        const docs = yield* Effect.promise(() => fetch("/docs"))
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type")).toContain("text/html")
        expect(yield* Effect.promise(() => docs.text())).toContain("openapi")
      }))

    it.effect("answers an unknown path with 404 not_found in the shared shape", () =>
      Effect.gen(function*() {
        const { fetch } = yield* TestApp
        const response = yield* Effect.promise(() => fetch("/no/such/route"))
        expect(response.status).toBe(404)
        expect(yield* Effect.promise(() => json(response))).toEqual({
          error: { code: "not_found", message: "No route for GET /no/such/route" }
        })
      }))

    it.effect("answers a known path with the wrong method with 405 and Allow", () =>
      Effect.gen(function*() {
        const { fetch } = yield* TestApp
        const response = yield* Effect.promise(() => fetch("/health", { method: "DELETE" }))
        expect(response.status).toBe(405)
        expect(response.headers.get("allow")).toBe("GET")
        const body = yield* Effect.promise(() => json(response))
        expect(body.error.code).toBe("method_not_allowed")
      }))

    it.effect("gives every response a request id and echoes a caller's", () =>
      Effect.gen(function*() {
        const { fetch } = yield* TestApp
        const generated = yield* Effect.promise(() => fetch("/health"))
        expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
        const echoed = yield* Effect.promise(() => fetch("/health", { headers: { "x-request-id": "req-123" } }))
        expect(echoed.headers.get("x-request-id")).toBe("req-123")
        const unsafe = yield* Effect.promise(() => fetch("/health", { headers: { "x-request-id": "bad id\twith spaces" } }))
        expect(unsafe.headers.get("x-request-id")).not.toContain("bad")
      }))
  })
})
