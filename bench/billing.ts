/**
 * Billing usage and messaging notifications under volume (`npm run bench:billing`).
 *
 * 1. A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server); the service as
 *    a child process (from source), its Telegram Bot API pointed at a fake in this process
 *    (TELEGRAM_API_BASE_URL, TELEGRAM_BOT_TOKEN: known settings fall back to their variables).
 * 2. Plan usage at scale: an organization on the Growth plan with BENCH_PAYMENTS (150,000) live payments
 *    this month, written with `generate_series`. Timed, after a warm-up: `GET /billing` (usage and
 *    warnings), the month's usage count (a process's first live-payment check per organization), the
 *    count each later live payment's check runs (the last 15 s, here at 450 live payments a second), and
 *    `POST /stores`, whose limit check locks the organization's row in the creating transaction.
 * 3. Notifications: the store's Telegram configured; BENCH_EVENTS (2,000) payment.completed events
 *    committed at once into the outbox; the time until the fake has received every message (events/s),
 *    then BENCH_SAMPLES (30) single events one after another: commit → message received (p50, p99).
 * 4. A markdown table for the README; the database is dropped however it ends.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { cpus } from "node:os"
import {
  formatInt,
  formatMs,
  log,
  onCleanUp,
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

setLogPrefix("bench:billing")

const PAYMENTS = Math.round(positiveNumber("BENCH_PAYMENTS", 150_000))
const REQUESTS = Math.round(positiveNumber("BENCH_REQUESTS", 100))
const EVENTS = Math.round(positiveNumber("BENCH_EVENTS", 2_000))
const SAMPLES = Math.round(positiveNumber("BENCH_SAMPLES", 30))
const BOT_TOKEN = "123456:bench-token"

/** A fake Bot API: answers every sendMessage 200 and notes when each chat's message arrived. */
const startFakeTelegram = () =>
  new Promise<{ baseUrl: string; received: Map<string, number> }>((resolve) => {
    const received = new Map<string, number>()
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { text: string }
        // The text names the payment: "Payment received: 12.50 USD (pay_…)".
        const id = /\((pay_[0-9A-Za-z]+)/.exec(body.text)?.[1] ?? "?"
        received.set(id, performance.now())
        response.writeHead(200, { "content-type": "application/json" })
        response.end(`{"ok":true,"result":{}}`)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      onCleanUp(() => new Promise<void>((done) => server.close(() => done())))
      resolve({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received })
    })
  })

/** Live payments of this month, paid, with ids and QR fields of the right shape. */
const insertPayments = (storeId: string) => `
  INSERT INTO payments (id, store_id, livemode, status, amount, currency, amount_refunded, metadata, provider,
    qr_payload, qr_md5, expires_at, created_at, updated_at, paid_at)
  SELECT 'pay_' || substr(md5('p' || g), 1, 24), '${storeId}', true, 'paid', 1250, 'USD', 0, '{}'::jsonb, 'bakong',
    'bench', md5('q' || g), t + interval '1 hour', t, t, t
  FROM generate_series(1, ${PAYMENTS}) AS g,
    LATERAL (SELECT date_trunc('month', now()) + (now() - date_trunc('month', now())) * (g::float / ${PAYMENTS} / 2) AS t) AS at`

/** The usage count of BillingRepo.usageOf (the live payments of the organization this month). */
const usageCount = `
  SELECT count(*)::int AS n FROM payments p JOIN stores s ON s.id = p.store_id
  WHERE s.organization_id = $1 AND p.livemode AND p.created_at >= date_trunc('month', now())`

/**
 * What a live payment's limit check counts once its process has counted the month (PlanLimits): the
 * payments after the settled point, at most REBASE + SETTLE (15 s) back.
 */
const recentCount = `
  SELECT count(*)::int AS n FROM payments p JOIN stores s ON s.id = p.store_id
  WHERE s.organization_id = $1 AND p.livemode AND p.created_at >= now() - interval '15 seconds'`

/** A busy organization's last 15 seconds: RECENT_RATE live payments a second. */
const RECENT_RATE = Math.round(positiveNumber("BENCH_RECENT_RATE", 450))
const insertRecent = (storeId: string) => `
  INSERT INTO payments (id, store_id, livemode, status, amount, currency, amount_refunded, metadata, provider,
    qr_payload, qr_md5, expires_at, created_at, updated_at)
  SELECT 'pay_' || substr(md5('r' || g), 1, 24), '${storeId}', true, 'failed', 1250, 'USD', 0, '{}'::jsonb, 'bakong',
    'bench', md5('s' || g), now() + interval '1 hour', t, t
  FROM generate_series(1, ${RECENT_RATE * 15}) AS g,
    LATERAL (SELECT now() - make_interval(secs => (g % 15000) / 1000.0) AS t) AS at`

/** payment.completed events for the store, written as Outbox.emit writes them. */
const insertEvents = (storeId: string, ids: ReadonlyArray<string>) => ({
  text: `
    WITH written AS (
      INSERT INTO outbox (event_id, store_id, livemode, type, payload)
      SELECT 'evt_' || substr(md5('e' || id), 1, 24), $1::text, false, 'payment.completed',
        jsonb_build_object('id', 'evt_' || substr(md5('e' || id), 1, 24), 'object', 'event', 'type', 'payment.completed',
          'created_at', now(), 'livemode', false,
          'data', jsonb_build_object('object', jsonb_build_object('id', id, 'object', 'payment', 'status', 'paid',
            'amount', '12.50', 'currency', 'USD', 'store_id', $1::text, 'livemode', false, 'reference_id', null)))
      FROM unnest($2::text[]) AS id
      RETURNING store_id
    )
    SELECT pg_notify('outbox_events', store_id || ' payment.completed') FROM written LIMIT 1`,
  values: [storeId, ids]
})

const timedFetch = async (times: number, request: () => Promise<Response>) => {
  const latencies: Array<number> = []
  for (let i = 0; i < times; i++) {
    const started = performance.now()
    const response = await request()
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`answered ${response.status}`)
    latencies.push(performance.now() - started)
  }
  latencies.sort((a, b) => a - b)
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

const waitUntil = async (done: () => boolean, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const main = async () => {
  const cores = cpus().length
  log(`machine: ${cores} cores, node ${process.version}`)
  const database = await openDatabase()
  if (database.url === undefined) throw new Error("this bench writes straight into PostgreSQL: set BENCH_POSTGRES_URL")
  log(`database: ${database.description}`)
  const telegram = await startFakeTelegram()
  const service = await startService(database, {
    fromSource: true,
    env: { TELEGRAM_BOT_TOKEN: BOT_TOKEN, TELEGRAM_API_BASE_URL: telegram.baseUrl }
  })
  const session = await postJson(service.baseUrl, "/auth/register", {
    email: `bench-billing-${Date.now().toString(36)}@example.test`,
    password: "correct horse battery staple"
  })
  const token: string = session.access_token
  const orgId: string = session.organization.id
  const store = await postJson(service.baseUrl, "/stores", { name: "Bench Store" }, token)

  // --- Usage at scale ---------------------------------------------------------------------------
  const loadStarted = performance.now()
  await withClient(database.url, async (client) => {
    await client.query(
      `INSERT INTO subscriptions (organization_id, plan_id, status, current_period_end, updated_at)
       VALUES ($1, 'growth', 'active', now() + interval '30 days', now())`,
      [orgId]
    )
    await client.query(insertPayments(store.id))
    await client.query("VACUUM ANALYZE payments")
  })
  log(`inserted ${formatInt(PAYMENTS)} live payments this month in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`)

  const auth = { authorization: `Bearer ${token}` }
  const billingUrl = `${service.baseUrl}/billing?org_id=${orgId}`
  await timedFetch(3, () => fetch(billingUrl, { headers: auth }))
  const billing = await timedFetch(REQUESTS, () => fetch(billingUrl, { headers: auth }))
  const usage = await (await fetch(billingUrl, { headers: auth })).json() as { usage: { payments_this_month: number }; warnings: Array<string> }
  if (usage.usage.payments_this_month !== PAYMENTS) throw new Error(`usage counted ${usage.usage.payments_this_month} payments`)
  log(`GET /billing: p50 ${formatMs(billing.p50)}, p99 ${formatMs(billing.p99)}; warnings ${JSON.stringify(usage.warnings)}`)

  const countLatencies = await withClient(database.url, async (client) => {
    const latencies: Array<number> = []
    for (let i = 0; i < REQUESTS + 3; i++) {
      const started = performance.now()
      await client.query(usageCount, [orgId])
      if (i >= 3) latencies.push(performance.now() - started)
    }
    return latencies.sort((a, b) => a - b)
  })
  const count = { p50: percentile(countLatencies, 50), p99: percentile(countLatencies, 99) }
  log(`the month's usage count (GET /billing; a process's first limit check): p50 ${formatMs(count.p50)}, p99 ${formatMs(count.p99)}`)
  const recentLatencies = await withClient(database.url, async (client) => {
    await client.query(insertRecent(store.id))
    await client.query("ANALYZE payments")
    const latencies: Array<number> = []
    for (let i = 0; i < REQUESTS + 3; i++) {
      const started = performance.now()
      await client.query(recentCount, [orgId])
      if (i >= 3) latencies.push(performance.now() - started)
    }
    return latencies.sort((a, b) => a - b)
  })
  const recent = { p50: percentile(recentLatencies, 50), p99: percentile(recentLatencies, 99) }
  log(`a live payment's limit check (the last 15 s at ${RECENT_RATE}/s): p50 ${formatMs(recent.p50)}, p99 ${formatMs(recent.p99)}`)

  const storeCreates = Math.min(40, REQUESTS)
  let n = 0
  const stores = await timedFetch(storeCreates, () =>
    fetch(`${service.baseUrl}/stores`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: `Store ${++n}` })
    }))
  log(`POST /stores (lock + limit check + insert): p50 ${formatMs(stores.p50)}, p99 ${formatMs(stores.p99)}`)

  // --- Notifications ------------------------------------------------------------------------------
  const configured = await fetch(`${service.baseUrl}/dashboard/stores/${store.id}/telegram`, {
    method: "PUT",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ chat_id: "-100123", events: ["payment.completed"] })
  })
  if (!configured.ok) throw new Error(`configuring Telegram answered ${configured.status}`)
  const backlogIds = Array.from({ length: EVENTS }, (_, i) => `pay_backlog${String(i).padStart(13, "0")}`)
  const backlogStarted = performance.now()
  await withClient(database.url, (client) => client.query(insertEvents(store.id, backlogIds)))
  await waitUntil(() => backlogIds.every((id) => telegram.received.has(id)), 300_000, "the backlog's messages")
  const backlogSeconds = (Math.max(...backlogIds.map((id) => telegram.received.get(id)!)) - backlogStarted) / 1000
  const backlogRate = EVENTS / backlogSeconds
  log(`backlog of ${formatInt(EVENTS)} events: every message sent in ${backlogSeconds.toFixed(2)} s (${formatInt(backlogRate)} events/s)`)

  const latencies: Array<number> = []
  await withClient(database.url, async (client) => {
    for (let i = 0; i < SAMPLES; i++) {
      const id = `pay_single${String(i).padStart(14, "0")}`
      const started = performance.now()
      await client.query(insertEvents(store.id, [id]))
      await waitUntil(() => telegram.received.has(id), 30_000, `message ${id}`)
      latencies.push(telegram.received.get(id)! - started)
    }
  })
  latencies.sort((a, b) => a - b)
  const single = { p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
  log(`single event, commit → message received: p50 ${formatMs(single.p50)}, p99 ${formatMs(single.p99)}`)

  const problems = service.problems()
  if (problems.count > 0) log(`the service logged ${problems.count} warnings or errors, first: ${problems.first.join("\n")}`)

  console.log("")
  console.log(`Billing usage and notifications (${database.description}; ${cores} cores, node ${process.version})`)
  console.log("")
  console.log("| measure | figure |")
  console.log("|---|---:|")
  console.log(`| \`GET /billing\` with ${formatInt(PAYMENTS)} live payments this month | p50 ${formatMs(billing.p50)}, p99 ${formatMs(billing.p99)} |`)
  console.log(`| the month's usage count (\`GET /billing\`, a process's first live-payment check per organization) | p50 ${formatMs(count.p50)}, p99 ${formatMs(count.p99)} |`)
  console.log(`| a live payment's limit check afterwards (the last 15 s, at ${RECENT_RATE} live payments/s) | p50 ${formatMs(recent.p50)}, p99 ${formatMs(recent.p99)} |`)
  console.log(`| \`POST /stores\` (organization lock, limit check, insert) | p50 ${formatMs(stores.p50)}, p99 ${formatMs(stores.p99)} |`)
  console.log(`| Telegram messages from a backlog of ${formatInt(EVENTS)} paid events | ${formatInt(backlogRate)} events/s |`)
  console.log(`| one paid event, commit → message at the Bot API | p50 ${formatMs(single.p50)}, p99 ${formatMs(single.p99)} |`)
  console.log("")
  writeSummary({
    database: database.description,
    payments: PAYMENTS,
    billing,
    usageCount: count,
    recentCount: recent,
    storeCreate: stores,
    notifications: { events: EVENTS, eventsPerSecond: backlogRate, single }
  })
}

runBench(main)
