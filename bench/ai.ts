/**
 * AI features on a busy store with the builtin model (`npm run bench:ai`): how fast each feature answers
 * when its facts come from BENCH_PAYMENTS (200,000) paid payments over the last 90 days, spread over
 * BENCH_CUSTOMERS (10,000) customers.
 *
 * 1. A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server); customers and
 *    payments are written straight into it with `generate_series`, then ANALYZE.
 * 2. The service as a child process (the bundle `npm start` runs), a user and a store made over HTTP.
 * 3. Each feature BENCH_REQUESTS times (30) one after another, after a warm-up: p50 and p99 — the analytics
 *    summary, the campaign suggestion, fraud insights, marketing copy, the assistant's revenue, top
 *    customers and refund-rate tools, and the usage report (which sums every call metered so far).
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

setLogPrefix("bench:ai")

const PAYMENTS = Math.round(positiveNumber("BENCH_PAYMENTS", 200_000))
const CUSTOMERS = Math.round(positiveNumber("BENCH_CUSTOMERS", 10_000))
const REQUESTS = Math.round(positiveNumber("BENCH_REQUESTS", 30))

const insertCustomers = (storeId: string) => `
  INSERT INTO customers (id, store_id, livemode, name, metadata, prefers_marketing, preferences_updated_at, created_at, updated_at)
  SELECT 'cus_' || substr(md5('c' || g), 1, 24), '${storeId}', false, 'Customer ' || g, '{}'::jsonb, g % 3 = 0, now(), now(), now()
  FROM generate_series(1, ${CUSTOMERS}) AS g`

/** Paid payments over the last 90 days, each of a customer, a tenth refunded in half. */
const insertPayments = (storeId: string) => `
  INSERT INTO payments (id, store_id, livemode, status, amount, currency, amount_refunded, metadata, provider,
    qr_payload, qr_md5, expires_at, created_at, updated_at, paid_at, customer_id)
  SELECT 'pay_' || substr(md5('p' || g), 1, 24), '${storeId}', false, 'paid',
    100 + (g::bigint * 7919) % 10000, CASE WHEN g % 5 = 0 THEN 'KHR' ELSE 'USD' END,
    CASE WHEN g % 10 = 0 THEN (100 + (g::bigint * 7919) % 10000) / 2 ELSE 0 END, '{}'::jsonb, 'mock',
    'bench', md5('q' || g), t + interval '1 hour', t, t, t + interval '1 minute',
    'cus_' || substr(md5('c' || (1 + g % ${CUSTOMERS})), 1, 24)
  FROM generate_series(1, ${PAYMENTS}) AS g,
    LATERAL (SELECT now() - make_interval(secs => (g::bigint * 7776000 / ${PAYMENTS})::int) AS t) AS at`

const timed = async (method: "GET" | "POST", url: string, token: string, body: unknown, times: number) => {
  const latencies: Array<number> = []
  for (let i = 0; i < times; i++) {
    const started = performance.now()
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    await response.arrayBuffer()
    if (response.status !== 200 && response.status !== 201) throw new Error(`${method} ${url} answered ${response.status}`)
    latencies.push(performance.now() - started)
  }
  latencies.sort((a, b) => a - b)
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

const main = async () => {
  const cores = cpus().length
  log(`machine: ${cores} cores, node ${process.version}`)
  const database = await openDatabase()
  if (database.url === undefined) throw new Error("this bench writes straight into PostgreSQL: set BENCH_POSTGRES_URL")
  log(`database: ${database.description}`)
  const service = await startService(database)
  const session = await postJson(service.baseUrl, "/auth/register", {
    email: `bench-ai-${Date.now().toString(36)}@example.test`,
    password: "correct horse battery staple"
  })
  const token: string = session.access_token
  const store = await postJson(service.baseUrl, "/stores", { name: "Bench Store" }, token)

  const loadStarted = performance.now()
  await withClient(database.url, async (client) => {
    await client.query(insertCustomers(store.id))
    await client.query(insertPayments(store.id))
    await client.query("ANALYZE")
  })
  log(`inserted ${formatInt(CUSTOMERS)} customers and ${formatInt(PAYMENTS)} paid payments in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`)

  const base = `${service.baseUrl}/dashboard/stores/${store.id}/ai`
  const features: ReadonlyArray<readonly [string, "GET" | "POST", string, unknown]> = [
    ["analytics summary (60 days of timeseries)", "GET", `${base}/analytics-summary`, undefined],
    ["campaign suggestion (customer segments, 90 days)", "GET", `${base}/campaign-suggest`, undefined],
    ["fraud insights (open risk cases)", "GET", `${base}/fraud-insights`, undefined],
    ["marketing copy (SMS)", "POST", `${base}/marketing-copy`, { product: "Iced latte", channel: "sms" }],
    ["assistant: revenue, last 30 days", "POST", `${base}/assistant`, { question: "What was my revenue in the last 30 days?" }],
    ["assistant: top customers", "POST", `${base}/assistant`, { question: "Who are my top customers?" }],
    ["assistant: refund rate", "POST", `${base}/assistant`, { question: "What is my refund rate?" }],
    ["usage report (30 days)", "GET", `${base}/usage`, undefined]
  ]
  const figures: Array<{ name: string; p50: number; p99: number; times: number }> = []
  for (const [name, method, url, body] of features) {
    await timed(method, url, token, body, 1)
    const measured = await timed(method, url, token, body, REQUESTS)
    figures.push({ name, times: REQUESTS, ...measured })
    log(`  ${name}: p50 ${formatMs(measured.p50)}, p99 ${formatMs(measured.p99)} (${REQUESTS} requests)`)
  }
  console.log("")
  console.log(`AI features, builtin model, on ${formatInt(PAYMENTS)} paid payments of ${formatInt(CUSTOMERS)} customers (${database.description}; ${cores} cores, node ${process.version})`)
  console.log("")
  console.log("| feature | p50 | p99 | requests |")
  console.log("|---|---:|---:|---:|")
  for (const figure of figures) console.log(`| ${figure.name} | ${formatMs(figure.p50)} | ${formatMs(figure.p99)} | ${figure.times} |`)
  console.log("")
  writeSummary({ database: database.description, payments: PAYMENTS, customers: CUSTOMERS, features: figures })
}

runBench(main)
