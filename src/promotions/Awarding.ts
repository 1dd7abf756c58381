/**
 * Awarding runs from the outbox, after the payment committed: the `promotions` consumer gets every
 * `payment.completed` event and, for each of the store's active promotions whose window holds the
 * payment's `paid_at`, whose minimum the payment meets and whose segment holds the customer at that
 * moment, credits the bonus to the customer's wallet through the CustomerWallet entity. The credit's
 * message key is the promotion and the payment (primary key `credit:promotion:{promotionId}:{paymentId}`),
 * so a replayed event, or a crash between two credits, awards each promotion once per payment.
 *
 * A cron ends, once a minute, the active and paused promotions whose end date passed (with their
 * `promotion.ended` event); until then `runningFor` already ignores a payment paid after the end.
 */
import { ClusterCron } from "@effect/cluster"
import { Cron, Effect, Layer, Option } from "effect"
import { CustomerWalletEntity } from "../loyalty/Entity.ts"
import { customerOf, decodePayment } from "../loyalty/Jobs.ts"
import { oncePerPass, OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { SegmentsRepo } from "../segments/Repo.ts"
import { PromotionsRepo } from "./Repo.ts"
import { PromotionsService } from "./Service.ts"

/** The wallet credit key of a promotion's award on a payment: one per pair. */
export const awardKey = (promotionId: string, paymentId: string) => `${promotionId}:${paymentId}`

export const awardPromotions = (event: OutboxEvent) =>
  Effect.gen(function*() {
    const repo = yield* PromotionsRepo
    const segments = yield* SegmentsRepo
    // Most stores run no promotion at a time: asked once per pass of the consumer (src/platform/Outbox.ts),
    // it spares their payments' events every read.
    if (!(yield* oncePerPass(`promotions.active:${event.storeId}`, repo.hasActive(event.storeId)))) return
    const { id } = yield* decodePayment(event.object)
    const found = yield* repo.findPayment(id)
    if (Option.isNone(found)) return
    const payment = found.value
    if (payment.customer_id === null || payment.paid_at === null) return
    const customerId = payment.customer_id
    const paidAt = payment.paid_at

    const running = yield* repo.runningFor({
      storeId: payment.store_id,
      paidAt,
      amount: payment.amount,
      currency: payment.currency
    })
    if (running.length === 0) return
    const wallet = (yield* CustomerWalletEntity.client)(customerId)

    yield* Effect.forEach(running, (promotion) =>
      Effect.gen(function*() {
        if (promotion.segment_id !== null) {
          const segment = yield* segments.find(promotion.segment_id)
          if (Option.isNone(segment)) return
          const member = yield* segments.contains(
            { storeId: payment.store_id, livemode: payment.livemode, now: paidAt },
            segment.value,
            customerId
          )
          if (!member) return
        }
        yield* wallet.Credit({
          type: "promotion",
          key: awardKey(promotion.id, payment.id),
          points: promotion.bonus_points,
          reason: `Promotion ${promotion.name} (${promotion.id}) on payment ${payment.id}`
        }).pipe(
          Effect.catchTags({
            InvalidState: (error) => Effect.logWarning(`promotion ${promotion.id}: bonus for ${payment.id} refused`, error),
            NotFound: (error) => Effect.logWarning(`promotion ${promotion.id}: wallet of ${customerId} not found`, error)
          })
        )
      }), { discard: true })
  })

/** The consumer's name in `outbox_pending`. */
export const PROMOTIONS_CONSUMER = "promotions"

export const PromotionAwardingLive = OutboxConsumer.make(PROMOTIONS_CONSUMER, {
  types: ["payment.completed"],
  keyOf: customerOf,
  apply: awardPromotions
}).pipe(Layer.provide([PromotionsRepo.Default, SegmentsRepo.Default]))

/** Ends overdue promotions every minute, on exactly one runner. */
export const PromotionEndingCronLive = ClusterCron.make({
  name: "promotions/ending",
  cron: Cron.unsafeParse("* * * * *"),
  execute: Effect.flatMap(PromotionsService, (promotions) => Effect.asVoid(promotions.endOverdue()))
}).pipe(Layer.provide(PromotionsService.Default))
