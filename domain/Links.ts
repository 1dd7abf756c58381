/**
 * Payment links and invoices: a shareable public page (`/links/{id}`) on which a payer starts a payment
 * of a store. A link can be paid any number of times, for a fixed amount or one the payer chooses
 * (within optional bounds); an invoice is for one customer, has a fixed amount and is paid once.
 * The console manages them; the public side shows a link and creates its payments.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Email } from "./Accounts.ts"
import { authenticated } from "./Auth.ts"
import { CheckoutMerchant } from "./Checkout.ts"
import {
  ForbiddenResponse,
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse,
  RateLimitedResponse
} from "./Errors.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { AmountString, Currency } from "./Money.ts"
import { MAX_REFERENCE_ID_LENGTH } from "./Payments.ts"
import { boundedText } from "./Stores.ts"
import { InvoiceId, PaymentId, PaymentLinkId, StoreId } from "./Ids.ts"
import { closed } from "./Text.ts"

export const MAX_LINK_TITLE_LENGTH = 200
export const MAX_LINK_DESCRIPTION_LENGTH = 1000

export const LinkKind = Schema.Literal("link", "invoice").annotations({
  message: () => ({ message: "must be \"link\" or \"invoice\"", override: true }),
  description: "`link`: paid any number of times (ids `lnk_…`). `invoice`: one customer, a fixed amount, " +
    "paid once (ids `inv_…`)."
})
export type LinkKind = typeof LinkKind.Type

/** The id of a link (`lnk_…`) or of an invoice (`inv_…`): the two kinds share their routes. */
export const LinkId = Schema.Union(PaymentLinkId, InvoiceId)
export type LinkId = typeof LinkId.Type

export const LinkStatus = Schema.Literal("open", "inactive", "expired", "paid").annotations({
  description: "`open`: can be paid now. `inactive`: switched off by the merchant. `expired`: past `expires_at`. " +
    "`paid`: an invoice that has been paid."
})
export type LinkStatus = typeof LinkStatus.Type

const ReferenceId = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MAX_REFERENCE_ID_LENGTH, { message: () => `must be at most ${MAX_REFERENCE_ID_LENGTH} characters` })
)

const LinkDescription = Schema.String.pipe(
  Schema.maxLength(MAX_LINK_DESCRIPTION_LENGTH, {
    message: () => `must be at most ${MAX_LINK_DESCRIPTION_LENGTH} characters`
  })
)

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/

const Timestamp = Schema.String.pipe(
  Schema.pattern(ISO_TIMESTAMP, { message: () => "must be an ISO 8601 timestamp such as 2030-01-31T17:00:00Z" }),
  Schema.filter((value) => !Number.isNaN(Date.parse(value)) || "must be a real point in time", { jsonSchema: {} })
)

const CalendarDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a date written YYYY-MM-DD" }),
  Schema.filter((value) => {
    const date = new Date(`${value}T00:00:00Z`)
    return (!Number.isNaN(date.getTime()) && date.toISOString().startsWith(value)) || "must be a real calendar date"
  }, { jsonSchema: {} })
)

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

export class PaymentLink extends Schema.Class<PaymentLink>("PaymentLink")({
  id: LinkId,
  object: Schema.Literal("payment_link"),
  kind: LinkKind,
  store_id: StoreId,
  livemode: Schema.Boolean,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String).annotations({ description: "The fixed amount; null when the payer chooses it" }),
  min_amount: Schema.NullOr(Schema.String),
  max_amount: Schema.NullOr(Schema.String),
  currency: Currency,
  active: Schema.Boolean,
  status: LinkStatus,
  reference_id: Schema.NullOr(Schema.String),
  customer_email: Schema.NullOr(Schema.String),
  due_date: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Schema.String),
  url: Schema.String.annotations({ description: "The public page to share with payers" }),
  payments_count: Schema.Number.annotations({
    description: "How many payments were started through the link, whatever became of them"
  }),
  paid_at: Schema.NullOr(Schema.String).annotations({
    description: "For an invoice, when it was paid; null otherwise"
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class PaymentLinkList extends Schema.Class<PaymentLinkList>("PaymentLinkList")(ListOf(PaymentLink).fields) {}

export class DeletedPaymentLink extends Schema.Class<DeletedPaymentLink>("DeletedPaymentLink")({
  id: LinkId,
  object: Schema.Literal("payment_link"),
  deleted: Schema.Literal(true)
}) {}

/** What a payer sees of a link: no store id, reference, customer e-mail or other merchant records. */
export class PublicPaymentLink extends Schema.Class<PublicPaymentLink>("PublicPaymentLink")({
  id: LinkId,
  object: Schema.Literal("payment_link"),
  kind: LinkKind,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  min_amount: Schema.NullOr(Schema.String),
  max_amount: Schema.NullOr(Schema.String),
  currency: Currency,
  active: Schema.Boolean.annotations({ description: "Whether a payment can be started now (status `open`)" }),
  status: LinkStatus,
  livemode: Schema.Boolean,
  due_date: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Schema.String),
  merchant: CheckoutMerchant,
  pay_url: Schema.String.annotations({ description: "Where to POST a PayLinkDto to start a payment" })
}) {}

export class LinkPayment extends Schema.Class<LinkPayment>("LinkPayment")({
  object: Schema.Literal("link_payment"),
  link_id: LinkId,
  payment_id: PaymentId,
  checkout_url: Schema.String.annotations({ description: "The hosted checkout page to send the payer to" }),
  amount: Schema.String,
  currency: Currency
}) {}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

export const CreateLink = closed(Schema.Struct({
  kind: LinkKind,
  title: boundedText(MAX_LINK_TITLE_LENGTH).annotations({
    description: `Shown to the payer and used as the payments' description (1 to ${MAX_LINK_TITLE_LENGTH} characters)`
  }),
  description: Schema.optional(LinkDescription),
  amount: Schema.optional(AmountString.annotations({
    description: "A fixed amount. Omitted, the payer chooses the amount (links only; an invoice needs one)."
  })),
  min_amount: Schema.optional(AmountString.annotations({ description: "Lowest amount a payer may choose" })),
  max_amount: Schema.optional(AmountString.annotations({ description: "Highest amount a payer may choose" })),
  currency: Currency,
  livemode: Schema.optional(Schema.Boolean.annotations({
    description: "Whether its payments are live. Default false; true needs the store in live mode."
  })),
  reference_id: Schema.optional(ReferenceId.annotations({
    description: "Your own reference; the payments' reference_id unless the payer sends one"
  })),
  customer_email: Schema.optional(Email.annotations({ description: "Invoices only: the customer billed" })),
  due_date: Schema.optional(CalendarDate.annotations({ description: "Invoices only: YYYY-MM-DD" })),
  expires_at: Schema.optional(Timestamp.annotations({
    description: "After this instant the link can no longer be paid (ISO 8601, in the future)"
  }))
}), "CreateLinkDto")
export type CreateLink = typeof CreateLink.Type

export const UpdateLink = closed(Schema.Struct({
  active: Schema.Boolean.annotations({ description: "false stops new payments; true allows them again" }),
  title: Schema.optional(boundedText(MAX_LINK_TITLE_LENGTH)),
  description: Schema.optional(Schema.NullOr(LinkDescription).annotations({ description: "null clears it" }))
}), "UpdateLinkDto")
export type UpdateLink = typeof UpdateLink.Type

export const LinkListParams = Schema.Struct({
  ...ListParams.fields,
  kind: Schema.optional(LinkKind),
  active: Schema.optional(
    Schema.BooleanFromString.annotations({ message: () => ({ message: "must be \"true\" or \"false\"", override: true }) })
  )
})
export type LinkListParams = typeof LinkListParams.Type

export const PayLink = closed(Schema.Struct({
  amount: Schema.optional(AmountString.annotations({
    description: "Required when the link has no fixed amount, within its bounds; for a fixed link it may be " +
      "omitted (or must equal the fixed amount)"
  })),
  reference_id: Schema.optional(ReferenceId.annotations({
    description: "The payment's reference_id; defaults to the link's, and for an invoice to the invoice id"
  })),
  payer_email: Schema.optional(Email.annotations({ description: "Kept in the payment's metadata for the merchant" }))
}), "PayLinkDto")
export type PayLink = typeof PayLink.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const StorePath = Schema.Struct({ storeId: StoreId })
const LinkPath = Schema.Struct({ linkId: LinkId })

export class LinksGroup extends HttpApiGroup.make("links")
  .add(
    HttpApiEndpoint.post("create", "/dashboard/stores/:storeId/links")
      .setPath(StorePath)
      .setPayload(CreateLink)
      .addSuccess(PaymentLink, { status: 201 })
      .annotate(OpenApi.Summary, "Create a link or invoice")
      .annotate(
        OpenApi.Description,
        "A `link` has a fixed `amount`, or none so that the payer chooses one (then `min_amount` and " +
          "`max_amount` bound it). An `invoice` needs a fixed amount and may name `customer_email` and " +
          "`due_date`; it can be paid once. `livemode: true` needs the store in live mode (409 " +
          "`invalid_state` otherwise). Needs payment.write (Owner, Admin, Developer); user sessions only."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/links")
      .setPath(StorePath)
      .setUrlParams(LinkListParams)
      .addSuccess(PaymentLinkList)
      .annotate(OpenApi.Summary, "List links and invoices, newest first; filter by `kind` and `active`")
      .annotate(
        OpenApi.Description,
        "Deleted links are not listed. Needs payment.read on the store."
      )
  )
  .add(
    HttpApiEndpoint.put("update", "/dashboard/links/:linkId")
      .setPath(LinkPath)
      .setPayload(UpdateLink)
      .addSuccess(PaymentLink)
      .annotate(OpenApi.Summary, "Activate or deactivate")
      .annotate(
        OpenApi.Description,
        "Body `{ active }` (required), and optionally `title` and `description` (null clears it). An " +
          "inactive link still shows its page but cannot be paid (409 `invalid_state`). Needs payment.write."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/dashboard/links/:linkId")
      .setPath(LinkPath)
      .addSuccess(DeletedPaymentLink)
      .annotate(OpenApi.Summary, "Delete")
      .annotate(
        OpenApi.Description,
        "Answers `{ id, object: \"payment_link\", deleted: true }`. A link through which payments were made " +
          "is kept for the record, but it leaves every list and its public page answers 404, like a link " +
          "that never existed. Needs payment.write."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Payment links and invoices")
  .annotate(OpenApi.Description, "Reusable payment links and one-off invoices of a store, managed from the console.")
{}

const LinkIdPath = Schema.Struct({ id: LinkId })

export class PublicLinksGroup extends HttpApiGroup.make("publicLinks")
  .add(
    HttpApiEndpoint.get("view", "/links/:id")
      .setPath(LinkIdPath)
      .addSuccess(PublicPaymentLink)
      .annotate(OpenApi.Summary, "Public payment-link details")
      .annotate(
        OpenApi.Description,
        "JSON by default; a request that prefers `text/html` (a browser) gets the hosted page with a pay " +
          "button, which starts a payment and moves on to its hosted checkout. No credential."
      )
  )
  .add(
    HttpApiEndpoint.post("pay", "/links/:id/pay")
      .setPath(LinkIdPath)
      .setPayload(PayLink)
      .addSuccess(LinkPayment, { status: 201 })
      .annotate(OpenApi.Summary, "Create a payment for a link; returns a hosted checkout address")
      .annotate(
        OpenApi.Description,
        "Creates a payment of the link's store and mode for the link's amount (or the payer's, within the " +
          "link's bounds), described by the link's title, with `metadata.link_id`. An invoice has one payment " +
          "at a time: while one is pending (or scanned), paying again answers that payment and its checkout " +
          "address. An inactive or expired link, or an invoice already paid, answers 409 `invalid_state`; " +
          "a live link past its merchant's monthly live-payment plan limit answers 403 `forbidden`. No credential. " +
          "Rate limited per client address (LINK_PAYMENTS_PER_ADDRESS_PER_MINUTE) and per link " +
          "(LINK_PAYMENTS_PER_LINK_PER_MINUTE): 429 `rate_limited` with Retry-After beyond."
      )
      .addError(ForbiddenResponse)
      .addError(RateLimitedResponse)
  )
  .addError(NotFoundResponse)
  .addError(InvalidStateResponse)
  .addError(RateLimitedResponse)
  .annotate(OpenApi.Title, "Payment links (public)")
  .annotate(OpenApi.Description, "A payment link's public page and the route that turns it into a payment.")
{}
