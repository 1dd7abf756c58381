/**
 * Referral conversions (`npm run bench:referrals`; `npm run bench` runs it with the others): how many
 * referees' first paid payments per second the referrals consumer applies — outbox event → the referral
 * converted and its commission accrued in one transaction, then points to both wallets through the
 * CustomerWallet entity — and how fast the console's commission summary and funnel report answer over them.
 *
 * 1. A fresh database (BENCH_POSTGRES_URL, or BENCH_DATABASE_URL as it is) and the service as a child
 *    process; over HTTP a user, a store with an active loyalty and referral program (500 / 200 points,
 *    5 %), a referrer with its code, a referee made with that code, and the referee's payment paid through
 *    the whole path (converted once, a setup check). BENCH_REFEREES referees (5,000) and their pending
 *    referrals are then cloned from that referee in SQL.
 * 2. Backlog: one paid payment per referee with its `payment.completed` outbox event, committed in one
 *    transaction; the time until every referral has converted and its commission exists gives events/s.
 * 3. GET commissions/summary and referrals/report, BENCH_READS times each (50): p50 and p99.
 * 4. A markdown table for the README (and the figures as JSON to BENCH_SUMMARY_FILE, for bench/all.ts).
 */
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

setLogPrefix("bench:referrals")

const REFEREES = Math.round(positiveNumber("BENCH_REFEREES", 5_000))
const READS = Math.round(positiveNumber("BENCH_READS", 50))

const sendJson = async (baseUrl: string, method: "GET" | "PUT", path: string, token: string, body?: unknown) => {
  const response = await fetch(new URL(path, baseUrl), {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

const pendingEvents = async (client: pg.Client) =>
  (await client.query<{ pending: number }>(
    `SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = 'referrals'`
  )).rows[0]!.pending

const untilApplied = async (client: pg.Client, timeoutMs: number) => {
  const deadline = performance.now() + timeoutMs
  while ((await pendingEvents(client)) > 0) {
    if (performance.now() > deadline) throw new Error("the referrals consumer did not apply every event in time")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const timed = async (count: number, request: () => Promise<unknown>) => {
  const latencies: Array<number> = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    await request()
    latencies.push(performance.now() - started)
  }
  latencies.sort((a, b) => a - b)
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
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
    email: `bench-referrals-${Date.now().toString(36)}@example.test`,
    password: "correct horse battery staple"
  })
  const token: string = session.access_token
  const store = await postJson(service.baseUrl, "/stores", { name: "Bench Store" }, token)
  const key = (await postJson(service.baseUrl, "/api-keys", { store_id: store.id, mode: "test" }, token)).secret as string
  await sendJson(service.baseUrl, "PUT", `/dashboard/stores/${store.id}/loyalty`, token, { active: true, points_per_unit: { USD: "0" } })
  await sendJson(service.baseUrl, "PUT", `/dashboard/stores/${store.id}/referral-program`, token, {
    active: true,
    referrer_points: 500,
    referee_points: 200,
    commission_percent: "5",
    commission_window_days: 30
  })
  const referrer = await postJson(service.baseUrl, "/v1/customers", { email: "referrer@example.test" }, key)
  const { code } = await postJson(service.baseUrl, `/v1/customers/${referrer.id}/referral-code`, {}, key)
  const referee = await postJson(service.baseUrl, "/v1/customers", { email: "referee@example.test", referral_code: code }, key)
  const payment = await postJson(service.baseUrl, "/v1/payments", { amount: "12.50", currency: "USD", customer_id: referee.id }, key)
  await postJson(service.baseUrl, `/v1/payments/${payment.id}/simulate`, { status: "scanned" }, key)
  await postJson(service.baseUrl, `/v1/payments/${payment.id}/simulate`, { status: "paid" }, key)

  await withClient(database.url, async (client) => {
    await untilApplied(client, 30_000)
    const converted = (await client.query<{ status: string }>(`SELECT status FROM referrals WHERE referee_id = $1`, [referee.id])).rows[0]
    if (converted?.status !== "converted") throw new Error(`setup: the template referral is ${converted?.status}, not converted`)
    // Referees and their pending referrals, cloned; ids are 24 hex characters (a subset of base62).
    await client.query(
      `INSERT INTO customers (id, store_id, livemode, email, metadata, preferences_updated_at, created_at, updated_at)
       SELECT 'cus_' || substr(md5('bench-referee-' || g), 1, 24), store_id, livemode, 'referee' || g || '@example.test', '{}',
         created_at, created_at, created_at
       FROM customers, generate_series(0, $2::int - 1) g WHERE id = $1`,
      [referee.id, REFEREES]
    )
    await client.query(
      `INSERT INTO referrals (id, store_id, livemode, referrer_id, referee_id, status, created_at)
       SELECT 'ref_' || substr(md5('bench-ref-' || g), 1, 24), r.store_id, r.livemode, r.referrer_id,
         'cus_' || substr(md5('bench-referee-' || g), 1, 24), 'pending', r.created_at
       FROM referrals r, generate_series(0, $2::int - 1) g WHERE r.referee_id = $1`,
      [referee.id, REFEREES]
    )
  })
  log(`${formatInt(REFEREES)} referees with pending referrals ready`)

  const backlog = await withClient(database.url, async (client) => {
    await client.query(
      `WITH made AS (
         INSERT INTO payments
         SELECT (jsonb_populate_record(NULL::payments, to_jsonb(p) || jsonb_build_object(
           'id', 'pay_' || substr(md5('bench-pay-' || g), 1, 24),
           'customer_id', 'cus_' || substr(md5('bench-referee-' || g), 1, 24),
           'qr_md5', md5('bench-qr-' || g)))).*
         FROM payments p, generate_series(0, $2::int - 1) g
         WHERE p.id = $1
         RETURNING id, store_id, livemode, customer_id
       )
       INSERT INTO outbox (event_id, store_id, livemode, type, payload, dispatched_at)
       SELECT 'evt_' || substr(md5('bench-evt-' || id), 1, 24), store_id, livemode, 'payment.completed',
         jsonb_build_object('data', jsonb_build_object('object', jsonb_build_object('id', id, 'customer_id', customer_id))), now()
       FROM made`,
      [payment.id, REFEREES]
    )
    await client.query(`SELECT pg_notify($1, $2)`, [OUTBOX_CHANNEL, outboxNotice.of("bench", "payment.completed")])
    const started = performance.now()
    await untilApplied(client, 600_000)
    const seconds = (performance.now() - started) / 1000
    const counts = (await client.query<{ converted: number; commissions: number }>(
      `SELECT (SELECT count(*)::int FROM referrals WHERE store_id = $1 AND status = 'converted') AS converted,
              (SELECT count(*)::int FROM commissions WHERE store_id = $1 AND status = 'accrued') AS commissions`,
      [store.id]
    )).rows[0]!
    if (counts.converted !== REFEREES + 1 || counts.commissions !== REFEREES + 1) {
      throw new Error(`backlog: ${counts.converted} converted referrals and ${counts.commissions} commissions for ${REFEREES + 1} referees`)
    }
    return { seconds, eventsPerSecond: REFEREES / seconds }
  })
  log(`backlog of ${formatInt(REFEREES)} first payments applied in ${backlog.seconds.toFixed(2)} s: ${formatInt(backlog.eventsPerSecond)} events/s`)

  const summary = await timed(READS, () => sendJson(service.baseUrl, "GET", `/dashboard/stores/${store.id}/commissions/summary`, token))
  const report = await timed(READS, () => sendJson(service.baseUrl, "GET", `/dashboard/stores/${store.id}/referrals/report`, token))
  log(`commission summary p50 ${formatMs(summary.p50)}, p99 ${formatMs(summary.p99)}; funnel report p50 ${formatMs(report.p50)}, p99 ${formatMs(report.p99)}`)

  console.log([
    "",
    `| referrals (${database.description}, ${cores} cores) | figure |`,
    "|---|---|",
    `| backlog of ${formatInt(REFEREES)} referees' first paid payments: conversion, commission, both wallets | ${formatInt(backlog.eventsPerSecond)} events/s (${backlog.seconds.toFixed(2)} s) |`,
    `| GET commissions/summary over ${formatInt(REFEREES + 1)} commissions, p50 / p99 | ${formatMs(summary.p50)} / ${formatMs(summary.p99)} |`,
    `| GET referrals/report over ${formatInt(REFEREES + 1)} referrals, p50 / p99 | ${formatMs(report.p50)} / ${formatMs(report.p99)} |`,
    ""
  ].join("\n"))
  writeSummary({
    database: database.description,
    referees: REFEREES,
    eventsPerSecond: backlog.eventsPerSecond,
    backlogSeconds: backlog.seconds,
    summaryP50: summary.p50,
    summaryP99: summary.p99,
    reportP50: report.p50,
    reportP99: report.p99
  })
}

runBench(main)
