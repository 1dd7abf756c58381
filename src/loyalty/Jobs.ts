/**
 * Earning runs from the payments' outbox, not from the request that paid: a cluster singleton reads the
 * `payment.completed` and `payment.refunded` events the wallet has not applied yet, oldest first, sends
 * each to the customer's CustomerWallet entity (Earn, keyed by the payment; Reverse, keyed by the event)
 * and marks them applied. A crash between the two sends them again, and their primary keys answer them
 * once: a payment earns once however often its event is delivered.
 *
 * One customer's events are sent one after another in outbox order (a refund's reversal must find the
 * payment's earning); different customers' go at once.
 */
import { Singleton } from "@effect/cluster"
import { Duration, Effect, Queue, Stream } from "effect"
import { OUTBOX_CHANNEL } from "../payments/Repo.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { currentDate } from "../platform/Time.ts"
import { CustomerWalletEntity } from "./Entity.ts"
import { type PendingPaymentEvent, LoyaltyRepo } from "./Repo.ts"

const BATCH = 500
/** How often the outbox is looked at when no commit notice wakes the consumer sooner. */
const POLL_INTERVAL = Duration.seconds(1)
const CUSTOMERS_AT_ONCE = 32

/** One pass: a batch of pending payment events applied to their wallets. Answers how many were read. */
export const makeEarningPass = Effect.gen(function*() {
  const repo = yield* LoyaltyRepo
  const wallets = yield* CustomerWalletEntity.client

  const apply = (event: PendingPaymentEvent) => {
    if (event.customer_id === null) return Effect.void
    const wallet = wallets(event.customer_id)
    return (event.type === "payment.completed"
      ? wallet.Earn({ paymentId: event.payment_id })
      : wallet.Reverse({ paymentId: event.payment_id, eventId: event.event_id })).pipe(Effect.asVoid)
  }

  return Effect.gen(function*() {
    const events = yield* repo.pendingPaymentEvents(BATCH)
    if (events.length === 0) return 0
    const byCustomer = new Map<string, Array<PendingPaymentEvent>>()
    for (const event of events) {
      const key = event.customer_id ?? ""
      byCustomer.set(key, [...(byCustomer.get(key) ?? []), event])
    }
    // A customer whose event fails keeps it and its later ones for the next pass (in order); the other
    // customers' events are marked, so one failing wallet holds back no other.
    const applied: Array<number> = []
    yield* Effect.forEach(
      byCustomer.values(),
      (ofCustomer) =>
        Effect.forEach(ofCustomer, (event) => Effect.tap(apply(event), () => Effect.sync(() => applied.push(event.position))), { discard: true }).pipe(
          Effect.catchAllCause((cause) => Effect.logWarning(`loyalty event of customer ${ofCustomer[0]!.customer_id} failed`, cause))
        ),
      { concurrency: CUSTOMERS_AT_ONCE, discard: true }
    )
    if (applied.length > 0) yield* repo.markApplied({ positions: applied, at: yield* currentDate })
    return events.length
  }).pipe(Effect.withSpan("Loyalty.applyPaymentEvents"))
})

export const LoyaltyEarningLive = Singleton.make(
  "loyalty/earning",
  Effect.gen(function*() {
    const pass = yield* makeEarningPass
    // Woken by the notice each outbox write sends as it commits; the poll stays for what a notice misses.
    const wake = yield* Queue.sliding<void>(1)
    const notices = yield* (yield* ChangeFeed).subscribe(OUTBOX_CHANNEL)
    yield* Stream.runForEach(notices, () => Queue.offer(wake, undefined)).pipe(Effect.forkScoped)
    while (true) {
      const read = yield* pass.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("loyalty earning pass failed", cause), 0)))
      // A full batch means more are waiting: go again at once.
      if (read < BATCH) yield* Effect.race(Queue.take(wake), Effect.sleep(POLL_INTERVAL))
    }
  }).pipe(Effect.scoped)
)
