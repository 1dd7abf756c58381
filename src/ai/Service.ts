/**
 * The AI features. Each computes its facts first (SQL through the analytics and risk services and this
 * area's repo), composes the builtin text from them, and only then asks the model in use to word them;
 * the answer's `data` carries the facts. Every call is metered, and refused once the store's monthly
 * cost cap is reached.
 */
import { FetchHttpClient, HttpClient } from "@effect/platform"
import { Clock, Duration, Effect, Option, Redacted } from "effect"
import {
  AI_USAGE_WINDOW_DAYS,
  type AiFeature,
  AiModel,
  AiModelList,
  AiPlatformUsage,
  type AiReadParams,
  AiResult,
  AiUsage,
  type AssistantQuestion,
  ChannelLimits,
  type Language,
  type MarketingCopy
} from "../../domain/Ai.ts"
import type { Permission } from "../../domain/Access.ts"
import { RateLimited } from "../../domain/Errors.ts"
import type { StoreId } from "../../domain/Ids.ts"
import { type RuleSet, SIMULATION_WINDOW_DAYS } from "../../domain/Promotions.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { addDays, dayOf } from "../platform/Days.ts"
import { AnalyticsService } from "../analytics/Service.ts"
import { formatAmount } from "../platform/Money.ts"
import { currentDate } from "../platform/Time.ts"
import { PromotionsService } from "../promotions/Service.ts"
import { RiskService } from "../risk/Service.ts"
import { SettingsService } from "../settings/Service.ts"
import { answerQuestion } from "./Assistant.ts"
import {
  builtinModel,
  cleanOutput,
  type Completion,
  costMicroUsd,
  decimalSetting,
  type LanguageModelShape,
  ModelFailed,
  openAiCompatibleModel,
  type Prompt
} from "./Model.ts"
import { AiRepo, type TotalsRow } from "./Repo.ts"
import { changeText, moneyText, percentChange, pick, quoted, toneOpening } from "./Templates.ts"
import { traced, spanWhenExported } from "../platform/Traced.ts"

export const BUILTIN_MODEL_NAME = "builtin-templates-1"
export const DEFAULT_INPUT_COST_PER_1K = 0.00015
export const DEFAULT_OUTPUT_COST_PER_1K = 0.0006
const DEFAULT_TIMEOUT_MS = 15_000
const MODEL_RETRIES = 2
const SUMMARY_DAYS = 30
const MAX_TEXT = 2000

const usd = (micro: bigint): number => Number(micro) / 1_000_000

const totalsOf = (row: TotalsRow) => ({
  calls: row.calls,
  failed_calls: row.failed_calls,
  input_tokens: row.input_tokens,
  output_tokens: row.output_tokens,
  cost_usd: usd(row.cost_micro_usd)
})

const sumTotals = (rows: ReadonlyArray<TotalsRow>) =>
  totalsOf(rows.reduce<TotalsRow>((total, row) => ({
    calls: total.calls + row.calls,
    failed_calls: total.failed_calls + row.failed_calls,
    input_tokens: total.input_tokens + row.input_tokens,
    output_tokens: total.output_tokens + row.output_tokens,
    cost_micro_usd: total.cost_micro_usd + row.cost_micro_usd
  }), { calls: 0, failed_calls: 0, input_tokens: 0, output_tokens: 0, cost_micro_usd: 0n }))

const startOfMonth = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
const startOfNextMonth = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))

interface ModelInUse {
  readonly id: "builtin" | "openai_compatible"
  readonly name: string
  readonly inputPer1k: number
  readonly outputPer1k: number
  readonly model: LanguageModelShape
}

export class AiService extends Effect.Service<AiService>()("ai/AiService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* AiRepo)
    const access = yield* AccessService
    const settings = yield* SettingsService
    const analytics = yield* AnalyticsService
    const risk = yield* RiskService
    const promotions = yield* PromotionsService
    const httpClient = yield* HttpClient.HttpClient

    const setting = (key: string) => settings.get(key).pipe(Effect.orDie)
    const text = (key: string) =>
      Effect.map(setting(key), Option.flatMap((value) => {
        const trimmed = Redacted.value(value).trim()
        return trimmed === "" ? Option.none() : Option.some(trimmed)
      }))

    const prices = Effect.all({
      input: Effect.map(setting("ai_input_cost_per_1k"), (v) => decimalSetting(v, DEFAULT_INPUT_COST_PER_1K) ?? 0),
      output: Effect.map(setting("ai_output_cost_per_1k"), (v) => decimalSetting(v, DEFAULT_OUTPUT_COST_PER_1K) ?? 0)
    })

    /** The configured chat-completions model, when `ai_base_url`, `ai_api_key` and `ai_model` are all set. */
    const configured = Effect.gen(function*() {
      const baseUrl = yield* text("ai_base_url")
      const apiKey = yield* text("ai_api_key")
      const model = yield* text("ai_model")
      if (Option.isNone(baseUrl) || Option.isNone(apiKey) || Option.isNone(model)) return Option.none<ModelInUse>()
      const { input, output } = yield* prices
      if (!/^https?:\/\/[^\s/]+/i.test(baseUrl.value)) {
        // Configured but unusable: each call fails, is recorded as such, and the builtin model answers.
        const misconfigured: LanguageModelShape = {
          complete: () => Effect.fail(new ModelFailed({ message: "ai_base_url must be an http(s) URL", transient: false }))
        }
        return Option.some<ModelInUse>({ id: "openai_compatible", name: model.value, inputPer1k: input, outputPer1k: output, model: misconfigured })
      }
      const timeoutMs = decimalSetting(yield* setting("ai_timeout_ms"), DEFAULT_TIMEOUT_MS) ?? DEFAULT_TIMEOUT_MS
      const client = yield* openAiCompatibleModel({
        baseUrl: baseUrl.value.replace(/\/+$/, ""),
        apiKey: Redacted.make(apiKey.value),
        model: model.value,
        timeout: Duration.millis(Math.max(1, timeoutMs)),
        retries: MODEL_RETRIES
      }).pipe(Effect.provideService(HttpClient.HttpClient, httpClient))
      return Option.some<ModelInUse>({ id: "openai_compatible", name: model.value, inputPer1k: input, outputPer1k: output, model: client })
    })

    const builtin: ModelInUse = { id: "builtin", name: BUILTIN_MODEL_NAME, inputPer1k: 0, outputPer1k: 0, model: builtinModel }

    /** Refuses the call when the store's cost this calendar month reached the cap. */
    const checkCap = traced("Ai.checkCap")(function*(storeId: StoreId) {
      const cap = decimalSetting(yield* setting("ai_monthly_cost_cap_usd"), null)
      if (cap === null) return
      const now = yield* currentDate
      const { cost_micro_usd } = yield* repo.storeCost({ storeId, since: startOfMonth(now) }).pipe(Effect.orDie)
      if (usd(cost_micro_usd) >= cap) {
        return yield* new RateLimited({
          message: `The store reached its AI cost cap of USD ${cap} for this month; AI calls resume on the 1st (UTC)`,
          retryAfterSeconds: Math.max(1, Math.ceil((startOfNextMonth(now).getTime() - now.getTime()) / 1000))
        })
      }
    })

    /** One metered call to `model`. */
    const call = (storeId: StoreId, feature: AiFeature, model: ModelInUse, prompt: Prompt) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const result = yield* Effect.either(model.model.complete(prompt))
        const latencyMs = Math.max(0, Number((yield* Clock.currentTimeMillis) - started))
        const at = yield* currentDate
        const completion: Completion | undefined = result._tag === "Right" ? result.right : undefined
        const cost = completion === undefined ? 0n : costMicroUsd(completion.inputTokens, completion.outputTokens, model.inputPer1k, model.outputPer1k)
        yield* repo.record({
          storeId,
          feature,
          model: model.id,
          modelName: model.name,
          inputTokens: completion?.inputTokens ?? 0,
          outputTokens: completion?.outputTokens ?? 0,
          costMicroUsd: cost,
          latencyMs,
          outcome: completion === undefined ? "failed" : "succeeded",
          error: result._tag === "Left" ? result.left.message : null,
          at
        }).pipe(Effect.orDie)
        return result._tag === "Right" ? Option.some({ completion: result.right, cost }) : Option.none()
      })

    /** Words the facts with the model in use; a failed model call is recorded and the builtin text answers. */
    const generate = (storeId: StoreId, feature: AiFeature, prompt: Prompt, data: unknown) =>
      Effect.gen(function*() {
        yield* checkCap(storeId)
        const chosen = yield* configured
        let answered = Option.isSome(chosen) ? yield* call(storeId, feature, chosen.value, prompt) : Option.none()
        let modelId = Option.isSome(chosen) ? chosen.value.id : builtin.id
        if (Option.isNone(answered)) {
          answered = yield* call(storeId, feature, builtin, prompt)
          modelId = builtin.id
        }
        const { completion, cost } = Option.getOrThrow(answered)
        return new AiResult({
          object: "ai_result",
          feature,
          model: modelId,
          language: prompt.language,
          text: completion.text,
          data,
          usage: { input_tokens: completion.inputTokens, output_tokens: completion.outputTokens, cost_usd: usd(cost) }
        })
      }).pipe(spanWhenExported("Ai.generate", { attributes: { feature } }))

    const storeOf = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))

    const storeName = (storeId: StoreId) =>
      Effect.map(repo.storeName(storeId), Option.getOrElse(() => ""))

    // ---------------------------------------------------------------------------------------------
    // Marketing copy
    // ---------------------------------------------------------------------------------------------

    const marketingCopy = traced("Ai.marketingCopy")(function*(storeId: StoreId, input: MarketingCopy) {
      return yield* storeOf(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          const language = input.language ?? "en"
          const channel = input.channel ?? "sms"
          const tone = input.tone ?? "friendly"
          const maxLength = ChannelLimits[channel]
          const name = yield* storeName(store.storeId)
          const liability = yield* repo.pointsLiability({ storeId: store.storeId, livemode: input.livemode ?? false }).pipe(Effect.orDie)
          const facts = {
            store_name: name,
            product: input.product ?? null,
            audience: input.audience ?? null,
            tone,
            language,
            channel,
            max_length: maxLength,
            customers_with_points: liability.customers
          }
          const product = input.product === undefined ? null : quoted(input.product)
          const audience = input.audience === undefined ? null : quoted(input.audience)
          const opening = pick(toneOpening[tone], language)
          const template = language === "km"
            ? `${opening} ${product === null ? `មកកាន់ ${quoted(name)}` : `សាកល្បង ${product} នៅ ${quoted(name)}`}` +
              `${audience === null ? "" : ` សម្រាប់ ${audience}`}។ ប្រមូលពិន្ទុរាល់ពេលបង់ប្រាក់តាម KHQR!`
            : `${opening} ${product === null ? `Visit ${quoted(name)}` : `Try ${product} at ${quoted(name)}`}` +
              `${audience === null ? "" : `, made for ${audience}`}. Pay with KHQR and earn points every visit!`
          return yield* generate(store.storeId, "marketing_copy", {
            instruction: `Write ${tone} promotional copy for the ${channel} channel about the product for the audience in the facts.`,
            facts,
            language,
            maxLength,
            template: cleanOutput(template, maxLength)
          }, facts)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Analytics summary
    // ---------------------------------------------------------------------------------------------

    const analyticsSummary = traced("Ai.analyticsSummary")(function*(storeId: StoreId, params: AiReadParams) {
      return yield* storeOf(storeId, "analytics.read", (store) =>
        Effect.gen(function*() {
          const language = params.language ?? "en"
          const livemode = params.livemode ?? false
          const today = dayOf(yield* currentDate)
          const currentFrom = addDays(today, -(SUMMARY_DAYS - 1))
          const { rows } = yield* analytics.dailyOf(store.storeId, livemode, { from: addDays(currentFrom, -SUMMARY_DAYS), to: today })
          const period = (inCurrent: boolean) => {
            const days = rows.filter((row) => (row.date >= currentFrom) === inCurrent)
            const sum = (pick: (row: (typeof rows)[number]) => bigint) => days.reduce((total, row) => total + pick(row), 0n)
            return {
              payments: days.reduce((total, row) => total + row.count, 0),
              revenue_usd: sum((row) => row.revenue_usd),
              revenue_khr: sum((row) => row.revenue_khr),
              refunds_usd: sum((row) => row.refunds_usd),
              refunds_khr: sum((row) => row.refunds_khr)
            }
          }
          const current = period(true)
          const previous = period(false)
          const wire = (p: typeof current) => ({
            payments: p.payments,
            revenue: { USD: formatAmount(p.revenue_usd, "USD"), KHR: formatAmount(p.revenue_khr, "KHR") },
            refunds: { USD: formatAmount(p.refunds_usd, "USD"), KHR: formatAmount(p.refunds_khr, "KHR") }
          })
          const change = {
            payments_pct: percentChange(current.payments, previous.payments),
            revenue_usd_pct: percentChange(Number(current.revenue_usd), Number(previous.revenue_usd)),
            revenue_khr_pct: percentChange(Number(current.revenue_khr), Number(previous.revenue_khr))
          }
          const data = {
            livemode,
            current: { from: currentFrom, to: today, ...wire(current) },
            previous: { from: addDays(currentFrom, -SUMMARY_DAYS), to: addDays(currentFrom, -1), ...wire(previous) },
            change
          }
          const revenueText = moneyText([
            { currency: "USD", amount: data.current.revenue.USD, zero: current.revenue_usd === 0n },
            { currency: "KHR", amount: data.current.revenue.KHR, zero: current.revenue_khr === 0n }
          ])
          const refundText = moneyText([
            { currency: "USD", amount: data.current.refunds.USD, zero: current.refunds_usd === 0n },
            { currency: "KHR", amount: data.current.refunds.KHR, zero: current.refunds_khr === 0n }
          ])
          const mainChange = current.revenue_usd > 0n || previous.revenue_usd > 0n ? change.revenue_usd_pct : change.revenue_khr_pct
          const template = current.payments === 0 && previous.payments === 0
            ? (language === "km"
              ? "មិនទាន់មានការបង់ប្រាក់ក្នុងរយៈពេល ៦០ ថ្ងៃចុងក្រោយនៅឡើយទេ ដូច្នេះមិនទាន់មានអ្វីសង្ខេបទេ។"
              : "There were no payments in the last 60 days, so there is nothing to summarize yet.")
            : language === "km"
            ? `ក្នុង ៣០ ថ្ងៃចុងក្រោយ ចំណូល ${revenueText} ពីការបង់ប្រាក់ ${current.payments} ដង (${changeText(mainChange, language)})។ ` +
              `ការបង់ប្រាក់វិញ ${refundText}។ ៣០ ថ្ងៃមុន៖ ការបង់ប្រាក់ ${previous.payments} ដង។`
            : `Over the last 30 days revenue was ${revenueText} from ${current.payments} payments (${changeText(mainChange, language)}). ` +
              `Refunds: ${refundText}. The 30 days before: ${previous.payments} payments.`
          return yield* generate(store.storeId, "analytics_summary", {
            instruction: "Summarize the store's performance of the last 30 days against the 30 days before, in two or three sentences.",
            facts: data,
            language,
            maxLength: MAX_TEXT,
            template
          }, data)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Fraud insights
    // ---------------------------------------------------------------------------------------------

    const openRiskCases = (storeId: StoreId, livemode: boolean) =>
      Effect.gen(function*() {
        const page = yield* risk.casesOf(storeId, { limit: 100, status: "open", livemode }).pipe(Effect.orDie)
        const byKind = new Map<string, number>()
        for (const riskCase of page.data) byKind.set(riskCase.kind, (byKind.get(riskCase.kind) ?? 0) + 1)
        return {
          open_cases: page.data.length,
          more: page.has_more,
          by_kind: [...byKind.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([kind, count]) => ({ kind, count })),
          newest: page.data.slice(0, 3).map((c) => ({ id: c.id, kind: c.kind, subject: c.subject, created_at: c.created_at }))
        }
      })

    const fraudText = (facts: Effect.Effect.Success<ReturnType<typeof openRiskCases>>, language: Language) => {
      const count = `${facts.open_cases}${facts.more ? "+" : ""}`
      if (facts.open_cases === 0) {
        return language === "km" ? "មិនមានករណីហានិភ័យបើកចំហទេ។" : "There are no open risk cases."
      }
      const kinds = facts.by_kind.map((k) => `${k.kind} ${k.count}`).join(", ")
      const newest = facts.newest.map((c) => `${c.id} (${c.kind}, ${c.subject.type} ${c.subject.id})`).join("; ")
      return language === "km"
        ? `មានករណីហានិភ័យបើកចំហ ${count}៖ ${kinds}។ ថ្មីបំផុត៖ ${newest}។ សូមពិនិត្យពួកវា។`
        : `There are ${count} open risk cases: ${kinds}. Newest: ${newest}. Review them in the risk queue.`
    }

    const fraudInsights = traced("Ai.fraudInsights")(function*(storeId: StoreId, params: AiReadParams) {
      return yield* storeOf(storeId, "analytics.read", (store) =>
        Effect.gen(function*() {
          const language = params.language ?? "en"
          const facts = { livemode: params.livemode ?? false, ...(yield* openRiskCases(store.storeId, params.livemode ?? false)) }
          return yield* generate(store.storeId, "fraud_insights", {
            instruction: "Explain the store's open risk cases to the merchant and what to look at first.",
            facts,
            language,
            maxLength: MAX_TEXT,
            template: fraudText(facts, language)
          }, facts)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Campaign suggestion
    // ---------------------------------------------------------------------------------------------

    const WIN_BACK_BONUS = 200
    const LOYAL_BONUS = 100

    /**
     * The suggested audiences as segment rules (the same rules `POST /dashboard/stores/{id}/segments` takes,
     * so the merchant can save the suggestion as it is): customers who accept marketing and paid in the last
     * 30 days, or who paid in the 60 days before that and not since.
     */
    const audienceRules: Record<"active" | "lapsed", RuleSet> = {
      active: {
        match: "all",
        rules: [{ field: "payments_last_30d", op: "gte", value: 1 }, { field: "marketing_opt_in", op: "eq", value: true }]
      },
      lapsed: {
        match: "all",
        rules: [
          { field: "days_since_last_payment", op: "gt", value: SUMMARY_DAYS },
          { field: "days_since_last_payment", op: "lte", value: 3 * SUMMARY_DAYS },
          { field: "marketing_opt_in", op: "eq", value: true }
        ]
      }
    }

    const campaignSuggest = traced("Ai.campaignSuggest")(function*(storeId: StoreId, params: AiReadParams) {
      return yield* storeOf(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          const language = params.language ?? "en"
          const livemode = params.livemode ?? false
          const now = yield* currentDate
          const since = new Date(now.getTime() - SUMMARY_DAYS * 86_400_000)
          const before = new Date(now.getTime() - 3 * SUMMARY_DAYS * 86_400_000)
          const segments = yield* repo.segments({ storeId: store.storeId, livemode, since, before }).pipe(Effect.orDie)
          const of = (segment: "active" | "lapsed") => segments.find((row) => row.segment === segment) ?? { segment, customers: 0, reachable: 0 }
          const lapsed = of("lapsed")
          const active = of("active")
          const target = lapsed.reachable > 0 ? { ...lapsed, bonus_points: WIN_BACK_BONUS } : { ...active, bonus_points: LOYAL_BONUS }
          // What the suggested promotion would have cost over the last 30 days: the promotions simulation
          // (GET /dashboard/promotions/{id}/simulate) run on the suggestion before it exists.
          const simulated = target.customers === 0 ? null : yield* promotions.simulateDraft({
            storeId: store.storeId,
            livemode,
            now,
            segment: audienceRules[target.segment],
            minAmount: null,
            minCurrency: null
          })
          const facts = {
            livemode,
            segments: { active, lapsed },
            suggestion: target.customers === 0 || simulated === null ? null : {
              segment: target.segment,
              rules: audienceRules[target.segment],
              bonus_points: target.bonus_points,
              reach: target.reachable,
              points_cost: target.reachable * target.bonus_points,
              simulation: {
                window_days: SIMULATION_WINDOW_DAYS,
                eligible_customers: simulated.eligibleCustomers,
                qualifying_payments: simulated.qualifyingPayments,
                estimated_bonus_points: simulated.qualifyingPayments * target.bonus_points
              }
            }
          }
          const s = facts.suggestion
          const template = s === null
            ? (language === "km"
              ? "មិនទាន់មានអតិថិជនដែលបានបង់ប្រាក់ក្នុង ៩០ ថ្ងៃចុងក្រោយទេ ដូច្នេះមិនទាន់មានយុទ្ធនាការដែលត្រូវណែនាំទេ។"
              : "No customer paid in the last 90 days, so there is no campaign to suggest yet.")
            : language === "km"
            ? `ណែនាំ៖ ផ្តល់ពិន្ទុបន្ថែម ${s.bonus_points} ដល់អតិថិជន${s.segment === "lapsed" ? "ដែលមិនបានមកវិញក្នុង ៣០ ថ្ងៃ" : "សកម្ម"} ` +
              `(${target.customers} នាក់ ក្នុងនោះ ${s.reach} នាក់យល់ព្រមទទួលការផ្សព្វផ្សាយ)។ ចំណាយ៖ ${s.points_cost} ពិន្ទុ។ ` +
              `ការសាកល្បង ${s.simulation.window_days} ថ្ងៃចុងក្រោយ៖ អតិថិជន ${s.simulation.eligible_customers} នាក់ ` +
              `ការទូទាត់ ${s.simulation.qualifying_payments} ពិន្ទុ ${s.simulation.estimated_bonus_points}។`
            : `Suggestion: offer ${s.bonus_points} bonus points to ${s.segment === "lapsed" ? "lapsed customers (paid in the 60 days before the last 30, not since)" : "active customers (paid in the last 30 days)"}: ` +
              `${target.customers} customers, ${s.reach} of whom accept marketing. Cost: ${s.points_cost} points. ` +
              `Simulated over the last ${s.simulation.window_days} days as a promotion: ${s.simulation.eligible_customers} customers, ` +
              `${s.simulation.qualifying_payments} qualifying payments, ${s.simulation.estimated_bonus_points} bonus points.`
          return yield* generate(store.storeId, "campaign_suggest", {
            instruction: "Suggest the promotion in the facts to the merchant: which customers, which bonus, its reach and cost.",
            facts,
            language,
            maxLength: MAX_TEXT,
            template
          }, facts)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Assistant
    // ---------------------------------------------------------------------------------------------

    const assistant = traced("Ai.assistant")(function*(storeId: StoreId, input: AssistantQuestion) {
      return yield* storeOf(storeId, "analytics.read", (store) =>
        Effect.gen(function*() {
          const language: Language = input.language ?? (/[\u1780-\u17FF]/.test(input.question) ? "km" : "en")
          const livemode = input.livemode ?? false
          const answer = yield* answerQuestion(input.question, language, {
            storeId: store.storeId,
            livemode,
            now: yield* currentDate,
            repo,
            openRiskCases: (id) => openRiskCases(id, livemode)
          })
          return yield* generate(store.storeId, "assistant", {
            instruction: "Answer the merchant's question (in the facts, as quoted data) using only the figures in the facts.",
            facts: { question: input.question, ...answer.data },
            language,
            maxLength: MAX_TEXT,
            template: answer.text
          }, answer.data)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Usage and registry
    // ---------------------------------------------------------------------------------------------

    const usage = traced("Ai.usage")(function*(storeId: StoreId) {
      return yield* storeOf(storeId, "analytics.read", (store) =>
        Effect.gen(function*() {
          const now = yield* currentDate
          const since = new Date(now.getTime() - AI_USAGE_WINDOW_DAYS * 86_400_000)
          const byFeature = yield* repo.storeByFeature({ storeId: store.storeId, since }).pipe(Effect.orDie)
          const month = yield* repo.storeCost({ storeId: store.storeId, since: startOfMonth(now) }).pipe(Effect.orDie)
          const cap = decimalSetting(yield* setting("ai_monthly_cost_cap_usd"), null)
          return new AiUsage({
            object: "ai_usage",
            store_id: store.storeId,
            window_days: AI_USAGE_WINDOW_DAYS,
            ...sumTotals(byFeature),
            monthly_cost_cap_usd: cap,
            month_cost_usd: usd(month.cost_micro_usd),
            by_feature: byFeature.map((row) => ({ feature: row.feature, ...totalsOf(row) }))
          })
        }))
    })

    const platformUsage = traced("Ai.platformUsage")(function*() {
      return yield* access.withPlatformAdmin(() =>
        Effect.gen(function*() {
          const now = yield* currentDate
          const since = new Date(now.getTime() - AI_USAGE_WINDOW_DAYS * 86_400_000)
          const byFeature = yield* repo.platformByFeature({ since }).pipe(Effect.orDie)
          const byStore = yield* repo.platformByStore({ since }).pipe(Effect.orDie)
          return new AiPlatformUsage({
            object: "ai_usage",
            window_days: AI_USAGE_WINDOW_DAYS,
            ...sumTotals(byFeature),
            by_feature: byFeature.map((row) => ({ feature: row.feature, ...totalsOf(row) })),
            by_store: byStore.map((row) => ({ store_id: row.store_id as StoreId, store_name: row.store_name, ...totalsOf(row) }))
          })
        }))
    })

    const registry = traced("Ai.registry")(function*() {
      return yield* access.withPlatformAdmin(() =>
        Effect.gen(function*() {
          const chosen = yield* configured
          const { input, output } = yield* prices
          const configuredName = Option.getOrElse(yield* text("ai_model"), () => "")
          return new AiModelList({
            object: "list",
            data: [
              new AiModel({
                id: "builtin",
                provider: "builtin",
                model: BUILTIN_MODEL_NAME,
                input_cost_per_1k: 0,
                output_cost_per_1k: 0,
                configured: true,
                default: Option.isNone(chosen)
              }),
              new AiModel({
                id: "openai_compatible",
                provider: "openai_compatible",
                model: configuredName,
                input_cost_per_1k: input,
                output_cost_per_1k: output,
                configured: Option.isSome(chosen),
                default: Option.isSome(chosen)
              })
            ]
          })
        }))
    })

    return { marketingCopy, campaignSuggest, analyticsSummary, fraudInsights, assistant, usage, platformUsage, registry } as const
  }),
  dependencies: [
    AiRepo.Default,
    AccessService.Default,
    SettingsService.Default,
    AnalyticsService.Default,
    RiskService.Default,
    PromotionsService.Default,
    FetchHttpClient.layer
  ]
}) {}
