/**
 * The risk rules run on events after they commit: the `risk` consumer of the outbox reads each paid
 * payment, refund and flagged referral, gathers the facts the rules (Rules.ts) need as of the event's
 * time, and opens the cases they call for. Opening is idempotent (one open case per subject and kind),
 * so an event applied twice opens nothing twice.
 *
 * Thresholds are platform settings (`risk_velocity_max`, `risk_large_amount_usd`, `risk_large_amount_khr`,
 * `risk_refund_ratio`, with their environment variables as fallback), read at each event.
 */
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { CustomerId, PaymentId, StoreId } from "../../domain/Ids.ts"
import { AccessService } from "../access/Service.ts"
import { parseAmount } from "../platform/Money.ts"
import { paymentFactsOfEvent } from "../payments/Reads.ts"
import { oncePerPass, OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { SettingsService } from "../settings/Service.ts"
import {
  DEFAULT_THRESHOLDS,
  largeAmount,
  REFUND_RATIO_WINDOW_HOURS,
  referralFlagged,
  refundRatioExceeded,
  type RiskThresholds,
  VELOCITY_WINDOW_MINUTES,
  velocityExceeded
} from "./Rules.ts"
import { RiskRepo } from "./Repo.ts"
import { RiskService } from "./Service.ts"

const PaymentOfEvent = Schema.Struct({ id: PaymentId })
const ReferralOfEvent = Schema.Struct({
  id: Schema.String,
  store_id: Schema.optional(StoreId),
  referrer_id: Schema.optional(Schema.NullOr(CustomerId)),
  referee_id: Schema.optional(Schema.NullOr(CustomerId)),
  status: Schema.optionalWith(Schema.String, { default: () => "flagged" }),
  flags: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
})

const MINUTE_MS = 60_000

/** The thresholds in effect: each setting when set and well-formed, else its default. */
export const readThresholds = Effect.gen(function*() {
  const settings = yield* SettingsService
  const text = (key: string) =>
    Effect.map(settings.get(key), Option.map((value) => Redacted.value(value).trim()))
  const velocity = Option.flatMap(yield* text("risk_velocity_max"), (value) =>
    /^\d{1,6}$/.test(value) ? Option.some(Number(value)) : Option.none())
  const amountOf = (key: string, currency: "USD" | "KHR") =>
    Effect.map(text(key), Option.flatMap((value) =>
      Option.getRight(Effect.runSync(Effect.either(parseAmount(value, currency, key))))))
  const ratio = Option.flatMap(yield* text("risk_refund_ratio"), (value) =>
    /^\d+(\.\d+)?$/.test(value) ? Option.some(Number(value)) : Option.none())
  return {
    velocityMax: Option.getOrElse(velocity, () => DEFAULT_THRESHOLDS.velocityMax),
    largeAmount: {
      USD: Option.getOrElse(yield* amountOf("risk_large_amount_usd", "USD"), () => DEFAULT_THRESHOLDS.largeAmount.USD),
      KHR: Option.getOrElse(yield* amountOf("risk_large_amount_khr", "KHR"), () => DEFAULT_THRESHOLDS.largeAmount.KHR)
    },
    refundRatio: Option.getOrElse(ratio, () => DEFAULT_THRESHOLDS.refundRatio)
  } satisfies RiskThresholds
})

export const applyRiskEvent = (event: OutboxEvent) =>
  Effect.gen(function*() {
    const repo = yield* RiskRepo
    const risk = yield* RiskService
    // The platform's thresholds, read once per pass of the consumer (src/platform/Outbox.ts).
    const thresholds = yield* oncePerPass("risk.thresholds", readThresholds)
    const at = event.occurredAt

    if (event.type === "referral.flagged") {
      const referral = yield* Schema.decodeUnknown(ReferralOfEvent)(event.object)
      if (!referralFlagged(referral.status)) return
      yield* risk.open({
        storeId: event.storeId,
        livemode: event.livemode,
        kind: "referral_fraud",
        subjectType: "referral",
        subjectId: referral.id,
        details: { flags: referral.flags, referrer_id: referral.referrer_id ?? null, referee_id: referral.referee_id ?? null }
      })
      return
    }

    // The event holds the payment as it was paid (its amount never changes): no read of it, unless the
    // event lacks what the rules need.
    const { id } = yield* Schema.decodeUnknown(PaymentOfEvent)(event.object)
    const fromEvent = yield* paymentFactsOfEvent(event)
    const found = Option.isSome(fromEvent) ? fromEvent : yield* repo.paymentFacts(id)
    if (Option.isNone(found)) return
    const payment = found.value

    if (event.type === "payment.completed") {
      if (largeAmount(payment.amount, payment.currency, thresholds)) {
        yield* risk.open({
          storeId: payment.store_id,
          livemode: payment.livemode,
          kind: "large_amount",
          subjectType: "payment",
          subjectId: payment.id,
          details: { amount: payment.amount.toString(), currency: payment.currency, threshold: thresholds.largeAmount[payment.currency].toString() }
        })
      }
      if (payment.customer_id !== null) {
        const paid = yield* repo.customerPaidSince({
          customerId: payment.customer_id,
          since: new Date(at.getTime() - VELOCITY_WINDOW_MINUTES * MINUTE_MS),
          until: at
        })
        if (velocityExceeded(paid, thresholds)) {
          yield* risk.open({
            storeId: payment.store_id,
            livemode: payment.livemode,
            kind: "velocity",
            subjectType: "customer",
            subjectId: payment.customer_id,
            details: { paid_payments: paid, window_minutes: VELOCITY_WINDOW_MINUTES, max: thresholds.velocityMax }
          })
        }
      }
      return
    }

    if (event.type === "payment.refunded") {
      const totals = yield* repo.storeWindowTotals({
        storeId: payment.store_id,
        livemode: payment.livemode,
        since: new Date(at.getTime() - REFUND_RATIO_WINDOW_HOURS * 60 * MINUTE_MS),
        until: at
      })
      if (refundRatioExceeded(totals, thresholds)) {
        yield* risk.open({
          storeId: payment.store_id,
          livemode: payment.livemode,
          kind: "refund_ratio",
          subjectType: "store",
          subjectId: payment.store_id,
          details: {
            window_hours: REFUND_RATIO_WINDOW_HOURS,
            ratio: thresholds.refundRatio,
            totals: Object.fromEntries(totals.map((row) => [row.currency, { paid: row.paid.toString(), refunded: row.refunded.toString() }]))
          }
        })
      }
    }
  }).pipe(AccessService.asSystem("the risk rules, opening cases from the store's payment and referral events"))

/** The consumer's name in `outbox_pending`. */
export const RISK_CONSUMER = "risk"

export const RiskRulesLive = OutboxConsumer.make(RISK_CONSUMER, {
  types: ["payment.completed", "payment.refunded", "referral.flagged"],
  apply: applyRiskEvent
}).pipe(Layer.provide([RiskRepo.Default, RiskService.Default, SettingsService.Default]))
