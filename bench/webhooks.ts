/**
 * Webhook delivery throughput and latency: how many signed deliveries per second the dispatcher makes to
 * a local receiver that answers 200 at once, and how soon after an event's commit its first attempt
 * arrives.
 *
 *   npx tsx bench/webhooks.ts
 *
 * Starts the whole service on a fresh database (the PostgreSQL at TEST_DATABASE_URL, default the local
 * server; the embedded database when none answers or TEST_DATABASE=embedded) and registers endpoints
 * through the API, one per store, all on one receiver. The receiver is a process of its own, as a
 * receiver elsewhere would be, so its work is not counted against the service's. Events are written as a
 * payment's change writes them — the outbox row (announced by its statement) and the payment change
 * notice in one transaction — on connections of their own (as another node would), not the service's
 * pool. Then:
 *
 * - Burst: BENCH_EVENTS events (default 2000) committed in one transaction, as if that many payments
 *   had been paid at once, timed from that commit until every one has been received and recorded as
 *   delivered; over 1, then over BENCH_ENDPOINTS (default 8) endpoints. One endpoint is delivered to
 *   strictly in order; several go in parallel. Also the service's CPU time per delivery.
 * - Steady stream: BENCH_RATE events per second (default 200), each in a transaction of its own, for
 *   BENCH_STREAM_SECONDS (default 10) over BENCH_ENDPOINTS endpoints. For each event, the time from its
 *   commit to the arrival of its first attempt: p50, p99 and the maximum.
 */
import { HttpServer } from "@effect/platform"
import { Context, Duration, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { loadavg } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { Webhook } from "standardwebhooks"
import { ServiceLive } from "../runtime/App.ts"
import { newId } from "../src/platform/Ids.ts"
import { PAYMENT_CHANNEL } from "../src/payments/Changes.ts"
import { OUTBOX_CHANNEL } from "../src/platform/Outbox.ts"
import { WebhookDeliverySettings } from "../src/webhooks/Dispatcher.ts"
import { testConfigLayer } from "../test/support/TestConfig.ts"
import { TestDatabase } from "../test/support/TestDatabase.ts"
import { formatMs, percentile, positiveNumber, postJson, writeSummary } from "./support.ts"

const EVENTS = positiveNumber("BENCH_EVENTS", 2000)
const ENDPOINTS = positiveNumber("BENCH_ENDPOINTS", 8)
const RATE = positiveNumber("BENCH_RATE", 200)
const STREAM_SECONDS = positiveNumber("BENCH_STREAM_SECONDS", 10)

interface Received {
  readonly body: string
  readonly headers: Record<string, string>
}

/** What the receiver reports: how many requests, when each event's first attempt arrived, one sample. */
interface ReceiverReport {
  readonly received: number
  readonly firstAt: ReadonlyArray<readonly [string, number]>
  readonly sample: Received | undefined
}

/**
 * The receiver process: answers 200 at once and notes when each event's first attempt arrived, on a
 * clock comparable across processes (`performance.timeOrigin + performance.now()`).
 */
const RECEIVER_SOURCE = `
const { createServer } = require("node:http")
let received = 0
let sample
const firstAt = new Map()
const server = createServer((request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    received++
    const id = String(request.headers["webhook-id"])
    if (!firstAt.has(id)) firstAt.set(id, performance.timeOrigin + performance.now())
    sample ??= { body: Buffer.concat(chunks).toString("utf8"), headers: request.headers }
    response.writeHead(200).end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }))
process.on("message", () => process.send({ received, firstAt: [...firstAt], sample }))
process.on("disconnect", () => process.exit(0))
`

/** Milliseconds on the receiver's clock. */
const now = () => performance.timeOrigin + performance.now()

const startReceiver = Effect.acquireRelease(
  Effect.async<{ url: string; report: () => Promise<ReceiverReport>; close: () => void }>((resume) => {
    const child = spawn(process.execPath, ["-e", RECEIVER_SOURCE], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
    child.once("message", (message: { port: number }) => {
      resume(Effect.succeed({
        url: `http://127.0.0.1:${message.port}/bench`,
        report: () =>
          new Promise<ReceiverReport>((answer) => {
            child.once("message", (report: ReceiverReport) => answer(report))
            child.send("report")
          }),
        close: () => child.kill()
      }))
    })
  }),
  (receiver) => Effect.sync(receiver.close)
)

type Receiver = Effect.Effect.Success<typeof startReceiver>

const serviceLayer = ServiceLive.pipe(
  Layer.provideMerge(testConfigLayer({ webhookAllowPrivateNetworks: true })),
  Layer.provideMerge(TestDatabase.layer),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

/**
 * `count` stores, each with one endpoint on the receiver for every event; each store of an organization
 * of its own, as the Free plan allows an organization three stores.
 */
const endpointsOn = (baseUrl: string, receiver: Receiver, count: number) =>
  Effect.promise(async () => {
    const stores: Array<{ storeId: string; secret: string }> = []
    for (let i = 0; i < count; i++) {
      const session = await postJson(baseUrl, "/auth/register", {
        email: `bench-${randomBytes(5).toString("hex")}@example.test`,
        password: "correct horse battery staple",
        name: "Bench Owner",
        organization_name: `Bench Organization ${i + 1}`
      })
      const store = await postJson(baseUrl, "/stores", { name: `Bench store ${i + 1}` }, session.access_token)
      const endpoint = await postJson(
        baseUrl,
        "/webhook-endpoints",
        { store_id: store.id, url: receiver.url, events: ["*"] },
        session.access_token
      )
      stores.push({ storeId: store.id, secret: endpoint.secret })
    }
    return stores
  })

/** Fails unless the sample delivery verifies with one of the stores' secrets. */
const verifySample = (report: ReceiverReport, stores: ReadonlyArray<{ secret: string }>) =>
  Effect.suspend(() => {
    const sample = report.sample
    const verified = sample !== undefined && stores.some((store) => {
      try {
        new Webhook(store.secret).verify(sample.body, sample.headers)
        return true
      } catch {
        return false
      }
    })
    return verified ? Effect.void : Effect.dieMessage("a received delivery did not verify")
  })

/** Waits until `count` jobs of the stores are recorded as delivered; answers the receiver's report. */
const awaitDelivered = (writer: pg.Pool, receiver: Receiver, storeIds: ReadonlyArray<string>, count: number) =>
  Effect.gen(function*() {
    while (true) {
      const { rows } = yield* Effect.promise(() =>
        writer.query<{ done: string }>(
          `SELECT count(*) AS done FROM webhook_jobs j JOIN webhook_endpoints e ON e.id = j.endpoint_id
           WHERE e.store_id = ANY ($1::text[]) AND j.status = 'succeeded'`,
          [storeIds]
        )
      )
      if (Number(rows[0]?.done ?? 0) >= count) break
      yield* Effect.sleep("10 millis")
    }
    const report = yield* Effect.promise(receiver.report)
    if (report.received < count) return yield* Effect.dieMessage(`${count} delivered, but ${report.received} received`)
    return report
  })

/** A paid payment's change notice, as the payments engine sends it with the outbox row. */
const paymentChange = (n: number, storeId: string) =>
  JSON.stringify({
    id: `pay_bench_${n}`,
    store_id: storeId,
    livemode: false,
    version: 2,
    status: "paid",
    amount: "12.50",
    currency: "USD",
    amount_refunded: "0.00"
  })

/**
 * The outbox rows of events `first`…`last` (`n` names event n), round-robin over the stores, in one
 * statement that announces them as the payments engine's outbox statement does.
 */
const insertEvents = (client: pg.PoolClient, runId: string, first: number, last: number, storeIds: ReadonlyArray<string>) =>
  client.query(
    `WITH written AS (
     INSERT INTO outbox (event_id, store_id, livemode, type, payload)
     SELECT 'evt_bench_' || $1 || '_' || n, s.store_id, false, 'payment.completed',
       jsonb_build_object(
         'id', 'evt_bench_' || $1 || '_' || n, 'object', 'event', 'type', 'payment.completed',
         'created_at', now(), 'livemode', false,
         'data', jsonb_build_object('object', jsonb_build_object('id', 'pay_bench_' || n, 'object', 'payment',
           'amount', '12.50', 'currency', 'USD', 'reference_id', 'order-' || n, 'status', 'paid')))
     FROM generate_series($2::int, $3::int) AS n
     JOIN unnest($4::text[]) WITH ORDINALITY AS s(store_id, slot) ON s.slot - 1 = n % cardinality($4::text[])
     RETURNING store_id
     )
     SELECT pg_notify($5, store_id) FROM written`,
    [runId, first, last, storeIds, OUTBOX_CHANNEL]
  )

/** Events `first`…`last` with one payment change notice, committed in one transaction; answers the commit time. */
const commitEvents = (writer: pg.Pool, runId: string, first: number, last: number, storeIds: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const client = await writer.connect()
    try {
      await client.query("BEGIN")
      await insertEvents(client, runId, first, last, storeIds)
      await client.query("SELECT pg_notify($1, $2)", [PAYMENT_CHANNEL, paymentChange(first, storeIds[first % storeIds.length]!)])
      await client.query("COMMIT")
      return now()
    } finally {
      client.release()
    }
  })

/** Commit → first attempt, in milliseconds, of every event in `committedAt`, in increasing order. */
const latencies = (report: ReceiverReport, committedAt: ReadonlyMap<string, number>) => {
  const firstAt = new Map(report.firstAt)
  return [...committedAt].map(([eventId, at]) => (firstAt.get(eventId) ?? Number.NaN) - at).sort((a, b) => a - b)
}

/** CPU time this process spent since `since` (a `process.cpuUsage()`), per event, in milliseconds. */
const cpuPerEvent = (since: NodeJS.CpuUsage, events: number) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000 / events
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const burst = (baseUrl: string, writer: pg.Pool, endpointCount: number) =>
  Effect.scoped(Effect.gen(function*() {
    const receiver = yield* startReceiver
    const stores = yield* endpointsOn(baseUrl, receiver, endpointCount)
    const storeIds = stores.map((store) => store.storeId)
    const runId = newId("evt").slice(4, 12)

    const cpuBefore = process.cpuUsage()
    const started = now()
    const committed = yield* commitEvents(writer, runId, 1, EVENTS, storeIds)
    const report = yield* awaitDelivered(writer, receiver, storeIds, EVENTS)
    const seconds = (now() - started) / 1000
    const cpuMs = cpuPerEvent(cpuBefore, EVENTS)
    yield* verifySample(report, stores)

    const committedAt = new Map<string, number>()
    for (let n = 1; n <= EVENTS; n++) committedAt.set(`evt_bench_${runId}_${n}`, committed)
    const waits = latencies(report, committedAt)
    const perSecond = Math.round(EVENTS / seconds)
    console.log(
      `webhooks: ${EVENTS} events to ${plural(endpointCount, "endpoint")}: ` +
        `${seconds.toFixed(2)} s, ${perSecond} deliveries/s (received ${report.received}); ` +
        `commit to first attempt p50 ${formatMs(percentile(waits, 50))}, p99 ${formatMs(percentile(waits, 99))}; ` +
        `service CPU ${cpuMs.toFixed(2)} ms per delivery; load average ${loadavg()[0]!.toFixed(2)}`
    )
    return { events: EVENTS, endpoints: endpointCount, seconds, perSecond, cpuMsPerDelivery: cpuMs }
  }))

const stream = (baseUrl: string, writer: pg.Pool, endpointCount: number) =>
  Effect.scoped(Effect.gen(function*() {
    const receiver = yield* startReceiver
    const stores = yield* endpointsOn(baseUrl, receiver, endpointCount)
    const storeIds = stores.map((store) => store.storeId)
    const runId = newId("evt").slice(4, 12)
    const total = Math.round(RATE * STREAM_SECONDS)
    const committedAt = new Map<string, number>()

    const started = now()
    yield* Effect.forEach(
      Array.from({ length: total }, (_, i) => i + 1),
      (n) =>
        Effect.gen(function*() {
          const wait = started + ((n - 1) * 1000) / RATE - now()
          if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
          committedAt.set(`evt_bench_${runId}_${n}`, yield* commitEvents(writer, runId, n, n, storeIds))
        }),
      { concurrency: "unbounded", discard: true }
    )
    const offered = (now() - started) / 1000
    const report = yield* awaitDelivered(writer, receiver, storeIds, total)
    yield* verifySample(report, stores)

    const waits = latencies(report, committedAt)
    const figures = {
      rate: RATE,
      events: total,
      endpoints: endpointCount,
      p50Ms: percentile(waits, 50),
      p99Ms: percentile(waits, 99),
      maxMs: waits.at(-1)!
    }
    console.log(
      `webhooks: stream of ${total} events at ${RATE}/s (committed in ${offered.toFixed(2)} s) to ` +
        `${plural(endpointCount, "endpoint")}: commit to first attempt p50 ${formatMs(figures.p50Ms)}, ` +
        `p99 ${formatMs(figures.p99Ms)}, max ${formatMs(figures.maxMs)}; load average ${loadavg()[0]!.toFixed(2)}`
    )
    return figures
  }))

const main = Effect.scoped(Effect.gen(function*() {
  const context = yield* Layer.build(serviceLayer)
  const server = Context.get(context, HttpServer.HttpServer)
  const database = Context.get(context, TestDatabase)
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${server.address.port}`
  const databaseUrl = Option.match(database.url, {
    onNone: () => readFileSync(join(database.dataDir, "database.url"), "utf8").trim(),
    onSome: Redacted.value
  })
  const writer = yield* Effect.acquireRelease(
    Effect.sync(() => new pg.Pool({ connectionString: databaseUrl, max: 16 })),
    (pool) => Effect.promise(() => pool.end())
  )
  const settings = yield* WebhookDeliverySettings
  console.log(
    `webhooks: database ${database.kind}, dispatcher defaults (${settings.concurrency} endpoints at once, ` +
      `${Duration.format(settings.pollInterval)} poll); load average ${loadavg().map((n) => n.toFixed(2)).join(" ")}`
  )
  const scenarios = [yield* burst(baseUrl, writer, 1)]
  if (ENDPOINTS > 1) scenarios.push(yield* burst(baseUrl, writer, ENDPOINTS))
  const steady = yield* stream(baseUrl, writer, ENDPOINTS)
  writeSummary({ database: database.kind, scenarios, stream: steady, loadAverage: loadavg()[0] })
}))

Effect.runPromise(main).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
