/**
 * Customer receipts: the `mail_receipts` consumer of the outbox gets each `payment.completed` and
 * `payment.refunded` event and mails the payment's customer a receipt or a refund notice — only when the
 * customer has an e-mail address, has the `email` preference on and is not erased, read when the event
 * is applied. The mail is queued under a key (`receipt:` the payment, `refund:` the refund), so an event
 * applied again after a crash queues nothing twice. The customer's language (`metadata.language`, `km`
 * for Khmer) picks the template; English otherwise.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { Currency } from "../../domain/Money.ts"
import { formatAmount, parseAmount } from "../platform/Money.ts"
import { mailRecipientOfStore } from "../customers/Reads.ts"
import { PaymentReports } from "../payments/Reports.ts"
import { OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { mailSenderOfStore } from "../stores/Reads.ts"
import { RECEIPT_EVENT_TYPES, RECEIPTS_CONSUMER } from "./Names.ts"
import { MailQueue } from "./Queue.ts"
import { customerLanguage, receipt, refundNotice } from "./Templates.ts"

/** What a receipt reads of the payment in the event. */
const PaymentOfEvent = Schema.Struct({
  id: Schema.String,
  customer_id: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  amount: Schema.String,
  currency: Currency,
  amount_refunded: Schema.String,
  reference_id: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  description: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  paid_at: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})
const decodePayment = Schema.decodeUnknown(PaymentOfEvent)

const NO_CUSTOMER = ""
const customerOf = (event: OutboxEvent): string => {
  const object = event.object as { readonly customer_id?: unknown } | null
  return typeof object?.customer_id === "string" ? object.customer_id : NO_CUSTOMER
}

export const applyReceiptEvent = (event: OutboxEvent) =>
  Effect.gen(function*() {
    if (customerOf(event) === NO_CUSTOMER) return
    // An event whose payment cannot be read would fail on every pass and hold its customer's later
    // events back; it gets no mail, and says so.
    const decoded = yield* Effect.either(decodePayment(event.object))
    if (Either.isLeft(decoded)) {
      return yield* Effect.logWarning("no receipt: the event's payment could not be read").pipe(
        Effect.annotateLogs({ event: event.eventId, error: decoded.left.message })
      )
    }
    const payment = decoded.right
    if (payment.customer_id === null) return
    const sql = yield* SqlClient.SqlClient
    const customer = Option.getOrUndefined(yield* mailRecipientOfStore(sql, event.storeId, payment.customer_id))
    // Consent and erasure as they are now: a customer who withdrew or was erased since the payment gets nothing.
    if (customer === undefined || customer.email === null || !customer.prefers_email || customer.erased_at !== null) return
    const store = Option.getOrUndefined(yield* mailSenderOfStore(sql, event.storeId))
    if (store === undefined) return
    const baseUrl = yield* Effect.flatMap(PublicBaseUrl, (url) => url.get)
    const facts = {
      language: customerLanguage(customer.metadata),
      storeName: store.name,
      storeColor: store.color,
      amount: payment.amount,
      currency: payment.currency,
      referenceId: payment.reference_id,
      description: payment.description,
      at: event.occurredAt,
      receiptUrl: `${baseUrl}/receipts/${payment.id}`,
      livemode: event.livemode
    }
    const queue = yield* MailQueue
    if (event.type === "payment.completed") {
      yield* queue.enqueueOrFail({ to: customer.email, kind: "receipt", content: receipt(facts), dedupeKey: `receipt:${payment.id}`, customerId: payment.customer_id })
      return
    }
    // The refund this event announces: the one that brought the refunded total to the event's.
    const refundedTotal = yield* parseAmount(payment.amount_refunded, payment.currency).pipe(Effect.orDie)
    const found = yield* (yield* PaymentReports).refundReaching(payment.id, refundedTotal)
    if (Option.isNone(found)) return
    const refund = found.value
    const refundAmount = formatAmount(refund.amount, payment.currency)
    yield* queue.enqueueOrFail({
      to: customer.email,
      kind: "refund_notice",
      content: refundNotice({ ...facts, refundAmount }),
      dedupeKey: `refund:${refund.id}`,
      customerId: payment.customer_id
    })
  })

export const ReceiptMailLive = OutboxConsumer.make(RECEIPTS_CONSUMER, {
  types: RECEIPT_EVENT_TYPES,
  keyOf: customerOf,
  apply: applyReceiptEvent
}).pipe(Layer.provide([MailQueue.Default, PaymentReports.Default]))
