/**
 * Live status streams are capped per client address (SSE_MAX_STREAMS_PER_ADDRESS, 429 beyond), and
 * opening and closing thousands of them leaves no memory behind. The heap is measured in this process,
 * which holds both the service and the clients, after forced collections: whatever either side kept of
 * a closed stream would show: a stream holds about 10 KiB while open (README "Benchmarks"), and the bound is
 * 3 KiB per stream opened. (3,000 streams, 1,000 open at once: 10–30 s on two busy cores. Three rounds of
 * 3,000 under a bound of 20 % of the heap caught the same leaks, from about 2.9 KiB a stream, in three times the time.)
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { type ClientRequest, request as httpRequest } from "node:http"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import type { Payment } from "../../domain/Payments.ts"
import { createPayment, newMerchant } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const STREAMS_PER_ROUND = 1000

/** A pending payment to follow. */
const pendingPayment = (app: TestAppShape) =>
  Effect.gen(function*() {
    const { key } = yield* newMerchant(app)
    const payment = yield* createPayment(app, key, { amount: "2.00", expires_in: 3600 })
    return payment.id
  })

interface OpenedStream {
  readonly status: number
  readonly retryAfter: string | undefined
  readonly body: string
  /** Closes the connection, as a browser leaving the page does. */
  readonly close: () => void
}

/**
 * Opens `GET /checkout/{id}/events` from `localAddress` on a connection of its own, and answers once
 * the status line and the first bytes of the body are in (a 429's whole body). Raw: the typed client
 * can neither pick the local address nor hold a stream open, and hides `Retry-After`.
 */
const openStream = (app: TestAppShape, paymentId: Payment["id"], localAddress = "127.0.0.1") =>
  Effect.async<OpenedStream>((resume) => {
    const url = new URL(`/checkout/${paymentId}/events`, app.baseUrl)
    let request: ClientRequest | undefined = undefined
    const close = () => request?.destroy()
    request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, localAddress, agent: false }, (response) => {
      const retryAfter = response.headers["retry-after"]
      const status = response.statusCode ?? 0
      if (status !== 200) {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (body += chunk))
        response.on("end", () => resume(Effect.succeed({ status, retryAfter, body, close })))
        return
      }
      response.once("data", (chunk: Buffer) =>
        resume(Effect.succeed({ status, retryAfter, body: chunk.toString("utf8"), close })))
      // A stream cut by close() is not an error here.
      response.on("error", () => {})
    })
    request.on("error", () => {})
    request.end()
  })

/** The garbage collector, reachable without starting node with --expose-gc. */
const collectGarbage = (): (() => void) => {
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
}

const settledHeapUsed = (gc: () => void) =>
  Effect.gen(function*() {
    // Let closed connections finish closing, then collect more than once (finalizers free more).
    yield* Effect.sleep("500 millis")
    for (let pass = 0; pass < 4; pass++) {
      gc()
      yield* Effect.sleep("50 millis")
    }
    return process.memoryUsage().heapUsed
  })

describe("live status streams", () => {
  layer(testAppLayer({ sseMaxStreamsPerAddress: 3 }), { timeout: 60_000, excludeTestServices: true })(
    "with at most 3 per address",
    (it) => {
      it.effect("refuses a fourth stream from one address with 429, and takes one again once a stream closes", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const paymentId = yield* pendingPayment(app)
          const open = yield* Effect.forEach([1, 2, 3], () => openStream(app, paymentId))
          expect(open.map((stream) => stream.status)).toEqual([200, 200, 200])
          expect(open[0]!.body).toContain("retry:")

          const refused = yield* openStream(app, paymentId)
          expect(refused.status).toBe(429)
          expect(Number(refused.retryAfter)).toBeGreaterThan(0)
          expect(JSON.parse(refused.body)).toMatchObject({ error: { code: "rate_limited" } })
          // Another address has slots of its own.
          const elsewhere = yield* openStream(app, paymentId, "127.0.0.2")
          expect(elsewhere.status).toBe(200)

          open[0]!.close()
          let again = yield* openStream(app, paymentId)
          for (let attempt = 0; again.status === 429 && attempt < 40; attempt++) {
            yield* Effect.sleep("50 millis")
            again = yield* openStream(app, paymentId)
          }
          expect(again.status).toBe(200)
          for (const stream of [...open, elsewhere, again]) stream.close()
        }))
    }
  )

  layer(testAppLayer({ sseMaxStreamsPerAddress: 5000 }), { timeout: 300_000, excludeTestServices: true })(
    "opened and closed by the thousand",
    (it) => {
      it.effect("leave no more than 3 KiB of heap per stream after three rounds of 1,000", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const gc = collectGarbage()
          const paymentId = yield* pendingPayment(app)
          const round = (count: number) =>
            Effect.gen(function*() {
              const streams = yield* Effect.forEach(
                Array.from({ length: count }),
                () => openStream(app, paymentId),
                { concurrency: 100 }
              )
              expect(streams.filter((stream) => stream.status === 200)).toHaveLength(count)
              for (const stream of streams) stream.close()
            })
          // A first small round loads and compiles everything a stream touches.
          yield* round(200)
          const before = yield* settledHeapUsed(gc)
          const after: Array<number> = []
          for (let index = 0; index < 3; index++) {
            yield* round(STREAMS_PER_ROUND)
            after.push(yield* settledHeapUsed(gc))
          }
          const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
          const report = `heap ${mib(before)} before, ${after.map(mib).join(" → ")} after each round`
          expect(after[2]! - before, report).toBeLessThanOrEqual(3 * 1024 * 3 * STREAMS_PER_ROUND)
        }), 280_000)
    }
  )
})
