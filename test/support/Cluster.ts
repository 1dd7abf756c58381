/**
 * A real multi-process cluster for the e2e tests: a fresh PostgreSQL database, shard runners and API
 * nodes as child processes on loopback (scripts/LocalCluster.ts), and what the tests ask of them — HTTP
 * calls that retry like a careful client, and who holds which shard, read from PostgreSQL.
 *
 * Shard ownership: runners hold their shards as PostgreSQL advisory locks (the cluster's default on
 * PostgreSQL: a killed runner's locks go with its connections), on lock number 1_000_000 + shard for the
 * default group. Each process names its connections (`application_name`), so `pg_locks` joined with
 * `pg_stat_activity` says which runner holds which shard; `cluster_runners` says which runners are
 * registered and healthy.
 */
import { HttpClient, HttpClientResponse } from "@effect/platform"
import { Effect, Either, FiberRef } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import type { ApiClient } from "../../domain/Client.ts"
import { childEnvironment, type ClusterProcess, freePort, startProcess } from "../../scripts/LocalCluster.ts"
import { clientAt } from "./Client.ts"

export const SERVER_URL = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
/** Every process of a cluster shares it; any fixed 32 bytes will do. */
export const MASTER_KEY = Buffer.alloc(32, 0x7c).toString("base64")
export const SHARDS = 300
const SHARD_LOCK_BASE = 1_000_000

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it answers something other than undefined. */
export const waitFor = async <A>(label: string, timeoutMs: number, check: () => Promise<A | undefined>, everyMs = 100): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}`)
    await sleep(everyMs)
  }
}

/** The cluster's shard of an entity id or singleton name (@effect/cluster's `getShardId`, default group). */
export const shardOf = (id: string, shards = SHARDS): number => {
  let h = 5381
  let i = id.length
  while (i) h = (h * 33) ^ id.charCodeAt(--i)
  h = (h & 0xbfffffff) | ((h >>> 1) & 0x40000000)
  return Math.abs(h % shards) + 1
}

export interface ClusterDatabase {
  readonly name: string
  readonly url: string
  readonly pool: pg.Pool
  readonly query: <R extends pg.QueryResultRow = any>(text: string, values?: Array<unknown>) => Promise<Array<R>>
  readonly drop: () => Promise<void>
}

const withAdmin = async (statement: string) => {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

export const createDatabase = async (prefix: string): Promise<ClusterDatabase> => {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await withAdmin(`CREATE DATABASE ${name}`)
  const url = new URL(SERVER_URL)
  url.pathname = `/${name}`
  const pool = new pg.Pool({ connectionString: url.toString(), max: 3, application_name: "cluster-test" })
  pool.on("error", () => {})
  return {
    name,
    url: url.toString(),
    pool,
    query: async (text, values = []) => (await pool.query(text, values)).rows,
    drop: async () => {
      await pool.end().catch(() => undefined)
      await withAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)
    }
  }
}

export interface RunnerProcess extends ClusterProcess {
  readonly address: string
}

/**
 * Starts a process on a port that was free when asked, and again on another if something else took that
 * port before the process bound it (other suites run in parallel): resolves once the process is ready.
 */
const onFreePort = async (start: (port: number) => ClusterProcess, attempts = 3) => {
  for (let attempt = 1;; attempt++) {
    const port = await freePort()
    const child = start(port)
    try {
      await child.ready
      return { child, port }
    } catch (error) {
      if (attempt >= attempts || !String(error).includes("EADDRINUSE")) throw error
    }
  }
}

/** A running local cluster: its processes, and how to add to it. */
export class LocalCluster {
  readonly runners: Array<RunnerProcess> = []
  readonly apis: Array<ClusterProcess> = []
  private readonly dataDir = mkdtempSync(join(tmpdir(), "merchant-cluster-"))

  constructor(
    readonly database: ClusterDatabase,
    private readonly variables: Record<string, string> = {},
    private readonly echo: boolean = process.env["CLUSTER_TEST_LOGS"] === "1"
  ) {}

  private env(extra: Record<string, string>) {
    return childEnvironment({
      DATABASE_URL: this.database.url,
      DATA_DIR: this.dataDir,
      MASTER_KEY,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      SHUTDOWN_GRACE_SECONDS: "1",
      // Up to five processes of a suite, and two suites at once, on one server of 100 connections: at the
      // default of 20 each, a runner joining under load was refused a connection.
      DATABASE_POOL_SIZE: "8",
      ...this.variables,
      ...extra
    })
  }

  /** Starts a runner on a free port; resolves once it says it is ready (it may not hold shards yet). */
  async addRunner(): Promise<RunnerProcess> {
    const name = `runner-${this.runners.length + 1}`
    const { child, port } = await onFreePort((port) =>
      startProcess({
        name,
        role: "runner",
        port,
        env: this.env({ RUNNER_HOST: "127.0.0.1", RUNNER_PORT: String(port) }),
        ...(this.echo ? { onLine: (line: string) => console.log(`${name} │ ${line}`) } : {})
      }))
    const runner = Object.assign(child, { address: `127.0.0.1:${port}` })
    this.runners.push(runner)
    return runner
  }

  /** Starts an API node on a free port; resolves with its base URL once it listens. */
  async addApi(publicBaseUrl?: string): Promise<ClusterProcess & { readonly baseUrl: string }> {
    const name = `api-${this.apis.length + 1}`
    const { child, port } = await onFreePort((port) =>
      startProcess({
        name,
        role: "api",
        port,
        env: this.env({
          HOST: "127.0.0.1",
          PORT: String(port),
          ...(publicBaseUrl === undefined ? {} : { PUBLIC_BASE_URL: publicBaseUrl })
        }),
        ...(this.echo ? { onLine: (line: string) => console.log(`${name} │ ${line}`) } : {})
      }))
    this.apis.push(child)
    return Object.assign(child, { baseUrl: `http://127.0.0.1:${port}` })
  }

  /**
   * `runners` runners started together (they migrate and create the cluster's tables one at a time), then
   * one API node; resolves once every shard is held and the API node is ready, with its base URL.
   */
  async start(runners: number): Promise<string> {
    await Promise.all(Array.from({ length: runners }, () => this.addRunner()))
    const api = await this.addApi()
    await this.allShardsHeldBy()
    await untilReady(api.baseUrl)
    return api.baseUrl
  }

  /** Which runner (by address) holds which shards right now, from pg_locks. */
  async shardOwners(): Promise<Map<string, Array<number>>> {
    const rows = await this.database.query<{ application_name: string; shard: number }>(
      `SELECT a.application_name, (l.objid::bigint - ${SHARD_LOCK_BASE})::int AS shard
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND l.objid BETWEEN ${SHARD_LOCK_BASE + 1} AND ${SHARD_LOCK_BASE + SHARDS}`
    )
    const owners = new Map<string, Array<number>>()
    for (const row of rows) {
      const address = row.application_name.replace(/^merchant-platform runner /, "")
      owners.set(address, [...(owners.get(address) ?? []), row.shard])
    }
    for (const shards of owners.values()) shards.sort((a, b) => a - b)
    return owners
  }

  /** Shards held per runner, as `{ "127.0.0.1:port": count }`, for the report. */
  async shardCounts(): Promise<Record<string, number>> {
    const owners = await this.shardOwners()
    const runnerName = new Map(this.runners.map((r) => [r.address, r.name]))
    return Object.fromEntries(
      [...owners.entries()].sort().map(([address, shards]) => [`${runnerName.get(address) ?? "?"} ${address}`, shards.length])
    )
  }

  /** The runners in `cluster_runners`, with whether they are marked healthy. */
  registeredRunners() {
    return this.database.query<{ address: string; healthy: boolean; last_heartbeat: Date }>(
      `SELECT address, healthy, last_heartbeat FROM cluster_runners ORDER BY address`
    )
  }

  /** Resolves once every shard is held by one of `runners` (default: the running ones). */
  async allShardsHeldBy(runners: ReadonlyArray<RunnerProcess> = this.runners.filter((r) => r.isRunning()), timeoutMs = 90_000) {
    const addresses = new Set(runners.map((r) => r.address))
    return waitFor(`all ${SHARDS} shards to be held by ${[...addresses].join(", ")}`, timeoutMs, async () => {
      const owners = await this.shardOwners()
      const held = new Set<number>()
      for (const [address, shards] of owners) if (addresses.has(address)) for (const shard of shards) held.add(shard)
      return held.size === SHARDS ? performance.now() : undefined
    })
  }

  /** Kills every process at once (SIGKILL) and removes the data directory. */
  async killAll() {
    const all = [...this.apis, ...this.runners]
    for (const p of all) p.signal("SIGKILL")
    await Promise.all(all.map((p) => p.exited))
    rmSync(this.dataDir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP, as a careful client
// ---------------------------------------------------------------------------------------------

export interface Answer {
  readonly status: number
  readonly body: any
  /** How many attempts it took (1 = answered at once). */
  readonly attempts: number
  /** performance.now() when the final answer arrived. */
  readonly at: number
  /** Statuses and errors of the attempts that were retried. */
  readonly retried: ReadonlyArray<string>
}

/**
 * A request retried, with the same headers (and so the same Idempotency-Key), while it fails with a
 * connection error, a 5xx or a 409 still in progress (`stillInProgress`), every `pauseMs`, for at most
 * `deadlineMs`.
 */
export const request = async (
  baseUrl: string,
  method: string,
  path: string,
  options: {
    readonly body?: unknown
    readonly token?: string
    readonly headers?: Record<string, string>
    readonly deadlineMs?: number
    readonly pauseMs?: number
  } = {}
): Promise<Answer> => {
  const deadline = Date.now() + (options.deadlineMs ?? 120_000)
  const retried: Array<string> = []
  for (let attempt = 1;; attempt++) {
    let outcome: string
    try {
      const response = await fetch(new URL(path, baseUrl), {
        method,
        headers: {
          ...(options.body === undefined ? {} : { "content-type": "application/json" }),
          ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
          ...options.headers
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(60_000)
      })
      const text = await response.text()
      if (response.status < 500 && !stillInProgress(response.status, text)) {
        return {
          status: response.status,
          body: text.length > 0 ? JSON.parse(text) : null,
          attempts: attempt,
          at: performance.now(),
          retried
        }
      }
      outcome = `${response.status} ${text.slice(0, 200)}`
    } catch (error) {
      outcome = `error: ${error instanceof Error ? `${error.message} ${String((error as { cause?: unknown }).cause ?? "")}` : String(error)}`
    }
    retried.push(outcome)
    if (Date.now() > deadline) {
      throw new Error(`${method} ${path}: no answer below 500 after ${attempt} attempts: ${retried.slice(-3).join(" | ")}`)
    }
    await sleep(options.pauseMs ?? 250)
  }
}

/** A 2xx answer's body, or a thrown error naming the call. */
export const ok = async (answer: Promise<Answer>, label: string) => {
  const result = await answer
  if (result.status < 200 || result.status >= 300) throw new Error(`${label} answered ${result.status}: ${JSON.stringify(result.body)}`)
  return result.body
}

// ---------------------------------------------------------------------------------------------
// The typed client, as a careful client
// ---------------------------------------------------------------------------------------------

/**
 * A 409 saying the request's Idempotency-Key is still in progress: an earlier attempt of the same request is
 * still running on the server (its answer lost to the client, say, while it waits for a killed runner's
 * shard to move). A careful client sends it again after a pause, as Stripe's client libraries do with a 409.
 */
const stillInProgress = (status: number, body: string) => status === 409 && body.includes("still in progress")

/** Where the careful calls of a fiber record their retried attempts (`carefully` sets it). */
const currentRetries = FiberRef.unsafeMake<Array<string> | undefined>(undefined)

/**
 * The transport of a careful client: as `request` does, a request that fails with a connection error, a
 * 5xx or a 409 still in progress is sent again with the same headers (so the same Idempotency-Key) every
 * `pauseMs`, for at most `deadlineMs`. What each retried attempt met goes to the calling fiber's record.
 */
const retrying = (options: { readonly deadlineMs?: number; readonly pauseMs?: number }) => (client: HttpClient.HttpClient) =>
  HttpClient.transform(client, (send, sent) =>
    Effect.gen(function*() {
      const deadline = Date.now() + (options.deadlineMs ?? 120_000)
      const retried = (yield* FiberRef.get(currentRetries)) ?? []
      for (let attempt = 1;; attempt++) {
        const answer = yield* Effect.either(Effect.timeout(send, "60 seconds"))
        if (Either.isRight(answer) && answer.right.status < 500 && answer.right.status !== 409) return answer.right
        if (Either.isRight(answer) && answer.right.status === 409) {
          // Read here to tell the two conflicts apart, then handed on as a response of the same text.
          const { headers, status } = answer.right
          const text = yield* Effect.orElseSucceed(answer.right.text, () => "")
          if (!stillInProgress(status, text)) return HttpClientResponse.fromWeb(sent, new Response(text, { status, headers }))
        }
        retried.push(
          Either.isRight(answer)
            ? `${answer.right.status} ${(yield* Effect.orElseSucceed(answer.right.text, () => "")).slice(0, 200)}`
            : `error: ${String(answer.left)}`
        )
        if (Date.now() > deadline) {
          return yield* Effect.dieMessage(
            `${sent.method} ${sent.url}: no answer below 500 after ${attempt} attempts: ${retried.slice(-3).join(" | ")}`
          )
        }
        yield* Effect.sleep(options.pauseMs ?? 250)
      }
    })
  )

/** The typed client of the node at `baseUrl`, acting with `token`, retrying as a careful client does. */
export const carefulClient = (
  baseUrl: string,
  token?: string,
  options: { readonly deadlineMs?: number; readonly pauseMs?: number } = {}
): Promise<ApiClient> => Effect.runPromise(clientAt(baseUrl, token, retrying(options)))

/** A careful call's answer: the value or the typed error, the attempts it retried, when it arrived. */
export interface CarefulAnswer<A = unknown, E extends { readonly _tag: string } = { readonly _tag: string }> {
  readonly outcome: Either.Either<A, E>
  /** Statuses and errors of the attempts that were retried. */
  readonly retried: ReadonlyArray<string>
  /** performance.now() when the final answer arrived. */
  readonly at: number
}

/** Runs a call of a `carefulClient`, recording what it retried. */
export const carefully = <A, E extends { readonly _tag: string }>(call: Effect.Effect<A, E>): Promise<CarefulAnswer<A, E>> => {
  const retried: Array<string> = []
  return Effect.runPromise(
    Effect.either(call).pipe(
      Effect.locally(currentRetries, retried),
      Effect.map((outcome) => ({ outcome, retried, at: performance.now() }))
    )
  )
}

/** A typed call's value; a typed failure rejects, naming the call and the error it answered. */
export const succeed = <A, E>(label: string, call: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.catchAll(call, (error) => Effect.dieMessage(`${label} failed: ${String(error)}`)))

/** Waits until the node at `baseUrl` answers `/ready` with 200. */
export const untilReady = async (baseUrl: string, timeoutMs = 60_000) => {
  const api = await Effect.runPromise(clientAt(baseUrl))
  return waitFor(`${baseUrl} to be ready`, timeoutMs, async () =>
    (await Effect.runPromise(Effect.isSuccess(api.system.ready()))) ? true : undefined, 250)
}

/** A user, a store and a test-mode API key made through `baseUrl`; answers the key's secret, the store and the owner's token. */
export const makeMerchant = async (baseUrl: string) => {
  const anonymous = await carefulClient(baseUrl)
  const session = await succeed("register", anonymous.auth.register({
    payload: { email: `cluster-${randomBytes(5).toString("hex")}@example.test`, password: "correct horse battery staple" }
  }))
  const owner = await carefulClient(baseUrl, session.access_token)
  const store = await succeed("create store", owner.stores.create({ payload: { name: "Cluster Store" } }))
  const key = await succeed("create API key", owner.apiKeys.create({ payload: { store_id: store.id, mode: "test" } }))
  return { secret: key.secret, storeId: store.id, ownerToken: session.access_token }
}
