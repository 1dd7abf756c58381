/**
 * The builtin model's texts, in English and Khmer: each template words facts computed from the store's
 * data and nothing else. Merchant and customer text (product, audience, names) appears in quotes.
 */
import type { Language } from "../../domain/Ai.ts"

export type Texts = { readonly en: string; readonly km: string }
export const pick = (texts: Texts, language: Language): string => texts[language]

/** A quoted piece of merchant or customer text: quotes inside are replaced so the quoting cannot be closed. */
export const quoted = (text: string): string => `“${text.replace(/[“”"]/g, "'").replace(/\s+/g, " ").trim()}”`

/** "USD 12.50, KHR 40000" for the non-zero currencies, or the zero amount of USD. */
export const moneyText = (amounts: ReadonlyArray<{ readonly currency: string; readonly amount: string; readonly zero: boolean }>): string => {
  const shown = amounts.filter((a) => !a.zero)
  return shown.length === 0 ? `${amounts[0]?.currency ?? "USD"} ${amounts[0]?.amount ?? "0.00"}` : shown.map((a) => `${a.currency} ${a.amount}`).join(", ")
}

export const percentChange = (current: number, previous: number): number | null =>
  previous === 0 ? null : Math.round(((current - previous) / previous) * 1000) / 10

export const changeText = (change: number | null, language: Language): string => {
  if (change === null) return language === "km" ? "គ្មានទិន្នន័យប្រៀបធៀប" : "no earlier figures to compare"
  if (change === 0) return language === "km" ? "ដូចគ្នានឹង ៣០ ថ្ងៃមុន" : "unchanged on the 30 days before"
  const sign = change > 0 ? "+" : ""
  return language === "km"
    ? `${sign}${change}% ធៀបនឹង ៣០ ថ្ងៃមុន`
    : `${change > 0 ? "up" : "down"} ${sign}${change}% on the 30 days before`
}

export const toneOpening = {
  friendly: { en: "Hi!", km: "សួស្តី!" },
  formal: { en: "Dear customer,", km: "ជូនចំពោះអតិថិជនជាទីគោរព," },
  playful: { en: "Guess what?", km: "ដឹងទេ?" }
} as const

export const CANNOT_ANSWER: Texts = {
  en: "I can't answer that from your data yet.",
  km: "ខ្ញុំមិនទាន់អាចឆ្លើយសំណួរនេះពីទិន្នន័យរបស់អ្នកបានទេ។"
}
