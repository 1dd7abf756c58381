/**
 * Points arithmetic, exact: rates and multipliers are decimal strings and amounts integer minor units, so
 * every product is taken on integers (bigint) and floored once at the end — never through floating point.
 */
import type { Currency } from "../../domain/Money.ts"
import { minorUnitsOf } from "../platform/Money.ts"

/** A non-negative decimal string as an integer numerator over a power of ten. */
const rational = (text: string): { readonly numerator: bigint; readonly scale: bigint } => {
  const [whole, fraction = ""] = text.split(".")
  return { numerator: BigInt(`${whole}${fraction}`), scale: 10n ** BigInt(fraction.length) }
}

/** floor(amount × rate × multiplier), the amount in minor units of `currency`, the rate per whole unit. */
export const pointsFor = (amount: bigint, currency: Currency, rate: string, multiplier: string): bigint => {
  const r = rational(rate)
  const m = rational(multiplier)
  return (amount * r.numerator * m.numerator) / (10n ** BigInt(minorUnitsOf(currency)) * r.scale * m.scale)
}

/** The share of `earned` points that `refunded` of `amount` takes back, floored. */
export const reversalFor = (earned: number, refunded: bigint, amount: bigint): number =>
  amount === 0n ? 0 : Number((BigInt(earned) * refunded) / amount)

/**
 * points × point value in minor units of `currency`, rounded half up: the liability of outstanding points.
 */
export const valueOf = (points: bigint, pointValue: string, currency: Currency): bigint => {
  const v = rational(pointValue)
  const scaled = points * v.numerator * 10n ** BigInt(minorUnitsOf(currency))
  return (scaled * 2n + v.scale) / (2n * v.scale)
}
