/**
 * The Payment entity: every change of one payment — scan, pay, fail, expire, cancel, refund — is a
 * message to the entity of that payment's id, so changes to one payment are applied one at a time
 * however many requests race. Messages are persisted with a primary key: a retry, or a replay after a
 * crash, is answered once.
 *
 * Each change is one SQL transaction: the new state, the refund row, the journal entry and the outbox
 * event commit together or not at all, and the change notice goes out once they have. Within it the
 * handler also records the message's key, so a message replayed after its transaction committed (but
 * before the reply was stored) finds its own work and answers with it instead of applying it again.
 */
import { ClusterSchema, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import { BranchId, CustomerId, PaymentId, RefundId } from "../../domain/Ids.ts"
import { JournalPostings } from "../ledger/Journal.ts"
import { recordPaymentTransition } from "../platform/Metrics.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { Outbox } from "../platform/Outbox.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { currentDate } from "../platform/Time.ts"
import { announcePaymentChange } from "./Changes.ts"
import { eventTypeOf, nextStatus, type PaymentAction, PaymentActions, refundOutcome } from "./Lifecycle.ts"
import { PaymentRow, PaymentsRepo, RefundRow } from "./Repo.ts"
import { toPayment } from "./View.ts"

/** A payment row as messages carry it: the same type, with dates and amounts encoded for storage. */
export const PaymentState = Schema.Struct({
  ...PaymentRow.fields,
  // Replies stored before payments had a branch carry none.
  branch_id: Schema.optionalWith(Schema.NullOr(BranchId), { default: () => null }),
  // … and before payments had a customer, none either.
  customer_id: Schema.optionalWith(Schema.NullOr(CustomerId), { default: () => null }),
  expires_at: Schema.Date,
  scanned_at: Schema.NullOr(Schema.Date),
  paid_at: Schema.NullOr(Schema.Date),
  failed_at: Schema.NullOr(Schema.Date),
  expired_at: Schema.NullOr(Schema.Date),
  cancelled_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date,
  updated_at: Schema.Date
})

export const RefundState = Schema.Struct({ ...RefundRow.fields, created_at: Schema.Date })

/**
 * Every message is persisted and uninterruptible: a caller that stops waiting (a client gone, the expiry
 * sweep's time limit) does not interrupt the entity's work, and an interruption that is not a shutdown is
 * retried rather than stored as the message's answer (a stored interruption would be the answer to every
 * later send of the same key, wedging that payment, wallet or game for good).
 */
export const PaymentEntity = Entity.make("Payment", [
  Rpc.make("Transition", {
    payload: { action: Schema.Literal(...PaymentActions), requestKey: Schema.String },
    success: PaymentState,
    error: Schema.Union(InvalidState, NotFound),
    primaryKey: (payload) => `${payload.action}:${payload.requestKey}`
  }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Refund", {
    payload: {
      requestKey: Schema.String,
      refundId: RefundId,
      amount: Schema.NullOr(Schema.BigInt),
      reason: Schema.NullOr(Schema.String),
      /**
       * The refunded total (minor units) this refund must stay below: the high-value threshold when the
       * caller was not cleared with MFA, null when it was or there is none. Messages stored before it
       * existed carry none and were authorized by their own amount.
       */
      refundedTotalBelow: Schema.optional(Schema.NullOr(Schema.BigInt))
    },
    success: Schema.Struct({ payment: PaymentState, refund: RefundState }),
    error: Schema.Union(InvalidState, InvalidRequest, NotFound, Forbidden),
    primaryKey: (payload) => `refund:${payload.requestKey}`
  }).annotate(ClusterSchema.Persisted, true)
]).annotateRpcs(ClusterSchema.Uninterruptible, true)


export const PaymentEntityLive = PaymentEntity.toLayer(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PaymentsRepo
    const outbox = yield* Outbox
    const changeFeed = yield* ChangeFeed
    const journal = yield* JournalPostings
    const publicUrl = yield* PublicBaseUrl
    // The cluster addresses the entity by the payment's id: the one string here that arrives unbranded.
    const paymentId = PaymentId.make((yield* Entity.CurrentAddress).entityId)

    const notFound = () => new NotFound({ message: `No such payment: ${paymentId}`, param: "id" })

    const lockPayment = Effect.flatMap(
      repo.findForUpdate(paymentId),
      Option.match({ onNone: () => Effect.fail(notFound()), onSome: Effect.succeed })
    )

    /** The outbox event of a payment that just changed, and its change notice once that commits. */
    const announce = (payment: PaymentRow, type: string, at: Date) =>
      Effect.gen(function*() {
        const view = toPayment(payment, yield* publicUrl.get)
        yield* outbox.emit({ storeId: payment.store_id, livemode: payment.livemode, type, object: view, at })
        yield* announcePaymentChange(changeFeed, payment)
      })

    /** A message's answer, and the status change it made (none when a replay found its own earlier work). */
    interface Applied<A> {
      readonly result: A
      readonly change: Option.Option<{ readonly from: string; readonly to: string; readonly livemode: boolean }>
    }

    interface RefundApplied {
      readonly payment: PaymentRow
      readonly refund: RefundRow
    }

    /** Answers the result, counting its status change once the transaction that made it has committed. */
    const countCommitted = <A>(applied: Applied<A>) =>
      Effect.as(Option.match(applied.change, { onNone: () => Effect.void, onSome: recordPaymentTransition }), applied.result)

    const transition = (action: PaymentAction, requestKey: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* lockPayment
        if (yield* repo.transitionApplied(paymentId, `${action}:${requestKey}`)) {
          return { result: current, change: Option.none() } satisfies Applied<PaymentRow>
        }
        const status = yield* nextStatus(current.status, action)
        const at = yield* currentDate
        const updated = yield* repo.setStatus(paymentId, status, at)
        yield* repo.recordTransition(paymentId, `${action}:${requestKey}`, action)
        // The store's active revenue shares as they are when it is paid (src/ledger/Postings.ts).
        if (status === "paid") yield* journal.postPaid(updated, at)
        yield* announce(updated, eventTypeOf[action], at)
        return {
          result: updated,
          change: Option.some({ from: current.status, to: status, livemode: updated.livemode })
        } satisfies Applied<PaymentRow>
      })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.flatMap(countCommitted))

    const refund = (input: {
      readonly requestKey: string
      readonly refundId: RefundId
      readonly amount: bigint | null
      readonly reason: string | null
      readonly refundedTotalBelow?: bigint | null | undefined
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* lockPayment
        const earlier = yield* repo.findRefundByRequestKey(paymentId, input.requestKey)
        if (Option.isSome(earlier)) {
          return { result: { payment: current, refund: earlier.value }, change: Option.none() } satisfies Applied<RefundApplied>
        }
        const outcome = yield* refundOutcome(current, input.amount)
        // Checked here, where refunds of this payment are applied one at a time: the caller's check read
        // a total that a concurrent refund may have raised since.
        const limit = input.refundedTotalBelow ?? null
        if (limit !== null && current.amount_refunded + outcome.amount >= limit) {
          return yield* new Forbidden({
            message: "This refund would bring the payment's refunded total to the high-value threshold; " +
              "it needs an Owner session with MFA"
          })
        }
        const at = yield* currentDate
        const refundRow = yield* repo.insertRefund({
          id: input.refundId,
          paymentId,
          storeId: current.store_id,
          livemode: current.livemode,
          amount: outcome.amount,
          currency: current.currency,
          reason: input.reason,
          requestKey: input.requestKey,
          createdAt: at
        })
        const updated = yield* repo.addRefunded(paymentId, outcome.amount, outcome.status, at)
        yield* journal.postRefund({
          id: refundRow.id,
          payment: current,
          refundedBefore: current.amount_refunded,
          amount: outcome.amount,
          at
        })
        yield* announce(updated, eventTypeOf.refund, at)
        return {
          result: { payment: updated, refund: refundRow },
          change: Option.some({ from: current.status, to: updated.status, livemode: updated.livemode })
        } satisfies Applied<RefundApplied>
      })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.flatMap(countCommitted))

    return PaymentEntity.of({
      Transition: ({ payload }) => transition(payload.action, payload.requestKey),
      Refund: ({ payload }) => refund(payload)
    })
  }),
  { maxIdleTime: "2 minutes" }
)
