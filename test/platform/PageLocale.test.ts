/**
 * The customer pages' languages, without a browser: the catalogs agree and every text compiles, the language
 * a request gets, and money, plurals and dates as each language writes them.
 */
import { describe, expect, it } from "@effect/vitest"
import { IntlMessageFormat } from "intl-messageformat"
import en from "../../src/platform/pages/messages/en.json" with { type: "json" }
import km from "../../src/platform/pages/messages/km.json" with { type: "json" }
import { chooseLanguage, copyFor, fromAcceptLanguage } from "../../src/platform/pages/Locale.ts"

describe("customer page languages", () => {
  it("has the same texts in both catalogs, each a valid ICU message, the Khmer ones in Khmer", () => {
    expect(Object.keys(km).sort()).toEqual(Object.keys(en).sort())
    for (const [language, catalog] of [["en", en], ["km", km]] as const) {
      for (const [key, text] of Object.entries(catalog)) {
        expect(() => new IntlMessageFormat(text, language), `${language} ${key}`).not.toThrow()
      }
    }
    // Every Khmer text but the bare placeholders has Khmer script in it.
    const untranslated = Object.entries(km).filter(([, text]) => !/[\u1780-\u17FF]/.test(text) && !/^[{}\w\s·.]+$/.test(text))
    expect(untranslated).toEqual([])
  })

  it("takes the language picked with the switch, else the remembered one, else Accept-Language, else English", () => {
    expect(fromAcceptLanguage("km-KH,km;q=0.9,en;q=0.8")).toBe("km")
    expect(fromAcceptLanguage("fr-FR, en;q=0.5, km;q=0.7")).toBe("km")
    expect(fromAcceptLanguage("fr-FR, de;q=0.9")).toBeUndefined()
    expect(fromAcceptLanguage("km;q=0, en")).toBe("en")
    expect(chooseLanguage({ picked: null, remembered: undefined, acceptLanguage: "km" })).toBe("km")
    expect(chooseLanguage({ picked: null, remembered: "en", acceptLanguage: "km" })).toBe("en")
    expect(chooseLanguage({ picked: "km", remembered: "en", acceptLanguage: "en" })).toBe("km")
    expect(chooseLanguage({ picked: "fr", remembered: "xx", acceptLanguage: undefined })).toBe("en")
  })

  it("writes money, plurals and dates in the page's language and the store's time zone", () => {
    const english = copyFor("en")
    const khmer = copyFor("km")
    expect(english.money("40000", "KHR")).toBe("៛40,000")
    // The sign before the amount in both languages, as the issue of money on these pages writes it.
    expect(khmer.money("40000", "KHR")).toBe("៛40,000")
    expect(khmer.money("12.5", "USD")).toBe("$12.50")
    expect(english.money("12.5", "USD")).toBe("$12.50")
    expect(english.money("1234567.05", "USD")).toBe("$1,234,567.05")
    expect(english.text("wallet.to_next_tier", { points: 1, tier: "Gold" })).toBe("1 point to Gold")
    expect(english.text("wallet.to_next_tier", { points: 2000, tier: "Gold" })).toBe("2,000 points to Gold")
    expect(khmer.text("wallet.to_next_tier", { points: 1, tier: "Gold" })).toBe("នៅសល់ 1 ពិន្ទុ ទៀតដើម្បីឡើងដល់ Gold")
    // 23:30 UTC is already the next day in Phnom Penh (UTC+7).
    expect(english.date("2026-03-31T23:30:00Z")).toBe("Apr 1, 2026")
    expect(english.calendarDate("2030-03-31")).toBe("Mar 31, 2030")
    expect(khmer.date("2026-03-31T23:30:00Z")).toContain("មេសា")
    expect(english.pluralTemplates("game.won_points", "points", { prize: "{prize}" })).toEqual({
      one: "You won {prize}: +{points} point",
      other: "You won {prize}: +{points} points"
    })
    expect(khmer.pluralTemplates("game.won_points", "points", { prize: "{prize}" })).toEqual({
      other: "អ្នកឈ្នះ {prize}៖ +{points} ពិន្ទុ"
    })
  })
})
