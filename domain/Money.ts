/**
 * Money on the wire: a currency code and a decimal amount string in the currency's major unit.
 * Conversion to and from integer minor units is in src/platform/Money.ts.
 */
import { Schema } from "effect"
import { oneOf } from "./Text.ts"

/** The currencies of KHQR payments, the one list every schema and test draws from. */
export const Currencies = ["USD", "KHR"] as const

export const Currency = oneOf(...Currencies).annotations({
  description: "ISO 4217 currency code: USD (2 decimal places) or KHR (no decimal places).",
  examples: ["USD", "KHR"]
})
export type Currency = typeof Currency.Type

/** Digits, optionally a "." and more digits: the one spelling of an amount, on the wire and in configuration. */
export const DECIMAL_AMOUNT = /^\d+(\.\d+)?$/
const MAX_AMOUNT_LENGTH = 32

/** A decimal amount string as it appears in request and response bodies. */
export const AmountString = Schema.String.annotations({
  message: () => `must be a decimal string such as "12.50"; JSON numbers are not accepted as they can lose precision`
}).pipe(
  Schema.maxLength(MAX_AMOUNT_LENGTH, { message: () => `must be at most ${MAX_AMOUNT_LENGTH} characters` }),
  Schema.pattern(DECIMAL_AMOUNT, {
    message: () => `must be a decimal string such as "12.50": digits, optionally a "." and more digits`
  })
).annotations({
  description: "An amount in the currency's major unit as a decimal string (never a JSON number), " +
    "with at most as many decimal places as the currency has: \"12.50\" USD, \"5000\" KHR.",
  examples: ["12.50", "5000"]
})

