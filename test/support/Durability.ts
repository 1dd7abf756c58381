/**
 * The race, crash and restart battery, run against the service as `npm start` runs it (a real process)
 * on the embedded default or on PostgreSQL: used by test/payments/Durability.test.ts (once per database)
 * and by bench/durability.ts (repeated).
 *
 * - Races: 64 concurrent creates, 50 creates with one Idempotency-Key, 20 concurrent simulates on
 *   different payments, 25 racing 1.00 refunds of a 10.00 payment. Every request must be answered within
 *   10 s, none with a 5xx, none with a 401 or 404 (the key is valid and every payment exists).
 * - Crash: writes under load, SIGKILL, a restart on the same DATA_DIR (and database); every write the
 *   service acknowledged is there, and the ledger balances.
 */
import { randomBytes } from "node:crypto"
import pg from "pg"
import { runningEmbeddedDatabaseUrl } from "../../runtime/EmbeddedPostgres.ts"
import { childEnvironment, type ClusterProcess, startProcess } from "../../scripts/LocalCluster.ts"

/** Any answer slower than this counts as a hang. */
export const ANSWER_TIMEOUT_MS = 10_000
/** Both runs of one data directory share it, as a real deployment would. */
const MASTER_KEY = Buffer.alloc(32, 0x3c).toString("base64")

/** The PostgreSQL server the tests and benches make their databases on. */
export const SERVER_URL = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

const onServer = async (statement: string) => {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 3_000 })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/** A fresh database on the server: its URL, and how to drop it. */
export const freshServerDatabase = async (prefix: string) => {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await onServer(`CREATE DATABASE ${name}`)
  const url = new URL(SERVER_URL)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined) }
}

/** Whether the server answers. */
export const serverAnswers = () => onServer("SELECT 1").then(() => true, () => false)

export interface ServiceOptions {
  readonly dataDir: string
  /** Unset: the embedded database under `dataDir`. */
  readonly databaseUrl?: string
  /** Further configuration of the service (SMTP_URL, …). */
  readonly env?: Record<string, string>
}

export interface Service {
  readonly process: ClusterProcess
  readonly baseUrl: string
}

/**
 * Starts the service on a port it picks itself (`PORT=0`), read from its "listening on" line: a port chosen here
 * and handed over could be taken in between by any socket of a busy machine (outgoing connections draw from the
 * same range).
 */
export const startService = async (options: ServiceOptions, name = "service"): Promise<Service> => {
  const process = startProcess({
    name,
    role: "main",
    port: 0,
    env: childEnvironment({
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: options.dataDir,
      DATABASE_URL: options.databaseUrl,
      MASTER_KEY,
      SHUTDOWN_GRACE_SECONDS: "2",
      ...options.env
    })
  })
  const line = await process.ready
  const port = /listening on http:\/\/[^\s:]+:(\d+)/.exec(line)?.[1]
  if (port === undefined) throw new Error(`${name} said it was listening but named no port: ${line}`)
  return { process, baseUrl: `http://127.0.0.1:${port}` }
}

/** The database a service on `options` uses: DATABASE_URL, or the URL the embedded server writes while it runs. */
export const databaseUrlOf = (options: ServiceOptions): string =>
  options.databaseUrl ?? runningEmbeddedDatabaseUrl(options.dataDir)

export interface Answer {
  readonly status: number
  readonly body: any
  readonly ms: number
}

/** One request; a network failure or a timeout is status 0 with the reason as body. */
export const request = async (
  baseUrl: string,
  method: "GET" | "POST",
  path: string,
  options: { readonly body?: unknown; readonly token?: string; readonly headers?: Record<string, string> } = {}
): Promise<Answer> => {
  const startedAt = performance.now()
  try {
    const response = await fetch(new URL(path, baseUrl), {
      method,
      headers: {
        ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
        ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}),
        ...options.headers
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS)
    })
    const text = await response.text()
    return { status: response.status, body: text.length > 0 ? JSON.parse(text) : null, ms: performance.now() - startedAt }
  } catch (error) {
    return { status: 0, body: error instanceof Error ? `${error.name}: ${error.message}` : String(error), ms: performance.now() - startedAt }
  }
}

const expectOk = (answer: Answer, what: string) => {
  if (answer.status < 200 || answer.status >= 300) throw new Error(`${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`)
  return answer.body
}

/** A merchant with a store and a test-mode API key. */
export const makeMerchant = async (baseUrl: string): Promise<string> => {
  const session = expectOk(await request(baseUrl, "POST", "/auth/register", {
    body: { email: `durability-${randomBytes(5).toString("hex")}@example.test`, password: "correct horse battery staple" }
  }), "register")
  const store = expectOk(
    await request(baseUrl, "POST", "/stores", { body: { name: "Durability Store" }, token: session.access_token }),
    "create store"
  )
  return expectOk(
    await request(baseUrl, "POST", "/api-keys", { body: { store_id: store.id, mode: "test" }, token: session.access_token }),
    "create API key"
  ).secret
}

export interface RaceReport {
  readonly requests: number
  readonly serverErrors: number
  /** 401 with a valid key, or 404 for a payment that exists. */
  readonly wrongAnswers: number
  /** Requests with no answer within ANSWER_TIMEOUT_MS (or no answer at all). */
  readonly unanswered: number
  readonly slowestMs: number
  /** Problems found in what the answers say (duplicates, over-refunds), as sentences. */
  readonly violations: ReadonlyArray<string>
}

/** Runs the four races and reports every answer that is not what a correct service gives. */
export const runRaces = async (baseUrl: string, secret: string): Promise<RaceReport> => {
  const answers: Array<Answer> = []
  const violations: Array<string> = []
  const all = async (count: number, call: (i: number) => Promise<Answer>) => {
    const batch = await Promise.all(Array.from({ length: count }, (_, i) => call(i)))
    answers.push(...batch)
    return batch
  }
  const create = (amount: string, headers: Record<string, string> = {}) =>
    request(baseUrl, "POST", "/v1/payments", { body: { amount, currency: "USD" }, token: secret, headers })

  // 64 concurrent creates.
  const creates = await all(64, () => create("10.00"))
  const createdIds = creates.filter((a) => a.status === 201).map((a) => a.body.id as string)
  if (createdIds.length !== 64) violations.push(`${createdIds.length} of 64 concurrent creates answered 201`)
  if (new Set(createdIds).size !== createdIds.length) violations.push("concurrent creates answered the same payment twice")

  // 50 creates with one Idempotency-Key: one payment, the same answer 50 times.
  const key = `durability-${randomBytes(6).toString("hex")}`
  const sameKey = await all(50, () => create("5.00", { "idempotency-key": key }))
  const sameKeyIds = new Set(sameKey.filter((a) => a.status === 201).map((a) => a.body.id as string))
  if (sameKeyIds.size !== 1) violations.push(`50 creates with one Idempotency-Key made ${sameKeyIds.size} payments`)
  if (sameKey.some((a) => a.status !== 201)) violations.push("a create with a repeated Idempotency-Key was not answered 201")

  // 20 concurrent simulates on different payments.
  const scanned = await all(20, (i) =>
    request(baseUrl, "POST", `/v1/payments/${createdIds[i]}/simulate`, { body: { status: "scanned" }, token: secret }))
  if (scanned.some((a) => a.status !== 201)) violations.push("a concurrent simulate on its own payment was not answered 201")
  const paid = await all(20, (i) =>
    request(baseUrl, "POST", `/v1/payments/${createdIds[i]}/simulate`, { body: { status: "paid" }, token: secret }))
  if (paid.some((a) => a.status !== 201 || a.body.status !== "paid")) violations.push("a concurrent pay was not answered 201 paid")

  // 25 racing refunds of 1.00 on one 10.00 payment: exactly ten win.
  const target = createdIds[0]!
  const refunds = await all(25, () =>
    request(baseUrl, "POST", `/v1/payments/${target}/refund`, { body: { amount: "1.00" }, token: secret }))
  const won = refunds.filter((a) => a.status === 201).length
  if (won !== 10) violations.push(`${won} of 25 racing 1.00 refunds of a 10.00 payment succeeded (expected 10)`)
  const after = await request(baseUrl, "GET", `/v1/payments/${target}`, { token: secret })
  answers.push(after)
  if (after.body?.amount_refunded !== "10.00") violations.push(`the raced payment shows ${after.body?.amount_refunded} refunded`)

  return {
    requests: answers.length,
    serverErrors: answers.filter((a) => a.status >= 500).length,
    wrongAnswers: answers.filter((a) => a.status === 401 || a.status === 404).length,
    unanswered: answers.filter((a) => a.status === 0).length,
    slowestMs: Math.max(...answers.map((a) => a.ms)),
    violations
  }
}

/** What the service acknowledged before it was killed. */
interface Acknowledged {
  /** Payment id → the status the service last acknowledged for it. */
  readonly payments: Map<string, string>
  /** Payment id → refund ids acknowledged with 201. */
  readonly refunds: Map<string, Array<string>>
}

/** Writers creating, paying and refunding payments until `stop` is set; every 2xx is recorded. */
const writeUnderLoad = (baseUrl: string, secret: string, workers: number, state: { stop: boolean }, acknowledged: Acknowledged) =>
  Promise.all(Array.from({ length: workers }, async () => {
    while (!state.stop) {
      const created = await request(baseUrl, "POST", "/v1/payments", { body: { amount: "3.00", currency: "USD" }, token: secret })
      if (created.status !== 201) continue
      const id = created.body.id as string
      acknowledged.payments.set(id, "pending")
      for (const status of ["scanned", "paid"]) {
        if (state.stop) return
        const moved = await request(baseUrl, "POST", `/v1/payments/${id}/simulate`, { body: { status }, token: secret })
        if (moved.status !== 201) break
        acknowledged.payments.set(id, status)
      }
      if (state.stop || acknowledged.payments.get(id) !== "paid") continue
      const refund = await request(baseUrl, "POST", `/v1/payments/${id}/refund`, { body: { amount: "1.00" }, token: secret })
      if (refund.status === 201) acknowledged.refunds.set(id, [...(acknowledged.refunds.get(id) ?? []), refund.body.id as string])
    }
  }))

export interface CrashReport {
  readonly acknowledgedPayments: number
  readonly acknowledgedRefunds: number
  /** Acknowledged writes not found after the restart, as sentences. */
  readonly missing: ReadonlyArray<string>
  /** Sum of debits minus credits over the whole journal, in minor units. */
  readonly imbalance: string
  /** SIGKILL → listening again. */
  readonly restartMs: number
  /** The service after the restart; the caller stops it. */
  readonly restarted: Service
}

const STATUS_ORDER = ["pending", "scanned", "paid", "partially_refunded", "refunded"]

/**
 * Writes under load for `loadMs`, SIGKILLs the service, restarts it on the same data, and checks every
 * acknowledged write and the ledger.
 */
export const crashAndRestart = async (
  service: Service,
  options: ServiceOptions,
  secret: string,
  loadMs = 2_000
): Promise<CrashReport> => {
  const acknowledged: Acknowledged = { payments: new Map(), refunds: new Map() }
  const state = { stop: false }
  const load = writeUnderLoad(service.baseUrl, secret, 16, state, acknowledged)
  await new Promise((resolve) => setTimeout(resolve, loadMs))
  service.process.signal("SIGKILL")
  const killedAt = performance.now()
  await service.process.exited
  state.stop = true
  await load

  const restarted = await startService(options, "restarted")
  const restartMs = performance.now() - killedAt
  const missing: Array<string> = []
  for (const [id, status] of acknowledged.payments) {
    const found = await request(restarted.baseUrl, "GET", `/v1/payments/${id}`, { token: secret })
    if (found.status !== 200) {
      missing.push(`payment ${id} (acknowledged ${status}) answered ${found.status}`)
      continue
    }
    if (STATUS_ORDER.indexOf(found.body.status) < STATUS_ORDER.indexOf(status)) {
      missing.push(`payment ${id} was acknowledged ${status} but is ${found.body.status}`)
    }
    const refundIds = acknowledged.refunds.get(id) ?? []
    if (refundIds.length > 0) {
      const list = await request(restarted.baseUrl, "GET", `/v1/payments/${id}/refunds`, { token: secret })
      const present = new Set<string>((list.body?.data ?? []).map((refund: { id: string }) => refund.id))
      for (const refundId of refundIds) if (!present.has(refundId)) missing.push(`refund ${refundId} of ${id} is missing`)
    }
  }
  const client = new pg.Client({ connectionString: databaseUrlOf(options) })
  await client.connect()
  try {
    const { rows } = await client.query<{ imbalance: string }>(
      "SELECT coalesce(sum(debit) - sum(credit), 0)::text AS imbalance FROM journal_lines"
    )
    return {
      acknowledgedPayments: acknowledged.payments.size,
      acknowledgedRefunds: [...acknowledged.refunds.values()].reduce((n, ids) => n + ids.length, 0),
      missing,
      imbalance: rows[0]!.imbalance,
      restartMs,
      restarted
    }
  } finally {
    await client.end()
  }
}
