/**
 * The public, hosted side of a payment: the checkout view (JSON, or a page for browsers), its live
 * status stream (Server-Sent Events), and the receipt. No credential: nothing here shows a secret.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFoundResponse, RateLimitedResponse } from "./Errors.ts"
import { Currency } from "./Money.ts"
import { PaymentStatus } from "./Payments.ts"
import { PaymentId, RefundId } from "./Ids.ts"

export class CheckoutMerchant extends Schema.Class<CheckoutMerchant>("CheckoutMerchant")({
  name: Schema.String,
  logo_url: Schema.NullOr(Schema.String),
  primary_color: Schema.NullOr(Schema.String),
  accent_color: Schema.NullOr(Schema.String)
}) {}

export class CheckoutQr extends Schema.Class<CheckoutQr>("CheckoutQr")({
  payload: Schema.String,
  md5: Schema.String,
  png_data_url: Schema.String.annotations({ description: "The QR code as a PNG data URL" }),
  svg: Schema.String.annotations({ description: "The QR code as an SVG document" })
}) {}

export class CheckoutView extends Schema.Class<CheckoutView>("CheckoutView")({
  id: PaymentId,
  object: Schema.Literal("checkout"),
  status: PaymentStatus,
  amount: Schema.String,
  currency: Currency,
  amount_refunded: Schema.String,
  description: Schema.NullOr(Schema.String),
  reference_id: Schema.NullOr(Schema.String),
  livemode: Schema.Boolean,
  expires_at: Schema.String,
  paid_at: Schema.NullOr(Schema.String),
  merchant: CheckoutMerchant,
  qr: CheckoutQr,
  events_url: Schema.String,
  receipt_url: Schema.NullOr(Schema.String),
  created_at: Schema.String
}) {}

export class Receipt extends Schema.Class<Receipt>("Receipt")({
  id: Schema.String,
  object: Schema.Literal("receipt"),
  payment_id: PaymentId,
  status: PaymentStatus,
  amount: Schema.String,
  currency: Currency,
  amount_refunded: Schema.String,
  description: Schema.NullOr(Schema.String),
  reference_id: Schema.NullOr(Schema.String),
  livemode: Schema.Boolean,
  paid_at: Schema.String,
  created_at: Schema.String.annotations({ description: "When the receipt came to be: the moment the payment was paid" }),
  merchant: CheckoutMerchant,
  refunds: Schema.Array(Schema.Struct({ id: RefundId, amount: Schema.String, created_at: Schema.String }))
}) {}

/** One live status frame's data (API.md "Live status"). */
export const StatusFrame = Schema.Struct({
  id: PaymentId,
  status: PaymentStatus,
  amount: Schema.String,
  currency: Currency,
  amount_refunded: Schema.String
})

const IdPath = Schema.Struct({ id: PaymentId })

const EventStream = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })
).annotations({
  description: "Frames `id: <sequence>` / `event: payment.status` / `data: {id, status, amount, currency, " +
    "amount_refunded}`; the current status at once, then one frame per change, `: ping` every 15 s; the " +
    "stream ends after a terminal status (paid, expired, failed, cancelled). `Last-Event-ID` resumes."
})

export class CheckoutGroup extends HttpApiGroup.make("checkout")
  .add(
    HttpApiEndpoint.get("view", "/checkout/:id")
      .setPath(IdPath)
      .addSuccess(CheckoutView)
      .annotate(OpenApi.Summary, "Public checkout view of a payment, without secrets")
      .annotate(
        OpenApi.Description,
        "JSON by default; a request that prefers `text/html` (a browser) gets the hosted checkout page, which " +
          "shows the store's branding, the amount, the QR code and follows the live status without a reload."
      )
  )
  .add(
    HttpApiEndpoint.get("events", "/checkout/:id/events")
      .setPath(IdPath)
      .addSuccess(EventStream)
      .addError(RateLimitedResponse)
      .annotate(OpenApi.Summary, "Server-Sent Events stream of the payment's live status")
      .annotate(
        OpenApi.Description,
        "One client address may hold at most SSE_MAX_STREAMS_PER_ADDRESS streams (100 by default) open at " +
          "once; beyond that the answer is 429 `rate_limited` with Retry-After."
      )
  )
  .add(
    HttpApiEndpoint.get("receipt", "/receipts/:id")
      .setPath(IdPath)
      .addSuccess(Receipt)
      .annotate(OpenApi.Summary, "Public receipt of a paid payment (JSON, or a page for browsers)")
      .annotate(OpenApi.Description, "Only paid, partially refunded and refunded payments have a receipt; others are 404.")
  )
  .addError(NotFoundResponse)
  .addError(RateLimitedResponse)
  .annotate(OpenApi.Title, "Hosted checkout")
  .annotate(OpenApi.Description, "The customer-facing checkout and receipt pages of a payment, and its live status stream (no credential: the payment id is the capability).")
{}
