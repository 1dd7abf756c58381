/**
 * The daily rollup (`analytics_daily`) follows the payments: the `analytics` consumer of the outbox
 * recomputes the day a `payment.completed` (its paid day) or `payment.refunded` (the refund's day) event
 * touched, from that day's payments and refunds. A recomputation, not an increment: an event applied
 * twice, or two events of one day, leave the same figures. One store's events are applied in order.
 *
 * The events of one consumer pass that touch the same store, mode and day share one recomputation
 * (`oncePerPass`): every event of the pass committed, with its payment's change, before the pass read
 * it, so a recomputation made during the pass counts them all. A burst of completions then costs a pass
 * two statements per day touched instead of two per event (over `bench/webhooks.ts`'s 4,200 events, the
 * rollup's recomputations were 2,654 of the ~4,000 statements the service made).
 */
import { Effect, Layer, Option, Schema } from "effect"
import { PaymentId } from "../../domain/Ids.ts"
import { OutboxConsumer, type OutboxEvent, oncePerPass } from "../platform/Outbox.ts"
import { addDays, dayOf, startOfDay } from "../platform/Days.ts"
import { AnalyticsRepo } from "./Repo.ts"

const PaymentOfEvent = Schema.Struct({ id: PaymentId, paid_at: Schema.optional(Schema.NullOr(Schema.String)) })

export const applyAnalyticsEvent = (event: OutboxEvent) =>
  Effect.gen(function*() {
    const repo = yield* AnalyticsRepo
    const payment = yield* Schema.decodeUnknown(PaymentOfEvent)(event.object)
    const paidAt = Option.fromNullable(payment.paid_at).pipe(Option.map((text) => new Date(text)))
    const when = event.type === "payment.completed" ? Option.getOrElse(paidAt, () => event.occurredAt) : event.occurredAt
    const day = dayOf(when)
    yield* oncePerPass(
      `analytics-day:${event.storeId}:${event.livemode}:${day}`,
      repo.refreshDay({ storeId: event.storeId, livemode: event.livemode, day, start: startOfDay(day), end: startOfDay(addDays(day, 1)) })
    )
  })

/** The consumer's name in `outbox_pending`. */
export const ANALYTICS_CONSUMER = "analytics"

export const AnalyticsRollupLive = OutboxConsumer.make(ANALYTICS_CONSUMER, {
  types: ["payment.completed", "payment.refunded"],
  apply: applyAnalyticsEvent
}).pipe(Layer.provide(AnalyticsRepo.Default))
