/**
 * One runner or two behind one API node (`npm run bench:runners`): what adding a runner does to
 * throughput and latency. For each shape — the all-in-one process for reference (BENCH_ALL_IN_ONE=false
 * leaves it out), 1 runner + 1 API node, 2 runners + 1 API node, each on a fresh PostgreSQL database
 * (BENCH_POSTGRES_URL, default the local server; required: the embedded database serves one process) —
 * after BENCH_WARMUP seconds (3) of warm-up:
 *
 * 1. creates: autocannon against `POST /v1/payments` with BENCH_CONNECTIONS (64) connections for
 *    BENCH_DURATION seconds (15). A create is the API node and the database only: no entity is involved,
 *    so the runners' share is their background work (storage polls, heartbeats, singletons).
 * 2. payments paid: as many workers as connections, each in a loop creating a payment and paying it
 *    (simulate scanned, then paid: two messages to the Payment entity, on whichever runner holds its
 *    shard), for as long — the path that crosses from the API node to the runners.
 *
 * A markdown table with the machine's core count; the processes are stopped and the databases dropped
 * however it ends. The figures go as JSON to BENCH_SUMMARY_FILE when that is set.
 */
import autocannon from "autocannon"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { buildIfStale } from "../scripts/build.mjs"
import { childEnvironment, type ClusterProcess, freePort, startProcess } from "../scripts/LocalCluster.ts"

const positiveNumber = (name: string, fallback: number, allowZero = false): number => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new Error(`${name} must be a ${allowZero ? "non-negative" : "positive"} number, got "${raw}"`)
  }
  return value
}

const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 15)
const CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 64))
const WARMUP_SECONDS = positiveNumber("BENCH_WARMUP", 3, true)
const POSTGRES_URL = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const MASTER_KEY = randomBytes(32).toString("base64")
/** Runners behind the API node; 0 is the all-in-one process, for reference. BENCH_ALL_IN_ONE=false leaves it out. */
const SHAPES = process.env["BENCH_ALL_IN_ONE"] === "false" ? [1, 2] : [0, 1, 2]

const log = (line: string) => console.log(`[bench:runners] ${line}`)
const formatInt = (n: number) => Math.round(n).toLocaleString("en-US")
const formatMs = (ms: number) => `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------
// Clean-up however the bench ends
// ---------------------------------------------------------------------------------------------

const cleanups: Array<() => Promise<void>> = []
let cleanedUp = false
const cleanUp = async () => {
  if (cleanedUp) return
  cleanedUp = true
  for (const step of cleanups.reverse()) await step().catch((error: unknown) => log(`clean-up step failed: ${String(error)}`))
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`)
    void cleanUp().finally(() => process.exit(130))
  })
}

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** A fresh database on the server; dropped at clean-up. */
const freshDatabase = async (): Promise<string> => {
  const name = `bench_runners_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await withClient(POSTGRES_URL, (client) => client.query(`CREATE DATABASE ${name}`))
  cleanups.push(() => withClient(POSTGRES_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined))
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  return url.toString()
}

// ---------------------------------------------------------------------------------------------
// The cluster
// ---------------------------------------------------------------------------------------------

interface Cluster {
  readonly baseUrl: string
  readonly databaseUrl: string
  readonly stop: () => Promise<void>
}

/** `runners` runners and one API node; 0 runners means the all-in-one process (`runtime/main.ts`) instead. */
const startCluster = async (runners: number): Promise<Cluster> => {
  const databaseUrl = await freshDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), "merchant-bench-runners-"))
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  const processes: Array<ClusterProcess> = []
  const stop = async () => {
    await Promise.all(processes.filter((p) => p.role !== "runner").map((p) => p.stop(10_000)))
    await Promise.all(processes.filter((p) => p.role === "runner").map((p) => p.stop(10_000)))
  }
  cleanups.push(stop)
  const env = (extra: Record<string, string>) =>
    childEnvironment({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, MASTER_KEY, SHUTDOWN_GRACE_SECONDS: "2", ...extra })
  for (let i = 0; i < runners; i++) {
    const port = await freePort()
    processes.push(startProcess({ name: `runner-${i + 1}`, role: "runner", port, env: env({ RUNNER_HOST: "127.0.0.1", RUNNER_PORT: String(port) }) }))
  }
  await Promise.all(processes.map((p) => p.ready))
  const port = await freePort()
  const api = startProcess({ name: "api-1", role: runners === 0 ? "main" : "api", port, env: env({ HOST: "127.0.0.1", PORT: String(port) }) })
  processes.push(api)
  await api.ready
  const baseUrl = `http://127.0.0.1:${port}`
  // Ready once a message reaches a runner; then until every runner holds its share of the shards.
  const deadline = Date.now() + 90_000
  while ((await fetch(`${baseUrl}/ready`).then((r) => r.status, () => 0)) !== 200) {
    if (Date.now() > deadline) throw new Error("the API node did not become ready")
    await sleep(250)
  }
  await withClient(databaseUrl, async (client) => {
    while (true) {
      const { rows } = await client.query<{ holders: number; shards: number }>(
        `SELECT count(DISTINCT pid)::int AS holders, count(*)::int AS shards FROM pg_locks
         WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid BETWEEN 1000001 AND 1000300
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
      )
      if (rows[0]!.holders === Math.max(runners, 1) && rows[0]!.shards === 300) return
      if (Date.now() > deadline) throw new Error(`the shards were not spread over ${runners} runner(s) in time`)
      await sleep(250)
    }
  })
  return { baseUrl, databaseUrl, stop }
}

const postJson = async (baseUrl: string, path: string, body: unknown, token?: string) => {
  const response = await fetch(new URL(path, baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body)
  })
  const json = await response.json() as any
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(json)}`)
  return json
}

const makeApiKey = async (baseUrl: string): Promise<string> => {
  const session = await postJson(baseUrl, "/auth/register", {
    email: `bench-${randomBytes(5).toString("hex")}@example.test`,
    password: "correct horse battery staple"
  })
  const store = await postJson(baseUrl, "/stores", { name: "Bench Store" }, session.access_token)
  const key = await postJson(baseUrl, "/api-keys", { store_id: store.id, mode: "test" }, session.access_token)
  return key.secret
}

// ---------------------------------------------------------------------------------------------
// The loads
// ---------------------------------------------------------------------------------------------

interface Figures {
  readonly perSecond: number
  readonly done: number
  readonly p50: number
  readonly p99: number
  readonly failures: number
}

const creates = async (baseUrl: string, secret: string, seconds: number): Promise<Figures> => {
  const result = await autocannon({
    url: new URL("/v1/payments", baseUrl).toString(),
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ amount: "12.50", currency: "USD" }),
    connections: CONNECTIONS,
    duration: seconds
  })
  return {
    perSecond: result["2xx"] / result.duration,
    done: result["2xx"],
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx
  }
}

/** Workers creating and paying payments in a loop; latency is that of the simulate requests (entity messages). */
const payments = async (baseUrl: string, secret: string, seconds: number): Promise<Figures> => {
  const latencies: Array<number> = []
  let paid = 0
  let failures = 0
  const started = performance.now()
  const until = started + seconds * 1000
  const post = async (path: string, body: unknown) => {
    const response = await fetch(new URL(path, baseUrl), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      body: JSON.stringify(body)
    })
    const json = await response.json() as any
    if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}`)
    return json
  }
  const worker = async () => {
    while (performance.now() < until) {
      try {
        const payment = await post("/v1/payments", { amount: "12.50", currency: "USD" })
        for (const status of ["scanned", "paid"]) {
          const sent = performance.now()
          await post(`/v1/payments/${payment.id}/simulate`, { status })
          latencies.push(performance.now() - sent)
        }
        paid++
      } catch {
        failures++
      }
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return { perSecond: paid / elapsed, done: paid, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failures }
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

const shapeName = (runners: number) => runners === 0 ? "all-in-one (main.ts)" : `${runners} runner(s) + 1 API node`

interface ShapeResult {
  readonly runners: number
  readonly creates: Figures
  readonly payments: Figures
}

const measure = async (runners: number): Promise<ShapeResult> => {
  log(`${shapeName(runners)}: starting`)
  const cluster = await startCluster(runners)
  const secret = await makeApiKey(cluster.baseUrl)
  if (WARMUP_SECONDS > 0) {
    log(`warming up for ${WARMUP_SECONDS} s`)
    await creates(cluster.baseUrl, secret, WARMUP_SECONDS)
    await payments(cluster.baseUrl, secret, WARMUP_SECONDS)
  }
  log(`creates: ${CONNECTIONS} connections for ${DURATION_SECONDS} s`)
  const createFigures = await creates(cluster.baseUrl, secret, DURATION_SECONDS)
  log(`payments paid: ${CONNECTIONS} workers for ${DURATION_SECONDS} s`)
  const paymentFigures = await payments(cluster.baseUrl, secret, DURATION_SECONDS)
  await cluster.stop()
  return { runners, creates: createFigures, payments: paymentFigures }
}

const main = async () => {
  await withClient(POSTGRES_URL, (client) => client.query("SELECT 1")).catch((error: unknown) => {
    throw new Error(`no PostgreSQL answers at BENCH_POSTGRES_URL (${POSTGRES_URL}); runners need one: ${String(error)}`)
  })
  await buildIfStale()
  const results: Array<ShapeResult> = []
  for (const runners of SHAPES) results.push(await measure(runners))
  const cores = cpus().length
  const row = (r: ShapeResult) =>
    `| ${shapeName(r.runners)} | ${formatInt(r.creates.perSecond)} | ${formatMs(r.creates.p50)} | ${formatMs(r.creates.p99)} | ` +
    `${formatInt(r.payments.perSecond)} | ${formatMs(r.payments.p50)} | ${formatMs(r.payments.p99)} | ${r.creates.failures + r.payments.failures} |`
  console.log(
    [
      "",
      `${cores} CPU core(s) (${cpus()[0]?.model ?? "unknown"}), Node ${process.version}; one API node, ${CONNECTIONS} connections, ${DURATION_SECONDS} s per load after ${WARMUP_SECONDS} s of warm-up; everything on this machine.`,
      "",
      "| shape | payments created/s | create p50 | create p99 | payments paid/s (create + 2 simulates) | simulate p50 | simulate p99 | failed requests |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...results.map(row),
      ""
    ].join("\n")
  )
  const file = process.env["BENCH_SUMMARY_FILE"]
  if (file !== undefined && file !== "") writeFileSync(file, JSON.stringify({ cores, connections: CONNECTIONS, seconds: DURATION_SECONDS, results }, null, 2))
}

main().then(
  () => cleanUp(),
  async (error: unknown) => {
    console.error(error)
    await cleanUp()
    process.exitCode = 1
  }
)
