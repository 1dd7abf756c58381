/**
 * Analytics and ledger reports on a big store (`npm run bench:analytics`): how fast the reports answer
 * when the store has BENCH_PAYMENTS (1,000,000) paid payments over the last year, each with its journal
 * entry, and a tenth of them refunded in part.
 *
 * 1. A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server); the payments,
 *    refunds and journal rows are written straight into it with `generate_series`, the daily rollup built
 *    from them as migration 0014 does for existing history, then VACUUM ANALYZE (as autovacuum would).
 * 2. The service as a child process (the bundle `npm start` runs), a user and a store made over HTTP.
 * 3. Each report BENCH_REQUESTS times (50) one after another, after a warm-up: p50 and p99 — the 365-day
 *    timeseries, the default 30-day one, the forecast, the executive summary, the trial balance, a page of
 *    journals, a 7-day ledger; and the reconciliation (it reads every payment and refund) 3 times.
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

setLogPrefix("bench:analytics")

const PAYMENTS = Math.round(positiveNumber("BENCH_PAYMENTS", 1_000_000))
const REQUESTS = Math.round(positiveNumber("BENCH_REQUESTS", 50))

/** Paid payments spread over the last 365 days; ids and QR fields of the right shape. */
const insertPayments = (storeId: string) => `
  INSERT INTO payments (id, store_id, livemode, status, amount, currency, amount_refunded, metadata, provider,
    qr_payload, qr_md5, expires_at, created_at, updated_at, paid_at)
  SELECT 'pay_' || substr(md5('p' || g), 1, 24), '${storeId}', false, 'paid',
    100 + (g::bigint * 7919) % 10000, CASE WHEN g % 5 = 0 THEN 'KHR' ELSE 'USD' END, 0, '{}'::jsonb, 'mock',
    'bench', md5('q' || g), t + interval '1 hour', t, t, t + interval '1 minute'
  FROM generate_series(1, ${PAYMENTS}) AS g,
    LATERAL (SELECT now() - make_interval(secs => (g::bigint * 31536000 / ${PAYMENTS})::int) AS t) AS at`

const insertJournal = (storeId: string) => [
  `INSERT INTO journal_entries (id, store_id, livemode, currency, kind, payment_id, memo, created_at)
   SELECT 'je_' || substr(md5('j' || id), 1, 24), store_id, false, currency, 'payment', id, 'bench', paid_at
   FROM payments WHERE store_id = '${storeId}'`,
  `ALTER TABLE journal_lines DISABLE TRIGGER USER`,
  `INSERT INTO journal_lines (entry_id, line, account, debit, credit)
   SELECT e.id, 1, 'provider_clearing', p.amount, 0 FROM journal_entries e JOIN payments p ON p.id = e.payment_id
   WHERE e.store_id = '${storeId}'
   UNION ALL
   SELECT e.id, 2, 'merchant_payable', 0, p.amount FROM journal_entries e JOIN payments p ON p.id = e.payment_id
   WHERE e.store_id = '${storeId}'`,
  `ALTER TABLE journal_lines ENABLE TRIGGER USER`
]

const insertRefunds = (storeId: string) => [
  `INSERT INTO refunds (id, payment_id, store_id, livemode, amount, currency, status, request_key, created_at)
   SELECT 're_' || substr(md5('r' || id), 1, 24), id, store_id, false, amount / 2, currency, 'succeeded', 'bench', paid_at + interval '1 hour'
   FROM payments WHERE store_id = '${storeId}' AND ('x' || substr(md5(id), 1, 2))::bit(8)::int < 26`,
  `UPDATE payments p SET amount_refunded = r.amount, status = 'partially_refunded'
   FROM refunds r WHERE r.payment_id = p.id AND p.store_id = '${storeId}'`
]

const timed = async (url: string, token: string, times: number) => {
  const latencies: Array<number> = []
  for (let i = 0; i < times; i++) {
    const started = performance.now()
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`)
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
    email: `bench-analytics-${Date.now().toString(36)}@example.test`,
    password: "correct horse battery staple"
  })
  const token: string = session.access_token
  const store = await postJson(service.baseUrl, "/stores", { name: "Bench Store" }, token)

  const loadStarted = performance.now()
  await withClient(database.url, async (client) => {
    await client.query(insertPayments(store.id))
    for (const statement of insertRefunds(store.id)) await client.query(statement)
    for (const statement of insertJournal(store.id)) await client.query(statement)
    // The daily rollup of this history, as migration 0014 builds it for the history it finds (payments
    // written through the service keep it up to date by themselves).
    await client.query(`
      INSERT INTO analytics_daily (store_id, livemode, day, currency, paid_count, revenue, refunds)
      SELECT store_id, livemode, day, currency, sum(paid_count), sum(revenue), sum(refunds)
      FROM (
        SELECT store_id, livemode, (paid_at AT TIME ZONE 'UTC')::date AS day, currency,
               count(*) AS paid_count, sum(amount) AS revenue, 0 AS refunds
        FROM payments WHERE paid_at IS NOT NULL GROUP BY 1, 2, 3, 4
        UNION ALL
        SELECT store_id, livemode, (created_at AT TIME ZONE 'UTC')::date, currency, 0, 0, sum(amount)
        FROM refunds WHERE status = 'succeeded' GROUP BY 1, 2, 3, 4
      ) history
      GROUP BY 1, 2, 3, 4
      ON CONFLICT DO NOTHING`)
    await client.query("VACUUM ANALYZE")
  })
  const refunds = await withClient(database.url!, async (client) =>
    Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM refunds")).rows[0]!.n))
  log(`inserted ${formatInt(PAYMENTS)} paid payments, ${formatInt(refunds)} refunds and their payments' journal in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`)

  const base = `${service.baseUrl}/dashboard/stores/${store.id}`
  const yearAgo = new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10)
  const weekAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10)
  const reports: ReadonlyArray<readonly [string, string, number]> = [
    ["timeseries, 365 days", `${base}/analytics/timeseries?from=${yearAgo}`, REQUESTS],
    ["timeseries, 30 days (default)", `${base}/analytics/timeseries`, REQUESTS],
    ["forecast, 14 days from 90 days", `${base}/analytics/forecast`, REQUESTS],
    ["executive summary (organization)", `${service.baseUrl}/dashboard/orgs/${session.organization.id}/analytics/executive`, REQUESTS],
    ["trial balance", `${base}/ledger/trial-balance`, REQUESTS],
    ["journals, first page", `${base}/ledger/journals`, REQUESTS],
    ["ledger, 7 days", `${base}/ledger?from=${weekAgo}`, Math.max(3, Math.round(REQUESTS / 10))],
    ["reconciliation (every payment and refund)", `${base}/ledger/reconcile`, 3]
  ]
  const figures: Array<{ name: string; p50: number; p99: number; times: number }> = []
  for (const [name, url, times] of reports) {
    await timed(url, token, 1)
    const measured = await timed(url, token, times)
    figures.push({ name, times, ...measured })
    log(`  ${name}: p50 ${formatMs(measured.p50)}, p99 ${formatMs(measured.p99)} (${times} requests)`)
  }
  console.log("")
  console.log(`Analytics and ledger reports on ${formatInt(PAYMENTS)} paid payments (${database.description}; ${cores} cores, node ${process.version})`)
  console.log("")
  console.log("| report | p50 | p99 | requests |")
  console.log("|---|---:|---:|---:|")
  for (const figure of figures) console.log(`| ${figure.name} | ${formatMs(figure.p50)} | ${formatMs(figure.p99)} | ${figure.times} |`)
  console.log("")
  writeSummary({ database: database.description, payments: PAYMENTS, refunds, reports: figures })
}

runBench(main)
