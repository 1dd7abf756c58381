/**
 * The `billing` consumer of the outbox: a payment.completed of a subscription invoice's payment pays the
 * invoice and activates its plan (BillingRepo.payInvoiceOfPayment, at most once however often the event
 * comes). Events of other payments match no invoice and change nothing.
 */
import { Effect, Layer, Schema } from "effect"
import { PaymentId } from "../../domain/Ids.ts"
import { eventsOfPass, oncePerPass, OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { BillingRepo } from "./Repo.ts"

const PaidPayment = Schema.Struct({ id: PaymentId })
const decodePaidPayment = Schema.decodeUnknownOption(PaidPayment)

/** The payments of `events` (those whose object is one). */
const paymentsOf = (events: ReadonlyArray<OutboxEvent>) =>
  events.flatMap((event) => {
    const payment = decodePaidPayment(event.object)
    return payment._tag === "Some" ? [payment.value.id] : []
  })

export const applyBillingPaymentEvent = (event: OutboxEvent) =>
  Effect.gen(function*() {
    const payment = decodePaidPayment(event.object)
    if (payment._tag === "None") return
    const repo = yield* BillingRepo
    // Almost no payment pays an invoice: which of the pass's do is asked once for all of them (outside a
    // pass, for this one). The invoice exists before its payment can be paid, so before this event.
    const due = yield* oncePerPass(
      "billing.due",
      Effect.flatMap(eventsOfPass(event), (events) => repo.paymentsOfDueInvoices(paymentsOf(events)))
    )
    if (!due.has(payment.value.id)) return
    const paid = yield* repo.payInvoiceOfPayment(payment.value.id, event.occurredAt)
    if (paid._tag === "Some") {
      yield* Effect.logInfo("subscription invoice paid").pipe(
        Effect.annotateLogs({ invoice_id: paid.value.id, org_id: paid.value.organization_id, plan_id: paid.value.plan_id })
      )
    }
  })

/** The consumer's name in `outbox_pending`, and the events it is subscribed to. */
export const BILLING_CONSUMER = "billing"
export const BILLING_PAYMENT_EVENTS = ["payment.completed"] as const

export const BillingPaymentsLive = OutboxConsumer.make(BILLING_CONSUMER, {
  types: BILLING_PAYMENT_EVENTS,
  apply: applyBillingPaymentEvent
}).pipe(Layer.provide(BillingRepo.Default))
