/**
 * Earning runs from the payments' outbox, not from the request that paid: the loyalty consumer of the
 * outbox (src/platform/Outbox.ts) gets each `payment.completed` and `payment.refunded` event and sends it
 * to the customer's CustomerWallet entity (Earn, keyed by the payment; Reverse, keyed by the event). An
 * event may come again after a crash, and the entries' keys answer it once: a payment earns
 * once however often its event is delivered.
 *
 * One customer's events are applied one after another in outbox order (a refund's reversal must find
 * the payment's earning); different customers' go at once.
 */
import { Effect, Layer, Option, Schema } from "effect"
import { CustomerId, PaymentId } from "../../domain/Ids.ts"
import { oncePerPass, OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { paymentFactsOfEvent } from "../payments/Reads.ts"
import { CustomerWalletEntity } from "./Entity.ts"
import { LoyaltyRepo } from "./Repo.ts"

/** What earning reads of a payment event's object. */
const PaymentOfEvent = Schema.Struct({ id: PaymentId, customer_id: Schema.optionalWith(Schema.NullOr(CustomerId), { default: () => null }) })
export const decodePayment = Schema.decodeUnknown(PaymentOfEvent)

const NO_CUSTOMER = ""

/** The key of a payment event: its customer, so one customer's events apply in order. */
export const customerOf = (event: OutboxEvent): string => {
  const object = event.object as { readonly customer_id?: unknown } | null
  return typeof object?.customer_id === "string" ? object.customer_id : NO_CUSTOMER
}

/** Applies one payment event to its customer's wallet; nothing for a payment without a customer. */
export const applyPaymentEvent = (event: OutboxEvent) =>
  Effect.gen(function*() {
    const payment = yield* decodePayment(event.object)
    if (payment.customer_id === null) return
    const wallet = (yield* CustomerWalletEntity.client)(payment.customer_id)
    if (event.type !== "payment.completed") return yield* wallet.Reverse({ paymentId: payment.id, eventId: event.eventId })
    // The store's program and tiers, read once per pass for all its events (src/platform/Outbox.ts).
    const repo = yield* LoyaltyRepo
    const storeId = event.storeId
    const rules = yield* oncePerPass(
      `loyalty.rules:${storeId}`,
      Effect.all({ program: repo.program(storeId), tiers: repo.tiersOf(storeId) }, { concurrency: 2 })
    )
    // The event holds the payment as it was paid: the wallet need not read it again.
    const paid = yield* paymentFactsOfEvent(event)
    yield* wallet.Earn({
      paymentId: payment.id,
      rules,
      ...(Option.isSome(paid) ? { paid: { store_id: paid.value.store_id, amount: paid.value.amount, currency: paid.value.currency } } : {})
    })
  })

/** The consumer's name in `outbox_pending`. */
export const LOYALTY_CONSUMER = "loyalty"

export const LoyaltyEarningLive = OutboxConsumer.make(LOYALTY_CONSUMER, {
  types: ["payment.completed", "payment.refunded"],
  keyOf: customerOf,
  apply: applyPaymentEvent,
  // As many wallets at once as the API takes requests by default: each earning waits for a connection of
  // the pool behind the requests' statements, and at 32 it got a third of them while payments were being
  // created at the service's maximum, so its backlog grew for as long as the peak lasted (README, "Benchmarks").
  concurrency: 64
}).pipe(Layer.provide(LoyaltyRepo.Default))
