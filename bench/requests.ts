/**
 * Request overhead and start-up (`npm run bench:requests`; `npm run bench` runs it with the others):
 *
 * 1. The service as a child process on a fresh database (bench/support.ts), a user, a store and a test
 *    API key. `GET /health` (no credential, no database) and then `GET /v1/payments?limit=1` with the key
 *    under autocannon, BENCH_CONNECTIONS (64) connections for BENCH_DURATION seconds (10) each, after a
 *    warm-up: the list's rate as a share of /health's, measured in the same run on the same machine.
 * 2. Cold start as `npm start` runs it (the bundle, scripts/start.mjs): the service stopped and started
 *    again on the same data directory (migrations done, the code not yet loaded), timed from the spawn
 *    to the first `/ready` 200. Once on the bench's database,
 *    and once on the embedded default (`npm start` with no DATABASE_URL), whose server starts too.
 *
 * The figures go to BENCH_SUMMARY_FILE for bench/all.ts.
 */
import autocannon from "autocannon"
import { randomBytes } from "node:crypto"
import {
  formatInt,
  formatMs,
  log,
  makeApiKey,
  openDatabase,
  positiveNumber,
  runBench,
  setLogPrefix,
  startService,
  tempDir,
  writeSummary,
  type BenchDatabase
} from "./support.ts"

setLogPrefix("bench:requests")

const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 10)
const CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 64))
const WARMUP_SECONDS = positiveNumber("BENCH_WARMUP", 3, true)

interface Load {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
}

const load = async (url: string, seconds: number, token?: string): Promise<Load> => {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
  })
  return {
    requestsPerSecond: result["2xx"] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors
  }
}

const describeLoad = (label: string, figures: Load) =>
  log(`  ${label}: ${formatInt(figures.requestsPerSecond)} req/s, p50 ${formatMs(figures.p50)}, p99 ${formatMs(figures.p99)}, non-2xx ${figures.non2xx}, errors ${figures.errors}`)

/** Spawn → first `/ready` 200 of a service on an existing data directory, in milliseconds. */
const coldStart = async (database: BenchDatabase, env: Record<string, string>): Promise<number> => {
  const first = await startService(database, { env })
  await waitReady(first.baseUrl)
  await first.stop()
  const spawned = performance.now()
  const second = await startService(database, { env })
  await waitReady(second.baseUrl)
  const elapsed = performance.now() - spawned
  await second.stop()
  return elapsed
}

const waitReady = async (baseUrl: string) => {
  for (;;) {
    const status = await fetch(new URL("/ready", baseUrl)).then((response) => response.status, () => 0)
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

runBench(async () => {
  const database = await openDatabase()
  log(`database: ${database.description}`)
  const service = await startService(database)
  const secret = await makeApiKey(service.baseUrl, { amount: "12.50", currency: "USD" })
  const health = new URL("/health", service.baseUrl).toString()
  const list = new URL("/v1/payments?limit=1", service.baseUrl).toString()
  if (WARMUP_SECONDS > 0) {
    log(`warm-up: ${WARMUP_SECONDS} s each`)
    await load(health, WARMUP_SECONDS)
    await load(list, WARMUP_SECONDS, secret)
  }
  log(`${CONNECTIONS} connections × ${DURATION_SECONDS} s each`)
  const healthFigures = await load(health, DURATION_SECONDS)
  describeLoad("GET /health", healthFigures)
  const listFigures = await load(list, DURATION_SECONDS, secret)
  describeLoad("GET /v1/payments?limit=1 (API key)", listFigures)
  const listShare = listFigures.requestsPerSecond / healthFigures.requestsPerSecond
  log(`  the list reaches ${(listShare * 100).toFixed(0)} % of /health`)
  await service.stop()

  const sameKey = () => ({ DATA_DIR: tempDir("merchant-bench-start-"), MASTER_KEY: randomBytes(32).toString("base64") })
  const coldStartMs = await coldStart(database, sameKey())
  log(`cold start to /ready (${database.description}, data directory exists): ${formatMs(coldStartMs)}`)
  const embeddedColdStartMs = await coldStart({ url: undefined, name: undefined, description: "embedded PostgreSQL" }, sameKey())
  log(`cold start to /ready (embedded default, data directory exists): ${formatMs(embeddedColdStartMs)}`)

  writeSummary({
    database: database.description,
    connections: CONNECTIONS,
    seconds: DURATION_SECONDS,
    health: healthFigures,
    list: listFigures,
    listShareOfHealth: listShare,
    coldStartMs,
    embeddedColdStartMs
  })
})
