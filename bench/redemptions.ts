/**
 * Redemptions on one wallet (`npm run bench:redemptions`; `npm run bench` runs it with the others): how many
 * `POST /v1/loyalty/redeem` one customer's wallet answers a second, each a `Redeem` message to its
 * CustomerWallet entity, which applies the changes waiting together in one transaction under the wallet's
 * lock (the redemptions, their voucher codes, the balance, the points entries, the outbox events and notices).
 *
 * 1. A fresh database (BENCH_POSTGRES_URL, or BENCH_DATABASE_URL as it is; the embedded database without
 *    one) and the service as a child process (the bundle `npm start` runs).
 * 2. Over HTTP: a user, a store, an API key, one customer, and an adjustment giving it enough points for
 *    every redemption. A warm-up of 100 redemptions.
 * 3. BENCH_REDEMPTIONS redemptions of 1 point (2,000), BENCH_CONCURRENCY in flight (64), all for that one
 *    customer: redemptions per second, p50 and p99. Then the wallet's balance is checked: exactly one point
 *    less per redemption answered (none lost, none taken twice).
 * 4. A markdown table for the README (and the figures as JSON to BENCH_SUMMARY_FILE, for bench/all.ts).
 */
import { randomBytes } from "node:crypto"
import { cpus } from "node:os"
import {
  formatInt,
  formatMs,
  getJson,
  log,
  openDatabase,
  percentile,
  positiveNumber,
  postJson,
  runBench,
  setLogPrefix,
  startService,
  writeSummary
} from "./support.ts"

setLogPrefix("bench:redemptions")

const REDEMPTIONS = Math.round(positiveNumber("BENCH_REDEMPTIONS", 2_000))
const CONCURRENCY = Math.round(positiveNumber("BENCH_CONCURRENCY", 64))
const WARM_UP = 100

/** `count` redemptions of one point for `customerId`, `concurrency` at a time: each one's latency. */
const redeemMany = async (baseUrl: string, key: string, customerId: string, count: number, concurrency: number) => {
  const latencies: Array<number> = []
  let next = 0
  let refused = ""
  const worker = async () => {
    while (next < count && refused === "") {
      next++
      const started = performance.now()
      const response = await fetch(new URL("/v1/loyalty/redeem", baseUrl), {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ customer_id: customerId, points: 1 })
      })
      const body = await response.text()
      if (response.status !== 201) refused = `${response.status}: ${body}`
      latencies.push(performance.now() - started)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  if (refused !== "") throw new Error(`a redemption was refused: ${refused}`)
  return latencies
}

runBench(async () => {
  const database = await openDatabase()
  log(`database: ${database.description}`)
  const service = await startService(database)
  const { baseUrl } = service
  const session = await postJson(baseUrl, "/auth/register", {
    email: `bench-${randomBytes(5).toString("hex")}@example.test`,
    password: "correct horse battery staple"
  })
  const token = session.access_token as string
  const store = await postJson(baseUrl, "/stores", { name: "Bench Store" }, token)
  const key = (await postJson(baseUrl, "/api-keys", { store_id: store.id, mode: "test" }, token)).secret as string
  const customer = await postJson(baseUrl, "/v1/customers", { external_id: "bench-wallet" }, key)
  const granted = REDEMPTIONS + WARM_UP
  await postJson(baseUrl, `/dashboard/customers/${customer.id}/loyalty/adjust`, { points: granted, reason: "bench" }, token)
  log(`one wallet of ${formatInt(granted)} points; warming up`)
  await redeemMany(baseUrl, key, customer.id, WARM_UP, Math.min(CONCURRENCY, 16))

  const started = performance.now()
  const latencies = await redeemMany(baseUrl, key, customer.id, REDEMPTIONS, CONCURRENCY)
  const seconds = (performance.now() - started) / 1000
  const sorted = [...latencies].sort((a, b) => a - b)
  const perSecond = REDEMPTIONS / seconds
  log(`${formatInt(REDEMPTIONS)} redemptions on one wallet in ${seconds.toFixed(2)} s: ${formatInt(perSecond)}/s`)

  const after = await getJson(baseUrl, `/v1/customers/${customer.id}`, key)
  if (after.points_balance !== 0) {
    throw new Error(`the wallet holds ${after.points_balance} points after ${granted} redemptions of 1 point, not 0`)
  }
  const problems = service.problems()
  await service.stop()
  writeSummary({
    database: database.description,
    redemptions: REDEMPTIONS,
    concurrency: CONCURRENCY,
    perSecond,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99)
  })
  console.log([
    "",
    `| redemptions on one wallet (${database.description}, ${cpus().length} cores, ${CONCURRENCY} in flight) | redemptions/s | p50 | p99 |`,
    "|---|---:|---:|---:|",
    `| ${formatInt(REDEMPTIONS)} × \`POST /v1/loyalty/redeem\` of 1 point | ${formatInt(perSecond)} | ${formatMs(percentile(sorted, 50))} | ${formatMs(percentile(sorted, 99))} |`,
    ""
  ].join("\n"))
  if (problems.count > 0) log(`the service logged ${problems.count} problems, first: ${problems.first.join(" | ")}`)
})
