/**
 * Segments and promotions (API.md "Segments and promotions").
 *
 * A segment is a store's saved rule set over per-customer metrics (lifetime value, payment counts,
 * recency, points, tier, marketing consent); previewing one counts the store's customers it matches now.
 * A promotion awards bonus points on each qualifying paid payment of a customer in its segment, between
 * `starts_at` and `ends_at`, once it went through the four-eyes approval workflow.
 *
 * Console routes: customer.read to read and preview, marketing.manage to write, submit, activate, pause
 * and end; promotion.approve (Owner only) to approve or reject, never by the user who submitted it.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import { Customer } from "./Customers.ts"
import { InvalidRequestResponse, InvalidStateResponse, NotFoundResponse } from "./Errors.ts"
import { PromotionId, SegmentId, StoreId, TierId, UserId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { MAX_POINTS } from "./Loyalty.ts"
import { AmountString, Currency } from "./Money.ts"
import { boundedText } from "./Stores.ts"
import { closed, MAX_NAME_LENGTH } from "./Text.ts"

export const MAX_RULES = 50
export const MAX_IN_VALUES = 100
export const SAMPLE_SIZE = 10
export const SIMULATION_WINDOW_DAYS = 30
export const MAX_REJECTION_REASON_LENGTH = 500

// -------------------------------------------------------------------------------------------------
// Rules
// -------------------------------------------------------------------------------------------------

/** The numeric metrics a rule may compare. Lifetime values are in minor units (cents; riel). */
export const NumericFields = [
  "lifetime_value_usd",
  "lifetime_value_khr",
  "payments_count",
  "payments_last_30d",
  "days_since_last_payment",
  "days_since_created",
  "points_balance",
  "lifetime_points"
] as const
export type NumericField = (typeof NumericFields)[number]
export const RuleFields = [...NumericFields, "tier_id", "marketing_opt_in"] as const
export type RuleField = (typeof RuleFields)[number]
export const ComparisonOps = ["eq", "neq", "gt", "gte", "lt", "lte"] as const
export type ComparisonOp = (typeof ComparisonOps)[number]
export const RuleOps = [...ComparisonOps, "in"] as const

const fieldOf = <F extends ReadonlyArray<string>>(fields: F) =>
  Schema.Literal(...(fields as unknown as [F[number]])).annotations({
    message: () => ({ message: `field must be one of: ${RuleFields.join(", ")}`, override: true })
  })

const opOf = <O extends ReadonlyArray<string>>(ops: O, field: string) =>
  Schema.Literal(...(ops as unknown as [O[number]])).annotations({
    message: () => ({ message: `op for ${field} must be one of: ${ops.join(", ")}`, override: true })
  })

const Metric = Schema.Number.pipe(
  Schema.int({ message: () => "value must be a whole number" }),
  Schema.between(-1e15, 1e15, { message: () => "value is out of range" })
)
const InValues = <A, I>(item: Schema.Schema<A, I>) =>
  Schema.Array(item).pipe(
    Schema.minItems(1, { message: () => "value of `in` must be a non-empty array" }),
    Schema.maxItems(MAX_IN_VALUES, { message: () => `value of \`in\` takes at most ${MAX_IN_VALUES} values` })
  ).annotations({ message: () => ({ message: "value of `in` must be an array", override: false }) })

const numericField = fieldOf(NumericFields)
const NumericCompare = closed(Schema.Struct({ field: numericField, op: opOf(ComparisonOps, "a numeric field"), value: Metric }), "NumericRule")
const NumericIn = closed(Schema.Struct({ field: numericField, op: Schema.Literal("in"), value: InValues(Metric) }), "NumericInRule")
const TierCompare = closed(Schema.Struct({ field: Schema.Literal("tier_id"), op: opOf(["eq", "neq"] as const, "tier_id"), value: Schema.NullOr(TierId) }), "TierRule")
const TierIn = closed(Schema.Struct({ field: Schema.Literal("tier_id"), op: Schema.Literal("in"), value: InValues(TierId) }), "TierInRule")
const OptInCompare = closed(Schema.Struct({ field: Schema.Literal("marketing_opt_in"), op: opOf(["eq", "neq"] as const, "marketing_opt_in"), value: Schema.Boolean }), "OptInRule")

/**
 * One condition. Numeric fields take eq/neq/gt/gte/lt/lte with a whole number, or `in` with an array of
 * them; `tier_id` takes eq/neq with a tier id (or null: no tier) or `in` with tier ids; `marketing_opt_in`
 * takes eq/neq with a boolean.
 */
export const Rule = Schema.Union(NumericCompare, NumericIn, TierCompare, TierIn, OptInCompare).annotations({
  identifier: "SegmentRule",
  description: "`{field, op, value}`; an unknown field or op, a value of the wrong type, or a `tier_id` that is not " +
    "one of the store's tiers, is 400 naming the rule",
  examples: [{ field: "lifetime_value_usd", op: "gte", value: 10000 }]
})
export type Rule = typeof Rule.Type

export const Match = Schema.Literal("all", "any").annotations({
  description: "`all`: every rule must hold; `any`: at least one"
})

export const Rules = Schema.Array(Rule).pipe(
  Schema.minItems(1, { message: () => "rules must hold at least 1 condition" }),
  Schema.maxItems(MAX_RULES, { message: () => `rules must hold at most ${MAX_RULES} conditions` })
).annotations({ description: `1 to ${MAX_RULES} conditions` })

export interface RuleSet {
  readonly match: "all" | "any"
  readonly rules: ReadonlyArray<Rule>
}

// -------------------------------------------------------------------------------------------------
// Wire objects
// -------------------------------------------------------------------------------------------------

export class Segment extends Schema.Class<Segment>("Segment")({
  id: SegmentId,
  object: Schema.Literal("segment"),
  store_id: StoreId,
  name: Schema.String.annotations({ examples: ["Big spenders"] }),
  match: Match,
  rules: Schema.Array(Rule),
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class SegmentList extends Schema.Class<SegmentList>("SegmentList")(ListOf(Segment).fields) {}

export class SegmentPreview extends Schema.Class<SegmentPreview>("SegmentPreview")({
  object: Schema.Literal("segment_preview"),
  count: Schema.Int.annotations({ description: "Customers matching now (erased customers never count)", examples: [412] }),
  sample: Schema.Array(Customer).annotations({ description: `Up to ${SAMPLE_SIZE} of them, newest first` })
}) {}

export const PromotionStatuses = ["draft", "pending_approval", "approved", "rejected", "active", "paused", "ended"] as const
export const PromotionStatus = Schema.Literal(...PromotionStatuses)
export type PromotionStatus = typeof PromotionStatus.Type

export const PromotionActions = ["create", "update", "submit", "approve", "reject", "activate", "pause", "end"] as const
export type PromotionAction = (typeof PromotionActions)[number]

export const MinAmount = Schema.Struct({
  amount: AmountString.annotations({
    description: "A decimal string in the major unit of `currency`, like every amount of this API: " +
      "at most 2 decimal places in USD (\"5.00\"), none in KHR (\"20000\"); greater than zero",
    examples: ["5.00"]
  }),
  currency: Currency
}).annotations({ description: "A payment qualifies only in this currency and from this amount" })
export type MinAmount = typeof MinAmount.Type

export class PromotionAuditEntry extends Schema.Class<PromotionAuditEntry>("PromotionAuditEntry")({
  action: Schema.Literal(...PromotionActions),
  from: Schema.NullOr(PromotionStatus),
  to: PromotionStatus,
  user_id: Schema.NullOr(UserId).annotations({ description: "Who moved it; null when the end date passed" }),
  reason: Schema.NullOr(Schema.String),
  at: Schema.String
}) {}

export class Promotion extends Schema.Class<Promotion>("Promotion")({
  id: PromotionId,
  object: Schema.Literal("promotion"),
  store_id: StoreId,
  name: Schema.String.annotations({ examples: ["Double-up weekend"] }),
  segment_id: Schema.NullOr(SegmentId).annotations({ description: "null: every customer" }),
  bonus_points: Schema.Int.annotations({ description: "Points per qualifying payment", examples: [50] }),
  min_amount: Schema.optional(MinAmount),
  starts_at: Schema.String,
  ends_at: Schema.String,
  status: PromotionStatus,
  rejection_reason: Schema.NullOr(Schema.String),
  submitted_by: Schema.NullOr(UserId),
  approved_by: Schema.NullOr(UserId),
  audit: Schema.Array(PromotionAuditEntry).annotations({ description: "Every move, oldest first" }),
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class PromotionList extends Schema.Class<PromotionList>("PromotionList")(ListOf(Promotion).fields) {}

export class PromotionSimulation extends Schema.Class<PromotionSimulation>("PromotionSimulation")({
  object: Schema.Literal("promotion_simulation"),
  window_days: Schema.Literal(SIMULATION_WINDOW_DAYS),
  eligible_customers: Schema.Int.annotations({ description: "Customers of the segment (now) with ≥ 1 qualifying payment", examples: [120] }),
  qualifying_payments: Schema.Int.annotations({ examples: [340] }),
  estimated_bonus_points: Schema.Int.annotations({ description: "qualifying_payments × bonus_points", examples: [17000] })
}) {}

// -------------------------------------------------------------------------------------------------
// Inputs
// -------------------------------------------------------------------------------------------------

const Name = boundedText(MAX_NAME_LENGTH).annotations({ examples: ["Big spenders"] })

export const CreateSegment = closed(Schema.Struct({ name: Name, match: Match, rules: Rules }), "CreateSegmentDto")
export type CreateSegment = typeof CreateSegment.Type
export const UpdateSegment = closed(Schema.Struct({
  name: Schema.optional(Name),
  match: Schema.optional(Match),
  rules: Schema.optional(Rules)
}), "UpdateSegmentDto")
export type UpdateSegment = typeof UpdateSegment.Type
export const PreviewRules = closed(Schema.Struct({ match: Match, rules: Rules }), "PreviewRulesDto")
export type PreviewRules = typeof PreviewRules.Type

const Timestamp = Schema.DateFromString.pipe(Schema.filter((date) => !Number.isNaN(date.getTime()) || "must be an ISO 8601 date-time"))
  .annotations({ examples: [new Date("2026-12-01T00:00:00Z")] })
const BonusPoints = Schema.Number.pipe(
  Schema.int({ message: () => "bonus_points must be a whole number" }),
  Schema.between(1, MAX_POINTS, { message: () => `bonus_points must be between 1 and ${MAX_POINTS}` })
).annotations({ description: "Points awarded per qualifying payment", examples: [50] })

export const CreatePromotion = closed(Schema.Struct({
  name: Name,
  segment_id: Schema.optional(Schema.NullOr(SegmentId)),
  bonus_points: BonusPoints,
  min_amount: Schema.optional(Schema.NullOr(closed(MinAmount, "MinAmountDto"))),
  starts_at: Timestamp,
  ends_at: Timestamp
}), "CreatePromotionDto")
export type CreatePromotion = typeof CreatePromotion.Type

export const UpdatePromotion = closed(Schema.Struct({
  name: Schema.optional(Name),
  segment_id: Schema.optional(Schema.NullOr(SegmentId)),
  bonus_points: Schema.optional(BonusPoints),
  min_amount: Schema.optional(Schema.NullOr(closed(MinAmount, "MinAmountDto"))),
  starts_at: Schema.optional(Timestamp),
  ends_at: Schema.optional(Timestamp)
}), "UpdatePromotionDto")
export type UpdatePromotion = typeof UpdatePromotion.Type

export const RejectPromotion = closed(Schema.Struct({
  reason: boundedText(MAX_REJECTION_REASON_LENGTH).annotations({ examples: ["Budget not approved"] })
}), "RejectDto")

export const ModeParams = Schema.Struct({
  livemode: Schema.optional(Schema.BooleanFromString.annotations({
    message: () => ({ message: "must be \"true\" or \"false\"", override: true }),
    description: "`true`: live customers and payments; default: test ones"
  }))
})
export type ModeParams = typeof ModeParams.Type

// -------------------------------------------------------------------------------------------------
// Groups
// -------------------------------------------------------------------------------------------------

const StorePath = Schema.Struct({ storeId: StoreId })
const SegmentPath = Schema.Struct({ id: SegmentId })
const PromotionPath = Schema.Struct({ id: PromotionId })
const READ = "Needs customer.read on the store; another store's object is 404."
const WRITE = "Needs marketing.manage on the store; another store's object is 404."
const RULES = `Rules: \`{match, rules: [{field, op, value}]}\` with 1 to ${MAX_RULES} conditions; fields ` +
  `${RuleFields.join(", ")} (lifetime values in minor units, day counts in whole days, UTC); ops ` +
  `${RuleOps.join(", ")}. An unknown field or op, a value of the wrong type, or a \`tier_id\` that is not one of ` +
  `the store's loyalty tiers (another store's or none), is 400 with \`param\` naming the rule (\`rules.2\`).`
const MOVE = "Status machine: draft →submit→ pending_approval →approve→ approved →activate→ active ⇄ pause/activate ⇄ " +
  "paused; pending_approval →reject→ rejected; active or paused →end→ ended. Any other move is 409 naming the current status."

export class SegmentsGroup extends HttpApiGroup.make("segments")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/segments")
      .setPath(StorePath)
      .setUrlParams(ListParams)
      .addSuccess(SegmentList)
      .annotate(OpenApi.Summary, "List segments")
      .annotate(OpenApi.Description, `The store's segments, newest first. ${READ}`)
  )
  .add(
    HttpApiEndpoint.post("create", "/dashboard/stores/:storeId/segments")
      .setPath(StorePath)
      .setPayload(CreateSegment)
      .addSuccess(Segment, { status: 201 })
      .annotate(OpenApi.Summary, "Create a segment")
      .annotate(OpenApi.Description, `Saves a named rule set. ${RULES} ${WRITE}`)
  )
  .add(
    HttpApiEndpoint.post("previewRules", "/dashboard/stores/:storeId/segments/preview")
      .setPath(StorePath)
      .setUrlParams(ModeParams)
      .setPayload(PreviewRules)
      .addSuccess(SegmentPreview, { status: 201 })
      .annotate(OpenApi.Summary, "Preview size for arbitrary rules")
      .annotate(
        OpenApi.Description,
        `Counts the store's customers (test ones unless \`livemode=true\`) matching the rules now, with a sample of ` +
          `up to ${SAMPLE_SIZE}; erased customers never count. Saves nothing. ${RULES} ${READ}`
      )
  )
  .add(
    HttpApiEndpoint.get("preview", "/dashboard/segments/:id/preview")
      .setPath(SegmentPath)
      .setUrlParams(ModeParams)
      .addSuccess(SegmentPreview)
      .annotate(OpenApi.Summary, "Preview a saved segment: count and sample")
      .annotate(OpenApi.Description, `The saved segment's count and sample, as the preview of its rules. ${READ}`)
  )
  .add(
    HttpApiEndpoint.patch("update", "/dashboard/segments/:id")
      .setPath(SegmentPath)
      .setPayload(UpdateSegment)
      .addSuccess(Segment)
      .annotate(OpenApi.Summary, "Update a segment")
      .annotate(OpenApi.Description, `Send any of name, match, rules; the rest stays. ${RULES} ${WRITE}`)
  )
  .add(
    HttpApiEndpoint.del("delete", "/dashboard/segments/:id")
      .setPath(SegmentPath)
      .addSuccess(Segment)
      .annotate(OpenApi.Summary, "Delete a segment")
      .annotate(
        OpenApi.Description,
        `Answers the deleted segment. A segment a promotion uses (in any status but ended) is 409. ${WRITE}`
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Segments")
  .annotate(OpenApi.Description, "Saved customer segments over per-customer metrics, and their previews.") {}

const move = <const Name extends string>(name: Name, path: `/${string}`, summary: string, description: string) =>
  HttpApiEndpoint.post(name, path)
    .setPath(PromotionPath)
    .addSuccess(Promotion, { status: 201 })
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Description, `${description} ${MOVE}`)

export class PromotionsGroup extends HttpApiGroup.make("promotions")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/promotions")
      .setPath(StorePath)
      .setUrlParams(ListParams)
      .addSuccess(PromotionList)
      .annotate(OpenApi.Summary, "List promotions")
      .annotate(OpenApi.Description, `The store's promotions, newest first, each with its audit trail. ${READ}`)
  )
  .add(
    HttpApiEndpoint.post("create", "/dashboard/stores/:storeId/promotions")
      .setPath(StorePath)
      .setPayload(CreatePromotion)
      .addSuccess(Promotion, { status: 201 })
      .annotate(OpenApi.Summary, "Create a promotion")
      .annotate(
        OpenApi.Description,
        "Creates a `draft`. `segment_id` null or omitted: every customer; a segment of another store is 404 " +
          "naming segment_id. `ends_at` must be after `starts_at` (400). Awards `bonus_points` (points entry " +
          `\`promotion\`) once per qualifying paid payment while active and within its dates. ${WRITE}`
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/dashboard/promotions/:id")
      .setPath(PromotionPath)
      .setPayload(UpdatePromotion)
      .addSuccess(Promotion)
      .annotate(OpenApi.Summary, "Update a promotion")
      .annotate(
        OpenApi.Description,
        "Only in `draft` or `rejected` (else 409); an update of a rejected promotion returns it to `draft` and " +
          `clears its rejection reason. ${WRITE}`
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/dashboard/promotions/:id")
      .setPath(PromotionPath)
      .addSuccess(Promotion)
      .annotate(OpenApi.Summary, "Delete a promotion")
      .annotate(
        OpenApi.Description,
        `Answers the deleted promotion. An \`active\` or \`paused\` promotion is 409: end it first. ${WRITE}`
      )
  )
  .add(
    HttpApiEndpoint.get("simulate", "/dashboard/promotions/:id/simulate")
      .setPath(PromotionPath)
      .setUrlParams(ModeParams)
      .addSuccess(PromotionSimulation)
      .annotate(OpenApi.Summary, "Dry run: estimated reach and bonus-point cost over the last 30 days")
      .annotate(
        OpenApi.Description,
        `Over the paid payments of the last ${SIMULATION_WINDOW_DAYS} days (test ones unless \`livemode=true\`): ` +
          "the customers now in the segment who made at least one qualifying payment, how many such payments, " +
          `and the bonus points they would have earned. Writes nothing. ${READ}`
      )
  )
  .add(move("submit", "/dashboard/promotions/:id/submit", "Submit for approval", `draft → pending_approval; records the submitter. ${WRITE}`))
  .add(move(
    "approve",
    "/dashboard/promotions/:id/approve",
    "Approve (owner)",
    "pending_approval → approved. Owner only (promotion.approve), and never the user who submitted it (403)."
  ))
  .add(
    move(
      "reject",
      "/dashboard/promotions/:id/reject",
      "Reject (owner)",
      "pending_approval → rejected with the reason. Owner only, never the submitter (403)."
    ).setPayload(RejectPromotion)
  )
  .add(move(
    "activate",
    "/dashboard/promotions/:id/activate",
    "Activate; requires approval",
    `approved or paused → active; sends \`promotion.activated\`. ${WRITE}`
  ))
  .add(move("pause", "/dashboard/promotions/:id/pause", "Pause", `active → paused; a paused promotion awards nothing. ${WRITE}`))
  .add(move(
    "end",
    "/dashboard/promotions/:id/end",
    "End",
    "active or paused → ended; sends `promotion.ended`. A promotion whose `ends_at` passed awards nothing " +
      `more and is ended (with the event) the next time the store's promotions are read or a payment is awarded. ${WRITE}`
  ))
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Promotions")
  .annotate(OpenApi.Description, "Bonus-point promotions with a four-eyes approval workflow and a 30-day dry run.") {}
