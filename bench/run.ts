/**
 * Payments throughput (`npm run bench`): how many `POST /v1/payments` the all-in-one service answers per
 * second, next to how many single-row INSERTs the same database takes per second — the ceiling no amount
 * of service code could pass.
 *
 * 1. A database: a fresh one on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server), or the
 *    one at BENCH_DATABASE_URL as it is; when no PostgreSQL answers, the embedded database (said so).
 * 2. The service as a child process (`tsx runtime/main.ts`, as `npm start` runs it) on a free loopback port,
 *    with a user, a store and a test API key made over HTTP.
 * 3. autocannon against `POST /v1/payments` (`{"amount":"12.50","currency":"USD"}`) with BENCH_CONNECTIONS
 *    connections (64) for BENCH_DURATION seconds (20), after BENCH_WARMUP seconds (3) of warm-up.
 * 4. The service stopped, a node-postgres pool of as many connections runs a prepared single-row INSERT of a
 *    payment-sized row into a scratch table, in a loop, for as long.
 * 5. A markdown table for the README. The child is stopped and the fresh database dropped however it ends.
 */
import autocannon from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

const positiveNumber = (name: string, fallback: number, allowZero = false): number => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new Error(`${name} must be a ${allowZero ? "non-negative" : "positive"} number, got "${raw}"`)
  }
  return value
}

const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 20)
const CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 64))
const WARMUP_SECONDS = positiveNumber("BENCH_WARMUP", 3, true)
const POSTGRES_URL = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const GIVEN_DATABASE_URL = process.env["BENCH_DATABASE_URL"]
const PAYMENT_BODY = JSON.stringify({ amount: "12.50", currency: "USD" })
const LISTEN_TIMEOUT_MS = 90_000

/** Configuration variables of the service that must not leak in from the caller's environment. */
const CONFIG_VARIABLES = [
  "PORT", "HOST", "DATABASE_URL", "DATA_DIR", "MASTER_KEY", "PUBLIC_BASE_URL", "WEBHOOK_ALLOW_PRIVATE_NETWORKS",
  "PLATFORM_ADMIN_EMAILS", "PAYMENT_DEFAULT_EXPIRY_SECONDS", "REFUND_MFA_THRESHOLD", "NODE_ENV", "SHUTDOWN_GRACE_SECONDS"
]

const log = (line: string) => console.log(`[bench] ${line}`)
const formatInt = (n: number) => Math.round(n).toLocaleString("en-US")
const formatMs = (ms: number) => `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`

// ---------------------------------------------------------------------------------------------
// Clean-up that runs however the bench ends
// ---------------------------------------------------------------------------------------------

const cleanups: Array<() => Promise<void>> = []
let cleanedUp = false
const cleanUp = async () => {
  if (cleanedUp) return
  cleanedUp = true
  for (const step of cleanups.reverse()) {
    await step().catch((error: unknown) => log(`clean-up step failed: ${String(error)}`))
  }
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`)
    void cleanUp().finally(() => process.exit(130))
  })
}

const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

// ---------------------------------------------------------------------------------------------
// The database
// ---------------------------------------------------------------------------------------------

interface BenchDatabase {
  /** For the service's DATABASE_URL; undefined means the embedded database. */
  readonly url: string | undefined
  readonly description: string
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

const serverVersion = (url: string) =>
  withClient(url, async (client) => (await client.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version)

const openDatabase = async (): Promise<BenchDatabase> => {
  if (GIVEN_DATABASE_URL !== undefined) {
    const version = await serverVersion(GIVEN_DATABASE_URL)
    return { url: GIVEN_DATABASE_URL, description: `PostgreSQL ${version} (BENCH_DATABASE_URL)` }
  }
  const version = await serverVersion(POSTGRES_URL).catch(() => undefined)
  if (version === undefined) {
    log(`no PostgreSQL answers at ${redact(POSTGRES_URL)}: using the EMBEDDED database (PGlite), not PostgreSQL`)
    return { url: undefined, description: "embedded (PGlite)" }
  }
  const name = `bench_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await withClient(POSTGRES_URL, (client) => client.query(`CREATE DATABASE ${name}`))
  cleanups.push(async () => {
    await withClient(POSTGRES_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    log(`dropped database ${name}`)
  })
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  log(`created database ${name} on ${redact(POSTGRES_URL)}`)
  return { url: url.toString(), description: `PostgreSQL ${version}, fresh database` }
}

const redact = (url: string) => {
  const parsed = new URL(url)
  if (parsed.password !== "") parsed.password = "***"
  return parsed.toString()
}

// ---------------------------------------------------------------------------------------------
// The service as a child process
// ---------------------------------------------------------------------------------------------

/**
 * A free loopback port. The service should take PORT=0 and log the port it bound (API.md), but its
 * configuration refuses 0, so the bench picks one.
 */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

interface Service {
  readonly baseUrl: string
  readonly stop: () => Promise<void>
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/** tsx runs the program in a grandchild: signal the whole process group, which the child leads. */
const signalGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  if (child.pid === undefined || !isRunning(child)) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}

const startService = async (database: BenchDatabase): Promise<Service> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !CONFIG_VARIABLES.includes(name)) env[name] = value
  }
  Object.assign(env, {
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    DATA_DIR: tempDir("merchant-bench-"),
    MASTER_KEY: randomBytes(32).toString("base64"),
    ...(database.url === undefined ? {} : { DATABASE_URL: database.url })
  })
  const child = spawn(join(ROOT, "node_modules/.bin/tsx"), ["runtime/main.ts"], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const stop = async () => {
    if (!isRunning(child)) return
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    signalGroup(child, "SIGTERM")
    const timer = setTimeout(() => signalGroup(child, "SIGKILL"), 10_000)
    await exited
    clearTimeout(timer)
  }
  cleanups.push(stop)

  // The service logs one line per request: keep reading (a full pipe would stall it), keep only the tail.
  const tail: Array<string> = []
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the service did not log "listening on" within ${LISTEN_TIMEOUT_MS} ms:\n${tail.join("\n")}`)),
      LISTEN_TIMEOUT_MS
    )
    let listening = false
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.length === 0) continue
        tail.push(line)
        if (tail.length > 40) tail.shift()
        if (listening) continue
        const match = /listening on (http:\/\/[^\s"]+)/.exec(line)
        if (match) {
          listening = true
          clearTimeout(timer)
          resolve(match[1]!)
        }
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      if (!listening) reject(new Error(`the service exited (${code ?? signal}) before listening:\n${tail.join("\n")}`))
    })
  })
  return { baseUrl, stop }
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

/** A user, a store and a test-mode API key; answers the key's secret. */
const makeApiKey = async (baseUrl: string): Promise<string> => {
  const session = await postJson(baseUrl, "/auth/register", {
    email: `bench-${randomBytes(5).toString("hex")}@example.test`,
    password: "correct horse battery staple"
  })
  const store = await postJson(baseUrl, "/stores", { name: "Bench Store" }, session.access_token)
  const key = await postJson(baseUrl, "/api-keys", { store_id: store.id, mode: "test" }, session.access_token)
  // One payment through the whole path before any measuring: a failure here is a setup error, not a result.
  await postJson(baseUrl, "/v1/payments", JSON.parse(PAYMENT_BODY), key.secret)
  return key.secret
}

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

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/**
 * Single-row INSERTs of a payment-sized row (the text, bigint and timestamp columns a payment has, a
 * KHQR-length payload, a primary key and one secondary index) from CONNECTIONS connections at once.
 */
const measureInsertCeiling = async (url: string, seconds: number, embedded: boolean): Promise<CeilingResult> => {
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
            // PGlite is one backend behind a multiplexing socket: a named statement prepared on one pooled
            // connection exists on all of them, and preparing it again fails.
            ...(embedded ? {} : { name: "bench_insert" }),
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

/** The embedded engine served in this process, for the ceiling when there is no PostgreSQL. */
const serveEmbeddedForCeiling = async (): Promise<string> => {
  const { PGlite } = await import("@electric-sql/pglite")
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket")
  const db = await PGlite.create({ dataDir: join(tempDir("merchant-bench-ceiling-"), "pgdata") })
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: CONNECTIONS + 8 })
  await server.start()
  cleanups.push(async () => {
    await server.stop()
    await db.close()
  })
  return `postgres://postgres:postgres@${server.getServerConn()}/postgres?sslmode=disable`
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
  const secret = await makeApiKey(service.baseUrl)

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
      `${DURATION_SECONDS} s${database.url === undefined ? " (a PGlite of its own in this process)" : ""}`
  )
  const ceiling = await measureInsertCeiling(ceilingUrl, DURATION_SECONDS, database.url === undefined)
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
}

main()
  .then(cleanUp, async (error: unknown) => {
    console.error(`[bench] failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    await cleanUp()
    process.exitCode = 1
  })
