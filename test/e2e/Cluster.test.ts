/**
 * The multi-process cluster under faults: 3 shard runners (`runtime/runner.ts`) and 1 API node
 * (`runtime/api.ts`) as real processes on loopback, on one fresh PostgreSQL database.
 *
 * 1. A mixed load through the API node — payments created (with Idempotency-Keys), scanned and paid, refunded
 *    (with Idempotency-Keys), left to expire — and in the middle of it one runner is SIGKILLed: the one
 *    running the expiry sweeper singleton. Every request is retried with its key while it fails with a
 *    connection error or a 5xx, as a careful client would. Afterwards: every answered request was applied
 *    exactly once, nothing is stuck where it should have moved on (paid payments are paid; overdue payments
 *    were expired by the sweeper, which moved to a surviving runner), refunds never exceed payments, the
 *    ledger balances, and the outbox holds one event per change. How long the dead runner's shards took to
 *    come back is printed.
 * 2. A fourth runner joins under load: the shards per runner before and after (from pg_locks, where runners
 *    hold their shards), and the load still succeeds exactly once.
 *
 * Skipped without a PostgreSQL server (or with TEST_DATABASE=embedded). CLUSTER_TEST_LOGS=1 echoes the
 * processes' logs.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type Effect, Either } from "effect"
import type { ApiClient } from "../../domain/Client.ts"
import { postgresAvailable } from "../support/TestDatabase.ts"
import {
  type CarefulAnswer,
  carefulClient,
  carefully,
  createDatabase,
  type ClusterDatabase,
  LocalCluster,
  makeMerchant,
  shardOf,
  sleep,
  waitFor
} from "../support/Cluster.ts"

const enabled = process.env["TEST_DATABASE"] !== "embedded" && await postgresAvailable()

/** @effect/cluster's singleton that pings the runners and marks dead ones unhealthy. */
const HEALTH_CHECK_SINGLETON = "effect/cluster/Sharding/RunnerHealth"

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

type OperationKind = "create" | "scan" | "pay" | "refund"

interface Operation {
  readonly kind: OperationKind
  readonly scenario: number
  readonly paymentId: string
  readonly idempotencyKey: string | undefined
  readonly startedAt: number
  readonly answer: CarefulAnswer
}

type ScenarioKind = "paid" | "expiring" | "scanned-expiring" | "pending"

/** What the load did, to check the database against. */
class Ledger {
  readonly operations: Array<Operation> = []
  /** Payment ids answered 2xx to a create, by scenario. */
  readonly created = new Map<number, string>()
  readonly kinds = new Map<string, ScenarioKind>()
  /** Payments whose `pay` simulate answered 201. */
  readonly paid = new Set<string>()
  /** Payments whose `pay` may have been applied without a 201 (a retry answered 409 after a failure). */
  readonly maybePaid = new Set<string>()
  /** Refund ids answered 201, by payment; and refunds answered with a client error (not applied). */
  readonly refunds = new Map<string, Set<string>>()
  readonly refusedRefunds: Array<CarefulAnswer> = []
  onOperation: (operation: Operation) => void = () => {}

  record(operation: Operation) {
    this.operations.push(operation)
    this.onOperation(operation)
  }
}

const scenarioKind = (i: number): ScenarioKind => {
  const slot = i % 10
  if (slot < 6) return "paid"
  if (slot < 8) return "expiring"
  if (slot === 8) return "scanned-expiring"
  return "pending"
}

/** What a careful call came to: "ok", or the tag of its typed error. */
const outcomeOf = (answer: CarefulAnswer) => Either.match(answer.outcome, { onLeft: (error) => error._tag, onRight: () => "ok" })

/** A careful call's value; any typed error fails the test, naming the call. */
const valueOf = <A>(answer: CarefulAnswer<A>, label: string): A =>
  Either.getOrElse(answer.outcome, (error) => expect.fail(`${label}: ${String(error)}`))

/**
 * One payment's story through the API node. Creates and refunds carry Idempotency-Keys; each request is
 * retried with them on connection errors and 5xx (`carefulClient`).
 */
const runScenario = async (api: ApiClient, ledger: Ledger, i: number, tag: string) => {
  const kind = scenarioKind(i)
  const call = async <A, E extends { readonly _tag: string }>(
    kindOf: OperationKind,
    paymentId: string,
    key: string | undefined,
    request: Effect.Effect<A, E>
  ) => {
    const startedAt = performance.now()
    const answer = await carefully(request)
    ledger.record({ kind: kindOf, scenario: i, paymentId, idempotencyKey: key, startedAt, answer })
    return answer
  }
  const expiresIn = kind === "expiring" ? 2 + (i % 3) : kind === "scanned-expiring" ? 4 : 3600
  const createKey = `${tag}-create-${i}`
  const create = (paymentId: string) =>
    call("create", paymentId, createKey, api.payments.create({
      payload: { amount: "10.00", currency: "USD", expires_in: expiresIn },
      headers: { "idempotency-key": createKey }
    }))
  const { id: paymentId } = valueOf(await create(""), "create")
  ledger.created.set(i, paymentId)
  ledger.kinds.set(paymentId, kind)
  if (i % 7 === 0) {
    // The client lost the answer and sends the create again with its key: the same payment, not a second one.
    expect(valueOf(await create(paymentId), "create again").id).toBe(paymentId)
  }
  if (kind === "expiring" || kind === "pending") return

  const simulate = async (status: "scanned" | "paid") => {
    const answer = await call(status === "scanned" ? "scan" : "pay", paymentId, undefined, api.payments.simulate({
      path: { id: paymentId },
      payload: { status }
    }))
    // A simulate carries no key: a retry after a lost answer finds the change made (409), which is fine.
    if (outcomeOf(answer) === "InvalidState" && answer.retried.length > 0) {
      if (status === "paid") ledger.maybePaid.add(paymentId)
      return
    }
    valueOf(answer, `${status} ${paymentId}`)
    if (status === "paid") ledger.paid.add(paymentId)
  }
  await simulate("scanned")
  if (kind === "scanned-expiring") return
  await simulate("paid")

  const refunds = new Set<string>()
  ledger.refunds.set(paymentId, refunds)
  const plan: Array<string | undefined> = i % 3 === 0 ? ["2.00", "3.00", undefined] : i % 3 === 1 ? ["4.50"] : ["1.00", "20.00"]
  for (const [j, amount] of plan.entries()) {
    const key = `${tag}-refund-${i}-${j}`
    const answer = await call("refund", paymentId, key, api.payments.refund({
      path: { id: paymentId },
      payload: amount === undefined ? {} : { amount },
      headers: { "idempotency-key": key }
    }))
    if (amount === "20.00") {
      // More than is left: refused, and nothing applied.
      expect(outcomeOf(answer)).toBe("InvalidRequest")
      ledger.refusedRefunds.push(answer)
      continue
    }
    refunds.add(valueOf(answer, `refund ${paymentId}`).id)
  }
}

/** Runs `count` scenarios from `first`, `concurrency` at a time. */
const runLoad = async (
  baseUrl: string,
  secret: string,
  ledger: Ledger,
  options: { readonly first: number; readonly count: number; readonly concurrency: number; readonly tag: string }
) => {
  let next = options.first
  const end = options.first + options.count
  const api = await carefulClient(baseUrl, secret)
  const worker = async () => {
    while (next < end) await runScenario(api, ledger, next++, options.tag)
  }
  await Promise.all(Array.from({ length: options.concurrency }, worker))
}

/** Waits until the payments left to expire (seconds after creation; the others have an hour) are expired. */
/**
 * Waits for the sweeper to expire the load's short-lived payments. When it does not, the failure says
 * which payments are left, which runner holds the sweeper's shard and what the runners last warned of,
 * so a failure on a busy machine can be read rather than guessed at.
 */
const shortLivedPaymentsExpired = async (db: ClusterDatabase, cluster: LocalCluster) => {
  const overdue = () =>
    db.query<{ id: string; status: string; expires_at: Date }>(
      `SELECT id, status, expires_at FROM payments
       WHERE status IN ('pending', 'scanned') AND expires_at < now() + interval '10 minutes'
       ORDER BY expires_at`
    )
  try {
    await waitFor("the short-lived payments to be expired by the sweeper", 60_000, async () => (await overdue()).length === 0 ? true : undefined, 250)
  } catch (error) {
    const left = await overdue()
    const owners = await cluster.shardOwners()
    const sweeperOwner = [...owners.entries()].find(([, shards]) => shards.includes(shardOf("payments/expiry")))?.[0] ?? "nobody"
    const warnings = cluster.runners.flatMap((runner) =>
      runner.tail.filter((line) => /level=(WARN|ERROR|FATAL)/.test(line)).slice(-10).map((line) => `${runner.name} ${runner.address}: ${line.slice(0, 400)}`)
    )
    throw new Error(
      [
        String(error),
        `${left.length} still open: ${left.slice(0, 5).map((p) => `${p.id} ${p.status} due ${p.expires_at.toISOString()} (shard ${shardOf(p.id)})`).join("; ")}`,
        `the sweeper's shard ${shardOf("payments/expiry")} is held by ${sweeperOwner}`,
        ...warnings
      ].join("\n")
    )
  }
}

/** The database agrees with every answer the load got, and with the rules of money. */
const verify = async (db: ClusterDatabase, ledger: Ledger, storeId: string) => {
  const createdIds = [...ledger.created.values()]
  // Payments: each answered create exists once, and nothing else was created.
  const payments = await db.query<{ id: string; status: string; amount: string; amount_refunded: string; expires_at: Date; expired_at: Date | null }>(
    `SELECT id, status, amount::text, amount_refunded::text, expires_at, expired_at FROM payments WHERE store_id = $1`,
    [storeId]
  )
  const byId = new Map(payments.map((p) => [p.id, p]))
  expect(new Set(createdIds).size).toBe(createdIds.length)
  expect(payments.length).toBe(createdIds.length)
  for (const id of createdIds) expect(byId.has(id), id).toBe(true)

  // Refunds: each answered refund exists once; no refund exists that no one was told of; sums agree.
  const refunds = await db.query<{ id: string; payment_id: string; amount: string }>(
    `SELECT r.id, r.payment_id, r.amount::text FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.store_id = $1`,
    [storeId]
  )
  const refundsOf = new Map<string, Array<{ id: string; amount: string }>>()
  for (const refund of refunds) refundsOf.set(refund.payment_id, [...(refundsOf.get(refund.payment_id) ?? []), refund])
  let answeredRefunds = 0
  for (const [paymentId, answered] of ledger.refunds) {
    answeredRefunds += answered.size
    const stored = refundsOf.get(paymentId) ?? []
    expect(stored.map((r) => r.id).sort(), `refunds of ${paymentId}`).toEqual([...answered].sort())
  }
  expect(refunds.length).toBe(answeredRefunds)
  for (const payment of payments) {
    const sum = (refundsOf.get(payment.id) ?? []).reduce((total, r) => total + BigInt(r.amount), 0n)
    expect(BigInt(payment.amount_refunded), `amount_refunded of ${payment.id}`).toBe(sum)
    expect(sum <= BigInt(payment.amount), `refunds of ${payment.id} within its amount`).toBe(true)
  }

  // Statuses: a payment paid by a 201 is paid (or refunded from there); overdue ones were expired.
  const paidStatuses = new Set(["paid", "partially_refunded", "refunded"])
  for (const id of [...ledger.paid, ...ledger.maybePaid]) expect(paidStatuses.has(byId.get(id)!.status), `${id} is ${byId.get(id)!.status}`).toBe(true)
  for (const payment of payments) {
    const kind = ledger.kinds.get(payment.id)
    if (kind === "expiring" || kind === "scanned-expiring") expect(payment.status, payment.id).toBe("expired")
    if (kind === "pending") expect(payment.status, payment.id).toBe("pending")
    const refunded = BigInt(payment.amount_refunded)
    if (payment.status === "refunded") expect(refunded).toBe(BigInt(payment.amount))
    if (payment.status === "partially_refunded") expect(refunded > 0n && refunded < BigInt(payment.amount)).toBe(true)
  }

  // Ledger: balanced overall; one payment journal per paid payment, one refund journal per refund.
  const [balance] = await db.query<{ imbalance: string }>(`SELECT coalesce(sum(debit) - sum(credit), 0)::text AS imbalance FROM journal_lines`)
  expect(balance!.imbalance).toBe("0")
  const journals = await db.query<{ payment_id: string; kind: string; count: number }>(
    `SELECT payment_id, kind, count(*)::int AS count FROM journal_entries WHERE store_id = $1 GROUP BY payment_id, kind`,
    [storeId]
  )
  const journalCount = (paymentId: string, kind: string) => journals.find((j) => j.payment_id === paymentId && j.kind === kind)?.count ?? 0

  // Outbox: one payment.completed per paid payment, one payment.refunded per refund.
  const events = await db.query<{ payment_id: string; type: string; count: number }>(
    `SELECT payload -> 'data' -> 'object' ->> 'id' AS payment_id, type, count(*)::int AS count
     FROM outbox WHERE store_id = $1 GROUP BY 1, 2`,
    [storeId]
  )
  const eventCount = (paymentId: string, type: string) => events.find((e) => e.payment_id === paymentId && e.type === type)?.count ?? 0
  for (const payment of payments) {
    const paid = paidStatuses.has(payment.status) ? 1 : 0
    const refundCount = refundsOf.get(payment.id)?.length ?? 0
    expect(eventCount(payment.id, "payment.completed"), `payment.completed of ${payment.id}`).toBe(paid)
    expect(journalCount(payment.id, "payment"), `payment journal of ${payment.id}`).toBe(paid)
    expect(eventCount(payment.id, "payment.refunded"), `payment.refunded of ${payment.id}`).toBe(refundCount)
    expect(journalCount(payment.id, "refund"), `refund journals of ${payment.id}`).toBe(refundCount)
    if (payment.status === "expired") expect(eventCount(payment.id, "payment.expired")).toBe(1)
  }
  return { payments: payments.length, refunds: refunds.length, paid: payments.filter((p) => paidStatuses.has(p.status)).length }
}

describe.skipIf(!enabled)("a multi-process cluster: 3 runners and an API node on one PostgreSQL", () => {
  let db: ClusterDatabase
  let cluster: LocalCluster
  let baseUrl = ""
  let secret = ""
  let storeId = ""
  const ledger = new Ledger()

  beforeAll(async () => {
    db = await createDatabase("test_cluster")
    cluster = new LocalCluster(db)
    baseUrl = await cluster.start(3)
    ;({ secret, storeId } = await makeMerchant(baseUrl))
  }, 180_000)

  afterAll(async () => {
    await cluster?.killAll()
    await db?.drop()
  }, 60_000)

  it("applies every answered request exactly once across a runner killed under load, and recovers in seconds", { timeout: 300_000 }, async () => {
    const before = await cluster.shardCounts()
    expect(Object.keys(before)).toHaveLength(3)

    // The victim: the runner running the expiry sweeper, so the sweeper has to move.
    const sweeperShard = shardOf("payments/expiry")
    const owners = await cluster.shardOwners()
    const victimAddress = [...owners.entries()].find(([, shards]) => shards.includes(sweeperShard))![0]
    const victimRanHealthCheck = owners.get(victimAddress)!.includes(shardOf(HEALTH_CHECK_SINGLETON))
    const victim = cluster.runners.find((r) => r.address === victimAddress)!
    const survivors = cluster.runners.filter((r) => r !== victim)

    let killedAt = 0
    let killedAtWall = 0
    let deadShards = new Set<number>()
    let recovery: Promise<number> | undefined
    const kill = async () => {
      deadShards = new Set((await cluster.shardOwners()).get(victim.address) ?? [])
      killedAtWall = Date.now()
      killedAt = performance.now()
      victim.signal("SIGKILL")
      recovery = cluster.allShardsHeldBy(survivors, 120_000)
    }
    let killing: Promise<void> | undefined
    ledger.onOperation = () => {
      if (killing === undefined && ledger.operations.length >= 150) killing = kill()
    }

    const loadStarted = performance.now()
    await runLoad(baseUrl, secret, ledger, { first: 0, count: 120, concurrency: 12, tag: "kill" })
    const loadMs = performance.now() - loadStarted
    await killing
    expect(killedAt).toBeGreaterThan(0)
    const allHeldAt = await recovery!
    await victim.exited

    // Payments left to expire were expired by the sweeper, now on a surviving runner.
    await shortLivedPaymentsExpired(db, cluster)
    const result = await verify(db, ledger, storeId)

    const [sweepLag] = await db.query<{ expired_after_kill: number; max_lag_ms: number | null }>(
      `SELECT count(*)::int AS expired_after_kill,
              max(extract(epoch FROM expired_at - expires_at) * 1000)::int AS max_lag_ms
       FROM payments WHERE status = 'expired' AND expires_at > to_timestamp($1 / 1000.0)`,
      [killedAtWall]
    )
    // Entity operations (creates touch no entity) on the dead runner's shards, sent after the kill: only a
    // new owner could have answered them.
    const onDeadShards = ledger.operations.filter((op) =>
      op.startedAt > killedAt && Either.isRight(op.answer.outcome) && op.kind !== "create" && deadShards.has(shardOf(op.paymentId))
    )
    const firstOnDeadShard = Math.min(...onDeadShards.map((op) => op.answer.at))
    const deadShardLatencies = onDeadShards.map((op) => op.answer.at - op.startedAt).sort((a, b) => a - b)
    const spanning = ledger.operations.filter((op) => op.startedAt < killedAt && op.answer.at > killedAt)
    const retried = ledger.operations.filter((op) => op.answer.retried.length > 0)
    const slowest = Math.max(...ledger.operations.map((op) => op.answer.at - op.startedAt))
    const after = await cluster.shardCounts()

    console.log(
      [
        "runner killed under load:",
        `  operations: ${ledger.operations.length} in ${seconds(loadMs)} (${result.payments} payments, ${result.paid} paid, ${result.refunds} refunds, ${ledger.refusedRefunds.length} over-refunds refused)`,
        `  killed ${victim.name} (${victim.address}, ran the expiry sweeper${victimRanHealthCheck ? " and the runner health check" : ""}) after ${ledger.operations.filter((op) => op.answer.at <= killedAt).length} operations; it held ${deadShards.size} shards`,
        `  kill → all 300 shards held by the survivors: ${seconds(allHeldAt - killedAt)}`,
        `  kill → first successful operation, sent after the kill, on a shard the dead runner held: ${Number.isFinite(firstOnDeadShard) ? seconds(firstOnDeadShard - killedAt) : "none"} ` +
          `(${onDeadShards.length} such operations; slowest ${seconds(deadShardLatencies.at(-1) ?? 0)})`,
        `  requests in flight across the kill: ${spanning.length}; retried by the client: ${retried.length} (${[...new Set(retried.flatMap((op) => op.answer.retried.map((r) => r.slice(0, 60))))].slice(0, 3).join("; ")}); slowest answer: ${seconds(slowest)}`,
        `  payments expired by the moved sweeper: ${sweepLag!.expired_after_kill} (latest ${seconds(sweepLag!.max_lag_ms ?? 0)} after its expires_at)`,
        `  shards per runner before: ${JSON.stringify(before)}`,
        `  shards per runner after:  ${JSON.stringify(after)}`,
        `  cluster_runners: ${JSON.stringify((await cluster.registeredRunners()).map((r) => `${r.address} healthy=${r.healthy}`))}`
      ].join("\n")
    )
    expect(Object.keys(after)).toHaveLength(2)
    expect(Object.values(after).reduce((a, b) => a + b, 0)).toBe(300)
    expect(onDeadShards.length).toBeGreaterThan(0)
  })

  it("moves shards to a runner that joins under load", { timeout: 300_000 }, async () => {
    const before = await cluster.shardCounts()
    const load = runLoad(baseUrl, secret, ledger, { first: 1000, count: 60, concurrency: 12, tag: "join" })
    await sleep(1_000)
    const startedAt = performance.now()
    const joiner = await cluster.addRunner()
    const readyAt = performance.now()
    const live = cluster.runners.filter((r) => r.isRunning())
    const balancedAt = await waitFor("the new runner to hold shards, and every shard to be held", 120_000, async () => {
      const owners = await cluster.shardOwners()
      const held = [...owners.entries()].filter(([address]) => live.some((r) => r.address === address))
      const total = held.reduce((n, [, shards]) => n + shards.length, 0)
      return (owners.get(joiner.address)?.length ?? 0) > 0 && total === 300 ? performance.now() : undefined
    })
    // The others hand shards over as they let them go: wait until the counts settle.
    let after = await cluster.shardCounts()
    await waitFor("the shard counts to settle", 60_000, async () => {
      await sleep(1_000)
      const now = await cluster.shardCounts()
      const settled = JSON.stringify(now) === JSON.stringify(after) && Object.values(now).reduce((a, b) => a + b, 0) === 300
      after = now
      return settled ? true : undefined
    })
    await load
    await shortLivedPaymentsExpired(db, cluster)
    const result = await verify(db, ledger, storeId)
    const joinOperations = ledger.operations.filter((op) => op.idempotencyKey?.startsWith("join") || op.startedAt >= startedAt)
    console.log(
      [
        "runner joined under load:",
        `  shards per runner before: ${JSON.stringify(before)}`,
        `  shards per runner after:  ${JSON.stringify(after)}`,
        `  ${joiner.name} started → ready: ${seconds(readyAt - startedAt)}; ready → holding shards with all 300 held: ${seconds(balancedAt - readyAt)}`,
        `  operations during the join: ${joinOperations.length}, retried by the client: ${joinOperations.filter((op) => op.answer.retried.length > 0).length}; totals now ${result.payments} payments, ${result.refunds} refunds`
      ].join("\n")
    )
    const joinerShards = Object.entries(after).find(([name]) => name.startsWith(joiner.name))?.[1] ?? 0
    expect(joinerShards).toBeGreaterThanOrEqual(50)
    expect(Object.keys(after)).toHaveLength(3)
  })

  it("recovers within the lock expiration when the killed runner was the one checking the others' health", { timeout: 300_000 }, async () => {
    // Nobody is left to mark it unhealthy: the survivors drop it once its heartbeat is older than
    // CLUSTER_LOCK_EXPIRATION_SECONDS, and the health check singleton moves with its shard.
    const owners = await cluster.shardOwners()
    const victimAddress = [...owners.entries()].find(([, shards]) => shards.includes(shardOf(HEALTH_CHECK_SINGLETON)))![0]
    const victim = cluster.runners.find((r) => r.address === victimAddress)!
    const survivors = cluster.runners.filter((r) => r !== victim && r.isRunning())
    const deadShards = new Set(owners.get(victimAddress)!)
    const load = runLoad(baseUrl, secret, ledger, { first: 2000, count: 60, concurrency: 12, tag: "health" })
    await sleep(1_500)
    const killedAt = performance.now()
    victim.signal("SIGKILL")
    const allHeldAt = await cluster.allShardsHeldBy(survivors, 120_000)
    await load
    await victim.exited
    await shortLivedPaymentsExpired(db, cluster)
    const result = await verify(db, ledger, storeId)
    const onDeadShards = ledger.operations.filter((op) =>
      op.startedAt > killedAt && Either.isRight(op.answer.outcome) && op.kind !== "create" && deadShards.has(shardOf(op.paymentId))
    )
    const firstOnDeadShard = Math.min(...onDeadShards.map((op) => op.answer.at))
    console.log(
      [
        "health-checking runner killed under load:",
        `  killed ${victim.name} (${victim.address}); it held ${deadShards.size} shards`,
        `  kill → all 300 shards held by the survivors: ${seconds(allHeldAt - killedAt)}`,
        `  kill → first successful operation, sent after the kill, on a shard it held: ${Number.isFinite(firstOnDeadShard) ? seconds(firstOnDeadShard - killedAt) : "none"}`,
        `  shards per runner after: ${JSON.stringify(await cluster.shardCounts())}; totals now ${result.payments} payments, ${result.refunds} refunds`
      ].join("\n")
    )
    expect(allHeldAt - killedAt).toBeLessThan(30_000)
  })
})
