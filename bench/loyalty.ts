/**
 * Loyalty earning (`npm run bench:loyalty`; `npm run bench` runs it with the others): how many paid-payment
 * events per second the wallet applies — outbox consumer → CustomerWallet entity (one message per payment,
 * applied with the wallet's other waiting changes in one transaction) — and how long an event waits from its commit to its earn entry.
 *
 * 1. A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server), or the one at
 *    BENCH_DATABASE_URL as it is; the events are written straight into it.
 * 2. The service as a child process (the bundle of `runtime/main.ts`, as `npm start` runs it); over HTTP a
 *    user, a store with an active program (10 points per USD), a customer and one payment paid through the
 *    whole path (create, scan, pay: earned once, a setup check). BENCH_WALLETS customers (1,000) are then
 *    cloned from that customer in SQL.
 * 3. Backlog: BENCH_EVENTS paid payments (20,000) of those customers, with their `payment.completed`
 *    outbox events, committed in one transaction; the time until every one has its earn entry gives
 *    events per second.
 * 4. Steady load: BENCH_RATE events per second (100) for BENCH_DURATION seconds (10), written in small
 *    batches every 50 ms; each event's latency is its earn entry's time minus its outbox row's commit
 *    time: p50 and p99.
 * 5. Keeping up with creation (the target): `POST /v1/payments` at the service's own maximum rate
 *    (BENCH_CONNECTIONS in flight, 64) for BENCH_KEEP_UP_SECONDS (30), each payment for one of the wallets in
 *    turn; every 50 ms the payments created since are marked paid with their `payment.completed` events in
 *    one statement, so creation and earning share the service. The figure is how long after the last
 *    payment the earn backlog is empty (target ≤ 10 s), with the backlog at that moment.
 * 6. A markdown table for the README (and the figures as JSON to BENCH_SUMMARY_FILE, for bench/all.ts). The
 *    child is stopped and the fresh database dropped however it ends.
 */
import autocannon from "autocannon"
import type pg from "pg"
import { cpus } from "node:os"
import {
  formatInt,
  formatMs,
  log,
  openDatabase,
  percentile,
  positiveNumber,
  postJson,
  runBench,
  setLogPrefix,
  startService,
  withClient,
  writeSummary
} from "./support.ts"
import { OUTBOX_CHANNEL, outboxNotice } from "../src/platform/Outbox.ts"

setLogPrefix("bench:loyalty")

const WALLETS = Math.round(positiveNumber("BENCH_WALLETS", 1_000))
const EVENTS = Math.round(positiveNumber("BENCH_EVENTS", 20_000))
const RATE = Math.round(positiveNumber("BENCH_RATE", 100))
const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 10)
const STEADY_TICK_MS = 50
const KEEP_UP_SECONDS = positiveNumber("BENCH_KEEP_UP_SECONDS", 30)
const KEEP_UP_CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 64))
/** The target: the earn backlog empty this long after the last payment. */
const KEEP_UP_TARGET_SECONDS = 10

const putJson = async (baseUrl: string, path: string, body: unknown, token: string) => {
  const response = await fetch(new URL(path, baseUrl), {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body)
  })
  if (!response.ok) throw new Error(`PUT ${path} answered ${response.status}: ${await response.text()}`)
}

/**
 * `count` paid payments cloned from `template`, numbered from `first`, each for one of the cloned
 * customers in turn, with their `payment.completed` outbox events (already dispatched: no webhook work),
 * announced on the outbox channel as the service's own writes are.
 * Ids are 24 hex characters (a subset of base62).
 */
const insertPaidPayments = (client: pg.Client, template: string, first: number, count: number) =>
  client.query(
    `WITH made AS (
       INSERT INTO payments
       SELECT (jsonb_populate_record(NULL::payments, to_jsonb(p) || jsonb_build_object(
         'id', 'pay_' || substr(md5('bench-pay-' || g), 1, 24),
         'customer_id', 'cus_' || substr(md5('bench-cus-' || (g % $4)), 1, 24),
         'qr_md5', md5('bench-qr-' || g)))).*
       FROM payments p, generate_series($2::int, $2::int + $3::int - 1) g
       WHERE p.id = $1
       RETURNING id, store_id, livemode, customer_id
     )
     INSERT INTO outbox (event_id, store_id, livemode, type, payload, dispatched_at)
     SELECT 'evt_' || substr(md5('bench-evt-' || id), 1, 24), store_id, livemode, 'payment.completed',
       jsonb_build_object('data', jsonb_build_object('object', jsonb_build_object('id', id, 'customer_id', customer_id))), now()
     FROM made`,
    [template, first, count, WALLETS]
  ).then(() => client.query(`SELECT pg_notify($1, $2)`, [OUTBOX_CHANNEL, outboxNotice.of("bench", "payment.completed")]))

/**
 * Marks the bench store's payments created and still pending as paid, with their `payment.completed` events
 * (as the payment's own transition writes them, customer included), in one statement: how many.
 */
const payPending = async (client: pg.Client, storeId: string) => {
  const result = await client.query(
    `WITH paid AS (
       UPDATE payments SET status = 'paid', paid_at = now(), updated_at = now(), version = version + 1
       WHERE store_id = $1 AND status = 'pending'
       RETURNING id, store_id, livemode, customer_id
     ), written AS (
       INSERT INTO outbox (event_id, store_id, livemode, type, payload, dispatched_at)
       SELECT 'evt_' || substr(md5('bench-keep-up-' || id), 1, 24), store_id, livemode, 'payment.completed',
         jsonb_build_object('data', jsonb_build_object('object', jsonb_build_object('id', id, 'customer_id', customer_id))), now()
       FROM paid
       RETURNING 1
     )
     SELECT count(*)::int AS paid, pg_notify($2, $1 || ' payment.completed') FROM written`,
    [storeId, OUTBOX_CHANNEL]
  )
  return (result.rows[0] as { paid: number }).paid
}

const pendingEvents = async (client: pg.Client) =>
  (await client.query<{ pending: number }>(
    `SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = 'loyalty'`
  )).rows[0]!.pending

const untilApplied = async (client: pg.Client, timeoutMs: number) => {
  const deadline = performance.now() + timeoutMs
  while ((await pendingEvents(client)) > 0) {
    if (performance.now() > deadline) throw new Error("the wallets did not apply every event in time")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const main = async () => {
  const cores = cpus().length
  log(`machine: ${cores} cores (${cpus()[0]?.model.trim() ?? "unknown CPU"}), node ${process.version}`)
  const database = await openDatabase()
  if (database.url === undefined) {
    throw new Error("this bench writes its events straight into PostgreSQL: set BENCH_POSTGRES_URL or BENCH_DATABASE_URL")
  }
  log(`database: ${database.description}`)
  const service = await startService(database)
  log(`service listening on ${service.baseUrl}`)

  const session = await postJson(service.baseUrl, "/auth/register", {
    email: `bench-loyalty-${Date.now().toString(36)}@example.test`,
    password: "correct horse battery staple"
  })
  const token: string = session.access_token
  const store = await postJson(service.baseUrl, "/stores", { name: "Bench Store" }, token)
  const key = (await postJson(service.baseUrl, "/api-keys", { store_id: store.id, mode: "test" }, token)).secret as string
  await putJson(service.baseUrl, `/dashboard/stores/${store.id}/loyalty`, { active: true, points_per_unit: { USD: "10" } }, token)
  const customer = await postJson(service.baseUrl, "/v1/customers", { email: "template@example.test" }, key)
  const payment = await postJson(service.baseUrl, "/v1/payments", { amount: "12.50", currency: "USD", customer_id: customer.id }, key)
  await postJson(service.baseUrl, `/v1/payments/${payment.id}/simulate`, { status: "scanned" }, key)
  await postJson(service.baseUrl, `/v1/payments/${payment.id}/simulate`, { status: "paid" }, key)

  await withClient(database.url, async (client) => {
    await untilApplied(client, 30_000)
    const earned = (await client.query<{ points: number }>(`SELECT points_balance AS points FROM customers WHERE id = $1`, [customer.id])).rows[0]!
    if (earned.points !== 125) throw new Error(`setup: the template payment earned ${earned.points} points, not 125`)
    await client.query(
      `INSERT INTO customers (id, store_id, livemode, email, metadata, preferences_updated_at, created_at, updated_at)
       SELECT 'cus_' || substr(md5('bench-cus-' || g), 1, 24), store_id, livemode, 'wallet' || g || '@example.test', '{}',
         created_at, created_at, created_at
       FROM customers, generate_series(0, $2::int - 1) g WHERE id = $1`,
      [customer.id, WALLETS]
    )
  })
  log(`${formatInt(WALLETS)} wallets ready`)

  // Backlog: every event at once.
  const backlog = await withClient(database.url, async (client) => {
    await insertPaidPayments(client, payment.id, 0, EVENTS)
    const started = performance.now()
    await untilApplied(client, 600_000)
    const seconds = (performance.now() - started) / 1000
    const entries = (await client.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM points_entries WHERE type = 'earn' AND store_id = $1`,
      [store.id]
    )).rows[0]!.count
    if (entries !== EVENTS + 1) throw new Error(`backlog: ${entries} earn entries for ${EVENTS + 1} payments`)
    return { seconds, eventsPerSecond: EVENTS / seconds }
  })
  log(`backlog of ${formatInt(EVENTS)} events applied in ${backlog.seconds.toFixed(2)} s: ${formatInt(backlog.eventsPerSecond)} events/s`)

  // Steady load: RATE events per second, latency from each event's commit to its earn entry.
  const steady = await withClient(database.url, async (client) => {
    const perTick = Math.max(1, Math.round((RATE * STEADY_TICK_MS) / 1000))
    const ticks = Math.round((DURATION_SECONDS * 1000) / STEADY_TICK_MS)
    const first = EVENTS
    const before = (await client.query<{ position: string }>(`SELECT COALESCE(max(position), 0)::text AS position FROM outbox`)).rows[0]!.position
    const began = performance.now()
    for (let tick = 0; tick < ticks; tick++) {
      await insertPaidPayments(client, payment.id, first + tick * perTick, perTick)
      const wait = began + (tick + 1) * STEADY_TICK_MS - performance.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    }
    await untilApplied(client, 120_000)
    const latencies = (await client.query<{ ms: number }>(
      `SELECT extract(epoch FROM (e.created_at - o.created_at)) * 1000 AS ms
       FROM outbox o JOIN points_entries e ON e.payment_id = o.payload -> 'data' -> 'object' ->> 'id' AND e.type = 'earn'
       WHERE o.type = 'payment.completed' AND o.position > $1::bigint`,
      [before]
    )).rows.map((row) => Number(row.ms)).sort((a, b) => a - b)
    return { events: ticks * perTick, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
  })
  log(`steady ${formatInt(RATE)} events/s for ${DURATION_SECONDS} s: commit → earn entry p50 ${formatMs(steady.p50)}, p99 ${formatMs(steady.p99)}`)

  // Keeping up with creation: payments created over HTTP at the service's own maximum rate
  // (BENCH_CONNECTIONS in flight) for BENCH_KEEP_UP_SECONDS, each for one of the wallets in turn, and every
  // STEADY_TICK_MS the ones created since marked paid with their events, so the service creates and earns
  // at once. Then: how long after the last payment until the earn backlog is empty.
  const keepUp = await withClient(database.url, async (client) => {
    const wallets = (await client.query<{ id: string }>(
      `SELECT id FROM customers WHERE store_id = $1 AND id <> $2 ORDER BY id`,
      [store.id, customer.id]
    )).rows.map((row) => row.id)
    let paid = 0
    let creating = true
    const payer = (async () => {
      while (creating) {
        const tick = performance.now()
        paid += await payPending(client, store.id)
        const wait = tick + STEADY_TICK_MS - performance.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      }
    })()
    let next = 0
    const created = await autocannon({
      url: new URL("/v1/payments", service.baseUrl).toString(),
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      requests: [{
        setupRequest: (request: any) => ({
          ...request,
          body: JSON.stringify({ amount: "12.50", currency: "USD", customer_id: wallets[next++ % wallets.length] })
        })
      }],
      connections: KEEP_UP_CONNECTIONS,
      duration: KEEP_UP_SECONDS
    })
    creating = false
    await payer
    paid += await payPending(client, store.id)
    const lastPayment = performance.now()
    const backlogAtLast = await pendingEvents(client)
    await untilApplied(client, 600_000)
    const drainSeconds = (performance.now() - lastPayment) / 1000
    const createdPerSecond = created["2xx"] / created.duration
    return { createdPerSecond, non2xx: created.non2xx, paid, backlogAtLast, drainSeconds }
  })
  log(
    `keeping up: ${formatInt(keepUp.createdPerSecond)} payments/s created for ${KEEP_UP_SECONDS} s (${formatInt(keepUp.paid)} paid), ` +
      `backlog ${formatInt(keepUp.backlogAtLast)} at the last payment, empty ${keepUp.drainSeconds.toFixed(1)} s after it`
  )
  if (keepUp.non2xx > 0) throw new Error(`keeping up: ${keepUp.non2xx} payment creations did not answer 2xx`)

  console.log([
    "",
    `| loyalty earning (${database.description}, ${cores} cores) | figure |`,
    "|---|---|",
    `| backlog of ${formatInt(EVENTS)} paid-payment events over ${formatInt(WALLETS)} wallets | ${formatInt(backlog.eventsPerSecond)} events/s (${backlog.seconds.toFixed(2)} s) |`,
    `| steady ${formatInt(RATE)} events/s for ${DURATION_SECONDS} s: event commit → earn entry, p50 / p99 | ${formatMs(steady.p50)} / ${formatMs(steady.p99)} |`,
    `| payments created at the service's maximum for ${KEEP_UP_SECONDS} s (${formatInt(keepUp.createdPerSecond)}/s), each paid as created: earn backlog at the last payment, and empty after it | ${formatInt(keepUp.backlogAtLast)} events; ${keepUp.drainSeconds.toFixed(1)} s (target ≤ ${KEEP_UP_TARGET_SECONDS} s) |`,
    ""
  ].join("\n"))
  writeSummary({
    database: database.description,
    wallets: WALLETS,
    events: EVENTS,
    eventsPerSecond: backlog.eventsPerSecond,
    backlogSeconds: backlog.seconds,
    steadyRate: RATE,
    steadyP50: steady.p50,
    steadyP99: steady.p99,
    keepUpSeconds: KEEP_UP_SECONDS,
    keepUpCreatedPerSecond: keepUp.createdPerSecond,
    keepUpPaid: keepUp.paid,
    keepUpBacklogAtLast: keepUp.backlogAtLast,
    keepUpDrainSeconds: keepUp.drainSeconds
  })
}

runBench(main)
