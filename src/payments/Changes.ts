/**
 * Live payment changes, from the change notices the payments engine sends on PAYMENT_CHANNEL inside
 * each change's transaction and the process-wide LISTEN/NOTIFY fan-out (platform/ChangeFeed). The
 * checkout's status stream (one payment) and the console's payment feed (one store) both read them here.
 */
import { Effect, Option, Schema, Stream } from "effect"
import type { PaymentId, StoreId } from "../../domain/Ids.ts"
import type { ChangeFeed } from "../platform/ChangeFeed.ts"
import { PAYMENT_CHANNEL, PaymentChange } from "./Repo.ts"

export { PaymentChange, paymentChangeOf } from "./Repo.ts"

/** A change of a followed payment, or word that some may have been missed (the listener reconnected). */
export type PaymentNotice =
  | { readonly _tag: "Change"; readonly change: PaymentChange }
  | { readonly _tag: "Resync" }

const decodeChange = Schema.decodeUnknownOption(Schema.parseJson(PaymentChange))

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
    Stream.filterMap(notices, (notice): Option.Option<PaymentNotice> =>
      notice._tag === "Resync"
        ? Option.some(notice)
        : decodeChange(notice.payload).pipe(
          Option.filter(follows),
          Option.map((change) => ({ _tag: "Change", change }) as const)
        )))

/** Follows one payment. */
export const ofPayment = (id: PaymentId) => (change: PaymentChange): boolean => change.id === id

/** Follows the payments of one store in one mode. */
export const ofStore = (storeId: StoreId, livemode: boolean) => (change: PaymentChange): boolean =>
  change.store_id === storeId && change.livemode === livemode
