/**
 * The hosted side of a payment: its public checkout view, its receipt, and its live status stream.
 * Reads only; every change to a payment goes through the payments engine.
 */
import * as Sse from "@effect/experimental/Sse"
import { Duration, Effect, Option, Stream } from "effect"
import QRCode from "qrcode"
import { CheckoutMerchant, CheckoutQr, CheckoutView, Receipt } from "../../domain/Checkout.ts"
import { NotFound } from "../../domain/Errors.ts"
import { type PaymentStatus, TerminalStatuses } from "../../domain/Payments.ts"
import type { Store } from "../../domain/Stores.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { formatAmount } from "../platform/Money.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { ofPayment, subscribePaymentChanges } from "../payments/Changes.ts"
import { type PaymentChange, paymentChangeOf, type PaymentRow, PaymentsRepo } from "../payments/Repo.ts"
import { StoresService } from "../stores/Service.ts"

/** After these the stream has nothing more to say (refunds come later, but the checkout is over). */
const TERMINAL: ReadonlySet<PaymentStatus> = new Set(TerminalStatuses)

const RECEIPT_STATUSES: ReadonlySet<PaymentStatus> = new Set(["paid", "partially_refunded", "refunded"])

export const PING_INTERVAL = "15 seconds"
const RECONNECT_AFTER = Duration.millis(3000)

/** One Server-Sent Events frame (API.md "Live status"). */
export const statusFrame = (change: PaymentChange): string =>
  Sse.encoder.write({
    _tag: "Event",
    id: String(change.version),
    event: "payment.status",
    data: JSON.stringify({
      id: change.id,
      status: change.status,
      amount: change.amount,
      currency: change.currency,
      amount_refunded: change.amount_refunded
    })
  })

/** How soon a client reconnects when the connection drops: `retry: 3000`. */
const reconnectFrame = Sse.encoder.write(new Sse.Retry({ duration: RECONNECT_AFTER, lastEventId: undefined }))

/** A comment line that keeps proxies from closing an idle stream; Sse's encoder writes events and retries only. */
const PING = ": ping\n\n"

/** How a store presents itself on hosted pages: its display name and branding. */
export const checkoutMerchantOf = (store: Store): CheckoutMerchant =>
  new CheckoutMerchant({
    name: store.branding.display_name ?? store.name,
    logo_url: store.branding.logo_url,
    primary_color: store.branding.primary_color,
    accent_color: store.branding.accent_color
  })

export class CheckoutService extends Effect.Service<CheckoutService>()("checkout/CheckoutService", {
  effect: Effect.gen(function*() {
    const payments = yield* PaymentsRepo
    const stores = yield* StoresService
    const feed = yield* ChangeFeed
    const publicUrl = yield* PublicBaseUrl

    const findPayment = (id: string) =>
      Effect.flatMap(
        payments.find(id),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `No such payment: ${id}`, param: "id" })),
          onSome: Effect.succeed
        })
      )

    const merchantOf = (payment: PaymentRow) =>
      Effect.map(stores.getById(payment.store_id).pipe(Effect.orDie), checkoutMerchantOf)

    const qrImages = (payload: string) =>
      Effect.promise(() =>
        Promise.all([
          QRCode.toDataURL(payload, { errorCorrectionLevel: "M", margin: 2, width: 320 }),
          QRCode.toString(payload, { type: "svg", errorCorrectionLevel: "M", margin: 2 })
        ])
      )

    const view = Effect.fn("Checkout.view")(function*(id: string) {
      const payment = yield* findPayment(id)
      const [png, svg] = yield* qrImages(payment.qr_payload)
      const baseUrl = yield* publicUrl.get
      return new CheckoutView({
        id: payment.id,
        object: "checkout",
        status: payment.status,
        amount: formatAmount(payment.amount, payment.currency),
        currency: payment.currency,
        amount_refunded: formatAmount(payment.amount_refunded, payment.currency),
        description: payment.description,
        reference_id: payment.reference_id,
        livemode: payment.livemode,
        expires_at: payment.expires_at.toISOString(),
        paid_at: payment.paid_at?.toISOString() ?? null,
        merchant: yield* merchantOf(payment),
        qr: new CheckoutQr({ payload: payment.qr_payload, md5: payment.qr_md5, png_data_url: png, svg }),
        events_url: `${baseUrl}/checkout/${payment.id}/events`,
        receipt_url: RECEIPT_STATUSES.has(payment.status) ? `${baseUrl}/receipts/${payment.id}` : null,
        created_at: payment.created_at.toISOString()
      })
    })

    const receipt = Effect.fn("Checkout.receipt")(function*(id: string) {
      const payment = yield* findPayment(id)
      if (!RECEIPT_STATUSES.has(payment.status) || payment.paid_at === null) {
        return yield* new NotFound({ message: `No receipt for payment ${id}: it is not paid`, param: "id" })
      }
      const refunds = yield* payments.listRefunds(id, 100)
      return new Receipt({
        id: `rcpt_${payment.id.slice("pay_".length)}`,
        object: "receipt",
        payment_id: payment.id,
        status: payment.status,
        amount: formatAmount(payment.amount, payment.currency),
        currency: payment.currency,
        amount_refunded: formatAmount(payment.amount_refunded, payment.currency),
        description: payment.description,
        reference_id: payment.reference_id,
        livemode: payment.livemode,
        paid_at: payment.paid_at.toISOString(),
        created_at: payment.paid_at.toISOString(),
        merchant: yield* merchantOf(payment),
        refunds: refunds.slice(0, 100).map((refund) => ({
          id: refund.id,
          amount: formatAmount(refund.amount, refund.currency),
          created_at: refund.created_at.toISOString()
        }))
      })
    })

    /**
     * The live status of a payment as SSE text: the current status at once (unless `lastEventId` says
     * the client has it), then one frame per change, a ping every 15 s, and the end after a terminal
     * status. Subscribes before reading the current status, so no change falls between the two.
     */
    const statusStream = Effect.fn("Checkout.statusStream")(function*(id: string, lastEventId: number | undefined) {
      yield* findPayment(id)
      // Something goes out at once, even to an up-to-date client: the response starts, and the client
      // learns how soon to reconnect if the connection drops. It is sent after subscribing, so a client
      // that waits for the stream to open before changing the payment misses nothing.
      const opening = reconnectFrame
      const pings = Stream.tick(PING_INTERVAL).pipe(Stream.drop(1), Stream.as(PING))
      return Stream.unwrapScoped(Effect.gen(function*() {
        const notices = yield* subscribePaymentChanges(feed, ofPayment(id))
        const readCurrent = Effect.map(findPayment(id).pipe(Effect.orDie), paymentChangeOf)
        const current = yield* readCurrent
        if (TERMINAL.has(current.status) && current.version <= (lastEventId ?? 0)) return Stream.make(opening)
        const changes = Stream.mapEffect(notices, (notice) =>
          notice._tag === "Resync" ? readCurrent : Effect.succeed(notice.change))
        const frames = Stream.concat(Stream.make(current), changes).pipe(
          // Only newer versions: a resync or a duplicate notice repeats nothing the client has.
          Stream.mapAccum(lastEventId ?? 0, (lastSent, change) =>
            change.version > lastSent ? [change.version, Option.some(change)] : [lastSent, Option.none()]),
          Stream.filterMap((change) => change),
          Stream.takeUntil((change) => TERMINAL.has(change.status)),
          Stream.map(statusFrame)
        )
        return Stream.concat(Stream.make(opening), Stream.merge(frames, pings, { haltStrategy: "left" }))
      })).pipe(Stream.encodeText)
    })

    return { view, receipt, statusStream } as const
  }),
  dependencies: [PaymentsRepo.Default, StoresService.Default]
}) {}
