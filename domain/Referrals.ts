/**
 * Referrals and affiliate commissions (API.md "Referrals and commissions"): a program per store, each
 * customer's own referral code and share link (with its QR), referrals made when a customer is created
 * with another's code, conversion on the referee's first paid payment (points to both wallets), a
 * commission per paid payment of the referee inside the program's window, fraud flags that hold a
 * referral's points and commissions until a reviewer clears or voids it, and payouts.
 *
 * The merchant API (`/v1/customers/{id}/referral-…`) acts with an API key on its own store and mode; the
 * console acts with a user session: customer.read to read, marketing.manage to configure the program,
 * customer.write (Owner, Admin) to review referrals and pay commissions out.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import {
  IdempotencyConflictResponse,
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse,
  RateLimitedResponse
} from "./Errors.ts"
import { CommissionId, CustomerId, PaymentId, ReferralId, StoreId, UserId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { Currency } from "./Money.ts"
import { IdempotencyHeaders } from "./Payments.ts"
import { boundedText, StoreBranding } from "./Stores.ts"
import { closed, oneOf } from "./Text.ts"

export const MAX_REVIEW_NOTE_LENGTH = 500
export const MAX_WINDOW_DAYS = 3650
export const MAX_REFERRAL_POINTS = 1_000_000
export const MAX_REFERRALS_PER_DAY = 100_000
/** Referral codes: this many characters of an alphabet without look-alikes (0/O, 1/I/L). */
export const REFERRAL_CODE_LENGTH = 8

export const ReferralStatuses = ["pending", "converted", "flagged", "voided"] as const
export const ReferralStatus = Schema.Literal(...ReferralStatuses).annotations({
  description: "`pending` until the referee's first paid payment, then `converted`; `flagged` while a fraud " +
    "flag holds its points and commissions (until a review clears it back or voids it); `voided` for good"
})
export type ReferralStatus = typeof ReferralStatus.Type

export const CommissionStatuses = ["held", "accrued", "paid", "voided"] as const
export const CommissionStatus = oneOf(...CommissionStatuses).annotations({
  description: "`held` while its referral is flagged; `accrued` (owed, payable); `paid` by a payout; `voided` " +
    "when its payment was refunded in full or its referral voided"
})
export type CommissionStatus = typeof CommissionStatus.Type

/** The fraud flags a referral can carry. */
export const ReferralFlags = ["self_referral", "referrer_daily_limit", "converting_payment_refunded"] as const
export type ReferralFlag = (typeof ReferralFlags)[number]

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

export class ReferralProgram extends Schema.Class<ReferralProgram>("ReferralProgram")({
  object: Schema.Literal("referral_program"),
  store_id: StoreId,
  active: Schema.Boolean.annotations({
    description: "Whether conversions award points and paid payments accrue commissions; referrals are recorded either way"
  }),
  referrer_points: Schema.Int.annotations({ description: "Points the referrer gets when a referee converts", examples: [500] }),
  referee_points: Schema.Int.annotations({ description: "Points the referee gets on converting", examples: [200] }),
  commission_percent: Schema.String.annotations({
    description: "Percent of each paid payment of the referee owed to the referrer (amounts floored to the minor unit)",
    examples: ["5"]
  }),
  commission_window_days: Schema.Int.annotations({
    description: "Payments paid within this many days of the referral accrue commissions",
    examples: [30]
  }),
  max_referrals_per_day: Schema.Int.annotations({
    description: "Referrals one referrer may make in 24 hours before further ones are flagged",
    examples: [20]
  })
}) {}

export class ReferralCode extends Schema.Class<ReferralCode>("ReferralCode")({
  object: Schema.Literal("referral_code"),
  customer_id: CustomerId,
  code: Schema.String.annotations({ examples: ["K7QXM2PD"] }),
  share_url: Schema.String.annotations({ examples: ["https://pay.example.com/r/K7QXM2PD"] })
}) {}

export class ReferralQr extends Schema.Class<ReferralQr>("ReferralQr")({
  object: Schema.Literal("referral_qr"),
  customer_id: CustomerId,
  code: Schema.String.annotations({ examples: ["K7QXM2PD"] }),
  share_url: Schema.String.annotations({ examples: ["https://pay.example.com/r/K7QXM2PD"] }),
  png_data_url: Schema.String.annotations({
    description: "The QR of `share_url` as a PNG data URL",
    examples: ["data:image/png;base64,iVBORw0KGgo="]
  }),
  svg: Schema.String.annotations({ description: "The same QR as an SVG document", examples: ["<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>"] })
}) {}

export class ReferralReview extends Schema.Class<ReferralReview>("ReferralReview")({
  decision: Schema.Literal("clear", "void"),
  note: Schema.NullOr(Schema.String).annotations({ examples: ["Different households, confirmed by phone"] }),
  reviewed_by: UserId,
  reviewed_at: Schema.String
}) {}

export class Referral extends Schema.Class<Referral>("Referral")({
  id: ReferralId,
  object: Schema.Literal("referral"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  referrer_id: CustomerId,
  referee_id: CustomerId,
  status: ReferralStatus,
  flags: Schema.Array(Schema.Literal(...ReferralFlags)).annotations({
    description: "Fraud flags raised: `self_referral` (the referee shares the referrer's email, phone or " +
      "external_id), `referrer_daily_limit` (past `max_referrals_per_day`), `converting_payment_refunded`"
  }),
  converted_at: Schema.NullOr(Schema.String).annotations({ description: "When the referee's first payment was paid" }),
  review: Schema.NullOr(ReferralReview).annotations({ description: "Who reviewed the flagged referral, when and how" }),
  created_at: Schema.String
}) {}

export class ReferralList extends Schema.Class<ReferralList>("ReferralList")(ListOf(Referral).fields) {}

export class Commission extends Schema.Class<Commission>("Commission")({
  id: CommissionId,
  object: Schema.Literal("commission"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  referral_id: ReferralId,
  referrer_id: CustomerId,
  payment_id: PaymentId,
  amount: Schema.String.annotations({
    description: "`commission_percent` of what is left of the payment after its refunds, floored to the minor unit",
    examples: ["1.25"]
  }),
  currency: Currency,
  status: CommissionStatus,
  paid_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
}) {}

export class CommissionList extends Schema.Class<CommissionList>("CommissionList")(ListOf(Commission).fields) {}

export const CurrencyTotals = Schema.Struct({
  USD: Schema.String.annotations({ examples: ["12.50"] }),
  KHR: Schema.String.annotations({ examples: ["40000"] })
}).annotations({ description: "An amount per currency" })
export type CurrencyTotals = typeof CurrencyTotals.Type

export class CommissionPayout extends Schema.Class<CommissionPayout>("CommissionPayout")({
  object: Schema.Literal("commission_payout"),
  count: Schema.Int.annotations({ description: "Commissions marked paid", examples: [3] }),
  totals: CurrencyTotals
}) {}

export class ReferrerCommissions extends Schema.Class<ReferrerCommissions>("ReferrerCommissions")({
  referrer_id: CustomerId,
  accrued: CurrencyTotals,
  paid: CurrencyTotals,
  held: CurrencyTotals,
  referrals: Schema.Int.annotations({ description: "Referrals the customer made", examples: [4] })
}) {}

export class CommissionSummary extends Schema.Class<CommissionSummary>("CommissionSummary")({
  object: Schema.Literal("commission_summary"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  data: Schema.Array(ReferrerCommissions).annotations({ description: "One row per referrer, by referrer id" })
}) {}

export class ReferralFunnel extends Schema.Class<ReferralFunnel>("ReferralFunnel")({
  visits: Schema.Int.annotations({ description: "Visits of share links", examples: [120] }),
  referrals: Schema.Int.annotations({ examples: [40] }),
  converted: Schema.Int.annotations({ description: "Referrals whose referee has paid (flagged ones included)", examples: [18] }),
  flagged: Schema.Int.annotations({ examples: [2] }),
  voided: Schema.Int.annotations({ examples: [1] }),
  conversion_rate: Schema.Number.annotations({ description: "converted ÷ referrals (0 with no referral)", examples: [0.45] })
}) {}

export class CommissionTotals extends Schema.Class<CommissionTotals>("CommissionTotals")({
  held: CurrencyTotals,
  accrued: CurrencyTotals,
  paid: CurrencyTotals,
  voided: CurrencyTotals
}) {}

export class ReferralReport extends Schema.Class<ReferralReport>("ReferralReport")({
  object: Schema.Literal("referral_report"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  funnel: ReferralFunnel,
  commissions: CommissionTotals
}) {}

export class ReferralInvite extends Schema.Class<ReferralInvite>("ReferralInvite")({
  object: Schema.Literal("referral_invite"),
  code: Schema.String.annotations({ examples: ["K7QXM2PD"] }),
  store: Schema.Struct({ name: Schema.String.annotations({ examples: ["Riverside Coffee"] }), branding: StoreBranding }),
  referrer: Schema.Struct({
    name: Schema.NullOr(Schema.String).annotations({ description: "Masked", examples: ["S**** C***"] })
  }),
  referee_points: Schema.Int.annotations({ description: "Points the new customer gets on a first payment", examples: [200] }),
  how_to_join: Schema.String.annotations({
    examples: ["Give the code K7QXM2PD at the counter when you sign up, then pay with KHQR."]
  })
}) {}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

const wholeNumber = (field: string, min: number, max: number) =>
  Schema.Number.pipe(
    Schema.int({ message: () => `${field} must be a whole number` }),
    Schema.between(min, max, { message: () => `${field} must be between ${min} and ${max}` })
  )

export const CommissionPercent = Schema.String.pipe(
  Schema.pattern(/^\d{1,3}(\.\d{1,2})?$/, {
    message: () => "commission_percent must be a decimal string between \"0\" and \"100\" with at most 2 decimals"
  }),
  Schema.filter((text) => Number(text) <= 100 || "commission_percent must be between 0 and 100", { jsonSchema: {} })
).annotations({ description: "Between \"0\" and \"100\", at most 2 decimals", examples: ["5"] })

export const UpdateReferralProgram = closed(Schema.Struct({
  active: Schema.optional(Schema.Boolean),
  referrer_points: Schema.optional(wholeNumber("referrer_points", 0, MAX_REFERRAL_POINTS).annotations({ examples: [500] })),
  referee_points: Schema.optional(wholeNumber("referee_points", 0, MAX_REFERRAL_POINTS).annotations({ examples: [200] })),
  commission_percent: Schema.optional(CommissionPercent),
  commission_window_days: Schema.optional(wholeNumber("commission_window_days", 0, MAX_WINDOW_DAYS).annotations({ examples: [30] })),
  max_referrals_per_day: Schema.optional(wholeNumber("max_referrals_per_day", 0, MAX_REFERRALS_PER_DAY).annotations({ examples: [20] }))
}), "UpdateReferralProgramDto")
export type UpdateReferralProgram = typeof UpdateReferralProgram.Type

export const PayoutCommissions = closed(Schema.Struct({
  referrer_id: Schema.optional(CustomerId.annotations({ description: "Pay only this referrer; omitted: every referrer" })),
  livemode: Schema.optional(Schema.Boolean.annotations({ description: "`true` pays live commissions; default: test ones" }))
}), "PayoutCommissionsDto")
export type PayoutCommissions = typeof PayoutCommissions.Type

export const ReviewReferral = closed(Schema.Struct({
  decision: oneOf("clear", "void").annotations({
    description: "`clear` releases the held points and commissions; `void` cancels them"
  }),
  note: Schema.optional(boundedText(MAX_REVIEW_NOTE_LENGTH).annotations({ examples: ["Same household, confirmed by phone"] }))
}), "ReviewReferralDto")
export type ReviewReferral = typeof ReviewReferral.Type

const Livemode = Schema.optional(Schema.BooleanFromString.annotations({
  message: () => ({ message: "must be \"true\" or \"false\"", override: true }),
  description: "`true`: live objects; default: test objects"
}))

export const ModeParams = Schema.Struct({ livemode: Livemode })
export type ModeParams = typeof ModeParams.Type

export const ReferralListParams = Schema.Struct({ ...ListParams.fields, livemode: Livemode })
export type ReferralListParams = typeof ReferralListParams.Type

export const CommissionListParams = Schema.Struct({
  ...ListParams.fields,
  livemode: Livemode,
  status: Schema.optional(CommissionStatus)
})
export type CommissionListParams = typeof CommissionListParams.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const StorePath = Schema.Struct({ storeId: StoreId })
const READ = "Needs a user session with customer.read (Owner, Admin, Developer, Analyst)."
const CONFIGURE = "Needs marketing.manage (Owner, Admin)."
const WRITE = "Needs customer.write (Owner, Admin)."
const MODE = "Test objects unless `livemode=true`."
const QR = "The QR encodes `share_url` (error correction M); `png_data_url` is a PNG, `svg` the same QR as SVG. " +
  "Makes the customer's code if it has none yet."

export class ReferralsGroup extends HttpApiGroup.make("referrals")
  .add(
    HttpApiEndpoint.post("code", "/v1/customers/:id/referral-code")
      .setPath(Schema.Struct({ id: CustomerId }))
      .addSuccess(ReferralCode, { status: 201 })
      .annotate(OpenApi.Summary, "Get or create referral code and share URL")
      .annotate(
        OpenApi.Description,
        `The customer's own code (${REFERRAL_CODE_LENGTH} characters without look-alikes, unique across the ` +
          "service), the same every time, and its share URL (`PUBLIC_BASE_URL/r/{code}`). New customers created " +
          "with it as `referral_code` become this customer's referees. A customer of another store or mode is 404."
      )
  )
  .add(
    HttpApiEndpoint.get("qr", "/v1/customers/:id/referral-qr")
      .setPath(Schema.Struct({ id: CustomerId }))
      .addSuccess(ReferralQr)
      .annotate(OpenApi.Summary, "Scannable QR for the referral link: PNG data URL and SVG")
      .annotate(OpenApi.Description, QR)
  )
  .pipe(authenticated("apiKey"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Referrals")
  .annotate(OpenApi.Description, "Referral codes and QR codes of customers, through the merchant API.")
{}

export class ReferralsConsoleGroup extends HttpApiGroup.make("referralsConsole")
  .add(
    HttpApiEndpoint.get("qr", "/dashboard/customers/:customerId/referral-qr")
      .setPath(Schema.Struct({ customerId: CustomerId }))
      .addSuccess(ReferralQr)
      .annotate(OpenApi.Summary, "Same QR for a customer, from the console")
      .annotate(OpenApi.Description, `${QR} ${READ}`)
  )
  .add(
    HttpApiEndpoint.get("program", "/dashboard/stores/:storeId/referral-program")
      .setPath(StorePath)
      .addSuccess(ReferralProgram)
      .annotate(OpenApi.Summary, "Referral program config")
      .annotate(
        OpenApi.Description,
        "A store that never configured its program has an inactive one: 0 points each, commission \"0\" percent, " +
          `a 30-day window and 20 referrals per referrer per day. ${READ}`
      )
  )
  .add(
    HttpApiEndpoint.put("configure", "/dashboard/stores/:storeId/referral-program")
      .setPath(StorePath)
      .setPayload(UpdateReferralProgram)
      .addSuccess(ReferralProgram)
      .annotate(OpenApi.Summary, "Configure rewards")
      .annotate(
        OpenApi.Description,
        "Send any subset of the fields; the rest stays. Conversions and commissions use the program as it is " +
          "when the payment's event is processed; while inactive, referrals are still recorded and converted but " +
          `award no points and accrue no commissions. ${CONFIGURE}`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/referrals")
      .setPath(StorePath)
      .setUrlParams(ReferralListParams)
      .addSuccess(ReferralList)
      .annotate(OpenApi.Summary, "List referrals")
      .annotate(OpenApi.Description, `The store's referrals, newest first. ${MODE} ${READ}`)
  )
  .add(
    HttpApiEndpoint.get("commissions", "/dashboard/stores/:storeId/commissions")
      .setPath(StorePath)
      .setUrlParams(CommissionListParams)
      .addSuccess(CommissionList)
      .annotate(OpenApi.Summary, "List affiliate commissions, optionally by status")
      .annotate(OpenApi.Description, `The store's commissions, newest first, only those of \`status\` if sent. ${MODE} ${READ}`)
  )
  .add(
    HttpApiEndpoint.get("summary", "/dashboard/stores/:storeId/commissions/summary")
      .setPath(StorePath)
      .setUrlParams(ModeParams)
      .addSuccess(CommissionSummary)
      .annotate(OpenApi.Summary, "Totals per referrer, accrued versus paid")
      .annotate(
        OpenApi.Description,
        `Per referrer: accrued (owed), paid and held commissions per currency and the referrals made. ${MODE} ${READ}`
      )
  )
  .add(
    HttpApiEndpoint.post("payout", "/dashboard/stores/:storeId/commissions/payout")
      .setPath(StorePath)
      .setPayload(PayoutCommissions)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(CommissionPayout, { status: 201 })
      .addError(IdempotencyConflictResponse)
      .annotate(OpenApi.Summary, "Mark accrued commissions as paid (all, or one referrer)")
      .annotate(
        OpenApi.Description,
        "Marks every `accrued` commission (of `referrer_id` only, if sent) paid now, and answers how many and " +
          "their totals; held commissions are never paid. Nothing accrued answers 201 with count 0. With " +
          "`Idempotency-Key`, a retry answers the first payout and pays nothing again; the same key with another " +
          `body is 409 \`idempotency_conflict\`. A referrer of another store is 404. ${WRITE}`
      )
  )
  .add(
    HttpApiEndpoint.get("report", "/dashboard/stores/:storeId/referrals/report")
      .setPath(StorePath)
      .setUrlParams(ModeParams)
      .addSuccess(ReferralReport)
      .annotate(OpenApi.Summary, "Referral funnel and commission analytics")
      .annotate(
        OpenApi.Description,
        "The funnel (share-link visits, referrals, converted, flagged, voided, conversion rate) and commission " +
          `totals by status and currency. ${MODE} ${READ}`
      )
  )
  .add(
    HttpApiEndpoint.get("flagged", "/dashboard/stores/:storeId/referrals/flagged")
      .setPath(StorePath)
      .setUrlParams(ReferralListParams)
      .addSuccess(ReferralList)
      .annotate(OpenApi.Summary, "Fraud-flagged referrals awaiting review")
      .annotate(OpenApi.Description, `The store's \`flagged\` referrals, newest first. ${MODE} ${READ}`)
  )
  .add(
    HttpApiEndpoint.post("review", "/dashboard/stores/:storeId/referrals/:referralId/review")
      .setPath(Schema.Struct({ storeId: StoreId, referralId: ReferralId }))
      .setPayload(ReviewReferral)
      .addSuccess(Referral, { status: 201 })
      .annotate(OpenApi.Summary, "Clear or void held commissions")
      .annotate(
        OpenApi.Description,
        "`clear` returns the referral to `converted` (or `pending` before a payment), credits the held points " +
          "(once) and makes its held commissions `accrued`; `void` makes it `voided` and its held and accrued " +
          "commissions `voided` (points already credited stay). The reviewer and time are recorded. A referral " +
          `that is not \`flagged\` is 409 \`invalid_state\`. ${WRITE}`
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Referrals (console)")
  .annotate(OpenApi.Description, "The referral program: referrals, commissions and payouts, the funnel report and fraud review.")
{}

const REFERRAL_LIMITS = "Both pages count against limits per client address, known codes or not " +
  "(REFERRAL_VISITS_PER_ADDRESS_PER_MINUTE, against guessing codes), and per code " +
  "(REFERRAL_VISITS_PER_CODE_PER_MINUTE): 429 `rate_limited` with Retry-After beyond."

export class ReferralLinkGroup extends HttpApiGroup.make("referralLink")
  .add(
    HttpApiEndpoint.get("share", "/r/:code")
      .setPath(Schema.Struct({ code: Schema.String.pipe(Schema.maxLength(64)) }))
      .addSuccess(HttpApiSchema.Empty(302))
      .annotate(OpenApi.Summary, "Referral share link")
      .annotate(
        OpenApi.Description,
        "No credential. Redirects (302) to the join page of the code (`/r/{code}/join`); an unknown code is 404. " +
          REFERRAL_LIMITS
      )
  )
  .add(
    HttpApiEndpoint.get("join", "/r/:code/join")
      .setPath(Schema.Struct({ code: Schema.String.pipe(Schema.maxLength(64)) }))
      .addSuccess(ReferralInvite)
      .annotate(OpenApi.Summary, "Referral join page")
      .annotate(
        OpenApi.Description,
        "No credential. Records a visit of the share link (the report's `visits`) and tells the visitor how to " +
          "join: the store, the referrer's masked name, the points a first payment earns. JSON by default; a " +
          "request that prefers `text/html` (a browser) gets the page. " + REFERRAL_LIMITS
      )
  )
  .addError(NotFoundResponse)
  .addError(RateLimitedResponse)
  .annotate(OpenApi.Title, "Referral links")
  .annotate(OpenApi.Description, "The public referral link a customer shares, and its join page.")
{}
