/**
 * A refund is applied exactly once across a runner crash: the single runner's process is killed after the
 * Payment entity committed a persisted Refund message and before the cluster stored its reply; the restarted
 * runner redelivers the message (it has no reply), the handler finds its own refund and answers with it, and
 * a client retry with the same Idempotency-Key answers that same refund.
 *
 * A real process (`npm start`'s bundle, killed with SIGKILL) against the PostgreSQL server: the test reads
 * the database between the kill and the restart, and the embedded database stops with its process, so the
 * file is skipped when no server answers or when TEST_DATABASE=embedded. The embedded default's crash and
 * restart are covered by test/payments/Durability.test.ts.
 *
 * How the crash window is held open: a separate connection holds `LOCK TABLE cluster_replies IN SHARE MODE`.
 * SHARE conflicts with the ROW EXCLUSIVE lock an INSERT takes, so the runner's `saveReply` blocks, but not with
 * the ACCESS SHARE lock of a SELECT, so the storage poll (which reads `cluster_replies` to find unanswered
 * messages, and is the only path by which a persisted message reaches a local entity) still delivers. ACCESS
 * EXCLUSIVE would block that poll too, and the refund would never run.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import type { Payment } from "../../domain/Payments.ts"
import { startCommand } from "../../scripts/build.mjs"
import { clientAt } from "../support/Client.ts"
import { postgresAvailable } from "../support/TestDatabase.ts"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
/** The service as `npm start` runs it: the bundle (built by globalSetup), in the one process signals reach. */
const SERVICE = startCommand("runtime/main.ts")
const SERVER_URL = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
/** Both runs share it, as a real deployment would; any fixed 32 bytes will do. */
const MASTER_KEY = Buffer.alloc(32, 0x5a).toString("base64")
const LISTEN_TIMEOUT_MS = 60_000
const LEASE_SECONDS = 5
const PASSWORD = "correct horse battery staple"

/** Configuration variables of the service that must not leak in from the caller's environment. */
const CONFIG_VARIABLES = [
  "PORT", "HOST", "DATABASE_URL", "DATA_DIR", "MASTER_KEY", "PUBLIC_BASE_URL", "WEBHOOK_ALLOW_PRIVATE_NETWORKS",
  "PLATFORM_ADMIN_EMAILS", "PAYMENT_DEFAULT_EXPIRY_SECONDS", "REFUND_MFA_THRESHOLD", "NODE_ENV", "SHUTDOWN_GRACE_SECONDS"
]

const enabled = process.env["TEST_DATABASE"] !== "embedded" && await postgresAvailable()

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it answers something other than undefined. */
const waitFor = async <A>(label: string, timeoutMs: number, check: () => Promise<A | undefined>): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}`)
    await sleep(50)
  }
}

/**
 * A free loopback port. The service is meant to take PORT=0 (API.md), but its `Config.port` refuses 0
 * ("Expected a network port value"), so the test picks one — and restarts on the same one: the cluster
 * takes its runner address from HOST and PORT, and a runner restarted under another address shares the
 * shards with its dead predecessor until that one's heartbeat expires (35 s), so a message on one of those
 * shards would wait that long.
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

interface RunningService {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly logs: Array<string>
  readonly spawnedAt: number
  readonly listeningAt: number
}

const children = new Set<ChildProcess>()

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/** The whole process group (the child leads it) dies, with anything the program started. */
const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  if (child.pid === undefined || !isRunning(child)) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}

const exited = (child: ChildProcess) =>
  isRunning(child) ? new Promise<void>((resolve) => child.once("exit", () => resolve())) : Promise.resolve()

const startService = async (databaseUrl: string, dataDir: string, port: number): Promise<RunningService> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !CONFIG_VARIABLES.includes(name)) env[name] = value
  }
  Object.assign(env, {
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    MASTER_KEY,
    SHUTDOWN_GRACE_SECONDS: "1",
    // The client's retry below waits out the lease: the shortest allowed rather than the default 30 s.
    IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS)
  })
  const spawnedAt = performance.now()
  const child = spawn(SERVICE[0], [...SERVICE[1]], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] })
  children.add(child)
  const logs: Array<string> = []
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening on" line within ${LISTEN_TIMEOUT_MS} ms:\n${logs.join("\n")}`)), LISTEN_TIMEOUT_MS)
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.length === 0) continue
        logs.push(line)
        const match = /listening on (http:\/\/[^\s"]+)/.exec(line)
        if (match) {
          clearTimeout(timer)
          resolve(match[1]!)
        }
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the service exited (${code ?? signal}) before listening:\n${logs.join("\n")}`))
    })
  })
  return { child, baseUrl, logs, spawnedAt, listeningAt: performance.now() }
}

/** A typed call to the service in its child process; a typed failure rejects with the error it answered. */
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** Refunds `amount` of `paymentId` through the service at `baseUrl`; answers the refund and its response. */
const refundAt = (baseUrl: string, secret: string, paymentId: Payment["id"], amount: string, idempotencyKey?: string) =>
  Effect.flatMap(clientAt(baseUrl, secret), (api) =>
    api.payments.refund({
      path: { id: paymentId },
      payload: { amount },
      headers: { "idempotency-key": idempotencyKey },
      withResponse: true
    }))

describe.skipIf(!enabled)("a refund across a runner crash", () => {
  const databaseName = `test_crash_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  const databaseUrl = (() => {
    const url = new URL(SERVER_URL)
    url.pathname = `/${databaseName}`
    return url.toString()
  })()
  let dataDir = ""
  let pool: pg.Pool | undefined
  let lockClient: pg.Client | undefined
  let secret = ""
  /** Refunded with an Idempotency-Key across the crash. */
  let keyedPayment: Payment["id"]
  /** Refunded without one: only the redelivered message can finish it. */
  let unkeyedPayment: Payment["id"]
  let port = 0
  let first: RunningService | undefined
  let second: RunningService | undefined

  const query = async <R extends pg.QueryResultRow = any>(text: string, values: Array<unknown> = []) =>
    (await pool!.query<R>(text, values)).rows

  const withAdmin = async (statement: string) => {
    const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 5_000 })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }

  /** The persisted Refund message of a payment, with its final reply when one is stored. */
  const refundMessages = (paymentId: string) =>
    query<{ id: string; message_id: string; processed: boolean; reply_kind: number | null; reply_payload: string | null }>(
      `SELECT m.id::text, m.message_id, m.processed, r.kind AS reply_kind, r.payload AS reply_payload
       FROM cluster_messages m LEFT JOIN cluster_replies r ON r.request_id = m.id AND r.kind = 0
       WHERE m.entity_type = 'Payment' AND m.entity_id = $1 AND m.tag = 'Refund'`,
      [paymentId]
    )

  /** Everything a refund of `paymentId` writes, as counts and amounts. */
  const refundEffects = async (paymentId: string) => {
    const [payment] = await query<{ amount_refunded: string; status: string }>(
      `SELECT amount_refunded::text, status FROM payments WHERE id = $1`,
      [paymentId]
    )
    const refunds = await query<{ id: string; amount: string; request_key: string }>(
      `SELECT id, amount::text, request_key FROM refunds WHERE payment_id = $1`,
      [paymentId]
    )
    const [journal] = await query<{ count: number }>(
      `SELECT count(*)::int AS count FROM journal_entries WHERE payment_id = $1 AND kind = 'refund'`,
      [paymentId]
    )
    const [outbox] = await query<{ count: number }>(
      `SELECT count(*)::int AS count FROM outbox WHERE type = 'payment.refunded' AND payload -> 'data' -> 'object' ->> 'id' = $1`,
      [paymentId]
    )
    return { payment, refunds, journalEntries: journal!.count, refundedEvents: outbox!.count }
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "merchant-crash-"))
    await withAdmin(`CREATE DATABASE ${databaseName}`)
    pool = new pg.Pool({ connectionString: databaseUrl, max: 4 })
    // The DROP ... WITH (FORCE) at the end may end an idle connection before the pool has: not a failure.
    pool.on("error", () => {})
    port = await freePort()
    first = await startService(databaseUrl, dataDir, port)
    const base = first.baseUrl
    const session = await run(Effect.flatMap(clientAt(base), (api) =>
      api.auth.register({ payload: { email: `crash-${randomBytes(5).toString("hex")}@example.test`, password: PASSWORD } })))
    const owner = await run(clientAt(base, session.access_token))
    const store = await run(owner.stores.create({ payload: { name: "Crash Store" } }))
    secret = (await run(owner.apiKeys.create({ payload: { store_id: store.id, mode: "test" } }))).secret
    const merchant = await run(clientAt(base, secret))
    const paid = async () => {
      const payment = await run(merchant.payments.create({ payload: { amount: "10.00", currency: "USD" }, headers: {} }))
      await run(merchant.payments.simulate({ path: { id: payment.id }, payload: { status: "scanned" } }))
      const after = await run(merchant.payments.simulate({ path: { id: payment.id }, payload: { status: "paid" } }))
      expect(after.status).toBe("paid")
      return payment.id
    }
    keyedPayment = await paid()
    unkeyedPayment = await paid()
  })

  afterAll(async () => {
    for (const child of children) killGroup(child, "SIGKILL")
    await Promise.all([...children].map(exited))
    await lockClient?.end().catch(() => undefined)
    await pool?.end().catch(() => undefined)
    await withAdmin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`).catch(() => undefined)
    if (dataDir !== "") rmSync(dataDir, { recursive: true, force: true })
  })

  it("applies a refund committed before the crash exactly once, on redelivery and on the client's retry", {
    timeout: 120_000
  }, async () => {
    const running = first!

    // Hold the window between the entity's commit and the stored reply open.
    lockClient = new pg.Client({ connectionString: databaseUrl })
    await lockClient.connect()
    await lockClient.query("BEGIN")
    await lockClient.query("LOCK TABLE cluster_replies IN SHARE MODE")

    const firstAttemptAt = Date.now()
    // Neither request can be answered: they fail when the process dies.
    const keyedAttempt = Effect.runPromiseExit(refundAt(running.baseUrl, secret, keyedPayment, "3.00", "crash-1"))
    const unkeyedAttempt = Effect.runPromiseExit(refundAt(running.baseUrl, secret, unkeyedPayment, "4.00"))

    // Both refunds committed …
    await waitFor("both refunds to commit", 20_000, async () => {
      const [row] = await query<{ count: number }>(
        `SELECT count(*)::int AS count FROM refunds WHERE payment_id IN ($1, $2)`,
        [keyedPayment, unkeyedPayment]
      )
      return row!.count === 2 ? true : undefined
    })
    // … and the runner is stuck storing their replies.
    await waitFor("the runner to wait on the reply insert", 10_000, async () => {
      const [row] = await query<{ count: number }>(
        `SELECT count(*)::int AS count FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO "cluster_replies"%'`
      )
      return row!.count >= 2 ? true : undefined
    })

    killGroup(running.child, "SIGKILL")
    await exited(running.child)
    await lockClient.query("ROLLBACK")
    await lockClient.end()
    lockClient = undefined

    for (const attempt of [await keyedAttempt, await unkeyedAttempt]) expect(Exit.isFailure(attempt), String(attempt)).toBe(true)
    for (const paymentId of [keyedPayment, unkeyedPayment]) {
      const messages = await refundMessages(paymentId)
      expect(messages).toHaveLength(1)
      expect(messages[0]!.processed).toBe(false)
      expect(messages[0]!.reply_kind).toBeNull()
    }
    const committedRefundIds = {
      keyed: (await refundEffects(keyedPayment)).refunds[0]!.id,
      unkeyed: (await refundEffects(unkeyedPayment)).refunds[0]!.id
    }

    // Restart; no client traffic: the runner must find the unanswered messages by itself.
    second = await startService(databaseUrl, dataDir, port)
    const answeredAt = await waitFor("the redelivered messages to be answered", 60_000, async () => {
      const messages = [...await refundMessages(keyedPayment), ...await refundMessages(unkeyedPayment)]
      return messages.length === 2 && messages.every((m) => m.reply_kind !== null) ? performance.now() : undefined
    }).catch(async (error: Error) => {
      const messages = await query(
        `SELECT m.message_id, m.shard_id, m.processed, m.last_read, r.kind AS reply_kind
         FROM cluster_messages m LEFT JOIN cluster_replies r ON r.request_id = m.id AND r.kind = 0
         WHERE m.tag = 'Refund'`
      )
      const runners = await query(`SELECT address, healthy, last_heartbeat FROM cluster_runners`)
      throw new Error(
        `${error.message}\nrefund messages: ${JSON.stringify(messages)}\nrunners: ${JSON.stringify(runners)}\n` +
          `logs of the restarted service:\n${second!.logs.join("\n")}`
      )
    })

    const expectAppliedOnce = async (paymentId: string, amountMinor: string, refundId: string) => {
      const effects = await refundEffects(paymentId)
      expect(effects.refunds).toHaveLength(1)
      expect(effects.refunds[0]!.id).toBe(refundId)
      expect(effects.refunds[0]!.amount).toBe(amountMinor)
      expect(effects.payment).toEqual({ amount_refunded: amountMinor, status: "partially_refunded" })
      expect(effects.journalEntries).toBe(1)
      expect(effects.refundedEvents).toBe(1)
      // The stored reply is the refund that was committed before the crash.
      const [message] = await refundMessages(paymentId)
      const exit = JSON.parse(message!.reply_payload!)
      expect(exit._tag).toBe("Success")
      expect(exit.value.refund.id).toBe(refundId)
    }
    await expectAppliedOnce(keyedPayment, "300", committedRefundIds.keyed)
    await expectAppliedOnce(unkeyedPayment, "400", committedRefundIds.unkeyed)
    const [balance] = await query<{ imbalance: string }>(
      `SELECT coalesce(sum(debit) - sum(credit), 0)::text AS imbalance FROM journal_lines`
    )
    expect(balance!.imbalance).toBe("0")

    // The client retries with the same key once the first attempt's claim has lapsed.
    const leaseOver = firstAttemptAt + LEASE_SECONDS * 1000 + 1_000
    await sleep(Math.max(0, leaseOver - Date.now()))
    const retryStartedAt = performance.now()
    const [retry] = await run(refundAt(second.baseUrl, secret, keyedPayment, "3.00", "crash-1"))
    const retryMs = performance.now() - retryStartedAt
    expect(retry.id).toBe(committedRefundIds.keyed)
    expect(retry.amount).toBe("3.00")
    const [replay, replayResponse] = await run(refundAt(second.baseUrl, secret, keyedPayment, "3.00", "crash-1"))
    expect(replayResponse.headers["idempotent-replayed"]).toBe("true")
    expect(replay).toEqual(retry)

    await expectAppliedOnce(keyedPayment, "300", committedRefundIds.keyed)
    await expectAppliedOnce(unkeyedPayment, "400", committedRefundIds.unkeyed)
    const [messageCount] = await query<{ count: number }>(
      `SELECT count(*)::int AS count FROM cluster_messages WHERE entity_id = $1 AND tag = 'Refund'`,
      [keyedPayment]
    )
    expect(messageCount!.count).toBe(1)

    const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
    console.log(
      [
        "crash recovery:",
        `  restart → listening: ${seconds(second.listeningAt - second.spawnedAt)}`,
        `  listening → both redelivered refunds answered: ${seconds(answeredAt - second.listeningAt)}`,
        `  restart → answered: ${seconds(answeredAt - second.spawnedAt)}`,
        `  retry with the same Idempotency-Key after the lease: 201 in ${seconds(retryMs)}`
      ].join("\n")
    )
  })
})
