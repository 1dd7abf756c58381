/**
 * Payments throughput (`npm run bench:payments`; `npm run bench` runs it with the other benches): how many
 * `POST /v1/payments` the all-in-one service answers per second, next to how many single-row INSERTs the
 * same database takes per second — the ceiling no amount of service code could pass.
 *
 * 1. A database: a fresh one on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server), or the
 *    one at BENCH_DATABASE_URL as it is; when no PostgreSQL answers, the embedded database (said so).
 * 2. The service as a child process (the bundle of `runtime/main.ts`, as `npm start` runs it) on a free loopback port,
 *    with a user, a store and a test API key made over HTTP (bench/support.ts, shared with bench/sse.ts).
 * 3. autocannon against `POST /v1/payments` (`{"amount":"12.50","currency":"USD"}`) with BENCH_CONNECTIONS
 *    connections (64) for BENCH_DURATION seconds (20), after BENCH_WARMUP seconds (3) of warm-up.
 * 4. The service stopped, a node-postgres pool of as many connections runs a prepared single-row INSERT of a
 *    payment-sized row into a scratch table, in a loop, for as long.
 * 5. A markdown table for the README (and the figures as JSON to BENCH_SUMMARY_FILE, for bench/all.ts). The
 *    child is stopped and the fresh database dropped however it ends.
 */
import autocannon from "autocannon"
import { randomBytes } from "node:crypto"
import { cpus } from "node:os"
import { Effect, Exit, Redacted, Scope } from "effect"
import pg from "pg"
import { serveEmbeddedDatabase } from "../runtime/EmbeddedPostgres.ts"
import {
  formatInt,
  formatMs,
  log,
  makeApiKey,
  onCleanUp,
  openDatabase,
  percentile,
  positiveNumber,
  runBench,
  startService,
  tempDir,
  withClient,
  writeSummary
} from "./support.ts"

const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 20)
const CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 64))
const WARMUP_SECONDS = positiveNumber("BENCH_WARMUP", 3, true)
const PAYMENT_BODY = JSON.stringify({ amount: "12.50", currency: "USD" })

// ---------------------------------------------------------------------------------------------
// Measurements
// ---------------------------------------------------------------------------------------------

interface HttpResult {
  readonly requestsPerSecond: number
  readonly ok: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  readonly seconds: number
}

const loadPayments = async (baseUrl: string, secret: string, seconds: number): Promise<HttpResult> => {
  const result = await autocannon({
    url: new URL("/v1/payments", baseUrl).toString(),
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: PAYMENT_BODY,
    connections: CONNECTIONS,
    duration: seconds
  })
  return {
    requestsPerSecond: result["2xx"] / result.duration,
    ok: result["2xx"],
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    seconds: result.duration
  }
}

interface CeilingResult {
  readonly insertsPerSecond: number
  readonly inserts: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

/**
 * Single-row INSERTs of a payment-sized row (the text, bigint and timestamp columns a payment has, a
 * KHQR-length payload, a primary key and one secondary index) from CONNECTIONS connections at once.
 */
const measureInsertCeiling = async (url: string, seconds: number): Promise<CeilingResult> => {
  const table = `bench_scratch_${randomBytes(4).toString("hex")}`
  await withClient(url, async (client) => {
    await client.query(`
      CREATE TABLE ${table} (
        id          text PRIMARY KEY,
        store_id    text NOT NULL,
        livemode    boolean NOT NULL,
        status      text NOT NULL,
        amount      bigint NOT NULL,
        currency    text NOT NULL,
        qr_payload  text NOT NULL,
        qr_md5      text NOT NULL,
        expires_at  timestamptz(3) NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now()
      )`)
    await client.query(`CREATE INDEX ${table}_list ON ${table} (store_id, livemode, created_at DESC, id DESC)`)
  })
  const pool = new pg.Pool({ connectionString: url, max: CONNECTIONS })
  try {
    // Open every connection before the clock starts.
    await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.query("SELECT 1")))
    const text = `INSERT INTO ${table} (id, store_id, livemode, status, amount, currency, qr_payload, qr_md5, expires_at)
      VALUES ($1, $2, false, 'pending', $3, 'USD', $4, $5, $6)`
    const storeId = `str_${randomBytes(12).toString("hex")}`
    const payload = `00020101021229340018test_merchant@devb0208Dev Bank520459995303840540512.505802KH5918KHQR TEST MERCHANT6010Phnom Penh9934001317952373166450113179523821664563${randomBytes(2).toString("hex")}`
    const latencies: Array<number> = []
    let errors = 0
    const started = performance.now()
    const deadline = started + seconds * 1000
    const worker = async () => {
      while (performance.now() < deadline) {
        const at = performance.now()
        try {
          await pool.query({
            name: "bench_insert",
            text,
            values: [`pay_${randomBytes(12).toString("hex")}`, storeId, 1250, payload, randomBytes(16).toString("hex"), new Date(Date.now() + 900_000)]
          })
          latencies.push(performance.now() - at)
        } catch (error) {
          if (errors++ === 0) log(`  first INSERT error: ${error instanceof Error ? error.message : String(error)}`)
        }
      }
    }
    await Promise.all(Array.from({ length: CONNECTIONS }, worker))
    const elapsed = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)
    return {
      insertsPerSecond: latencies.length / elapsed,
      inserts: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      errors
    }
  } finally {
    await pool.end()
    await withClient(url, (client) => client.query(`DROP TABLE IF EXISTS ${table}`)).catch(() => undefined)
  }
}

/** The embedded database of its own, for the ceiling when there is no PostgreSQL. */
const serveEmbeddedForCeiling = async (): Promise<string> => {
  const scope = Effect.runSync(Scope.make())
  onCleanUp(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  const url = await Effect.runPromise(serveEmbeddedDatabase(tempDir("merchant-bench-ceiling-")).pipe(Scope.extend(scope)))
  return Redacted.value(url)
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

const main = async () => {
  const cores = cpus().length
  const cpuModel = cpus()[0]?.model.trim() ?? "unknown CPU"
  log(`machine: ${cores} cores (${cpuModel}), node ${process.version}`)
  log(`load: ${CONNECTIONS} connections, ${DURATION_SECONDS} s (+ ${WARMUP_SECONDS} s warm-up)`)

  const database = await openDatabase()
  log(`database: ${database.description}`)
  const service = await startService(database)
  log(`service listening on ${service.baseUrl}`)
  const secret = await makeApiKey(service.baseUrl, JSON.parse(PAYMENT_BODY))

  if (WARMUP_SECONDS > 0) {
    log(`warm-up: ${WARMUP_SECONDS} s`)
    await loadPayments(service.baseUrl, secret, WARMUP_SECONDS)
  }
  log(`POST /v1/payments: ${DURATION_SECONDS} s at ${CONNECTIONS} connections`)
  const http = await loadPayments(service.baseUrl, secret, DURATION_SECONDS)
  log(
    `  ${formatInt(http.requestsPerSecond)} payments/s (${formatInt(http.ok)} created in ${http.seconds} s), ` +
      `p50 ${formatMs(http.p50)}, p99 ${formatMs(http.p99)}, errors ${http.errors} (timeouts ${http.timeouts}), non-2xx ${http.non2xx}`
  )
  if (database.url !== undefined) {
    const [row] = await withClient(database.url, async (client) =>
      (await client.query<{ count: string }>("SELECT count(*)::text AS count FROM payments")).rows)
    log(`  payments in the database: ${formatInt(Number(row!.count))} (warm-up and setup included)`)
  }

  // The database alone, with the service stopped so that nothing else competes for it.
  await service.stop()
  const ceilingUrl = database.url ?? await serveEmbeddedForCeiling()
  log(
    `database ceiling: ${database.url === undefined ? "" : "prepared "}single-row INSERT, ${CONNECTIONS} connections, ` +
      `${DURATION_SECONDS} s${database.url === undefined ? " (an embedded server of its own)" : ""}`
  )
  const ceiling = await measureInsertCeiling(ceilingUrl, DURATION_SECONDS)
  const share = http.requestsPerSecond / ceiling.insertsPerSecond
  log(
    `  ${formatInt(ceiling.insertsPerSecond)} inserts/s, p50 ${formatMs(ceiling.p50)}, p99 ${formatMs(ceiling.p99)}, ` +
      `errors ${ceiling.errors}`
  )
  log(`  the service reaches ${(share * 100).toFixed(1)} % of the database ceiling`)

  const date = new Date().toISOString().slice(0, 10)
  console.log("")
  console.log(`Payments throughput (\`npm run bench\`, ${date})`)
  console.log("")
  console.log("| machine | database | load | POST /v1/payments | p50 | p99 | errors / non-2xx | DB ceiling (single-row INSERT) | share of ceiling |")
  console.log("|---|---|---|---:|---:|---:|---:|---:|---:|")
  console.log(
    `| ${cores} cores, node ${process.version} | ${database.description} | ${CONNECTIONS} connections × ${DURATION_SECONDS} s ` +
      `| ${formatInt(http.requestsPerSecond)} req/s | ${formatMs(http.p50)} | ${formatMs(http.p99)} ` +
      `| ${http.errors} / ${http.non2xx} | ${formatInt(ceiling.insertsPerSecond)} inserts/s | ${(share * 100).toFixed(1)} % |`
  )
  console.log("")
  writeSummary({
    database: database.description,
    connections: CONNECTIONS,
    seconds: DURATION_SECONDS,
    paymentsPerSecond: http.requestsPerSecond,
    p50Ms: http.p50,
    p99Ms: http.p99,
    errors: http.errors,
    non2xx: http.non2xx,
    ceilingInsertsPerSecond: ceiling.insertsPerSecond,
    shareOfCeiling: share
  })
}

runBench(main)
