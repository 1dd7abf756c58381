/**
 * Webhook delivery throughput: how many signed deliveries per second the dispatcher makes to a local
 * receiver that answers 200 at once.
 *
 *   npx tsx bench/webhooks.ts
 *
 * Starts the whole service on a fresh database (the PostgreSQL at TEST_DATABASE_URL, default the local
 * server; the embedded database when none answers or TEST_DATABASE=embedded), registers endpoints
 * through the API, writes BENCH_EVENTS events (default 2000) straight into the outbox in one
 * transaction, as payments would, and times them from that commit until every one has been received
 * and recorded as delivered. Each scenario spreads the events over 1, then BENCH_ENDPOINTS (default 8)
 * endpoints, one per store: one endpoint is delivered to strictly one event at a time; several go in
 * parallel.
 */
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { ServiceLive } from "../runtime/App.ts"
import { newId } from "../src/platform/Ids.ts"
import { createStore, signUp } from "../test/support/Accounts.ts"
import type { TestAppShape } from "../test/support/TestApp.ts"
import { testConfigLayer } from "../test/support/TestApp.ts"
import { TestDatabase } from "../test/support/TestDatabase.ts"

const EVENTS = Number(process.env["BENCH_EVENTS"] ?? 2000)
const ENDPOINTS = Number(process.env["BENCH_ENDPOINTS"] ?? 8)

/** A receiver that answers 200 at once and counts what it receives. */
const startReceiver = Effect.acquireRelease(
  Effect.async<{ url: string; received: () => number; first: () => { body: string; headers: any } | undefined; close: () => void }>(
    (resume) => {
      let received = 0
      let first: { body: string; headers: any } | undefined
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          received++
          first ??= { body: Buffer.concat(chunks).toString("utf8"), headers: request.headers }
          response.writeHead(200).end()
        })
      })
      server.keepAliveTimeout = 60_000
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          url: `http://127.0.0.1:${port}/bench`,
          received: () => received,
          first: () => first,
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }
  ),
  (receiver) => Effect.sync(receiver.close)
)

const serviceLayer = ServiceLive.pipe(
  Layer.provideMerge(testConfigLayer({ webhookAllowPrivateNetworks: true })),
  Layer.provideMerge(TestDatabase.layer),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const postJson = async (app: TestAppShape, path: string, token: string, body: unknown) => {
  const response = await app.fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body)
  })
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`)
  return await response.json() as any
}

const scenario = (app: TestAppShape, sql: SqlClient.SqlClient, endpointCount: number) =>
  Effect.scoped(Effect.gen(function*() {
    const receiver = yield* startReceiver
    const owner = yield* Effect.promise(() => signUp(app))
    const stores: Array<{ storeId: string; secret: string }> = []
    for (let i = 0; i < endpointCount; i++) {
      const store = yield* Effect.promise(() => createStore(app, owner.token, `Bench store ${i + 1}`))
      const endpoint = yield* Effect.promise(() =>
        postJson(app, "/webhook-endpoints", owner.token, { store_id: store.id, url: receiver.url, events: ["*"] })
      )
      stores.push({ storeId: store.id, secret: endpoint.secret })
    }
    const storeIds = stores.map((store) => store.storeId)
    const runId = newId("evt").slice(4, 12)

    const started = performance.now()
    // One transaction, as if EVENTS payments had been paid at once; events round-robin over the stores.
    yield* sql`
      INSERT INTO outbox (event_id, store_id, livemode, type, payload)
      SELECT 'evt_bench_' || ${runId} || '_' || n, s.store_id, false, 'payment.completed',
        jsonb_build_object(
          'id', 'evt_bench_' || ${runId} || '_' || n, 'object', 'event', 'type', 'payment.completed',
          'created_at', now(), 'livemode', false,
          'data', jsonb_build_object('object', jsonb_build_object('id', 'pay_bench_' || n, 'object', 'payment',
            'amount', '12.50', 'currency', 'USD', 'reference_id', 'order-' || n, 'status', 'paid')))
      FROM generate_series(1, ${EVENTS}) AS n
      JOIN (SELECT store_id, ordinality - 1 AS slot FROM unnest(${storeIds}::text[]) WITH ORDINALITY AS t(store_id, ordinality)) s
        ON s.slot = n % ${endpointCount}`

    while (true) {
      if (receiver.received() >= EVENTS) {
        const rows = yield* sql<{ done: string }>`
          SELECT count(*) AS done FROM webhook_jobs j JOIN webhook_endpoints e ON e.id = j.endpoint_id
          WHERE e.store_id = ANY (${storeIds}::text[]) AND j.status = 'succeeded'`
        if (Number(rows[0]?.done ?? 0) >= EVENTS) break
      }
      yield* Effect.sleep("10 millis")
    }
    const seconds = (performance.now() - started) / 1000

    const sample = receiver.first()
    const verified = sample !== undefined && stores.some((store) => {
      try {
        new Webhook(store.secret).verify(sample.body, sample.headers)
        return true
      } catch {
        return false
      }
    })
    if (!verified) return yield* Effect.dieMessage("a received delivery did not verify")
    const perSecond = Math.round(EVENTS / seconds)
    console.log(
      `webhooks: ${EVENTS} events to ${endpointCount} endpoint${endpointCount === 1 ? "" : "s"}: ` +
        `${seconds.toFixed(2)} s, ${perSecond} deliveries/s (received ${receiver.received()})`
    )
    return perSecond
  }))

const main = Effect.scoped(Effect.gen(function*() {
  const context = yield* Layer.build(serviceLayer)
  const server = Context.get(context, HttpServer.HttpServer)
  const database = Context.get(context, TestDatabase)
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${server.address.port}`
  const app = { baseUrl, fetch: (path: string, init?: RequestInit) => fetch(new URL(path, baseUrl), init) } as unknown as TestAppShape
  const sql = Context.get(context, SqlClient.SqlClient)
  console.log(`webhooks: database ${database.kind}, dispatcher defaults (32 endpoints at once, 500 ms poll)`)
  yield* scenario(app, sql, 1)
  if (ENDPOINTS > 1) yield* scenario(app, sql, ENDPOINTS)
}))

Effect.runPromise(main).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
