/**
 * The real entry point (`npm start`: scripts/start.mjs and the bundle) as a child process, as an operator runs it: start-up
 * failures on bad configuration, the embedded database across a restart, graceful shutdown on
 * SIGTERM, and two processes starting at once on one PostgreSQL database.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import http from "node:http"
import net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { afterEach, describe, expect, it } from "vitest"
import { runningEmbeddedDatabaseUrl } from "../../runtime/EmbeddedPostgres.ts"
import { startCommand } from "../../scripts/build.mjs"
import { postgresAvailable } from "../support/TestDatabase.ts"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
/** The service as `npm start` runs it: the bundle (built by globalSetup), in the one process signals reach. */
const SERVICE = startCommand("runtime/main.ts")

/** Two forks of the suite may be starting services too. */
const TEST_TIMEOUT = 90_000
const LISTEN_TIMEOUT = 60_000
const READY_TIMEOUT = 30_000
const EXIT_TIMEOUT = 15_000

/** The service's variables (API.md), cleared so the caller's shell (or vitest's NODE_ENV) cannot leak in. */
const CONFIG_VARIABLES = [
  "PORT", "HOST", "DATABASE_URL", "DATA_DIR", "MASTER_KEY", "PUBLIC_BASE_URL", "WEBHOOK_ALLOW_PRIVATE_NETWORKS",
  "PLATFORM_ADMIN_EMAILS", "PAYMENT_DEFAULT_EXPIRY_SECONDS", "REFUND_MFA_THRESHOLD", "NODE_ENV", "SHUTDOWN_GRACE_SECONDS"
]

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Resolves with `promise`, or rejects with `message()` after `ms`. */
const within = <A>(ms: number, promise: Promise<A>, message: () => string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const nonEmptyLines = (text: string) => text.split("\n").filter((line) => line.trim().length > 0)

/** One run of the service, with everything it printed (stdout and stderr interleaved in `output`). */
class Service {
  stdout = ""
  output = ""
  exit: Exit | undefined
  readonly exited: Promise<Exit>

  constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stdout += chunk
      this.output += chunk
    })
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.output += chunk
    })
    this.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        this.exit = { code, signal }
        resolve(this.exit)
      })
      child.on("error", (error) => {
        this.output += `\n(spawn failed: ${error.message})\n`
        this.exit = { code: null, signal: null }
        resolve(this.exit)
      })
    })
  }

  /** The base URL from the `listening on http://…` line. */
  async waitForListening(timeout = LISTEN_TIMEOUT): Promise<string> {
    const deadline = Date.now() + timeout
    for (;;) {
      const match = /listening on (http:\/\/[^\s"]+)/.exec(this.stdout)
      if (match?.[1] !== undefined) return match[1]
      if (this.exit !== undefined) {
        throw new Error(`exited (${JSON.stringify(this.exit)}) before listening; output:\n${this.output}`)
      }
      if (Date.now() > deadline) throw new Error(`no "listening on" line within ${timeout} ms; output:\n${this.output}`)
      await sleep(100)
    }
  }

  waitForExit(timeout = EXIT_TIMEOUT): Promise<Exit> {
    return within(timeout, this.exited, () => `still running after ${timeout} ms; output:\n${this.output}`)
  }

  /** To the runtime's own process, as an orchestrator sends it. */
  signal(signal: NodeJS.Signals): void {
    if (this.exit === undefined && this.child.pid !== undefined) process.kill(this.child.pid, signal)
  }

  /**
   * The whole process group, so nothing the program started (the embedded database's server) outlives
   * it holding its port and data directory.
   */
  killGroup(): void {
    if (this.exit !== undefined || this.child.pid === undefined) return
    try {
      process.kill(-this.child.pid, "SIGKILL")
    } catch {
      // Already gone.
    }
  }
}

const services: Array<Service> = []
const tempDirs: Array<string> = []

const killAll = () => {
  for (const service of services) service.killGroup()
}
// Insurance for a worker torn down mid-test: children lead their own process groups and would survive it.
process.once("exit", killAll)

afterEach(async () => {
  killAll()
  await Promise.all(services.splice(0).map((service) => within(5_000, service.exited, () => "").catch(() => undefined)))
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "process-test-"))
  tempDirs.push(dir)
  return dir
}

/** Starts the service on a free loopback port with its own DATA_DIR unless `env` says otherwise. */
const startService = (env: Record<string, string> = {}): Service => {
  const inherited: NodeJS.ProcessEnv = { ...process.env }
  for (const name of CONFIG_VARIABLES) delete inherited[name]
  const child = spawn(SERVICE[0], [...SERVICE[1]], {
    cwd: ROOT,
    env: { ...inherited, PORT: "0", HOST: "127.0.0.1", ...env, DATA_DIR: env["DATA_DIR"] ?? tempDir() },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const service = new Service(child)
  services.push(service)
  return service
}

const waitForReady = async (baseUrl: string): Promise<void> => {
  const deadline = Date.now() + READY_TIMEOUT
  let last = "no answer"
  for (;;) {
    try {
      const response = await fetch(new URL("/ready", baseUrl), { signal: AbortSignal.timeout(5_000) })
      const body = await response.text()
      if (response.status === 200) return
      last = `${response.status} ${body}`
    } catch (error) {
      last = String(error)
    }
    if (Date.now() > deadline) throw new Error(`${baseUrl}/ready not 200 within ${READY_TIMEOUT} ms (last: ${last})`)
    await sleep(250)
  }
}

const stopGracefully = async (service: Service): Promise<Exit> => {
  service.signal("SIGTERM")
  return service.waitForExit()
}

/** A start-up failure must be readable in a log: one line, no stack trace. */
const expectNoStackTrace = (output: string) => {
  expect(nonEmptyLines(output).filter((line) => /^\s+at\s/.test(line))).toEqual([])
}

describe("configuration errors stop start-up with one line", () => {
  it.each([
    ["PORT", "abc"],
    ["PAYMENT_DEFAULT_EXPIRY_SECONDS", "-5"],
    ["MASTER_KEY", "tooShort"]
  ])("%s=%s", async (variable, value) => {
    const dataDir = tempDir()
    const service = startService({ [variable]: value, DATA_DIR: dataDir })
    const exit = await service.waitForExit()
    expect(exit.signal).toBeNull()
    expect(exit.code).not.toBe(0)
    // Configuration is read before anything else happens, so that line is all the output there is.
    expect(nonEmptyLines(service.output), service.output).toEqual([expect.stringContaining(variable)])
    expectNoStackTrace(service.output)
    // ...and nothing was created: no database, no generated key.
    expect(readdirSync(dataDir)).toEqual([])
  }, TEST_TIMEOUT)

  it("NODE_ENV=production without MASTER_KEY", async () => {
    const dataDir = tempDir()
    const service = startService({ NODE_ENV: "production", DATA_DIR: dataDir })
    const exit = await service.waitForExit(30_000)
    expect(exit.signal).toBeNull()
    expect(exit.code).not.toBe(0)
    expect(service.stdout).not.toContain("listening on")
    expect(nonEmptyLines(service.output).filter((line) => line.includes("MASTER_KEY")), service.output).toHaveLength(1)
    expectNoStackTrace(service.output)
    // Production never falls back to a generated key.
    expect(existsSync(join(dataDir, "master.key"))).toBe(false)
  }, TEST_TIMEOUT)
})

describe("embedded database", () => {
  it("keeps its schema and the generated master key across a restart", async () => {
    const dataDir = tempDir()
    const first = startService({ DATA_DIR: dataDir })
    await waitForReady(await first.waitForListening())
    expect(first.stdout).toContain("applied migrations")
    const key = readFileSync(join(dataDir, "master.key"), "utf8")
    expect(await stopGracefully(first)).toEqual({ code: 0, signal: null })

    const second = startService({ DATA_DIR: dataDir })
    await waitForReady(await second.waitForListening())
    expect(readFileSync(join(dataDir, "master.key"), "utf8")).toBe(key)
    // The schema persisted: nothing left to migrate.
    expect(second.stdout).not.toContain("applied migrations")
    expect(await stopGracefully(second)).toEqual({ code: 0, signal: null })
  }, TEST_TIMEOUT)
})

describe("what a start and a stop log", () => {
  it("a line once listening, a line when the signal comes and a last one, and no DeprecationWarning", async () => {
    const service = startService()
    await waitForReady(await service.waitForListening())
    expect(await stopGracefully(service)).toEqual({ code: 0, signal: null })
    const lines = nonEmptyLines(service.output)
    expect(lines.filter((line) => line.includes("listening on http://"))).toHaveLength(1)
    expect(lines.filter((line) => line.includes(`message="shutting down (SIGTERM)…"`))).toHaveLength(1)
    expect(lines.at(-1)).toContain("message=stopped")
    // Nothing complains while the database stops under the change feed.
    expect(lines.filter((line) => line.includes("failed; retrying"))).toEqual([])
    // Node prints deprecations of the libraries we drive (node-postgres's overlapping queries) on stderr.
    expect(service.output).not.toContain("DeprecationWarning")
  }, TEST_TIMEOUT)
})

/** Pids of database servers running on `dataDir`'s cluster (from /proc: Linux only, where CI runs). */
const databaseServersOf = (dataDir: string): Array<number> => {
  if (!existsSync("/proc")) return []
  const pids: Array<number> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      if (command[0]?.endsWith("/postgres") && command.includes(join(dataDir, "postgres"))) pids.push(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return pids
}

const waitUntil = async (what: string, timeoutMs: number, check: () => boolean) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(50)
  }
}

describe("the embedded database's access", () => {
  it("takes only its password on loopback, and a client's session settings stay in that client's session", async () => {
    const dataDir = tempDir()
    const service = startService({ DATA_DIR: dataDir })
    const baseUrl = await service.waitForListening()
    await waitForReady(baseUrl)
    const url = new URL(runningEmbeddedDatabaseUrl(dataDir))
    expect(url.hostname).toBe("127.0.0.1")

    const connect = async (password: string) => {
      const client = new pg.Client({ host: url.hostname, port: Number(url.port), user: "postgres", password, database: "postgres" })
      client.on("error", () => {})
      await client.connect()
      return client
    }
    await expect(connect("")).rejects.toThrow()
    await expect(connect("wrong-password")).rejects.toThrow(/password authentication failed/)

    // What pg_dump does to its own session must not reach the service's connections.
    const local = await connect(decodeURIComponent(url.password))
    try {
      await local.query("SET search_path = pg_catalog")
      const registered = await fetch(new URL("/auth/register", baseUrl), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: `access-${randomBytes(4).toString("hex")}@example.test`, password: "correct horse battery staple" })
      })
      expect(registered.status).toBe(201)
    } finally {
      await local.end()
    }
    expect(await stopGracefully(service)).toEqual({ code: 0, signal: null })
  }, TEST_TIMEOUT)
})

describe("one process per data directory", () => {
  it("refuses a second process on the same DATA_DIR with one line naming the directory and the holder's pid", async () => {
    const dataDir = tempDir()
    const first = startService({ DATA_DIR: dataDir })
    await waitForReady(await first.waitForListening())
    const holder = JSON.parse(readFileSync(join(dataDir, "service.lock"), "utf8")).pid as number

    const second = startService({ DATA_DIR: dataDir })
    const exit = await second.waitForExit(30_000)
    expect(exit.code).not.toBe(0)
    expect(second.stdout).not.toContain("listening on")
    const lines = nonEmptyLines(second.output)
    expect(lines, second.output).toHaveLength(1)
    expect(lines[0]).toContain(dataDir)
    expect(lines[0]).toContain(`pid ${holder}`)
    expectNoStackTrace(second.output)
    // The first is unharmed: still ready, its database still up.
    await waitForReady(await first.waitForListening())
    expect(await stopGracefully(first)).toEqual({ code: 0, signal: null })
    // Released on exit: nothing of the lock, the server or its URL file remains.
    expect(existsSync(join(dataDir, "service.lock"))).toBe(false)
    expect(existsSync(join(dataDir, "database.url"))).toBe(false)
    expect(databaseServersOf(dataDir)).toEqual([])
  }, TEST_TIMEOUT)

  it("after a SIGKILL, the database server stops with the process and a restart takes the directory over", async () => {
    const dataDir = tempDir()
    const first = startService({ DATA_DIR: dataDir })
    await waitForReady(await first.waitForListening())
    expect(databaseServersOf(dataDir).length).toBeGreaterThan(0)
    first.killGroup()
    await first.waitForExit()
    // The server's wrapper sees this process's pipe close and shuts the server down.
    await waitUntil("the database server to stop after its process was killed", 15_000, () => databaseServersOf(dataDir).length === 0)

    const second = startService({ DATA_DIR: dataDir })
    await waitForReady(await second.waitForListening())
    expect(second.stdout).not.toContain("applied migrations")
    expect(await stopGracefully(second)).toEqual({ code: 0, signal: null })
    expect(databaseServersOf(dataDir)).toEqual([])
  }, TEST_TIMEOUT)
})

describe("shutdown that ends", () => {
  it("SIGTERM stops the process and its database within SHUTDOWN_GRACE_SECONDS + 5 s though a request hangs", async () => {
    const dataDir = tempDir()
    const service = startService({ DATA_DIR: dataDir, SHUTDOWN_GRACE_SECONDS: "1" })
    const baseUrl = await service.waitForListening()
    await waitForReady(baseUrl)
    // A request that cannot finish: API-key authentication waits on a table another session has locked.
    const blocker = new pg.Client({ connectionString: runningEmbeddedDatabaseUrl(dataDir) })
    blocker.on("error", () => {})
    await blocker.connect()
    try {
      await blocker.query("BEGIN")
      // And so do the cluster's storage writes, which its shutdown waits for.
      await blocker.query("LOCK TABLE api_keys, cluster_runners, cluster_messages IN ACCESS EXCLUSIVE MODE")
      const hanging = fetch(new URL("/v1/payments", baseUrl), {
        headers: { authorization: `Bearer sk_test_${"x".repeat(40)}` },
        signal: AbortSignal.timeout(30_000)
      }).catch(() => undefined)
      await sleep(500)
      expect(service.exit).toBeUndefined()

      const signalledAt = Date.now()
      service.signal("SIGTERM")
      const exit = await service.waitForExit(6_000 + 2_000)
      const tookMs = Date.now() - signalledAt
      expect(tookMs, service.output).toBeLessThanOrEqual(6_000)
      expect(exit.signal).toBeNull()
      await hanging
      await waitUntil("the database server to stop with the process", 10_000, () => databaseServersOf(dataDir).length === 0)
    } finally {
      await blocker.end().catch(() => undefined)
    }
  }, TEST_TIMEOUT)
})

describe("SIGTERM", () => {
  /** A completed request on a keep-alive connection, leaving the connection open and idle. */
  const openIdleKeepAlive = async (baseUrl: string) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const { socket, status, connection } = await new Promise<{ socket: net.Socket; status: number | undefined; connection: string | undefined }>(
      (resolve, reject) => {
        const request = http.get(new URL("/health", baseUrl), { agent }, (response) => {
          response.resume()
          response.on("end", () => resolve({ socket: request.socket!, status: response.statusCode, connection: response.headers.connection }))
        })
        request.on("error", reject)
      }
    )
    expect(status).toBe(200)
    expect(connection).toBe("keep-alive")
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
    return { agent, closed }
  }

  it("exits with code 0 promptly with an idle keep-alive connection open", async () => {
    // A grace period longer than the limit below: only closing idle connections makes the deadline.
    const service = startService({ SHUTDOWN_GRACE_SECONDS: "30" })
    const baseUrl = await service.waitForListening()
    await waitForReady(baseUrl)
    const idle = await openIdleKeepAlive(baseUrl)
    try {
      expect(await stopGracefully(service)).toEqual({ code: 0, signal: null })
      await within(1_000, idle.closed, () => "the server left the idle keep-alive connection open")
    } finally {
      idle.agent.destroy()
    }
  }, TEST_TIMEOUT)

  it("answers a request that was still arriving when the signal came, then exits with code 0", async () => {
    const service = startService()
    const baseUrl = await service.waitForListening()
    await waitForReady(baseUrl)
    const { port } = new URL(baseUrl)
    // Closed by the server as shutdown begins: the cue that the signal has been acted on.
    const idle = await openIdleKeepAlive(baseUrl)

    // With no slow route, "in flight" is a request whose head is only partly sent: the server has
    // begun reading it (so it is not an idle connection) but cannot answer yet.
    const socket = net.connect(Number(port), "127.0.0.1")
    let response = ""
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      response += chunk
    })
    socket.on("error", () => {}) // A reset shows up below as a missing response.
    const socketClosed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
    try {
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
      socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
      await sleep(300)

      service.signal("SIGTERM")
      // Only a cue: if the idle connection is never closed, the previous test reports it.
      await within(5_000, idle.closed, () => "shutdown did not close the idle keep-alive connection").catch(() => {})
      socket.write("Connection: close\r\n\r\n")

      const exit = await service.waitForExit()
      await within(1_000, socketClosed, () => "the in-flight request's connection is still open after exit").catch(() => {})
      expect(response, "the response to the in-flight request").toMatch(/^HTTP\/1\.1 200 /)
      expect(response).toContain(`{"status":"ok"}`)
      expect(exit).toEqual({ code: 0, signal: null })
    } finally {
      socket.destroy()
      idle.agent.destroy()
    }
  }, TEST_TIMEOUT)
})

const adminUrl = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

const withAdminClient = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2_000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const postgresUp = await postgresAvailable()

describe("PostgreSQL", () => {
  // The all-in-one shape is one process per database (many processes are runners and API nodes, see
  // test/e2e/Cluster.test.ts); what must hold is that starting two at once corrupts nothing: start-up is
  // serialized, migrations are applied once, the first is ready, and when it stops the second takes over.
  it.skipIf(!postgresUp)("two processes starting at once on one fresh database start one after the other", async () => {
    const name = `process_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
    await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`))
    try {
      const url = new URL(adminUrl)
      url.pathname = `/${name}`
      // Replicas of one database share one key, or neither could read the other's encrypted secrets.
      const env = { DATABASE_URL: url.toString(), MASTER_KEY: randomBytes(32).toString("base64") }
      const pair = [startService(env), startService(env)]
      const baseUrls = await Promise.all(pair.map((service) => service.waitForListening()))
      // They serialize on the start-up lock: one applies everything, the other finds it done.
      expect(pair.filter((service) => service.stdout.includes("applied migrations"))).toHaveLength(1)
      // One of them owns the cluster and is ready; when it stops, the other takes the shards over.
      const firstReady = await Promise.any(baseUrls.map((baseUrl, index) => waitForReady(baseUrl).then(() => index)))
      expect(await stopGracefully(pair[firstReady]!)).toEqual({ code: 0, signal: null })
      await waitForReady(baseUrls[1 - firstReady]!)
      expect(await stopGracefully(pair[1 - firstReady]!)).toEqual({ code: 0, signal: null })
    } finally {
      killAll()
      await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }, TEST_TIMEOUT)
})
