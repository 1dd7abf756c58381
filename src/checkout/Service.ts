/**
 * The hosted side of a payment: its public checkout view, its receipt, and its live status stream.
 * Reads only; every change to a payment goes through the payments engine.
 */
import { Effect, Option } from "effect"
import QRCode from "qrcode"
import { CheckoutMerchant, CheckoutQr, CheckoutView, Receipt } from "../../domain/Checkout.ts"
import { NotFound } from "../../domain/Errors.ts"
import type { PaymentId } from "../../domain/Ids.ts"
import type { PaymentStatus } from "../../domain/Payments.ts"
import type { Store } from "../../domain/Stores.ts"
import { formatAmount } from "../platform/Money.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { PaymentReads, type PaymentRow } from "../payments/Reads.ts"
import { AccessService } from "../access/Service.ts"
import { StoresService } from "../stores/Service.ts"
import { LiveStatus } from "./LiveStatus.ts"
import { traced } from "../platform/Traced.ts"

const RECEIPT_STATUSES: ReadonlySet<PaymentStatus> = new Set(["paid", "partially_refunded", "refunded"])

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
    const payments = yield* PaymentReads
    const stores = yield* StoresService
    const liveStatus = yield* LiveStatus
    const publicUrl = yield* PublicBaseUrl

    const paymentNotFound = (id: PaymentId) => new NotFound({ message: `No such payment: ${id}`, param: "id" })

    const findPayment = (id: PaymentId) =>
      Effect.flatMap(
        payments.paymentById(id),
        Option.match({ onNone: () => Effect.fail(paymentNotFound(id)), onSome: Effect.succeed })
      )

    const merchantOf = (payment: PaymentRow) =>
      Effect.map(
        stores.getById(payment.store_id).pipe(Effect.orDie, AccessService.forPublicLink("the hosted checkout page of a payment")),
        checkoutMerchantOf
      )

    const qrImages = (payload: string) =>
      Effect.promise(() =>
        Promise.all([
          QRCode.toDataURL(payload, { errorCorrectionLevel: "M", margin: 2, width: 320 }),
          QRCode.toString(payload, { type: "svg", errorCorrectionLevel: "M", margin: 2 })
        ])
      )

    const view = traced("Checkout.view")(function*(id: PaymentId) {
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

    const receipt = traced("Checkout.receipt")(function*(id: PaymentId) {
      const payment = yield* findPayment(id)
      if (!RECEIPT_STATUSES.has(payment.status) || payment.paid_at === null) {
        return yield* new NotFound({ message: `No receipt for payment ${id}: it is not paid`, param: "id" })
      }
      const refunds = yield* payments.refundsOf(id, 100)
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
     * The live status of a payment as the body of an SSE response (LiveStatus): 404 for an unknown
     * payment, before any response starts.
     */
    const statusStream = traced("Checkout.statusStream")(function*(id: PaymentId, lastEventId: number | undefined) {
      const body = yield* liveStatus.open(id, lastEventId)
      if (Option.isNone(body)) return yield* paymentNotFound(id)
      return body.value
    })

    return { view, receipt, statusStream } as const
  }),
  dependencies: [PaymentReads.Default, StoresService.Default, LiveStatus.Default]
}) {}
