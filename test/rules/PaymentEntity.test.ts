/**
 * The Payment entity's rules, in-process: the refunded total never passes the paid amount however many
 * refunds race, a replayed message applies once, and every applied refund posts a balanced journal.
 */
import { Entity } from "@effect/cluster"
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer } from "effect"
import type { PaymentId, RefundId, StoreId } from "../../domain/Ids.ts"
import { PaymentEntity, PaymentEntityLive } from "../../src/payments/Entity.ts"
import { PaymentsRepo } from "../../src/payments/Repo.ts"
import { JournalPostings } from "../../src/ledger/Journal.ts"
import { Outbox } from "../../src/platform/Outbox.ts"
import { newId } from "../../src/platform/Ids.ts"
import { inProcessLayer, seedStore } from "../support/InProcess.ts"

const entityLayer = PaymentEntityLive.pipe(Layer.provide([PaymentsRepo.Default, Outbox.Default, JournalPostings.Default]))

/** A pending payment of `amount` minor units in USD, written as the service writes one. */
const seedPayment = (storeId: StoreId, amount: bigint) =>
  Effect.gen(function*() {
    const repo = yield* PaymentsRepo
    const now = new Date()
    const payment = yield* repo.insert({
      id: newId("pay") as PaymentId,
      storeId,
      branchId: null,
      customerId: null,
      livemode: false,
      amount,
      currency: "USD",
      referenceId: null,
      description: null,
      metadata: {},
      provider: "mock",
      qrPayload: "000201",
      qrMd5: "0".repeat(32),
      expiresAt: new Date(now.getTime() + 15 * 60_000),
      createdAt: now
    })
    return payment.id
  }).pipe(Effect.provide(PaymentsRepo.Default))

/** Debits and credits of every journal of `paymentId`, per currency. */
const journalTotals = (paymentId: PaymentId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ debit: string; credit: string; entries: number }>`
      SELECT coalesce(sum(l.debit), 0)::text AS debit, coalesce(sum(l.credit), 0)::text AS credit,
             count(DISTINCT j.id)::int AS entries
      FROM journal_entries j JOIN journal_lines l ON l.entry_id = j.id
      WHERE j.payment_id = ${paymentId}`).pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

describe("Payment entity (in-process)", () => {
  layer(inProcessLayer, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.scoped("racing refunds never take the refunded total past the paid amount", () =>
      Effect.gen(function*() {
        const payments = yield* Entity.makeTestClient(PaymentEntity, entityLayer)
        const { storeId } = yield* seedStore
        const paymentId = yield* seedPayment(storeId, 1_000n)
        const payment = yield* payments(paymentId)
        yield* payment.Transition({ action: "scan", requestKey: "scan" })
        yield* payment.Transition({ action: "pay", requestKey: "pay-1" })

        // Ten refunds of 3.00 against 10.00 paid: three fit, the rest are refused.
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 10 }, (_, i) => i),
          (i) =>
            Effect.either(payment.Refund({
              requestKey: `refund-${i}`,
              refundId: newId("re") as RefundId,
              amount: 300n,
              reason: null
            })),
          { concurrency: "unbounded" }
        )
        const applied = outcomes.filter(Either.isRight)
        expect(applied).toHaveLength(3)
        // A refund above the remaining balance is the caller's mistake (400), as API.md says.
        for (const refused of outcomes.filter(Either.isLeft)) expect(refused.left._tag).toBe("InvalidRequest")

        const final = yield* payment.Transition({ action: "pay", requestKey: "pay-1" })
        expect(final.amount_refunded).toBe(900n)
        expect(final.status).toBe("partially_refunded")

        const totals = yield* journalTotals(paymentId)
        expect(totals.entries).toBe(4)
        expect(totals.debit).toBe(totals.credit)
      }))

    it.scoped("a replayed refund message answers its first result and applies once", () =>
      Effect.gen(function*() {
        const payments = yield* Entity.makeTestClient(PaymentEntity, entityLayer)
        const { storeId } = yield* seedStore
        const paymentId = yield* seedPayment(storeId, 500n)
        const payment = yield* payments(paymentId)
        yield* payment.Transition({ action: "scan", requestKey: "scan" })
        yield* payment.Transition({ action: "pay", requestKey: "pay" })

        const message = { requestKey: "same-key", refundId: newId("re") as RefundId, amount: 200n, reason: "damaged" }
        const first = yield* payment.Refund(message)
        // A replay after a crash carries the same key (the service mints the refund id once per request).
        const again = yield* payment.Refund({ ...message, refundId: newId("re") as RefundId })
        expect(again.refund.id).toBe(first.refund.id)
        expect(again.payment.amount_refunded).toBe(200n)
        expect((yield* journalTotals(paymentId)).entries).toBe(2)
      }))

    it.scoped("a replayed transition applies once; a transition the lifecycle forbids is refused", () =>
      Effect.gen(function*() {
        const payments = yield* Entity.makeTestClient(PaymentEntity, entityLayer)
        const { storeId } = yield* seedStore
        const paymentId = yield* seedPayment(storeId, 700n)
        const payment = yield* payments(paymentId)
        yield* payment.Transition({ action: "scan", requestKey: "scan" })
        const paid = yield* payment.Transition({ action: "pay", requestKey: "once" })
        const replayed = yield* payment.Transition({ action: "pay", requestKey: "once" })
        expect(replayed.version).toBe(paid.version)
        expect((yield* journalTotals(paymentId)).entries).toBe(1)

        const cancel = yield* Effect.either(payment.Transition({ action: "cancel", requestKey: "late" }))
        expect(Either.isLeft(cancel) && cancel.left._tag).toBe("InvalidState")
        const refundPending = yield* Effect.either(
          (yield* payments(yield* seedPayment(storeId, 100n))).Refund({
            requestKey: "early",
            refundId: newId("re") as RefundId,
            amount: null,
            reason: null
          })
        )
        expect(Either.isLeft(refundPending) && refundPending.left._tag).toBe("InvalidState")
      }))

    it.scoped("an unknown payment is not found", () =>
      Effect.gen(function*() {
        const payments = yield* Entity.makeTestClient(PaymentEntity, entityLayer)
        const missing = yield* Effect.either(
          (yield* payments("pay_doesnotexist")).Transition({ action: "pay", requestKey: "k" })
        )
        expect(Either.isLeft(missing) && missing.left._tag).toBe("NotFound")
      }))
  })
})
