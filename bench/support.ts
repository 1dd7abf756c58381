/**
 * What the benches that run the service as a child process share: settings from the environment, a log
 * line format, clean-up however a bench ends, a database (a fresh one on PostgreSQL, or the embedded one
 * when none answers), the service on a free loopback port, and a user, store and test API key made over
 * HTTP.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { startNodeFlags } from "../scripts/build.mjs"

export const ROOT = fileURLToPath(new URL("..", import.meta.url))

export const positiveNumber = (name: string, fallback: number, allowZero = false): number => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new Error(`${name} must be a ${allowZero ? "non-negative" : "positive"} number, got "${raw}"`)
  }
  return value
}

export const POSTGRES_URL = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const GIVEN_DATABASE_URL = process.env["BENCH_DATABASE_URL"]
const LISTEN_TIMEOUT_MS = 90_000

/** Configuration variables of the service that must not leak in from the caller's environment. */
const CONFIG_VARIABLES = [
  "PORT", "HOST", "DATABASE_URL", "DATA_DIR", "MASTER_KEY", "PUBLIC_BASE_URL", "WEBHOOK_ALLOW_PRIVATE_NETWORKS",
  "PLATFORM_ADMIN_EMAILS", "PAYMENT_DEFAULT_EXPIRY_SECONDS", "REFUND_MFA_THRESHOLD", "NODE_ENV", "SHUTDOWN_GRACE_SECONDS",
  "SMTP_URL", "MAIL_FROM", "DATABASE_POOL_SIZE"
]

let logPrefix = "bench"
/** Names the bench in its log lines: `[bench:<name>]`. */
export const setLogPrefix = (prefix: string) => {
  logPrefix = prefix
}
export const log = (line: string) => console.log(`[${logPrefix}] ${line}`)
export const formatInt = (n: number) => Math.round(n).toLocaleString("en-US")
export const formatMs = (ms: number) => `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`

export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/**
 * Where `npm run bench` (bench/all.ts) wants a bench's figures: a JSON file named by BENCH_SUMMARY_FILE.
 * Nothing is written when a bench runs on its own.
 */
export const writeSummary = (summary: unknown) => {
  const file = process.env["BENCH_SUMMARY_FILE"]
  if (file !== undefined && file !== "") writeFileSync(file, JSON.stringify(summary, null, 2))
}

// ---------------------------------------------------------------------------------------------
// Clean-up that runs however the bench ends
// ---------------------------------------------------------------------------------------------

const cleanups: Array<() => Promise<void>> = []
let cleanedUp = false
/** Runs the clean-up steps registered so far, the last registered first; only once. */
export const cleanUp = async () => {
  if (cleanedUp) return
  cleanedUp = true
  for (const step of cleanups.reverse()) {
    await step().catch((error: unknown) => log(`clean-up step failed: ${String(error)}`))
  }
}
/** A step for `cleanUp`. */
export const onCleanUp = (step: () => Promise<void>) => {
  cleanups.push(step)
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`)
    void cleanUp().finally(() => process.exit(130))
  })
}

/** Runs a bench's main, then the clean-up; a failure is logged and makes the exit code 1. */
export const runBench = (main: () => Promise<void>) =>
  main().then(cleanUp, async (error: unknown) => {
    console.error(`[${logPrefix}] failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    await cleanUp()
    process.exitCode = 1
  })

export const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

// ---------------------------------------------------------------------------------------------
// The database
// ---------------------------------------------------------------------------------------------

export interface BenchDatabase {
  /** For the service's DATABASE_URL; undefined means the embedded database. */
  readonly url: string | undefined
  /** The database's name on the server; undefined for the embedded database. */
  readonly name: string | undefined
  readonly description: string
}

export const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
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

/**
 * A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server), dropped at
 * clean-up; the one at BENCH_DATABASE_URL as it is; or, when no PostgreSQL answers, the embedded database.
 */
export const openDatabase = async (): Promise<BenchDatabase> => {
  if (GIVEN_DATABASE_URL !== undefined) {
    const version = await serverVersion(GIVEN_DATABASE_URL)
    const name = decodeURIComponent(new URL(GIVEN_DATABASE_URL).pathname.slice(1)) || "postgres"
    return { url: GIVEN_DATABASE_URL, name, description: `PostgreSQL ${version} (BENCH_DATABASE_URL)` }
  }
  const version = await serverVersion(POSTGRES_URL).catch(() => undefined)
  if (version === undefined) {
    log(`no PostgreSQL answers at ${redact(POSTGRES_URL)}: using the EMBEDDED database (a PostgreSQL server the service runs itself), not the local server`)
    return { url: undefined, name: undefined, description: "embedded PostgreSQL" }
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
  return { url: url.toString(), name, description: `PostgreSQL ${version}, fresh database` }
}

export const redact = (url: string) => {
  const parsed = new URL(url)
  if (parsed.password !== "") parsed.password = "***"
  return parsed.toString()
}

// ---------------------------------------------------------------------------------------------
// The service as a child process
// ---------------------------------------------------------------------------------------------

export interface Service {
  readonly baseUrl: string
  /** The process that runs the service's program (tsx's child, not tsx itself); for its memory. */
  readonly programPid: () => number
  /** The last lines the service logged. */
  readonly tail: () => ReadonlyArray<string>
  /** How many warnings and errors the service logged (and access-log lines with a 5xx), and the first few. */
  readonly problems: () => { readonly count: number; readonly first: ReadonlyArray<string> }
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

/** The parent of every process (Linux /proc): pid → parent pid. */
const parentsByPid = (): Map<number, number> => {
  const parents = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      // "pid (comm) state ppid …": comm may contain spaces and parentheses, so read after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      parents.set(Number(entry), ppid)
    } catch {
      // the process ended meanwhile
    }
  }
  return parents
}

const commandLine = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ")
  } catch {
    return ""
  }
}

/**
 * The process that runs the program under `root`: `tsx runtime/main.ts` is a node process that starts
 * a second node process with tsx's loader and the program, and relays signals to it. That is the deepest
 * descendant whose command line names the program (esbuild's service processes do not); without one it
 * is `root` itself.
 */
export const programProcessOf = (root: number, program = "runtime/main.ts"): number => {
  const parents = parentsByPid()
  let current = root
  for (;;) {
    const next = [...parents].find(([pid, ppid]) => ppid === current && commandLine(pid).includes(program))
    if (next === undefined) return current
    current = next[0]
  }
}

/** CPU time a process has used so far, user and system, in milliseconds (/proc/<pid>/stat). */
export const cpuMillis = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  // After "pid (comm) ": state is field 3, utime and stime fields 14 and 15, in clock ticks (100 a second).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Resident memory of a process in KiB (VmRSS of /proc/<pid>/status). */
export const residentKiB = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return Number(match[1])
}

/**
 * The service (the bundle of `runtime/main.ts`, as `npm start` runs it) as a child process leading its own process
 * group, on a free loopback port (PORT=0; the bound port is read from the "listening on" line), with a
 * fresh DATA_DIR and master key; `nodeOptions` go to node, `env` adds or overrides variables. Stopped at clean-up. BENCH_SERVICE_LOG=<file> keeps all it logs there.
 */
export const startService = async (
  database: BenchDatabase,
  options: {
    readonly nodeOptions?: ReadonlyArray<string>
    readonly env?: Record<string, string>
    /** Run the sources through tsx instead of the bundle `npm start` runs (scripts/start.mjs). */
    readonly fromSource?: boolean
  } = {}
): Promise<Service> => {
  // BENCH_SERVICE_NODE_OPTIONS adds node flags to the service of any bench (`--cpu-prof --cpu-prof-dir=…`, say).
  const extraNodeOptions = (process.env["BENCH_SERVICE_NODE_OPTIONS"] ?? "").split(" ").filter((flag) => flag !== "")
  const nodeOptions = [...extraNodeOptions, ...(options.nodeOptions ?? [])]
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !CONFIG_VARIABLES.includes(name)) env[name] = value
  }
  Object.assign(env, {
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: tempDir("merchant-bench-"),
    MASTER_KEY: randomBytes(32).toString("base64"),
    ...(database.url === undefined ? {} : { DATABASE_URL: database.url }),
    ...options.env
  })
  // With node options (a profiler, say), node itself runs the program with tsx's loader, as `npm start` does.
  const [command, args] = options.fromSource === true
    ? [process.execPath, [...nodeOptions, "--import", "tsx", "runtime/main.ts"]]
    : [process.execPath, [...nodeOptions, ...startNodeFlags(), "scripts/start.mjs", "runtime/main.ts"]]
  const child = spawn(command, args, {
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

  // The service logs one line per request: keep reading (a full pipe would stall it), keep only the tail
  // (and everything in the file BENCH_SERVICE_LOG names, when it names one).
  const logFile = process.env["BENCH_SERVICE_LOG"]
  if (logFile !== undefined && logFile !== "") {
    const file = createWriteStream(logFile)
    child.stdout!.pipe(file)
    child.stderr!.pipe(file)
  }
  const tail: Array<string> = []
  const problems = { count: 0, first: [] as Array<string> }
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
        if (/level=(WARN|ERROR|FATAL)|status=5\d\d/.test(line)) {
          problems.count++
          if (problems.first.length < 10) problems.first.push(line.length > 2000 ? `${line.slice(0, 2000)}…` : line)
        }
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
  return {
    baseUrl,
    programPid: () => programProcessOf(child.pid!),
    tail: () => [...tail],
    problems: () => ({ count: problems.count, first: [...problems.first] }),
    stop
  }
}

export const getJson = async (baseUrl: string, path: string, token: string) => {
  const response = await fetch(new URL(path, baseUrl), { headers: { authorization: `Bearer ${token}` } })
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`)
  return response.json() as Promise<any>
}

export const postJson = async (baseUrl: string, path: string, body: unknown, token?: string) => {
  const response = await fetch(new URL(path, baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body)
  })
  const json = await response.json() as any
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(json)}`)
  return json
}

/**
 * A user, a store and a test-mode API key; answers the key's secret. One payment (`paymentBody`) goes
 * through the whole path before any measuring: a failure there is a setup error, not a result.
 */
export const makeApiKey = async (baseUrl: string, paymentBody: unknown): Promise<string> => {
  const session = await postJson(baseUrl, "/auth/register", {
    email: `bench-${randomBytes(5).toString("hex")}@example.test`,
    password: "correct horse battery staple"
  })
  const store = await postJson(baseUrl, "/stores", { name: "Bench Store" }, session.access_token)
  const key = await postJson(baseUrl, "/api-keys", { store_id: store.id, mode: "test" }, session.access_token)
  await postJson(baseUrl, "/v1/payments", paymentBody, key.secret)
  return key.secret
}
