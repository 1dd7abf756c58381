import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { signUp } from "../support/Accounts.ts"
import { newMerchant } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const logs: Array<string> = []

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
        // An unsafe id is replaced by a fresh one (a generated id may itself contain the letters "bad").
        expect(unsafe.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      }))
  })

  // One line per request, written by the server when the response is over (runtime/AccessLog.ts): the
  // request id the response carries, the status, the duration and, once authenticated, who asked; and the
  // same id on every other line logged while the request was handled.
  layer(testAppLayer({}, { logs }), { timeout: 120_000, excludeTestServices: true })("the access log", (it) => {
    const linesOf = (requestId: string) => logs.filter((line) => line.includes(`request_id=${requestId}`))

    it.effect("writes one line per request with its id, status, duration and actor", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const health = yield* Effect.promise(() => app.fetch("/health", { headers: { "x-request-id": "access-health" } }))
        expect(health.status).toBe(200)
        expect(linesOf("access-health")).toHaveLength(1)
        expect(linesOf("access-health")[0]).toMatch(/level=INFO .*message="GET \/health 200 [\d.]+ms" .*status=200/)
        expect(linesOf("access-health")[0]).toMatch(/duration_ms=[\d.]+/)
        expect(linesOf("access-health")[0]).not.toContain("actor=")

        const missing = yield* Effect.promise(() => app.fetch("/no/such/path?x=1", { headers: { "x-request-id": "access-missing" } }))
        expect(missing.status).toBe(404)
        expect(linesOf("access-missing")).toHaveLength(1)
        expect(linesOf("access-missing")[0]).toContain(`message="GET /no/such/path 404`)

        const { key } = yield* newMerchant(app)
        const listed = yield* Effect.promise(() =>
          app.fetch("/v1/payments?limit=1", { headers: { authorization: `Bearer ${key}`, "x-request-id": "access-list" } })
        )
        expect(listed.status).toBe(200)
        expect(linesOf("access-list")).toHaveLength(1)
        expect(linesOf("access-list")[0]).toMatch(/actor=key_\w+/)

        const generated = yield* Effect.promise(() => app.fetch("/docs"))
        expect(generated.status).toBe(200)
        const id = generated.headers.get("x-request-id")!
        expect(linesOf(id)).toHaveLength(1)
        expect(linesOf(id)[0]).toContain(`message="GET /docs 200`)
      }))

    it.effect("gives the request's id to what is logged while it is handled", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const owner = yield* Effect.promise(() => signUp(app))
        const response = yield* Effect.promise(() =>
          app.fetch("/auth/forgot-password", {
            method: "POST",
            headers: { "content-type": "application/json", "x-request-id": "access-mail" },
            body: JSON.stringify({ email: owner.email })
          })
        )
        expect(response.status).toBe(201)
        // The reset mail is queued by a fiber the request forks (the answer takes the same time either way).
        const queued = Effect.sync(() => linesOf("access-mail").filter((line) => line.includes(`message="mail queued"`)))
        yield* queued.pipe(
          Effect.repeat({ until: (lines) => lines.length > 0, schedule: Schedule.spaced(Duration.millis(20)) }),
          Effect.timeout(Duration.seconds(10))
        )
        expect(yield* queued).toHaveLength(1)
        expect(linesOf("access-mail").filter((line) => line.includes("message=\"POST /auth/forgot-password 201"))).toHaveLength(1)
      }))
  })
})
