/**
 * Payments and refunds of the merchant API (`/v1`), as API.md "Payments" describes them.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated, Credentials } from "./Auth.ts"
import {
  IdempotencyConflictResponse,
  InvalidStateResponse,
  MfaRequiredResponse,
  NotFoundResponse
} from "./Errors.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { AmountString, Currency } from "./Money.ts"
import { BranchId, CustomerId, PaymentId, RefundId, StoreId } from "./Ids.ts"
import { closed, maxText, oneOf } from "./Text.ts"

export const PaymentStatus = Schema.Literal(
  "pending",
  "scanned",
  "paid",
  "expired",
  "failed",
  "cancelled",
  "refunded",
  "partially_refunded"
)
export type PaymentStatus = typeof PaymentStatus.Type

/** Statuses from which a payment still moves without a refund: it can be scanned, paid, expire or fail. */
export const OpenStatuses: ReadonlyArray<PaymentStatus> = ["pending", "scanned"]

/** Every other status: the payment's checkout is over (refunds may still follow a paid one). */
export const TerminalStatuses: ReadonlyArray<PaymentStatus> = PaymentStatus.literals.filter(
  (status) => !OpenStatuses.includes(status)
)

export const MAX_METADATA_KEYS = 50
export const MAX_METADATA_VALUE_LENGTH = 500
export const MAX_METADATA_KEY_LENGTH = 40
export const MAX_DESCRIPTION_LENGTH = 500
export const MAX_REFERENCE_ID_LENGTH = 64
export const MIN_EXPIRES_IN = 1
export const MAX_EXPIRES_IN = 7 * 24 * 60 * 60

const text = (max: number, what: string) =>
  Schema.String.pipe(
    Schema.maxLength(max, { message: () => `${what} must be at most ${max} characters` })
  )

// Keys are checked by the filter rather than by the record's key schema: a key that fails a key
// schema is treated as an unknown property and silently dropped, and the merchant's data would be lost.
export const Metadata = Schema.Record({
  key: Schema.String,
  value: Schema.String.annotations({ message: () => "metadata values must be strings" }).pipe(
    Schema.maxLength(MAX_METADATA_VALUE_LENGTH, {
      message: () => `metadata values must be at most ${MAX_METADATA_VALUE_LENGTH} characters`
    })
  )
}).pipe(
  Schema.filter((record) => {
    const keys = Object.keys(record)
    if (keys.length > MAX_METADATA_KEYS) return `metadata may have at most ${MAX_METADATA_KEYS} keys`
    if (keys.some((key) => key.length === 0)) return "metadata keys must not be empty"
    const long = keys.find((key) => key.length > MAX_METADATA_KEY_LENGTH)
    if (long !== undefined) return `metadata keys must be at most ${MAX_METADATA_KEY_LENGTH} characters`
    return true
  }, { jsonSchema: {} })
).annotations({
  description: `Your own key/value pairs (at most ${MAX_METADATA_KEYS} keys of at most ${MAX_METADATA_KEY_LENGTH} ` +
    `characters, string values of at most ${MAX_METADATA_VALUE_LENGTH} characters), echoed back on the payment and in webhooks.`
})

export const CreatePayment = closed(Schema.Struct({
  amount: AmountString,
  currency: Currency,
  reference_id: Schema.optional(
    text(MAX_REFERENCE_ID_LENGTH, "reference_id").pipe(Schema.minLength(1, { message: () => "reference_id must not be empty" }))
  ),
  description: Schema.optional(text(MAX_DESCRIPTION_LENGTH, "description")),
  expires_in: Schema.optional(
    Schema.Number.pipe(
      Schema.int({ message: () => "expires_in must be a whole number of seconds" }),
      Schema.between(MIN_EXPIRES_IN, MAX_EXPIRES_IN, {
        message: () => `expires_in must be between ${MIN_EXPIRES_IN} and ${MAX_EXPIRES_IN} seconds`
      })
    )
  ),
  metadata: Schema.optional(Metadata),
  branch_id: Schema.optional(
    BranchId.annotations({
      description: "The branch of the API key's store where the payment is taken (`br_…`); it must be active"
    })
  ),
  customer_id: Schema.optional(
    CustomerId.annotations({
      description: "The customer paying (`cus_…`), a customer of the API key's store and mode (404 otherwise); " +
        "the payment counts toward the customer's lifetime metrics"
    })
  )
}), "CreatePaymentDto")
export type CreatePayment = typeof CreatePayment.Type

export class PaymentQr extends Schema.Class<PaymentQr>("PaymentQr")({
  payload: Schema.String.annotations({ description: "The KHQR (EMVCo merchant-presented) string to show as a QR code" }),
  md5: Schema.String.annotations({ description: "Lowercase MD5 hex of the payload; the provider's transaction key" })
}) {}

export class Payment extends Schema.Class<Payment>("Payment")({
  id: PaymentId,
  object: Schema.Literal("payment"),
  status: PaymentStatus,
  amount: Schema.String,
  currency: Currency,
  amount_refunded: Schema.String,
  reference_id: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.String }),
  livemode: Schema.Boolean,
  store_id: StoreId,
  branch_id: Schema.NullOr(BranchId).annotations({ description: "The branch the payment was taken at, if any" }),
  customer_id: Schema.NullOr(CustomerId).annotations({ description: "The customer who pays, if the payment names one" }),
  expires_at: Schema.String,
  paid_at: Schema.NullOr(Schema.String),
  checkout_url: Schema.String,
  qr: PaymentQr,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class PaymentList extends Schema.Class<PaymentList>("PaymentList")(ListOf(Payment).fields) {}

export const CreateRefund = closed(Schema.Struct({
  amount: Schema.optional(AmountString.annotations({
    description: "The amount to refund; omitted, the whole remaining balance is refunded"
  })),
  reason: Schema.optional(text(MAX_DESCRIPTION_LENGTH, "reason")),
  mfa_code: Schema.optional(maxText(16).annotations({
    description: "A fresh TOTP code; needed for refunds at or above the high-value threshold"
  }))
}), "CreateRefundDto")
export type CreateRefund = typeof CreateRefund.Type

export class Refund extends Schema.Class<Refund>("Refund")({
  id: RefundId,
  object: Schema.Literal("refund"),
  payment_id: PaymentId,
  amount: Schema.String,
  currency: Currency,
  reason: Schema.NullOr(Schema.String),
  status: Schema.Literal("succeeded"),
  created_at: Schema.String
}) {}

export class RefundList extends Schema.Class<RefundList>("RefundList")(ListOf(Refund).fields) {}

export const SimulateStatus = oneOf("scanned", "paid", "failed", "expired")
export const SimulatePayment = closed(Schema.Struct({ status: SimulateStatus }), "SimulateDto")

const Timestamp = maxText(40).annotations({
  description: "An ISO 8601 timestamp or Unix seconds"
})

/** The status filter of a list: any status, named in full when it is not one. */
const StatusFilter = oneOf(...PaymentStatus.literals)

export const PaymentListParams = Schema.Struct({
  ...ListParams.fields,
  store_id: Schema.optional(StoreId.annotations({
    description: "The store whose payments to list: required with a session token; an API key lists its own store"
  })),
  livemode: Schema.optional(
    Schema.BooleanFromString.annotations({
      message: () => ({ message: "must be \"true\" or \"false\"", override: true }),
      description: "With a session token, `true` lists live payments (default: test). An API key lists its own mode."
    })
  ),
  status: Schema.optional(StatusFilter),
  reference_id: Schema.optional(maxText(MAX_REFERENCE_ID_LENGTH)),
  customer_id: Schema.optional(CustomerId.annotations({ description: "Only the payments of this customer (`cus_…`)" })),
  "created[gte]": Schema.optional(Timestamp),
  "created[lte]": Schema.optional(Timestamp)
})
export type PaymentListParams = typeof PaymentListParams.Type

const IdPath = Schema.Struct({ id: PaymentId })

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1, { message: () => "Idempotency-Key must not be empty" }),
      Schema.maxLength(255, { message: () => "Idempotency-Key must be at most 255 characters" })
    )
  )
})

export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.post("create", "/v1/payments")
      .annotate(Credentials, ["apiKey"])
      .setPayload(CreatePayment)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Payment, { status: 201 })
      .addError(IdempotencyConflictResponse)
      .addError(InvalidStateResponse)
      .annotate(OpenApi.Summary, "Create a QR payment")
      .annotate(
        OpenApi.Description,
        "Needs an API key; the payment belongs to the key's store and mode. With `Idempotency-Key`, a retry " +
          "with the same body answers the original payment (same status) and creates nothing; the same key " +
          "with another body is 409 `idempotency_conflict`. Keys are kept at least 24 hours."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/payments")
      .setUrlParams(PaymentListParams)
      .addSuccess(PaymentList)
      .annotate(OpenApi.Summary, "List payments, newest first")
      .annotate(
        OpenApi.Description,
        "With an API key: its own store's payments of its own mode. With a session token: the payments of `store_id` (required), a store the user may read, in test mode unless `livemode=true`. Filters: `status`, `reference_id`, `customer_id`, `created[gte]`, `created[lte]`."
      )
  )
  .add(
    HttpApiEndpoint.get("retrieve", "/v1/payments/:id")
      .setPath(IdPath)
      .addSuccess(Payment)
      .annotate(OpenApi.Summary, "Retrieve a payment")
      .annotate(
        OpenApi.Description,
        "An API key sees its own store's payments of its mode; a session, the payments of stores the user may read. Anything else is 404."
      )
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/payments/:id/cancel")
      .setPath(IdPath)
      .addSuccess(Payment, { status: 201 })
      .addError(InvalidStateResponse)
      .annotate(OpenApi.Summary, "Cancel a pending payment")
      .annotate(
        OpenApi.Description,
        "Only a pending payment can be cancelled (409 `invalid_state` otherwise); its checkout page turns to cancelled and `payment.cancelled` is sent."
      )
  )
  .add(
    HttpApiEndpoint.post("refund", "/v1/payments/:id/refund")
      .setPath(IdPath)
      .setPayload(CreateRefund)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Refund, { status: 201 })
      .addError(InvalidStateResponse)
      .addError(IdempotencyConflictResponse)
      .addError(MfaRequiredResponse)
      .annotate(OpenApi.Summary, "Refund a paid payment in full or in part")
      .annotate(
        OpenApi.Description,
        "Omit `amount` to refund the whole remaining balance. The refunds of a payment never add up to more " +
          "than its amount: a larger request is 400 `invalid_request`; a payment that is not paid is 409 " +
          "`invalid_state`. At or above REFUND_MFA_THRESHOLD (in the payment's currency) a refund needs an " +
          "Owner session with MFA enabled and a fresh `mfa_code` (API keys get 403)."
      )
  )
  .add(
    HttpApiEndpoint.get("refunds", "/v1/payments/:id/refunds")
      .setPath(IdPath)
      .setUrlParams(ListParams)
      .addSuccess(RefundList)
      .annotate(OpenApi.Summary, "List refunds of a payment, newest first")
      .annotate(
        OpenApi.Description,
        "Every refund of the payment; their amounts add up to the payment's `amount_refunded`."
      )
  )
  .add(
    HttpApiEndpoint.post("simulate", "/v1/payments/:id/simulate")
      .annotate(Credentials, ["apiKey"])
      .setPath(IdPath)
      .setPayload(SimulatePayment)
      .addSuccess(Payment, { status: 201 })
      .addError(InvalidStateResponse)
      .annotate(OpenApi.Summary, "Drive a test payment to a new status (test-mode keys only)")
      .annotate(
        OpenApi.Description,
        "Moves a test payment as the mock provider would: pending → scanned → paid, pending → failed, " +
          "pending or scanned → expired. Any other move is 409 `invalid_state`; a live key gets 403."
      )
  )
  .pipe(authenticated("apiKey", "session"))
  .addError(NotFoundResponse)
  .annotate(OpenApi.Title, "Payments")
  .annotate(OpenApi.Description, "KHQR payments in USD and KHR: create with an Idempotency-Key, follow, cancel, refund, and move test payments with simulate.")
{}
