/**
 * The live status stream is answered by the Node server itself (runtime/StatusStreams.ts), not by the
 * Effect handler, so its request fiber does not live as long as the stream. From outside it must be a
 * route like any other: the request id echoed, one access-log line with status and duration when the
 * stream is over (499 when the client left first), errors in the shared envelope, and the methods it does
 * not take still answered by the HttpApi.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { createPayment, newMerchant, simulate } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const logs: Array<string> = []
const PING_SECONDS = 2

describe("live status route", () => {
  // Pings every 2 s rather than 15: the re-read that comes with them is what the last test waits for.
  layer(testAppLayer({ ssePingSeconds: PING_SECONDS }, { logs }), { timeout: 60_000, excludeTestServices: true })("served by the Node server", (it) => {
    it.effect("echoes the request id, streams until the end, and logs one line when the stream is over", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const payment = yield* createPayment(app, key)
        const response = yield* Effect.promise(() =>
          app.fetch(`/checkout/${payment.id}/events`, { headers: { "x-request-id": "stream-check-1" } })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toBe("text/event-stream")
        expect(response.headers.get("x-request-id")).toBe("stream-check-1")
        const text = Effect.promise(() => response.text())
        yield* simulate(app, key, payment.id, "scanned")
        yield* simulate(app, key, payment.id, "paid")
        expect(yield* text).toContain(`"status":"paid"`)
        const lines = logs.filter((line) => line.includes("request_id=stream-check-1"))
        expect(lines).toHaveLength(1)
        expect(lines[0]).toContain(`GET /checkout/${payment.id}/events 200`)
        expect(lines[0]).toMatch(/duration_ms=[\d.]+/)
      }))

    it.effect("logs a stream the client left before its end as 499, once", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const payment = yield* createPayment(app, key)
        const controller = new AbortController()
        const response = yield* Effect.promise(() =>
          app.fetch(`/checkout/${payment.id}/events`, { headers: { "x-request-id": "stream-left-1" }, signal: controller.signal })
        )
        expect(response.status).toBe(200)
        const reader = response.body!.getReader()
        yield* Effect.promise(() => reader.read())
        expect(logs.filter((line) => line.includes("request_id=stream-left-1"))).toEqual([])
        controller.abort()
        const logged = Effect.sync(() => logs.filter((line) => line.includes("request_id=stream-left-1")))
        yield* logged.pipe(
          Effect.repeat({ until: (lines) => lines.length > 0, schedule: Schedule.spaced(Duration.millis(20)) }),
          Effect.timeout(Duration.seconds(10))
        )
        yield* Effect.sleep(Duration.millis(100))
        const lines = yield* logged
        expect(lines).toHaveLength(1)
        expect(lines[0]).toContain(`GET /checkout/${payment.id}/events 499`)
        expect(lines[0]).toContain("status=499")
      }))

    it.effect("gives a fresh request id when the client's is not a sane one, and 404 in the envelope for an unknown payment", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const response = yield* Effect.promise(() =>
          app.fetch(`/checkout/pay_unknown%20id/events/`, { headers: { "x-request-id": "bad id with spaces" } })
        )
        expect(response.status).toBe(404)
        expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
        const body = (yield* Effect.promise(() => response.json())) as { error: { code: string; message: string } }
        expect(body.error.code).toBe("not_found")
        expect(body.error.message).toContain("pay_unknown id")
      }))

    it.effect("leaves other methods on the path to the HttpApi", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const payment = yield* createPayment(app, key)
        const post = yield* Effect.promise(() => app.fetch(`/checkout/${payment.id}/events`, { method: "POST" }))
        expect(post.status).toBe(405)
        expect(post.headers.get("allow")).toContain("GET")
        const head = yield* Effect.promise(() => app.fetch(`/checkout/${payment.id}/events`, { method: "HEAD" }))
        yield* Effect.promise(() => head.arrayBuffer())
        expect(head.status).toBe(200)
        expect(head.headers.get("content-type")).toBe("text/event-stream")
      }))

    // A change's notice is sent after its commit, so it is lost if the process that made it dies in
    // between (src/platform/ChangeFeed.ts): the stream's re-read with each ping still brings it.
    it.effect("a change whose notice never came reaches the stream with the next ping's re-read", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const { key } = yield* newMerchant(app)
        const payment = yield* createPayment(app, key)
        const controller = new AbortController()
        const response = yield* Effect.promise(() => app.fetch(`/checkout/${payment.id}/events`, { signal: controller.signal }))
        const reader = response.body!.getReader()
        let received = ""
        const readUntil = (text: string) =>
          Effect.promise(async () => {
            while (!received.includes(text)) {
              const chunk = await reader.read()
              if (chunk.done) break
              received += new TextDecoder().decode(chunk.value)
            }
            return received.includes(text)
          })
        expect(yield* readUntil(`"status":"pending"`)).toBe(true)
        // A quiet stream is pinged (a comment line), so proxies keep it open.
        expect(yield* readUntil(": ping\n\n").pipe(Effect.timeout(Duration.seconds(PING_SECONDS + 5)))).toBe(true)
        // Paid behind the engine's back: no entity, no notice.
        yield* sql`UPDATE payments SET status = 'paid', paid_at = now(), version = version + 1 WHERE id = ${payment.id}`
        const started = Date.now()
        expect(yield* readUntil(`"status":"paid"`).pipe(Effect.timeout(Duration.seconds(PING_SECONDS + 5)))).toBe(true)
        expect(Date.now() - started).toBeLessThanOrEqual((PING_SECONDS + 5) * 1000)
        controller.abort()
      }), 60_000)
  })
})
