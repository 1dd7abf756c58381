/**
 * The languages of the customer pages (English and Khmer), which one a request gets, and everything a page
 * says in it: texts from the message catalogs (`messages/en.json`, `messages/km.json`, ICU MessageFormat
 * through FormatJS's intl-messageformat, so plurals and numbers follow each language's rules), money, numbers
 * and dates through `Intl`, in the store's time zone.
 */
import { IntlMessageFormat } from "intl-messageformat"
import { Fragment, createElement, type ReactNode } from "react"
import en from "./messages/en.json" with { type: "json" }
import km from "./messages/km.json" with { type: "json" }

export const LANGUAGES = ["en", "km"] as const
export type Language = (typeof LANGUAGES)[number]
export const DEFAULT_LANGUAGE: Language = "en"

/** Each language's own name, as the switch shows it (never translated: a reader looks for their own). */
export const LANGUAGE_NAMES: Record<Language, string> = { en: "English", km: "ខ្មែរ" }

export type MessageKey = keyof typeof en

// Typed against the English catalog: a key missing from the Khmer one does not compile.
const CATALOGS: Record<Language, Record<MessageKey, string>> = { en, km }

/** Stores carry no time zone of their own yet; every store is in Cambodia. */
export const STORE_TIME_ZONE = "Asia/Phnom_Penh"

/** The cookie that remembers the language a customer chose with the switch. */
export const LANGUAGE_COOKIE = "lang"
/** The query parameter the switch's links carry. */
export const LANGUAGE_PARAM = "lang"

const isLanguage = (value: string | null | undefined): value is Language =>
  value !== null && value !== undefined && (LANGUAGES as ReadonlyArray<string>).includes(value)

/** The best of our languages in an `Accept-Language` header (`km-KH, en;q=0.8`), by its quality values. */
export const fromAcceptLanguage = (header: string | undefined): Language | undefined => {
  if (header === undefined) return undefined
  let best: { language: Language; quality: number } | undefined
  for (const part of header.split(",")) {
    const [range = "", ...params] = part.trim().split(";")
    const primary = range.trim().toLowerCase().split("-")[0]
    const quality = Number(params.find((p) => p.trim().startsWith("q="))?.trim().slice(2) ?? "1")
    if (!isLanguage(primary) || Number.isNaN(quality) || quality <= 0) continue
    if (best === undefined || quality > best.quality) best = { language: primary, quality }
  }
  return best?.language
}

/**
 * The language of a page: the one just picked with the switch, else the one it remembered, else the
 * browser's preference, else English.
 */
export const chooseLanguage = (request: {
  readonly picked: string | null
  readonly remembered: string | undefined
  readonly acceptLanguage: string | undefined
}): Language =>
  isLanguage(request.picked)
    ? request.picked
    : isLanguage(request.remembered)
    ? request.remembered
    : fromAcceptLanguage(request.acceptLanguage) ?? DEFAULT_LANGUAGE

type Values = Record<string, string | number>
type RichValues = Record<string, string | number | ((chunks: Array<ReactNode>) => ReactNode)>

const DECIMALS: Record<string, number> = { USD: 2, KHR: 0 }

/**
 * How money is written: the currency's sign (`narrowSymbol`: `$`, `៛`) before the amount, and the
 * currency's own decimals (KHR none): `៛40,000`, `$12.50`. The same in both languages, as prices are shown in
 * Cambodia's shops and apps (the Khmer locale data would put the sign after: `40,000៛`). The checkout's
 * script formats live amounts with the same locale and options.
 */
export const MONEY_LOCALE = "en"

export const moneyFormatOptions = (currency: string): Intl.NumberFormatOptions => {
  const decimals = DECIMALS[currency] ?? 2
  return { style: "currency", currency, currencyDisplay: "narrowSymbol", minimumFractionDigits: decimals, maximumFractionDigits: decimals }
}

/** What a page says, in one language. */
export interface Copy {
  readonly language: Language
  readonly timeZone: string
  /** A catalog text with its values. */
  readonly text: (key: MessageKey, values?: Values) => string
  /** A catalog text with tags (`<code>…</code>`) that become the elements `values` makes of them. */
  readonly rich: (key: MessageKey, values: RichValues) => ReactNode
  /** An amount in its wire form (`"12.50"`, `"40000"`): `$12.50`, `៛40,000`. */
  readonly money: (amount: string, currency: string) => string
  readonly number: (value: number) => string
  /** A moment, with the date and the time, in the store's time zone. */
  readonly dateTime: (iso: string) => string
  /** A moment's day, in the store's time zone. */
  readonly date: (iso: string) => string
  /** A calendar date (`2026-12-01`), as it is, whatever the time zone. */
  readonly calendarDate: (day: string) => string
  /**
   * A catalog text for a page's script, which gets its number only later (a prize revealed in the browser):
   * one template per plural category of the language, `{name}` standing where the number goes, for the
   * script to pick with `Intl.PluralRules` and fill. Other values are filled in now (pass `"{x}"` to keep one).
   */
  readonly pluralTemplates: (key: MessageKey, name: string, values: Values) => Record<string, string>
}

const SAMPLE_NUMBERS = [1, 2, 3, 5, 7, 11, 21, 0, 100, 1000000]

const formats = new Map<string, IntlMessageFormat>()
const messageFormat = (language: Language, key: MessageKey) => {
  const id = `${language}:${key}`
  let format = formats.get(id)
  if (format === undefined) {
    format = new IntlMessageFormat(CATALOGS[language][key], language)
    formats.set(id, format)
  }
  return format
}

const copies = new Map<string, Copy>()

/** What pages say in `language`; made once per language and time zone (its `Intl` formatters are reused). */
export const copyFor = (language: Language, timeZone: string = STORE_TIME_ZONE): Copy => {
  const id = `${language}:${timeZone}`
  let copy = copies.get(id)
  if (copy === undefined) {
    copy = makeCopy(language, timeZone)
    copies.set(id, copy)
  }
  return copy
}

const makeCopy = (language: Language, timeZone: string): Copy => {
  const numberFormat = new Intl.NumberFormat(language)
  const dateTimeFormat = new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "short", timeZone })
  const dateFormat = new Intl.DateTimeFormat(language, { dateStyle: "medium", timeZone })
  const calendarFormat = new Intl.DateTimeFormat(language, { dateStyle: "medium", timeZone: "UTC" })
  const moneyFormats = new Map<string, Intl.NumberFormat>()
  return {
    language,
    timeZone,
    text: (key, values) => String(messageFormat(language, key).format(values)),
    rich: (key, values) => {
      const formatted = messageFormat(language, key).format<ReactNode>(values)
      return Array.isArray(formatted)
        ? formatted.map((part, index) => createElement(Fragment, { key: index }, part))
        : formatted
    },
    money: (amount, currency) => {
      let format = moneyFormats.get(currency)
      if (format === undefined) {
        format = new Intl.NumberFormat(MONEY_LOCALE, moneyFormatOptions(currency))
        moneyFormats.set(currency, format)
      }
      return format.format(amount as Intl.StringNumericLiteral)
    },
    number: (value) => numberFormat.format(value),
    dateTime: (iso) => dateTimeFormat.format(new Date(iso)),
    date: (iso) => dateFormat.format(new Date(iso)),
    calendarDate: (day) => calendarFormat.format(new Date(`${day.slice(0, 10)}T00:00:00Z`)),
    pluralTemplates: (key, name, values) => {
      const rules = new Intl.PluralRules(language)
      const templates: Record<string, string> = {}
      for (const category of rules.resolvedOptions().pluralCategories) {
        // A number of that category, formatted into the text and then swapped for the placeholder. The
        // catalogs' texts hold no digits of their own, so the number is the text's only digits.
        const sample = SAMPLE_NUMBERS.find((n) => rules.select(n) === category)
        if (sample === undefined) continue
        const text = String(messageFormat(language, key).format({ ...values, [name]: sample }))
        const shown = numberFormat.format(sample)
        if (text.split(shown).length === 2) templates[category] = text.replace(shown, `{${name}}`)
      }
      return templates
    }
  }
}
