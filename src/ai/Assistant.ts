/**
 * The merchant assistant's tools. A question is routed by its words to one fixed tool (never to the
 * model, never to SQL built from it); the tool computes its figures and the answer cites them. A
 * question no tool answers gets a plain refusal and the list of what the assistant can answer.
 */
import { Effect } from "effect"
import type { Language } from "../../domain/Ai.ts"
import type { StoreId } from "../../domain/Ids.ts"
import { formatAmount } from "../platform/Money.ts"
import type { StoreAuthorized, StoreData } from "../access/Service.ts"
import type { AiRepo } from "./Repo.ts"
import { CANNOT_ANSWER, moneyText, pick, quoted } from "./Templates.ts"

export const AssistantTools = ["revenue", "top_customers", "points_liability", "open_risk_cases", "refund_rate"] as const
export type AssistantTool = (typeof AssistantTools)[number]

const ToolDescriptions: Record<AssistantTool, { en: string; km: string }> = {
  revenue: { en: "revenue in a range (\"revenue in the last 7 days\")", km: "ចំណូលក្នុងរយៈពេលមួយ" },
  top_customers: { en: "your top customers", km: "អតិថិជនកំពូល" },
  points_liability: { en: "the loyalty points your customers hold", km: "ពិន្ទុដែលអតិថិជនកាន់" },
  open_risk_cases: { en: "open risk cases", km: "ករណីហានិភ័យបើកចំហ" },
  refund_rate: { en: "your refund rate", km: "អត្រាការសងប្រាក់វិញ" }
}

// Checked in this order: "refund" questions often mention revenue, "risk" ones customers.
const Routes: ReadonlyArray<readonly [AssistantTool, RegExp]> = [
  ["refund_rate", /\brefund|សងប្រាក់វិញ/i],
  ["open_risk_cases", /\b(risk|fraud|suspicious|case)|ហានិភ័យ|ក្លែងបន្លំ/i],
  ["points_liability", /\b(points?|liabilit|loyalty)|ពិន្ទុ/i],
  ["top_customers", /\b(top|best|biggest|most valuable)\b.*\b(customers?|buyers?|clients?)\b|អតិថិជនកំពូល|អតិថិជនល្អបំផុត/i],
  ["revenue", /\b(revenue|sales|sold|income|earn|earned|earnings|turnover|takings|make|made)\b|ចំណូល|លក់/i]
]

export const routeQuestion = (question: string): AssistantTool | null => {
  for (const [tool, pattern] of Routes) if (pattern.test(question)) return tool
  return null
}

const DAY_MS = 86_400_000
export const MAX_RANGE_DAYS = 366
const DEFAULT_DAYS = 30

/** The window a question names: "last N days/weeks", "today", "this month", or an explicit pair of dates; else 30 days. */
export interface QuestionRange {
  readonly since: Date
  readonly until: Date
  /** How the answer names the range, in English and Khmer. */
  readonly label: string
  readonly labelKm: string
}

const lastDays = (now: Date, days: number): QuestionRange => ({
  since: new Date(now.getTime() - days * DAY_MS),
  until: now,
  label: `the last ${days} days`,
  labelKm: `${days} ថ្ងៃចុងក្រោយ`
})

export const rangeOf = (question: string, now: Date): QuestionRange => {
  const dates = question.match(/\b(\d{4}-\d{2}-\d{2})\b.*?\b(\d{4}-\d{2}-\d{2})\b/)
  if (dates !== null) {
    const from = new Date(`${dates[1]}T00:00:00.000Z`)
    const to = new Date(`${dates[2]}T00:00:00.000Z`)
    if (!Number.isNaN(from.getTime()) && !Number.isNaN(to.getTime()) && from <= to && (to.getTime() - from.getTime()) / DAY_MS < MAX_RANGE_DAYS) {
      return { since: from, until: new Date(to.getTime() + DAY_MS), label: `${dates[1]} to ${dates[2]}`, labelKm: `${dates[1]} ដល់ ${dates[2]}` }
    }
  }
  if (/\btoday\b|ថ្ងៃនេះ/i.test(question)) {
    const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
    return { since, until: now, label: "today", labelKm: "ថ្ងៃនេះ" }
  }
  if (/\bthis month\b|ខែនេះ/i.test(question)) {
    return { since: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), until: now, label: "this month", labelKm: "ខែនេះ" }
  }
  const last = question.match(/\b(?:last|past)\s+(\d{1,3})\s*(day|week)s?\b/i) ?? question.match(/\b(\d{1,3})\s*(day|week)s?\b/i)
  if (last !== null) {
    const days = Math.min(MAX_RANGE_DAYS, Math.max(1, Number(last[1]) * (last[2]!.toLowerCase() === "week" ? 7 : 1)))
    return lastDays(now, days)
  }
  if (/\b(last|past)\s+week\b/i.test(question)) return lastDays(now, 7)
  return lastDays(now, DEFAULT_DAYS)
}

export interface AssistantContext {
  readonly storeId: StoreId
  readonly livemode: boolean
  readonly now: Date
  /** The store's figures, read under the proof of the caller's access check. */
  readonly repo: StoreData<AiRepo>
  readonly openRiskCases: (storeId: StoreId) => Effect.Effect<{
    readonly open_cases: number
    readonly more: boolean
    readonly by_kind: ReadonlyArray<{ readonly kind: string; readonly count: number }>
  }, never, StoreAuthorized>
}

export interface AssistantAnswer {
  readonly text: string
  readonly data: Record<string, unknown>
}

const rate = (part: bigint, whole: bigint): number => whole === 0n ? 0 : Math.round(Number((part * 10_000n) / whole)) / 100

export const answerQuestion = (question: string, language: Language, context: AssistantContext) =>
  Effect.gen(function*() {
    const tool = routeQuestion(question)
    const km = language === "km"
    const window = { storeId: context.storeId, livemode: context.livemode }
    if (tool === null) {
      const can = AssistantTools.map((t) => ToolDescriptions[t][language])
      return {
        text: `${pick(CANNOT_ANSWER, language)} ${km ? "ខ្ញុំអាចឆ្លើយអំពី៖" : "I can answer about:"} ${can.join("; ")}.`,
        data: { tool: null, answerable: [...AssistantTools] }
      }
    }
    if (tool === "points_liability") {
      const row = yield* context.repo.pointsLiability(window).pipe(Effect.orDie)
      return {
        text: km
          ? `អតិថិជន ${row.customers} នាក់កាន់ពិន្ទុសរុប ${row.points} ពិន្ទុ។`
          : `Your customers hold ${row.points} loyalty points in total, across ${row.customers} customers.`,
        data: { tool, outstanding_points: Number(row.points), customers_with_points: row.customers }
      }
    }
    if (tool === "open_risk_cases") {
      const facts = yield* context.openRiskCases(context.storeId)
      const count = `${facts.open_cases}${facts.more ? "+" : ""}`
      const kinds = facts.by_kind.map((k) => `${k.kind} ${k.count}`).join(", ")
      return {
        text: km
          ? `មានករណីហានិភ័យបើកចំហ ${count}${kinds === "" ? "" : ` (${kinds})`}។`
          : `There ${facts.open_cases === 1 ? "is" : "are"} ${count} open risk case${facts.open_cases === 1 ? "" : "s"}${kinds === "" ? "" : ` (${kinds})`}.`,
        data: { tool, ...facts }
      }
    }
    const range = rangeOf(question, context.now)
    const span = { from: range.since.toISOString(), to: range.until.toISOString(), label: range.label }
    const named = km ? range.labelKm : range.label
    if (tool === "top_customers") {
      const rows = yield* context.repo.topCustomers({ ...window, since: range.since, until: range.until, limit: 5 }).pipe(Effect.orDie)
      const customers = rows.map((row) => ({
        customer_id: row.customer_id,
        name: row.name,
        payments: row.payments,
        amount: formatAmount(row.amount, row.currency),
        currency: row.currency
      }))
      const listed = customers.map((c) => `${c.name === null ? c.customer_id : quoted(c.name)} ${c.currency} ${c.amount} (${c.payments})`).join("; ")
      return {
        text: customers.length === 0
          ? (km ? `គ្មានអតិថិជនបានបង់ប្រាក់ក្នុង ${named} ទេ។` : `No customer paid in ${named}.`)
          : (km ? `អតិថិជនកំពូលក្នុង ${named}៖ ${listed}។` : `Top customers in ${named}: ${listed}.`),
        data: { tool, range: span, customers }
      }
    }
    const rows = yield* context.repo.revenue({ ...window, since: range.since, until: range.until }).pipe(Effect.orDie)
    const byCurrency = (["USD", "KHR"] as const).map((currency) => {
      const row = rows.find((r) => r.currency === currency)
      return { currency, payments: row?.payments ?? 0, amount: row?.amount ?? 0n, refunded: row?.refunded ?? 0n }
    })
    if (tool === "refund_rate") {
      const figures = byCurrency.map((c) => ({
        currency: c.currency,
        paid: formatAmount(c.amount, c.currency),
        refunded: formatAmount(c.refunded, c.currency),
        refund_rate_pct: rate(c.refunded, c.amount)
      }))
      const shown = figures.filter((f, i) => byCurrency[i]!.amount > 0n)
      const listed = (shown.length === 0 ? figures.slice(0, 1) : shown)
        .map((f) => `${f.refund_rate_pct}% (${f.currency} ${f.refunded} of ${f.currency} ${f.paid})`).join(", ")
      return {
        text: km ? `អត្រាការសងប្រាក់វិញក្នុង ${named}៖ ${listed}។` : `Your refund rate in ${named}: ${listed}.`,
        data: { tool, range: span, currencies: figures }
      }
    }
    const payments = byCurrency.reduce((total, c) => total + c.payments, 0)
    const revenue = { USD: formatAmount(byCurrency[0]!.amount, "USD"), KHR: formatAmount(byCurrency[1]!.amount, "KHR") }
    const money = moneyText([
      { currency: "USD", amount: revenue.USD, zero: byCurrency[0]!.amount === 0n },
      { currency: "KHR", amount: revenue.KHR, zero: byCurrency[1]!.amount === 0n }
    ])
    return {
      text: km
        ? `ចំណូលក្នុង ${named}៖ ${money} ពីការបង់ប្រាក់ ${payments} ដង។`
        : `Revenue in ${named}: ${money} from ${payments} payment${payments === 1 ? "" : "s"}.`,
      data: { tool, range: span, payments, revenue }
    }
  })
