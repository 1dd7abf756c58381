/**
 * Money on the wire is a decimal string in the currency's major unit ("12.50" USD, "5000" KHR);
 * in the service and the database it is a `bigint` count of minor units (1250 cents, 5000 riel).
 * Floating point never touches an amount: binary fractions cannot hold 0.10 exactly.
 */
import { Effect } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
// The wire schemas live in the domain, where the typed client can see them.
import { AmountString, Currency, DECIMAL_AMOUNT } from "../../domain/Money.ts"

export { AmountString, Currency }

const DECIMAL_PLACES: Record<Currency, number> = { USD: 2, KHR: 0 }

const SAMPLE_AMOUNT: Record<Currency, string> = { USD: "12.50", KHR: "5000" }

/**
 * The ISO 4217 "minor unit" of a currency: how many decimal places its amounts have
 * (USD 2, KHR 0 — riel coins below one riel are not in use).
 */
export const minorUnitsOf = (currency: Currency): number => DECIMAL_PLACES[currency]

// Twelve digits before the point: about 1 trillion, far above any single payment in either currency,
// and small enough that a USD amount in cents (< 10^14) is still exact where a consumer reads it into a
// JavaScript number, and sums of many such amounts stay far inside Postgres bigint.
const MAX_INTEGER_DIGITS = 12

/**
 * Reads a wire amount into minor units of `currency`, or fails with an `InvalidRequest` naming `param`
 * and saying what to send instead.
 */
export const parseAmount = (
  input: unknown,
  currency: Currency,
  param = "amount"
): Effect.Effect<bigint, InvalidRequest> => {
  const reject = (message: string) => Effect.fail(new InvalidRequest({ message, param }))
  const sample = SAMPLE_AMOUNT[currency]

  if (typeof input === "number" || typeof input === "bigint") {
    return reject(`${param} must be a string such as "${sample}", not a JSON number: numbers can lose precision`)
  }
  if (typeof input !== "string") {
    return reject(`${param} must be a decimal string such as "${sample}"`)
  }
  if (!DECIMAL_AMOUNT.test(input)) {
    return reject(
      `${param} must be a positive decimal string such as "${sample}": ` +
        `digits and at most one ".", without sign, spaces or exponent`
    )
  }

  const [integerPart = "", fractionPart = ""] = input.split(".")
  // "007" is most likely a typo or a mangled value; only the single zero of "0.50" is accepted.
  if (integerPart.length > 1 && integerPart.startsWith("0")) {
    return reject(`${param} must not have leading zeros: write "7", not "007" ("0.50" is fine)`)
  }
  const decimalPlaces = DECIMAL_PLACES[currency]
  if (fractionPart.length > decimalPlaces) {
    return reject(
      decimalPlaces === 0
        ? `${currency} amounts have no fractional part: send a whole number such as "${sample}"`
        : `${currency} amounts have at most ${decimalPlaces} decimal places, such as "${sample}"`
    )
  }
  if (integerPart.length > MAX_INTEGER_DIGITS) {
    return reject(`${param} is too large: at most ${MAX_INTEGER_DIGITS} digits before the decimal point`)
  }

  const minor = BigInt(integerPart + fractionPart.padEnd(decimalPlaces, "0"))
  if (minor === 0n) {
    return reject(`${param} must be greater than zero`)
  }
  return Effect.succeed(minor)
}

/** Writes minor units of `currency` as a wire amount with exactly the currency's decimal places. */
export const formatAmount = (minor: bigint, currency: Currency): string => {
  const decimalPlaces = DECIMAL_PLACES[currency]
  // Negative totals occur in journals and reports (a refund's side of an entry), never in a request.
  const sign = minor < 0n ? "-" : ""
  const digits = (minor < 0n ? -minor : minor).toString().padStart(decimalPlaces + 1, "0")
  if (decimalPlaces === 0) return sign + digits
  const pointAt = digits.length - decimalPlaces
  return `${sign}${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`
}
