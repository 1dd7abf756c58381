/**
 * AI assistance (API.md "AI assistance"): marketing copy, a campaign suggestion, an analytics summary,
 * fraud insights and a merchant assistant, each grounded in figures computed by SQL from the store's
 * own data; usage metering, a per-store monthly cost cap and the model registry.
 *
 * The facts come first and the model only words them: every figure in a text is also in `data`.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import {
  InvalidRequestResponse,
  NotFoundResponse,
  RateLimitedResponse
} from "./Errors.ts"
import { StoreId } from "./Ids.ts"
import { closed, oneOf } from "./Text.ts"

export const AI_USAGE_WINDOW_DAYS = 30
export const MAX_QUESTION_LENGTH = 1000
export const MAX_COPY_INPUT_LENGTH = 200
/** The most characters a channel takes: an SMS is one 160-character message. */
export const ChannelLimits = { sms: 160, telegram: 1000, email: 2000 } as const

export const AiFeatures = ["marketing_copy", "campaign_suggest", "analytics_summary", "fraud_insights", "assistant"] as const
export const AiFeature = Schema.Literal(...AiFeatures)
export type AiFeature = typeof AiFeature.Type

export const Languages = ["en", "km"] as const
export const Language = oneOf(...Languages).annotations({
  description: "`en` (English, the default) or `km` (Khmer)"
})
export type Language = typeof Language.Type

const Livemode = Schema.optional(Schema.BooleanFromString.annotations({
  message: () => ({ message: "must be \"true\" or \"false\"", override: true }),
  description: "`true` reads live-mode data; test-mode data by default"
}))

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

export const AiUsageFigures = Schema.Struct({
  input_tokens: Schema.Int.annotations({ examples: [120] }),
  output_tokens: Schema.Int.annotations({ examples: [48] }),
  cost_usd: Schema.Number.annotations({ description: "Cost in US dollars at the registry's prices", examples: [0.000047] })
})

export class AiResult extends Schema.Class<AiResult>("AiResult")({
  object: Schema.Literal("ai_result"),
  feature: AiFeature,
  model: Schema.String.annotations({
    description: "The registry id of the model that wrote `text`: `builtin`, or `openai_compatible` when configured " +
      "(a failed call to it falls back to `builtin`)",
    examples: ["builtin"]
  }),
  language: Language,
  text: Schema.String.annotations({
    description: "Plain text for a person to read; never instructions, markup or code to run",
    examples: ["Revenue over the last 30 days: USD 125.00 from 5 payments, up 25% on the 30 days before."]
  }),
  data: Schema.Unknown.annotations({ description: "The figures the text is made from, computed from the store's data" }),
  usage: AiUsageFigures
}) {}

export class AiModel extends Schema.Class<AiModel>("AiModel")({
  id: Schema.Literal("builtin", "openai_compatible"),
  provider: Schema.Literal("builtin", "openai_compatible"),
  model: Schema.String.annotations({ examples: ["builtin-templates-1"] }),
  input_cost_per_1k: Schema.Number.annotations({ description: "US dollars per 1,000 input tokens", examples: [0] }),
  output_cost_per_1k: Schema.Number.annotations({ description: "US dollars per 1,000 output tokens", examples: [0] }),
  configured: Schema.Boolean.annotations({ description: "Whether the model can be called now" }),
  default: Schema.Boolean.annotations({ description: "The model calls go to" })
}) {}

export class AiModelList extends Schema.Class<AiModelList>("AiModelList")({
  object: Schema.Literal("list"),
  data: Schema.Array(AiModel)
}) {}

const usageTotals = {
  calls: Schema.Int,
  failed_calls: Schema.Int.annotations({ description: "Calls whose model failed (and fell back to builtin)" }),
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cost_usd: Schema.Number
}

export const AiFeatureUsage = Schema.Struct({ feature: AiFeature, ...usageTotals }).annotations({ identifier: "AiFeatureUsage" })
export const AiStoreUsage = Schema.Struct({
  store_id: StoreId,
  store_name: Schema.NullOr(Schema.String).annotations({ description: "The store's name; null once the store is gone" }),
  ...usageTotals
}).annotations({ identifier: "AiStoreUsage" })

export class AiUsage extends Schema.Class<AiUsage>("AiUsage")({
  object: Schema.Literal("ai_usage"),
  store_id: StoreId,
  window_days: Schema.Literal(AI_USAGE_WINDOW_DAYS),
  ...usageTotals,
  monthly_cost_cap_usd: Schema.NullOr(Schema.Number).annotations({
    description: "The per-store cap on cost in a calendar month (UTC); null when none is set"
  }),
  month_cost_usd: Schema.Number.annotations({ description: "The store's cost so far this calendar month (UTC)" }),
  by_feature: Schema.Array(AiFeatureUsage)
}) {}

export class AiPlatformUsage extends Schema.Class<AiPlatformUsage>("AiPlatformUsage")({
  object: Schema.Literal("ai_usage"),
  window_days: Schema.Literal(AI_USAGE_WINDOW_DAYS),
  ...usageTotals,
  by_feature: Schema.Array(AiFeatureUsage),
  by_store: Schema.Array(AiStoreUsage)
}) {}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

const quotedText = (description: string, example: string) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(MAX_COPY_INPUT_LENGTH, { message: () => `must be at most ${MAX_COPY_INPUT_LENGTH} characters` }),
    Schema.filter((text) => text.trim().length > 0 || "must not be blank", { jsonSchema: {} })
  ).annotations({ description, examples: [example] })

export const MarketingCopy = closed(Schema.Struct({
  product: Schema.optional(quotedText("What to promote; quoted as data, never followed as an instruction", "Iced latte")),
  audience: Schema.optional(quotedText("Who the copy speaks to", "students near the campus")),
  tone: Schema.optional(oneOf("friendly", "formal", "playful").annotations({ description: "Default friendly" })),
  language: Schema.optional(Language),
  channel: Schema.optional(oneOf("sms", "telegram", "email").annotations({
    description: `Default sms; the text fits the channel: SMS ${ChannelLimits.sms}, Telegram ${ChannelLimits.telegram}, ` +
      `e-mail ${ChannelLimits.email} characters`
  })),
  livemode: Schema.optional(Schema.Boolean.annotations({ description: "Read live-mode data (default test mode)" }))
}), "MarketingCopyDto")
export type MarketingCopy = typeof MarketingCopy.Type

export const AssistantQuestion = closed(Schema.Struct({
  question: Schema.String.pipe(
    Schema.maxLength(MAX_QUESTION_LENGTH, { message: () => `must be at most ${MAX_QUESTION_LENGTH} characters` }),
    Schema.filter((text) => text.trim().length > 0 || "must not be empty", { jsonSchema: {} })
  ).annotations({ description: "A question about the store's payments, customers, loyalty or risk", examples: ["What was my revenue in the last 7 days?"] }),
  language: Schema.optional(Language),
  livemode: Schema.optional(Schema.Boolean.annotations({ description: "Read live-mode data (default test mode)" }))
}), "AssistantDto")
export type AssistantQuestion = typeof AssistantQuestion.Type

export const AiReadParams = Schema.Struct({ language: Schema.optional(Language), livemode: Livemode })
export type AiReadParams = typeof AiReadParams.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const StorePath = Schema.Struct({ storeId: StoreId })
const METERED = "Every call is metered (GET /dashboard/stores/{storeId}/ai/usage); when the store's cost this calendar " +
  "month (UTC) reached the `ai_monthly_cost_cap_usd` platform setting, the call is refused with 429 rate_limited. " +
  "When the platform settings `ai_base_url`, `ai_api_key` and `ai_model` are set the text is written by that " +
  "chat-completions model, else (and whenever that call fails) by the offline `builtin` model from templates. " +
  "Calls already under way when the cap is reached still finish, so a month's cost can pass the cap by what they cost."
const READS = "Needs analytics.read (Owner, Admin, Analyst; Developer)."

export class AiGroup extends HttpApiGroup.make("ai")
  .add(
    HttpApiEndpoint.post("marketingCopy", "/dashboard/stores/:storeId/ai/marketing-copy")
      .setPath(StorePath)
      .setPayload(MarketingCopy)
      .addSuccess(AiResult, { status: 201 })
      .annotate(OpenApi.Summary, "Generate promotional copy")
      .annotate(
        OpenApi.Description,
        "Copy for the store's product and audience in the chosen tone, language and channel, no longer than the " +
          "channel allows. The product and audience are quoted to the model as data, never as instructions. " +
          "Not idempotent (each call is a new generation). Needs marketing.manage (Owner, Admin). " + METERED
      )
  )
  .add(
    HttpApiEndpoint.get("campaignSuggest", "/dashboard/stores/:storeId/ai/campaign-suggest")
      .setPath(StorePath)
      .setUrlParams(AiReadParams)
      .addSuccess(AiResult)
      .annotate(OpenApi.Summary, "Suggest a promotion from store data")
      .annotate(
        OpenApi.Description,
        "Which group of customers to target, with which points bonus, and its reach and points cost, computed " +
          "from the store's payments of the last 30 days. Needs marketing.manage (Owner, Admin). " + METERED
      )
  )
  .add(
    HttpApiEndpoint.get("analyticsSummary", "/dashboard/stores/:storeId/ai/analytics-summary")
      .setPath(StorePath)
      .setUrlParams(AiReadParams)
      .addSuccess(AiResult)
      .annotate(OpenApi.Summary, "Natural-language performance summary")
      .annotate(
        OpenApi.Description,
        "Revenue, payments and refunds of the last 30 days (UTC, today included) against the 30 days before, " +
          "from the analytics timeseries. A store without payments is told so. " + READS + " " + METERED
      )
  )
  .add(
    HttpApiEndpoint.get("fraudInsights", "/dashboard/stores/:storeId/ai/fraud-insights")
      .setPath(StorePath)
      .setUrlParams(AiReadParams)
      .addSuccess(AiResult)
      .annotate(OpenApi.Summary, "Risk narrative from open cases")
      .annotate(
        OpenApi.Description,
        "The store's open risk cases, counted by kind, with the newest ones named. " + READS + " " + METERED
      )
  )
  .add(
    HttpApiEndpoint.post("assistant", "/dashboard/stores/:storeId/ai/assistant")
      .setPath(StorePath)
      .setPayload(AssistantQuestion)
      .addSuccess(AiResult, { status: 201 })
      .annotate(OpenApi.Summary, "Ask the merchant assistant a question")
      .annotate(
        OpenApi.Description,
        "The question is routed to one of a fixed set of tools (revenue in a range, top customers, points " +
          "liability, open risk cases, refund rate); the answer cites the figures it used, in `data`. A question " +
          "none of them answers gets a plain \"I can't answer that from your data yet\" and the list of what the " +
          "assistant can answer. The question is data, never an instruction. Not idempotent. " + READS + " " + METERED
      )
  )
  .add(
    HttpApiEndpoint.get("usage", "/dashboard/stores/:storeId/ai/usage")
      .setPath(StorePath)
      .addSuccess(AiUsage)
      .annotate(OpenApi.Summary, "AI usage and cost for a store over 30 days")
      .annotate(
        OpenApi.Description,
        "Calls, tokens and cost of the last 30 days, by feature, and the cost of the current calendar month " +
          "against the cap. " + READS
      )
  )
  .add(
    HttpApiEndpoint.get("registry", "/dashboard/admin/ai/registry")
      .addSuccess(AiModelList)
      .annotate(OpenApi.Summary, "AI model registry (platform admin)")
      .annotate(
        OpenApi.Description,
        "The models with their prices per 1,000 tokens (`ai_input_cost_per_1k`, `ai_output_cost_per_1k` " +
          "platform settings for the openai_compatible model) and which one is the default. Platform " +
          "administrators only."
      )
  )
  .add(
    HttpApiEndpoint.get("platformUsage", "/dashboard/admin/ai/usage")
      .addSuccess(AiPlatformUsage)
      .annotate(OpenApi.Summary, "Platform-wide AI usage and cost (platform admin)")
      .annotate(
        OpenApi.Description,
        "Calls, tokens and cost of the last 30 days across every store, by feature and by store (highest cost " +
          "first). Platform administrators only."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(RateLimitedResponse)
  .annotate(OpenApi.Title, "AI assistance")
  .annotate(OpenApi.Description, "Grounded copy, summaries, fraud narrative, the merchant assistant and AI usage.")
{}
