/**
 * The double-entry ledger behind payments stays balanced: random runs of payments, simulated moves,
 * cancels and refunds (some of them invalid) through HTTP leave every journal entry and the store's
 * trial balance at zero, one journal entry per paid payment and per refund, and refunds that never
 * add up to more than was paid. The database itself refuses an unbalanced entry at commit and any
 * change to a posted journal.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, Effect, Either, Exit, Option, Runtime, Schema } from "effect"
import * as fc from "fast-check"
import { randomBytes } from "node:crypto"
import { AmountString } from "../../domain/Money.ts"
import rewriteJournalEntryIds from "../../migrations/0023_journal_entry_ids.ts"
import type { Payment, Refund } from "../../domain/Payments.ts"
import { type SignedUp, signUp } from "../support/Accounts.ts"
import { clientAs } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { createPayment, paidPayment, refund, simulate, storeWithKey } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

// Raw calls only for refund amounts outside the request schema, which the typed client would not send.
const call = makeCall()

type Status = "pending" | "scanned" | "paid" | "expired" | "failed" | "cancelled" | "partially_refunded" | "refunded"
type SimulateStatus = "scanned" | "paid" | "failed" | "expired"

type RefundAmount =
  | { readonly kind: "omitted" }
  | { readonly kind: "cents"; readonly cents: number }
  /** A share of what is left to refund at the time, in percent (at least one cent). */
  | { readonly kind: "share"; readonly percent: number }
  | { readonly kind: "malformed"; readonly text: string }

type Op =
  | { readonly kind: "simulate"; readonly target: number; readonly status: SimulateStatus }
  | { readonly kind: "cancel"; readonly target: number }
  | { readonly kind: "refund"; readonly target: number; readonly amount: RefundAmount }

interface Model {
  id: Payment["id"]
  status: Status
  readonly amount: number
  refunded: number
}

const MAX_PAYMENTS = 3

/**
 * Omitted (the whole remaining balance), a share of the remaining balance, 0.01 to 60.00 (often above
 * the balance), or malformed.
 */
const refundAmountArbitrary: fc.Arbitrary<RefundAmount> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<RefundAmount>({ kind: "omitted" }) },
  {
    weight: 4,
    arbitrary: fc.integer({ min: 1, max: 100 }).map((percent): RefundAmount => ({ kind: "share", percent }))
  },
  {
    weight: 3,
    arbitrary: fc.integer({ min: 1, max: 6_000 }).map((cents): RefundAmount => ({ kind: "cents", cents }))
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("0", "0.00", "-1.00", "1.001", "abc", "1e2").map((text): RefundAmount => ({
      kind: "malformed",
      text
    }))
  }
)

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("simulate" as const),
      target: fc.nat(MAX_PAYMENTS - 1),
      status: fc.constantFrom<SimulateStatus>("scanned", "paid", "paid", "failed", "expired")
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancel" as const), target: fc.nat(MAX_PAYMENTS - 1) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("refund" as const),
      target: fc.nat(MAX_PAYMENTS - 1),
      amount: refundAmountArbitrary
    })
  }
)

/** A payment of the run: its amount in cents (1.00 to 50.00 USD) and how far it is driven before the random moves. */
const paymentArbitrary = fc.record({
  cents: fc.integer({ min: 100, max: 5_000 }),
  start: fc.constantFrom<"pending" | "scanned" | "paid">("pending", "scanned", "paid", "paid", "paid")
})

const runArbitrary = fc.record({
  payments: fc.array(paymentArbitrary, { minLength: 1, maxLength: MAX_PAYMENTS }),
  ops: fc.array(opArbitrary, { minLength: 1, maxLength: 12 })
})

/** The moves that take a new payment to `start`, as ops on payment `target`. */
const startOps = (target: number, start: "pending" | "scanned" | "paid"): ReadonlyArray<Op> =>
  start === "pending"
    ? []
    : start === "scanned"
    ? [{ kind: "simulate", target, status: "scanned" }]
    : [{ kind: "simulate", target, status: "scanned" }, { kind: "simulate", target, status: "paid" }]

const usd = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`

const refundable = (status: Status) => status === "paid" || status === "partially_refunded"

const simulateMoves: Record<SimulateStatus, { readonly from: ReadonlyArray<Status> }> = {
  scanned: { from: ["pending"] },
  paid: { from: ["scanned"] },
  failed: { from: ["pending"] },
  expired: { from: ["pending", "scanned"] }
}

/** A share of a payment's remaining balance as cents: at least one, even of nothing (which is then too much). */
const shareOf = (model: Model, percent: number) => Math.max(1, Math.floor(((model.amount - model.refunded) * percent) / 100))

/** The refund amount `op` sends for a payment in `model`, in cents; undefined when omitted or malformed. */
const refundCents = (model: Model, amount: RefundAmount): number | undefined =>
  amount.kind === "cents" ? amount.cents : amount.kind === "share" ? shareOf(model, amount.percent) : undefined

/** What an op is answered with: created (the payment after it, or the refund), or refused with this error. */
type Outcome = "created" | "InvalidRequest" | "InvalidState"

/** What the service must answer to `op` on a payment in `model`; updates `model` to the state after it. */
const expectedOutcome = (model: Model, op: Op): { readonly outcome: Outcome; readonly refundCents?: number } => {
  switch (op.kind) {
    case "simulate":
      if (!simulateMoves[op.status].from.includes(model.status)) return { outcome: "InvalidState" }
      model.status = op.status
      return { outcome: "created" }
    case "cancel":
      if (model.status !== "pending") return { outcome: "InvalidState" }
      model.status = "cancelled"
      return { outcome: "created" }
    case "refund": {
      if (op.amount.kind === "malformed") return { outcome: "InvalidRequest" }
      if (!refundable(model.status)) return { outcome: "InvalidState" }
      const remaining = model.amount - model.refunded
      const cents = refundCents(model, op.amount) ?? remaining
      if (cents > remaining) return { outcome: "InvalidRequest" }
      model.refunded += cents
      model.status = model.refunded === model.amount ? "refunded" : "partially_refunded"
      return { outcome: "created", refundCents: cents }
    }
  }
}

/** The answer to an op: what it created, or the tag (and param) of the error it was refused with. */
type Answer = Either.Either<Payment | Refund, { readonly _tag: string; readonly param?: unknown; readonly message?: string }>

const answerOf = <A extends Payment | Refund>(effect: Effect.Effect<A, { readonly _tag: string }>): Effect.Effect<Answer> =>
  Effect.map(
    Effect.either(effect),
    Either.mapLeft((error) => ({ _tag: error._tag, param: (error as { readonly param?: unknown }).param, message: String(error) }))
  )

const isSendable = Schema.is(AmountString)

/** Sends `op` for a payment in `model` (as it is before the op). */
const apply = (app: TestAppShape, key: string, model: Model, op: Op): Effect.Effect<Answer> => {
  const id = model.id
  switch (op.kind) {
    case "simulate":
      return answerOf(simulate(app, key, id, op.status))
    case "cancel":
      return answerOf(Effect.flatMap(clientAs(app, key), (api) => api.payments.cancel({ path: { id } })))
    case "refund": {
      if (op.amount.kind === "malformed" && !isSendable(op.amount.text)) {
        // Raw: not an amount at all ("abc", "-1.00"), outside the request schema.
        return Effect.map(call(app, "POST", `/v1/payments/${id}/refund`, { token: key, body: { amount: op.amount.text } }), (response) =>
          Either.left({
            _tag: response.status === 400 && response.body?.error?.code === "invalid_request"
              ? "InvalidRequest"
              : `HTTP ${response.status} ${JSON.stringify(response.body)}`,
            param: response.body?.error?.param
          }))
      }
      const amount = op.amount.kind === "omitted"
        ? undefined
        : op.amount.kind === "malformed"
        ? op.amount.text
        : usd(refundCents(model, op.amount)!)
      return answerOf(refund(app, key, id, amount === undefined ? {} : { amount }))
    }
  }
}

/** A new store of `owner` with a test-mode API key. */
const newStore = (app: TestAppShape, owner: SignedUp) => storeWithKey(app, owner, `Ledger ${randomBytes(3).toString("hex")}`)

/** Every ledger invariant over one store, checked in the database; `models` are the store's payments. */
const checkLedger = (sql: SqlClient.SqlClient, storeId: string, models: ReadonlyArray<Model>) =>
  Effect.gen(function*() {
    // Every entry is balanced, with at least two lines.
    const entries = yield* sql<{ id: string; kind: string; lines: number; debits: string; credits: string }>`
      SELECT e.id, e.kind, count(l.line)::int AS lines,
        coalesce(sum(l.debit), 0)::text AS debits, coalesce(sum(l.credit), 0)::text AS credits
      FROM journal_entries e LEFT JOIN journal_lines l ON l.entry_id = e.id
      WHERE e.store_id = ${storeId}
      GROUP BY e.id, e.kind`
    for (const entry of entries) {
      expect(entry.debits, `entry ${entry.id} (${entry.kind})`).toBe(entry.credits)
      expect(entry.lines, `entry ${entry.id} (${entry.kind})`).toBeGreaterThanOrEqual(2)
    }

    // The trial balance of the store is zero.
    const [trial] = yield* sql<{ balance: string; lines: number }>`
      SELECT (coalesce(sum(l.debit), 0) - coalesce(sum(l.credit), 0))::text AS balance, count(*)::int AS lines
      FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
      WHERE e.store_id = ${storeId}`
    expect(trial!.balance).toBe("0")

    // Each payment: refunds within the amount and equal to its refund rows; one payment entry once paid.
    const payments = yield* sql<{
      id: string
      status: string
      amount: string
      amount_refunded: string
      refund_total: string
      payment_entries: number
      payment_entry_debits: string
    }>`
      SELECT p.id, p.status, p.amount::text, p.amount_refunded::text,
        (SELECT coalesce(sum(r.amount), 0) FROM refunds r WHERE r.payment_id = p.id)::text AS refund_total,
        (SELECT count(*) FROM journal_entries e WHERE e.payment_id = p.id AND e.kind = 'payment')::int AS payment_entries,
        (SELECT coalesce(sum(l.debit), 0) FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
          WHERE e.payment_id = p.id AND e.kind = 'payment')::text AS payment_entry_debits
      FROM payments p WHERE p.store_id = ${storeId}`
    expect(payments).toHaveLength(models.length)
    for (const payment of payments) {
      const model = models.find((m) => m.id === payment.id)
      expect(model, `payment ${payment.id} is one of the run's`).toBeDefined()
      expect(BigInt(payment.amount_refunded)).toBeLessThanOrEqual(BigInt(payment.amount))
      expect(payment.amount_refunded, `payment ${payment.id}`).toBe(payment.refund_total)
      expect({ status: payment.status, amount: payment.amount, refunded: payment.amount_refunded }, `payment ${payment.id}`)
        .toEqual({ status: model!.status, amount: String(model!.amount), refunded: String(model!.refunded) })
      const wasPaid = ["paid", "partially_refunded", "refunded"].includes(payment.status)
      expect(payment.payment_entries, `payment entries of a ${payment.status} payment`).toBe(wasPaid ? 1 : 0)
      expect(payment.payment_entry_debits).toBe(wasPaid ? payment.amount : "0")
    }

    // Each refund: exactly one refund entry, for the refund's amount.
    const refunds = yield* sql<{ id: string; amount: string; entries: number; debits: string }>`
      SELECT r.id, r.amount::text,
        (SELECT count(*) FROM journal_entries e WHERE e.refund_id = r.id AND e.kind = 'refund')::int AS entries,
        (SELECT coalesce(sum(l.debit), 0) FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
          WHERE e.refund_id = r.id AND e.kind = 'refund')::text AS debits
      FROM refunds r WHERE r.store_id = ${storeId}`
    for (const refund of refunds) {
      expect(refund.entries, `refund ${refund.id}`).toBe(1)
      expect(refund.debits, `refund ${refund.id}`).toBe(refund.amount)
    }

    // Each entry belongs to its payment's store, mode and currency.
    const [mismatched] = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM journal_entries e JOIN payments p ON p.id = e.payment_id
      WHERE (e.store_id = ${storeId} OR p.store_id = ${storeId})
        AND (e.store_id <> p.store_id OR e.livemode <> p.livemode OR e.currency <> p.currency)`
    expect(mismatched!.n).toBe(0)

    // And nothing else: one entry per paid payment plus one per refund.
    const paidCount = payments.filter((p) => p.payment_entries === 1).length
    expect(entries.filter((e) => e.kind === "payment")).toHaveLength(paidCount)
    expect(entries.filter((e) => e.kind === "refund")).toHaveLength(refunds.length)
    expect(entries).toHaveLength(paidCount + refunds.length)
  })

/**
 * What a transaction that must not commit ended with: a failed commit is a defect in @effect/sql (not a
 * typed failure), so this reads the squashed cause, the SQL error and the database's message under it.
 */
const refusal = <A, E>(exit: Exit.Exit<A, E>): string | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const error: any = Cause.squash(exit.cause)
  return `${String(error?.message)} ${String(error?.cause)}`
}

describe("ledger", () => {
  layer(testAppLayer({ refundMfaThreshold: Option.none(), paymentDefaultExpirySeconds: 900 }), {
    timeout: 120_000,
    excludeTestServices: true
  })("over HTTP and in the database", (it) => {
    it.effect("stays balanced whatever sequence of moves and refunds is applied", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const runtime = yield* Effect.runtime<never>()
        const run = <A, E>(effect: Effect.Effect<A, E>) => Runtime.runPromise(runtime)(effect)

        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(runArbitrary, async ({ payments, ops: randomOps }) => {
              // A store per run, each of its own owner: the Free plan holds 3 stores per organization.
              const { storeId, key } = await run(newStore(app, await signUp(app)))
              const models: Array<Model> = []
              const ops = [...payments.flatMap((payment, index) => startOps(index, payment.start)), ...randomOps]
              for (const { cents } of payments) {
                const created = await run(createPayment(app, key, { amount: usd(cents) }))
                models.push({ id: created.id, status: "pending", amount: cents, refunded: 0 })
              }
              for (const op of ops) {
                const model = models[op.target % models.length]!
                const before = { ...model }
                const request = apply(app, key, before, op)
                const expected = expectedOutcome(model, op)
                const answer = await run(request)
                const label = `${JSON.stringify(op)} on ${JSON.stringify(before)}: ${JSON.stringify(Either.merge(answer))}`
                expect(Either.match(answer, { onLeft: (error) => error._tag, onRight: () => "created" }), label)
                  .toBe(expected.outcome)
                if (Either.isLeft(answer) && answer.left._tag === "InvalidRequest") expect(answer.left.param, label).toBe("amount")
                if (Either.isRight(answer)) {
                  const created = answer.right
                  expect(created.object, label).toBe(op.kind === "refund" ? "refund" : "payment")
                  if (created.object === "refund") expect(created.amount, label).toBe(usd(expected.refundCents!))
                  else expect(created.status, label).toBe(model.status)
                }
              }
              await run(checkLedger(sql, storeId, models))
            }),
            { numRuns: 15 }
          )
        )
      }), 150_000)

    it.effect("refuses to commit an unbalanced journal entry", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const owner = yield* Effect.promise(() => signUp(app))
        const { storeId } = yield* newStore(app, owner)
        const entryId = () => `je_test${randomBytes(8).toString("hex")}`
        const entry = (id: string) =>
          sql`
            INSERT INTO journal_entries (id, store_id, livemode, currency, kind, memo)
            VALUES (${id}, ${storeId}, false, 'USD', 'adjustment', 'ledger test')`
        const line = (id: string, n: number, account: string, debit: number, credit: number) =>
          sql`
            INSERT INTO journal_lines (entry_id, line, account, debit, credit)
            VALUES (${id}, ${n}, ${account}, ${debit}, ${credit})`
        const exists = (id: string) =>
          Effect.map(
            sql<{ n: number }>`SELECT count(*)::int AS n FROM journal_entries WHERE id = ${id}`,
            (rows) => rows[0]!.n === 1
          )

        // One line: each statement is accepted, the commit is not.
        const single = entryId()
        const insertedLines: Array<number> = []
        const oneLine = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
          yield* entry(single)
          yield* line(single, 1, "provider_clearing", 1000, 0)
          const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM journal_lines WHERE entry_id = ${single}`
          insertedLines.push(rows[0]!.n)
        })))
        expect(insertedLines).toEqual([1])
        expect(refusal(oneLine)).toContain("not balanced")
        expect(yield* exists(single)).toBe(false)

        // Two lines that do not add up.
        const uneven = entryId()
        const unevenResult = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
          yield* entry(uneven)
          yield* line(uneven, 1, "provider_clearing", 1000, 0)
          yield* line(uneven, 2, "merchant_payable", 0, 990)
        })))
        expect(refusal(unevenResult)).toContain("not balanced")
        expect(yield* exists(uneven)).toBe(false)

        // A balanced entry commits (so the refusals above are about balance, not anything else)…
        const balanced = entryId()
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* entry(balanced)
          yield* line(balanced, 1, "provider_clearing", 1000, 0)
          yield* line(balanced, 2, "merchant_payable", 0, 1000)
        }))
        expect(yield* exists(balanced)).toBe(true)

        // …and a line added to it later, tipping it over, does not.
        const tipped = yield* Effect.exit(sql.withTransaction(line(balanced, 3, "refunds", 5, 0)))
        expect(refusal(tipped)).toContain("not balanced")
        const lines = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM journal_lines WHERE entry_id = ${balanced}`
        expect(lines[0]!.n).toBe(2)
      }))

    it.effect("refuses UPDATE and DELETE of posted journal lines and entries", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const owner = yield* Effect.promise(() => signUp(app))
        const { key } = yield* newStore(app, owner)
        const { id } = yield* paidPayment(app, key, { amount: "25.00" })
        yield* refund(app, key, id, { amount: "5.00" })

        const snapshot = sql<{ entry_id: string; line: number; account: string; debit: string; credit: string }>`
          SELECT l.entry_id, l.line, l.account, l.debit::text, l.credit::text
          FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
          WHERE e.payment_id = ${id}
          ORDER BY l.entry_id, l.line`
        const before = yield* snapshot
        expect(before).toHaveLength(4)
        const entryId = before[0]!.entry_id

        const attempts = [
          sql`UPDATE journal_lines SET debit = debit + 1 WHERE entry_id = ${entryId} AND line = 1`,
          // Even a change that keeps the entry balanced.
          sql`UPDATE journal_lines SET debit = debit * 2, credit = credit * 2 WHERE entry_id = ${entryId}`,
          sql`UPDATE journal_lines SET account = 'refunds' WHERE entry_id = ${entryId}`,
          sql`DELETE FROM journal_lines WHERE entry_id = ${entryId}`,
          sql`UPDATE journal_entries SET memo = 'rewritten' WHERE id = ${entryId}`,
          sql`DELETE FROM journal_entries WHERE payment_id = ${id}`
        ]
        for (const attempt of attempts) {
          expect(refusal(yield* Effect.exit(attempt))).toContain("immutable")
        }
        expect(yield* snapshot).toEqual(before)
        const memo = yield* sql<{ memo: string | null }>`SELECT memo FROM journal_entries WHERE id = ${entryId}`
        expect(memo[0]!.memo).not.toBe("rewritten")
      }))

    it.effect("names journal entries je_, and gives entries posted as jrn_ the new prefix with their lines", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const owner = yield* Effect.promise(() => signUp(app))
        const { key, storeId } = yield* newStore(app, owner)
        const { id } = yield* paidPayment(app, key, { amount: "25.00" })
        yield* refund(app, key, id, { amount: "5.00" })
        const api = yield* clientAs(app, owner.token)
        const posted = yield* api.ledger.journals({ path: { storeId }, urlParams: { limit: 10 } })
        expect(posted.data.map((entry) => entry.kind).sort()).toEqual(["payment", "refund"])
        for (const entry of posted.data) expect(entry.id).toMatch(/^je_[0-9A-Za-z]{24}$/)

        // An entry as the service posted them before, with the old prefix.
        const random = randomBytes(12).toString("hex").slice(0, 24)
        const oldId = `jrn_${random}`
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`
            INSERT INTO journal_entries (id, store_id, livemode, currency, kind, memo)
            VALUES (${oldId}, ${storeId}, false, 'USD', 'adjustment', 'posted before the rename')`
          yield* sql`
            INSERT INTO journal_lines (entry_id, line, account, debit, credit)
            VALUES (${oldId}, 1, 'provider_clearing', 700, 0), (${oldId}, 2, 'merchant_payable', 0, 700)`
        }))
        yield* sql.withTransaction(rewriteJournalEntryIds)

        const newId = `je_${random}`
        const old = yield* sql<{ n: number }>`
          SELECT (SELECT count(*) FROM journal_entries WHERE id LIKE 'jrn\_%')
            + (SELECT count(*) FROM journal_lines WHERE entry_id LIKE 'jrn\_%') AS n`
        expect(Number(old[0]!.n)).toBe(0)
        const lines = yield* sql<{ line: number; debit: string; credit: string }>`
          SELECT line, debit::text, credit::text FROM journal_lines WHERE entry_id = ${newId} ORDER BY line`
        expect(lines).toEqual([{ line: 1, debit: "700", credit: "0" }, { line: 2, debit: "0", credit: "700" }])
        const listed = yield* api.ledger.journals({ path: { storeId }, urlParams: { limit: 10 } })
        expect(listed.data.map((entry) => entry.id).sort()).toEqual([...posted.data.map((entry) => entry.id), newId].sort())
        // The journal is immutable again and its lines still need an entry.
        expect(refusal(yield* Effect.exit(sql`UPDATE journal_entries SET memo = 'x' WHERE id = ${newId}`))).toContain("immutable")
        expect(refusal(yield* Effect.exit(sql`DELETE FROM journal_lines WHERE entry_id = ${newId}`))).toContain("immutable")
        const orphan = yield* Effect.exit(sql.withTransaction(
          sql`INSERT INTO journal_lines (entry_id, line, account, debit, credit) VALUES (${oldId}, 1, 'refunds', 1, 0)`
        ))
        expect(refusal(orphan)).toContain("foreign key")
      }))
  })
})
