/**
 * Conversion and commissions run from the payments' outbox: the referrals consumer
 * (src/platform/Outbox.ts) gets each `payment.completed` and `payment.refunded` event of a referee.
 *
 * - The referee's first paid payment converts its referral (once: the referral row is locked and only a
 *   referral without `converted_at` converts) and fixes the points the program awards then.
 * - Every paid payment within the program's window accrues one commission (held while the referral is
 *   flagged): the payment's unique key on commissions makes a replayed event pay nothing twice.
 * - A refund reduces the payment's unpaid commission to the percent of what is left, and voids it when
 *   refunded in full; a full refund of the converting payment flags the referral and holds its commissions.
 * - Points go to both wallets through the CustomerWallet entity, keyed by the referral and the side, so
 *   however often they are sent they are credited once; they are sent after every event of a converted
 *   (not flagged) referral, so a crash between the conversion and the credit is repaired by the next one.
 *
 * One referee's events are applied one after another (the consumer's key is the customer).
 */
import { Effect, Option } from "effect"
import { CustomerWalletEntity } from "../loyalty/Entity.ts"
import { customerOf, decodePayment } from "../loyalty/Jobs.ts"
import { newId } from "../platform/Ids.ts"
import { eventsOfPass, oncePerPass, Outbox, OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { currentDate } from "../platform/Time.ts"
import { ReferralsRepo, type ReferralRow } from "./Repo.ts"
import { commissionOf, isConvertingPaymentRefunded, withinWindow } from "./Rules.ts"
import { encodeReferral, toReferral } from "./View.ts"

/**
 * Credits a converted, unflagged referral's points to both wallets, once per side whatever is replayed
 * (the messages' primary keys). A wallet that refuses (erased, or at its maximum) is logged, not retried.
 */
export const releasePoints = (referral: ReferralRow) =>
  Effect.gen(function*() {
    if (referral.status !== "converted") return
    const wallets = yield* CustomerWalletEntity.client
    const sides = [
      { customer: referral.referrer_id, points: referral.referrer_points, side: "referrer" },
      { customer: referral.referee_id, points: referral.referee_points, side: "referee" }
    ] as const
    yield* Effect.forEach(sides, ({ customer, points, side }) =>
      points <= 0 ? Effect.void : wallets(customer).Credit({
        type: "referral",
        key: `${referral.id}:${side}`,
        points,
        reason: side === "referrer" ? `Referred customer ${referral.referee_id}` : `Referred by customer ${referral.referrer_id}`
      }).pipe(
        Effect.catchTags({
          InvalidState: (error) => Effect.logWarning(`referral ${referral.id}: ${side} points refused`, error),
          NotFound: (error) => Effect.logWarning(`referral ${referral.id}: ${side} wallet not found`, error)
        })
      ), { discard: true })
  })

export const applyReferralPaymentEvent = (event: OutboxEvent) =>
  Effect.gen(function*() {
    const repo = yield* ReferralsRepo
    const outbox = yield* Outbox
    const { customer_id, id } = yield* decodePayment(event.object)
    if (customer_id === null) return

    const announce = (type: string, referral: ReferralRow) =>
      outbox.emit({ storeId: referral.store_id, livemode: referral.livemode, type, object: encodeReferral(toReferral(referral)) })

    // Most paying customers were referred by no one: one look without a transaction, for the customers of
    // all the pass's events at once (outside a pass, this one), settles them. A referral made after this
    // look is made after the payment's event, and its referee's later payments convert it.
    const referred = yield* oncePerPass(
      "referrals.referees",
      Effect.flatMap(eventsOfPass(event), (events) => repo.refereesAmong(events.map(customerOf).filter((customer) => customer !== "")))
    )
    if (!referred.has(customer_id)) return
    const after = yield* repo.inTransaction(Effect.gen(function*() {
      const found = yield* repo.lockReferralOfReferee(customer_id)
      if (Option.isNone(found) || found.value.status === "voided") return Option.none<ReferralRow>()
      let referral = found.value
      const paid = Option.filter(yield* repo.findPayment(id), (payment) => payment.paid_at !== null && payment.customer_id === customer_id)
      if (Option.isNone(paid)) return Option.some(referral)
      const payment = paid.value
      const paidAt = payment.paid_at!
      // The store's program, read once per pass of the consumer (src/platform/Outbox.ts).
      const program = yield* oncePerPass(`referrals.program:${referral.store_id}`, repo.program(referral.store_id))

      if (event.type === "payment.completed") {
        if (referral.converted_at === null) {
          referral = yield* repo.saveReferral({
            ...referral,
            status: referral.status === "pending" ? "converted" : referral.status,
            converted_at: paidAt,
            converting_payment_id: payment.id,
            referrer_points: program.active ? program.referrer_points : 0,
            referee_points: program.active ? program.referee_points : 0
          })
          yield* announce("referral.converted", referral)
        }
        if (program.active && withinWindow(referral.created_at, paidAt, program.commission_window_days)) {
          const amount = commissionOf(payment.amount - payment.amount_refunded, program.commission_percent)
          if (amount > 0n) {
            yield* repo.insertCommission({
              id: newId("com"),
              store_id: referral.store_id,
              livemode: referral.livemode,
              referral_id: referral.id,
              referrer_id: referral.referrer_id,
              payment_id: payment.id,
              base_amount: amount,
              amount,
              currency: payment.currency,
              status: referral.status === "flagged" ? "held" : "accrued",
              paid_at: null,
              created_at: yield* currentDate
            })
          }
        }
        return Option.some(referral)
      }

      // A refund: the payment's unpaid commission follows what is left of the payment.
      const commission = yield* repo.lockCommissionOfPayment(payment.id)
      if (Option.isSome(commission) && (commission.value.status === "held" || commission.value.status === "accrued")) {
        const fully = isConvertingPaymentRefunded(payment)
        yield* repo.setCommission({
          id: commission.value.id,
          amount: fully ? commission.value.amount : commissionOf(payment.amount - payment.amount_refunded, program.commission_percent),
          status: fully ? "voided" : commission.value.status
        })
      }
      if (
        payment.id === referral.converting_payment_id && isConvertingPaymentRefunded(payment) &&
        !referral.flags.includes("converting_payment_refunded")
      ) {
        referral = yield* repo.saveReferral({
          ...referral,
          status: "flagged",
          flags: [...referral.flags, "converting_payment_refunded"]
        })
        yield* repo.moveCommissions(referral.id, ["accrued"], "held")
        yield* announce("referral.flagged", referral)
      }
      return Option.some(referral)
    }))
    if (Option.isSome(after)) yield* releasePoints(after.value)
  })

/** The consumer's name in `outbox_pending`, and the events it is subscribed to (its migration subscribed these). */
export const REFERRALS_CONSUMER = "referrals"
export const REFERRAL_PAYMENT_EVENTS = ["payment.completed", "payment.refunded"] as const

export const ReferralConversionLive = OutboxConsumer.make(REFERRALS_CONSUMER, {
  types: REFERRAL_PAYMENT_EVENTS,
  keyOf: customerOf,
  apply: applyReferralPaymentEvent
})
