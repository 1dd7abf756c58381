/**
 * Live payment changes: the notices the payments engine announces once each change of a payment has
 * committed (its creation, every status change, every refund), through the process-wide change feed
 * (platform/ChangeFeed: LISTEN/NOTIFY). The checkout's status stream (one payment) and the console's
 * payment feed (one store) both read them here.
 */
import { Effect, Option, Schema, Stream } from "effect"
import { PaymentId, StoreId } from "../../domain/Ids.ts"
import { PaymentStatus } from "../../domain/Payments.ts"
import type { ChangeFeed, ChangeNotice } from "../platform/ChangeFeed.ts"
import { Currency, formatAmount } from "../platform/Money.ts"
import type { PaymentRow } from "./Repo.ts"

/** The LISTEN/NOTIFY channel on which payment changes are announced. */
export const PAYMENT_CHANNEL = "payment_changes"

/** What a change notice says: enough for a live status frame without reading the payment again. */
export const PaymentChange = Schema.Struct({
  id: PaymentId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  version: Schema.Number,
  status: PaymentStatus,
  amount: Schema.String,
  currency: Currency,
  amount_refunded: Schema.String
})
export type PaymentChange = typeof PaymentChange.Type

export const paymentChangeOf = (payment: PaymentRow): PaymentChange => ({
  id: payment.id,
  store_id: payment.store_id,
  livemode: payment.livemode,
  version: payment.version,
  status: payment.status,
  amount: formatAmount(payment.amount, payment.currency),
  currency: payment.currency,
  amount_refunded: formatAmount(payment.amount_refunded, payment.currency)
})

/**
 * Tells every process following `payment` that it is now as given, once the transaction that made it
 * so commits (at once outside one). The notice is PaymentChange's JSON, which `subscribePaymentChanges`
 * parses on the other side.
 */
export const announcePaymentChange = (feed: ChangeFeed["Type"], payment: PaymentRow): Effect.Effect<void> =>
  feed.announce(PAYMENT_CHANNEL, JSON.stringify(paymentChangeOf(payment)))

/** A change of a followed payment, or word that some may have been missed (the listener reconnected). */
export type PaymentNotice =
  | { readonly _tag: "Change"; readonly change: PaymentChange }
  | { readonly _tag: "Resync" }

const decodeChange = Schema.decodeUnknownOption(PaymentChange)

/** The notice's JSON, or undefined when it is not JSON. */
const parseNotice = (payload: string): unknown => {
  try {
    return JSON.parse(payload)
  } catch {
    return undefined
  }
}

/**
 * What a notice on PAYMENT_CHANNEL means to whoever follows the payments `follows` selects: a change of
 * one of them, a `Resync`, or nothing (undefined). Every process hears every payment's change, and most
 * are not followed there: `follows` is asked of the notice's JSON as parsed, and only a followed change
 * is checked against PaymentChange. `follows` reads the fields it needs and must not take them for checked.
 */
const paymentNoticeOf = (notice: ChangeNotice, follows: (change: PaymentChange) => boolean): PaymentNotice | undefined => {
  if (notice._tag === "Resync") return notice
  const parsed = parseNotice(notice.payload)
  if (typeof parsed !== "object" || parsed === null || !follows(parsed as PaymentChange)) return undefined
  const change = decodeChange(parsed)
  return Option.isSome(change) ? { _tag: "Change", change: change.value } : undefined
}

/**
 * The changes of the payments `follows` selects, from the moment this runs: it subscribes in the
 * caller's scope, so whatever the caller reads afterwards (the current status, a list) misses nothing.
 * On a `Resync` the caller re-reads what it follows.
 */
export const subscribePaymentChanges = (
  feed: ChangeFeed["Type"],
  follows: (change: PaymentChange) => boolean
) =>
  Effect.map(feed.subscribe(PAYMENT_CHANNEL), (notices) =>
    Stream.filterMap(notices, (notice) => Option.fromNullable(paymentNoticeOf(notice, follows))))

/**
 * As `subscribePaymentChanges`, with `onNotice` called as each notice is read (ChangeFeed `follow`), for
 * the process-wide subscriber of the live status streams.
 */
export const followPaymentChanges = (
  feed: ChangeFeed["Type"],
  follows: (change: PaymentChange) => boolean,
  onNotice: (notice: PaymentNotice) => void
) =>
  feed.follow(PAYMENT_CHANNEL, (notice) => {
    const meant = paymentNoticeOf(notice, follows)
    if (meant !== undefined) onNotice(meant)
  })

/** Follows one payment. */
export const ofPayment = (id: PaymentId) => (change: PaymentChange): boolean => change.id === id

/** Follows the payments of one store in one mode. */
export const ofStore = (storeId: StoreId, livemode: boolean) => (change: PaymentChange): boolean =>
  change.store_id === storeId && change.livemode === livemode
