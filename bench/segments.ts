/**
 * Segment previews and promotion simulations on a big store (`npm run bench:segments`): how fast a preview
 * (count and sample) answers when the store has BENCH_CUSTOMERS (100,000) customers and BENCH_PAYMENTS
 * (1,000,000) paid payments of theirs over the last year.
 *
 * 1. A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server); customers and
 *    payments written straight into it with `generate_series`, then VACUUM ANALYZE (as autovacuum would).
 * 2. The service as a child process (the bundle `npm start` runs), a user and a store made over HTTP.
 * 3. Each rule set BENCH_REQUESTS times (30) one after another, after a warm-up: p50 and p99 of the preview
 *    of unsaved rules, of a saved segment, and of a promotion's 30-day simulation.
 * 4. A markdown table for the README; the database is dropped however it ends.
 */
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

setLogPrefix("bench:segments")

const CUSTOMERS = Math.round(positiveNumber("BENCH_CUSTOMERS", 100_000))
const PAYMENTS = Math.round(positiveNumber("BENCH_PAYMENTS", 1_000_000))
const REQUESTS = Math.round(positiveNumber("BENCH_REQUESTS", 30))

/** Customers created over the last two years; a third opted in to marketing. */
const insertCustomers = (storeId: string) => `
  INSERT INTO customers (id, store_id, livemode, email, metadata, prefers_marketing, preferences_updated_at,
    created_at, updated_at, points_balance, lifetime_points)
  SELECT 'cus_' || substr(md5('c' || g), 1, 24), '${storeId}', false, 'c' || g || '@bench.test', '{}'::jsonb,
    g % 3 = 0, t, t, t, (g * 37) % 500, (g * 37) % 2000
  FROM generate_series(1, ${CUSTOMERS}) AS g,
    LATERAL (SELECT now() - make_interval(secs => (g::bigint * 63072000 / ${CUSTOMERS})::int) AS t) AS at`

/** Paid payments over the last 365 days, spread over the customers. */
const insertPayments = (storeId: string) => `
  INSERT INTO payments (id, store_id, livemode, status, amount, currency, amount_refunded, metadata, provider,
    qr_payload, qr_md5, expires_at, created_at, updated_at, paid_at, customer_id)
  SELECT 'pay_' || substr(md5('p' || g), 1, 24), '${storeId}', false, 'paid',
    100 + (g::bigint * 7919) % 10000, CASE WHEN g % 5 = 0 THEN 'KHR' ELSE 'USD' END, 0, '{}'::jsonb, 'mock',
    'bench', md5('q' || g), t + interval '1 hour', t, t, t + interval '1 minute',
    'cus_' || substr(md5('c' || (1 + (g::bigint * 104729) % ${CUSTOMERS})), 1, 24)
  FROM generate_series(1, ${PAYMENTS}) AS g,
    LATERAL (SELECT now() - make_interval(secs => (g::bigint * 31536000 / ${PAYMENTS})::int) AS t) AS at`

const send = async (method: string, url: string, token: string, body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${url} answered ${response.status}: ${text}`)
  return JSON.parse(text) as Record<string, unknown>
}

const timed = async (times: number, request: () => Promise<unknown>) => {
  const latencies: Array<number> = []
  let last: unknown
  for (let i = 0; i < times; i++) {
    const started = performance.now()
    last = await request()
    latencies.push(performance.now() - started)
  }
  latencies.sort((a, b) => a - b)
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), last }
}

const main = async () => {
  const cores = cpus().length
  log(`machine: ${cores} cores, node ${process.version}`)
  const database = await openDatabase()
  if (database.url === undefined) throw new Error("this bench writes straight into PostgreSQL: set BENCH_POSTGRES_URL")
  log(`database: ${database.description}`)
  const service = await startService(database)
  const session = await postJson(service.baseUrl, "/auth/register", {
    email: `bench-segments-${Date.now().toString(36)}@example.test`,
    password: "correct horse battery staple"
  })
  const token: string = session.access_token
  const store = await postJson(service.baseUrl, "/stores", { name: "Bench Store" }, token)

  const loadStarted = performance.now()
  await withClient(database.url, async (client) => {
    await client.query(insertCustomers(store.id))
    await client.query(insertPayments(store.id))
    await client.query("VACUUM ANALYZE")
  })
  log(`inserted ${formatInt(CUSTOMERS)} customers and ${formatInt(PAYMENTS)} paid payments in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`)

  const base = `${service.baseUrl}/dashboard/stores/${store.id}`
  const ruleSets: ReadonlyArray<readonly [string, unknown]> = [
    ["one rule: lifetime value ≥ 100.00 USD", { match: "all", rules: [{ field: "lifetime_value_usd", op: "gte", value: 10000 }] }],
    ["three rules, all: recent, frequent, opted in", {
      match: "all",
      rules: [
        { field: "days_since_last_payment", op: "lte", value: 30 },
        { field: "payments_count", op: "gte", value: 8 },
        { field: "marketing_opt_in", op: "eq", value: true }
      ]
    }],
    ["two rules, any: lapsed or high points", {
      match: "any",
      rules: [{ field: "days_since_last_payment", op: "gt", value: 90 }, { field: "points_balance", op: "gte", value: 450 }]
    }]
  ]
  const figures: Array<{ name: string; p50: number; p99: number; times: number; count: unknown }> = []
  const record = (name: string, measured: { p50: number; p99: number; last: unknown }, count: unknown) => {
    figures.push({ name, p50: measured.p50, p99: measured.p99, times: REQUESTS, count })
    log(`  ${name}: p50 ${formatMs(measured.p50)}, p99 ${formatMs(measured.p99)} (${REQUESTS} requests; ${String(count)})`)
  }
  for (const [name, rules] of ruleSets) {
    const preview = () => send("POST", `${base}/segments/preview`, token, rules)
    await preview()
    const measured = await timed(REQUESTS, preview)
    record(`preview of unsaved rules, ${name}`, measured, `count ${(measured.last as { count: number }).count}`)
  }
  const segment = await send("POST", `${base}/segments`, token, { name: "Bench", ...(ruleSets[1]![1] as object) })
  const saved = () => send("GET", `${service.baseUrl}/dashboard/segments/${segment["id"] as string}/preview`, token)
  await saved()
  const savedMeasured = await timed(REQUESTS, saved)
  record("preview of a saved segment (three rules)", savedMeasured, `count ${(savedMeasured.last as { count: number }).count}`)

  const now = Date.now()
  const promotion = await send("POST", `${base}/promotions`, token, {
    name: "Bench",
    bonus_points: 50,
    segment_id: segment["id"],
    min_amount: { amount: 1000, currency: "USD" },
    starts_at: new Date(now).toISOString(),
    ends_at: new Date(now + 30 * 86_400_000).toISOString()
  })
  const simulate = () => send("GET", `${service.baseUrl}/dashboard/promotions/${promotion["id"] as string}/simulate`, token)
  await simulate()
  const simulated = await timed(REQUESTS, simulate)
  const result = simulated.last as { eligible_customers: number; qualifying_payments: number }
  record("promotion simulation, 30 days (three-rule segment)", simulated, `${result.eligible_customers} customers, ${result.qualifying_payments} payments`)

  console.log("")
  console.log(`Segment previews on ${formatInt(CUSTOMERS)} customers and ${formatInt(PAYMENTS)} paid payments (${database.description}; ${cores} cores, node ${process.version})`)
  console.log("")
  console.log("| request | p50 | p99 | answer |")
  console.log("|---|---:|---:|---|")
  for (const figure of figures) console.log(`| ${figure.name} | ${formatMs(figure.p50)} | ${formatMs(figure.p99)} | ${String(figure.count)} |`)
  console.log("")
  writeSummary({ database: database.description, customers: CUSTOMERS, payments: PAYMENTS, requests: figures })
}

runBench(main)
