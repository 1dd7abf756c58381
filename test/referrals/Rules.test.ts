/** The fraud rules and the commission arithmetic, each on its own. */
import { describe, expect, it } from "vitest"
import {
  CODE_ALPHABET,
  commissionOf,
  flagsAtCreation,
  isConvertingPaymentRefunded,
  isPastDailyLimit,
  isSelfReferral,
  newReferralCode,
  withinWindow
} from "../../src/referrals/Rules.ts"

const party = (over: Partial<{ id: string; email: string | null; phone: string | null; external_id: string | null }> = {}) => ({
  id: "cus_a",
  email: null,
  phone: null,
  external_id: null,
  ...over
})

describe("fraud rules", () => {
  it("self-referral: the same customer, e-mail (case and spaces aside), phone digits or external_id", () => {
    const referrer = party({ id: "cus_r", email: "Dara@Example.com", phone: "+855 12 345 678", external_id: "crm-1" })
    expect(isSelfReferral(referrer, party({ id: "cus_r" }))).toBe(true)
    expect(isSelfReferral(referrer, party({ id: "cus_x", email: " dara@example.com " }))).toBe(true)
    expect(isSelfReferral(referrer, party({ id: "cus_x", phone: "85512345678" }))).toBe(true)
    expect(isSelfReferral(referrer, party({ id: "cus_x", external_id: "crm-1" }))).toBe(true)
    expect(isSelfReferral(referrer, party({ id: "cus_x", email: "sokha@example.com", phone: "012 999", external_id: "crm-2" })))
      .toBe(false)
    // Missing values never match each other.
    expect(isSelfReferral(party({ id: "cus_r" }), party({ id: "cus_x" }))).toBe(false)
    expect(isSelfReferral(party({ id: "cus_r", phone: "n/a" }), party({ id: "cus_x", phone: "none" }))).toBe(false)
  })

  it("daily limit: flagged from the referral that would pass max_referrals_per_day", () => {
    expect(isPastDailyLimit(19, 20)).toBe(false)
    expect(isPastDailyLimit(20, 20)).toBe(true)
    expect(isPastDailyLimit(0, 0)).toBe(true)
  })

  it("converting payment refunded: only in full", () => {
    expect(isConvertingPaymentRefunded({ amount: 1000n, amount_refunded: 999n })).toBe(false)
    expect(isConvertingPaymentRefunded({ amount: 1000n, amount_refunded: 1000n })).toBe(true)
  })

  it("collects the flags a new referral starts with", () => {
    const referrer = party({ id: "cus_r", phone: "012345678" })
    expect(flagsAtCreation(referrer, party({ id: "cus_x" }), 0, 20)).toEqual([])
    expect(flagsAtCreation(referrer, party({ id: "cus_x", phone: "012 345 678" }), 20, 20))
      .toEqual(["self_referral", "referrer_daily_limit"])
  })
})

describe("commissions", () => {
  it("takes the percent of the amount in minor units, floored", () => {
    expect(commissionOf(10_000n, "5")).toBe(500n)
    expect(commissionOf(1_999n, "12.5")).toBe(249n) // 249.875
    expect(commissionOf(40_000n, "5")).toBe(2_000n)
    expect(commissionOf(123n, "0")).toBe(0n)
    expect(commissionOf(123n, "100")).toBe(123n)
    expect(commissionOf(101n, "0.01")).toBe(0n)
  })

  it("counts payments within the window of the referral's creation", () => {
    const created = new Date("2026-01-01T00:00:00Z")
    expect(withinWindow(created, new Date("2026-01-31T00:00:00Z"), 30)).toBe(true)
    expect(withinWindow(created, new Date("2026-01-31T00:00:01Z"), 30)).toBe(false)
  })

  it("draws codes of the unambiguous alphabet", () => {
    const code = newReferralCode()
    expect(code).toMatch(new RegExp(`^[${CODE_ALPHABET}]{8}$`))
    expect(CODE_ALPHABET).not.toMatch(/[01IOL]/)
  })
})
