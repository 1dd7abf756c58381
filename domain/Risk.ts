/**
 * Risk cases (API.md "Analytics, ledger, revenue shares, risk"): opened by rules on payments, refunds and
 * referrals, and their review. Console routes, with a user session: analytics.read to read, risk.manage to
 * update a case.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Livemode, ModeParams } from "./Analytics.ts"
import { authenticated } from "./Auth.ts"
import { InvalidRequestResponse, InvalidStateResponse, NotFoundResponse } from "./Errors.ts"
import { RiskCaseId, StoreId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { closed } from "./Text.ts"

export const MAX_RESOLUTION_LENGTH = 1000

export const RiskKinds = ["velocity", "large_amount", "refund_ratio", "referral_fraud"] as const
export const RiskKind = Schema.Literal(...RiskKinds)
export type RiskKind = typeof RiskKind.Type
export const RiskStatuses = ["open", "investigating", "resolved", "dismissed"] as const
export const RiskStatus = Schema.Literal(...RiskStatuses).annotations({
  description: "`open` → `investigating` → `resolved` or `dismissed`; a closed case stays closed"
})
export type RiskStatus = typeof RiskStatus.Type

export const RiskCase = Schema.Struct({
  id: RiskCaseId,
  object: Schema.Literal("risk_case"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  kind: RiskKind,
  subject: Schema.Struct({ type: Schema.String, id: Schema.String }),
  status: RiskStatus,
  resolution: Schema.NullOr(Schema.String),
  details: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "RiskCase" })
export type RiskCase = typeof RiskCase.Type

export const RiskCaseListParams = Schema.Struct({
  ...ListParams.fields,
  status: Schema.optional(RiskStatus),
  livemode: Livemode
})
export type RiskCaseListParams = typeof RiskCaseListParams.Type

export const RiskSummary = Schema.Struct({
  object: Schema.Literal("risk_summary"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  open: Schema.Number,
  investigating: Schema.Number,
  resolved: Schema.Number,
  dismissed: Schema.Number,
  total: Schema.Number
}).annotations({ identifier: "RiskSummary" })
export type RiskSummary = typeof RiskSummary.Type

export const UpdateRiskCase = closed(Schema.Struct({
  status: RiskStatus,
  resolution: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1, { message: () => "resolution must not be empty" }),
      Schema.maxLength(MAX_RESOLUTION_LENGTH, { message: () => `resolution must be at most ${MAX_RESOLUTION_LENGTH} characters` })
    )
  )
}), "UpdateCaseDto")
export type UpdateRiskCase = typeof UpdateRiskCase.Type

const StorePath = Schema.Struct({ storeId: StoreId })
const READ = "Needs analytics.read (Owner, Admin, Developer, Analyst)."

export class RiskGroup extends HttpApiGroup.make("risk")
  .add(
    HttpApiEndpoint.get("cases", "/dashboard/stores/:storeId/risk/cases")
      .setPath(StorePath)
      .setUrlParams(RiskCaseListParams)
      .addSuccess(ListOf(RiskCase))
      .annotate(OpenApi.Summary, "List risk cases")
      .annotate(
        OpenApi.Description,
        "Newest first, optionally of one `status`. Cases are opened by the risk rules as payments, refunds and " +
          "referrals happen: `velocity` (a customer with more than `risk_velocity_max` (5) paid payments in 10 " +
          "minutes), `large_amount` (a payment above `risk_large_amount_usd` (1000.00) / `risk_large_amount_khr` " +
          "(4000000)), `refund_ratio` (the store's refunds over its paid amount in 24 h above `risk_refund_ratio` " +
          "(0.5)), `referral_fraud` (a flagged referral) — thresholds are platform settings; never " +
          "a second open case for the same subject and kind. " + READ
      )
  )
  .add(
    HttpApiEndpoint.get("summary", "/dashboard/stores/:storeId/risk/summary")
      .setPath(StorePath)
      .setUrlParams(ModeParams)
      .addSuccess(RiskSummary)
      .annotate(OpenApi.Summary, "Case counts by status")
      .annotate(OpenApi.Description, READ)
  )
  .add(
    HttpApiEndpoint.put("update", "/dashboard/risk/cases/:caseId")
      .setPath(Schema.Struct({ caseId: RiskCaseId }))
      .setPayload(UpdateRiskCase)
      .addSuccess(RiskCase)
      .annotate(OpenApi.Summary, "Update a risk case")
      .annotate(
        OpenApi.Description,
        "Moves: open → investigating, resolved, dismissed; investigating → resolved, dismissed. `resolved` and " +
          "`dismissed` need a `resolution`. Any other move (a closed case reopened) is 409 `invalid_state`. " +
          "Needs risk.manage (Owner, Admin)."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Risk")
  .annotate(OpenApi.Description, "Risk cases opened by rules on payments, and their review.")
{}
