/**
 * Points arithmetic on integers: earning per currency unit with a tier multiplier, floored once; the
 * share a refund takes back; the liability's value rounded half up; voucher codes' shape and alphabet.
 */
import { describe, expect, it } from "@effect/vitest"
import { pointsFor, reversalFor, valueOf } from "../../src/loyalty/Points.ts"
import { newVoucherCode } from "../../src/platform/Voucher.ts"

describe("loyalty points arithmetic", () => {
  it("earns per whole currency unit, multiplied, floored once at the end", () => {
    // 12.50 USD × 10 = 125; × 1.5 = 187.5 → 187.
    expect(pointsFor(1250n, "USD", "10", "1")).toBe(125n)
    expect(pointsFor(1250n, "USD", "10", "1.5")).toBe(187n)
    // 40,000 KHR × 0.0025 = 100; 39,999 KHR → 99.9975 → 99.
    expect(pointsFor(40_000n, "KHR", "0.0025", "1")).toBe(100n)
    expect(pointsFor(39_999n, "KHR", "0.0025", "1")).toBe(99n)
    // 0.01 USD × 0.333333 = 0.00333333 → 0; no floating point drift on 0.1 × 3.
    expect(pointsFor(1n, "USD", "0.333333", "1")).toBe(0n)
    expect(pointsFor(30n, "USD", "10", "1")).toBe(3n)
    // A large payment stays exact.
    expect(pointsFor(99_999_999_999_999n, "USD", "10", "2.5")).toBe(24_999_999_999_999n)
  })

  it("takes back the refunded share of the earned points, floored", () => {
    expect(reversalFor(125, 625n, 1250n)).toBe(62)
    expect(reversalFor(125, 1250n, 1250n)).toBe(125)
    expect(reversalFor(0, 1250n, 1250n)).toBe(0)
  })

  it("values outstanding points in minor units, half up", () => {
    expect(valueOf(200n, "0.015", "USD")).toBe(300n)
    expect(valueOf(1n, "0.005", "USD")).toBe(1n)
    expect(valueOf(1n, "0.0049", "USD")).toBe(0n)
    expect(valueOf(3n, "2.5", "KHR")).toBe(8n)
  })

  it("makes voucher codes of three groups of four characters without 0, 1, I or O", () => {
    const codes = Array.from({ length: 2000 }, newVoucherCode)
    for (const code of codes) expect(code).toMatch(/^[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/)
    expect(new Set(codes).size).toBe(codes.length)
    expect(new Set(codes.join("").replace(/-/g, "")).size).toBe(32)
  })
})
