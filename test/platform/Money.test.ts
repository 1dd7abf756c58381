import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, ParseResult, Schema } from "effect"
import * as fc from "fast-check"
import { InvalidRequest } from "../../domain/Errors.ts"
import { Currencies, DECIMAL_AMOUNT } from "../../domain/Money.ts"
import { AmountString, Currency, formatAmount, minorUnitsOf, parseAmount } from "../../src/platform/Money.ts"

const parseSync = (input: unknown, currency: Currency, param?: string) =>
  Effect.runSync(
    Effect.either(param === undefined ? parseAmount(input, currency) : parseAmount(input, currency, param))
  )

const rejection = (input: unknown, currency: Currency, param?: string): InvalidRequest => {
  const result = parseSync(input, currency, param)
  if (Either.isRight(result)) throw new Error(`${JSON.stringify(input)} was accepted as ${result.right}`)
  expect(result.left).toBeInstanceOf(InvalidRequest)
  return result.left
}

const anyCurrency = fc.constantFrom(...Currencies)
// Up to 12 digits before the point in either currency.
const validMinor = (currency: Currency) =>
  fc.bigInt({ min: 1n, max: 10n ** BigInt(12 + minorUnitsOf(currency)) - 1n })
const validAmount = anyCurrency.chain((currency) => fc.tuple(fc.constant(currency), validMinor(currency)))

describe("minorUnitsOf", () => {
  it("is 2 for USD and 0 for KHR", () => {
    expect(minorUnitsOf("USD")).toBe(2)
    expect(minorUnitsOf("KHR")).toBe(0)
  })
})

describe("Currency", () => {
  it("accepts USD and KHR only", () => {
    expect(Schema.decodeUnknownSync(Currency)("USD")).toBe("USD")
    expect(Schema.decodeUnknownSync(Currency)("KHR")).toBe("KHR")
    for (const other of ["usd", "EUR", "", 840]) expect(Schema.is(Currency)(other)).toBe(false)
  })
})

describe("parseAmount", () => {
  it.effect("reads a decimal string into minor units", () =>
    Effect.gen(function*() {
      expect(yield* parseAmount("12.50", "USD")).toBe(1250n)
      expect(yield* parseAmount("12.5", "USD")).toBe(1250n)
      expect(yield* parseAmount("1.0", "USD")).toBe(100n)
      expect(yield* parseAmount("1", "USD")).toBe(100n)
      expect(yield* parseAmount("0.01", "USD")).toBe(1n)
      expect(yield* parseAmount("0.5", "USD")).toBe(50n)
      expect(yield* parseAmount("999999999999.99", "USD")).toBe(99999999999999n)
      expect(yield* parseAmount("5000", "KHR")).toBe(5000n)
      expect(yield* parseAmount("1", "KHR")).toBe(1n)
      expect(yield* parseAmount("999999999999", "KHR")).toBe(999999999999n)
    }))

  it("asks for a string when given a JSON number", () => {
    const error = rejection(12.5, "USD")
    expect(error.param).toBe("amount")
    expect(error.message).toBe(
      "amount must be a string such as \"12.50\", not a JSON number: numbers can lose precision"
    )
    expect(rejection(5000, "KHR").message).toContain("\"5000\"")
    expect(rejection(10n, "USD").message).toContain("not a JSON number")
  })

  it("rejects values that are not strings", () => {
    for (const input of [undefined, null, true, {}, [], ["12.50"]]) {
      expect(rejection(input, "USD").message).toBe("amount must be a decimal string such as \"12.50\"")
    }
  })

  it("rejects signs, exponents, spaces and other spellings", () => {
    for (
      const input of ["", "-1", "+1", "-0.50", "1e3", "1E3", "1.5e2", " 1", "1 ", "1 000", "1,50", "1.", ".5",
        "1..5", "1.2.3", "0x10", "Infinity", "NaN", "１２", "١٢", "12.50 USD", "$12.50"]
    ) {
      const error = rejection(input, "USD")
      expect(error.message).toContain("must be a positive decimal string such as \"12.50\"")
      expect(error.param).toBe("amount")
    }
  })

  it("rejects leading zeros but not the zero of 0.xx", () => {
    expect(rejection("007", "USD").message).toBe(
      "amount must not have leading zeros: write \"7\", not \"007\" (\"0.50\" is fine)"
    )
    rejection("00.50", "USD")
    rejection("0100", "KHR")
    expect(parseSync("0.50", "USD")).toEqual(Either.right(50n))
  })

  it("rejects more decimal places than the currency has", () => {
    expect(rejection("1.234", "USD").message).toBe("USD amounts have at most 2 decimal places, such as \"12.50\"")
    expect(rejection("1.500", "USD").message).toContain("at most 2 decimal places")
    expect(rejection("1.5", "KHR").message).toBe(
      "KHR amounts have no fractional part: send a whole number such as \"5000\""
    )
    expect(rejection("1.0", "KHR").message).toContain("KHR amounts have no fractional part")
  })

  it("rejects zero", () => {
    for (const input of ["0", "0.0", "0.00"]) {
      expect(rejection(input, "USD").message).toBe("amount must be greater than zero")
    }
    expect(rejection("0", "KHR").message).toBe("amount must be greater than zero")
  })

  it("rejects more than 12 digits before the point", () => {
    expect(rejection("1000000000000", "USD").message).toBe(
      "amount is too large: at most 12 digits before the decimal point"
    )
    rejection("1000000000000", "KHR")
    rejection("9".repeat(400), "KHR")
  })

  it("names the parameter it was given", () => {
    const error = rejection("-1", "USD", "minimum_amount")
    expect(error.param).toBe("minimum_amount")
    expect(error.message.startsWith("minimum_amount must be")).toBe(true)
  })

  it("round-trips every valid amount through formatAmount", () => {
    fc.assert(
      fc.property(validAmount, ([currency, minor]) => {
        expect(parseSync(formatAmount(minor, currency), currency)).toEqual(Either.right(minor))
      })
    )
  })

  it("accepts fewer decimal places than the currency has, as the same amount", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 12n - 1n }), fc.integer({ min: 0, max: 9 }), (whole, tenths) => {
        expect(parseSync(`${whole}.${tenths}`, "USD")).toEqual(Either.right(whole * 100n + BigInt(tenths) * 10n))
        expect(parseSync(`${whole}`, "USD")).toEqual(Either.right(whole * 100n))
      })
    )
  })

  it("rejects floating-point numbers, however they are sent", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true }), anyCurrency, (value, currency) => {
        rejection(value, currency)
        // As a string, only the plain decimal spellings a float can have are amounts at all.
        const text = String(value)
        if (!DECIMAL_AMOUNT.test(text)) rejection(text, currency)
      })
    )
  })

  it("rejects exponent notation", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9]{1,6}(\.[0-9]{1,4})?[eE][+-]?[0-9]{1,3}$/),
        anyCurrency,
        (text, currency) => {
          rejection(text, currency)
        }
      )
    )
  })

  it("rejects negative amounts", () => {
    fc.assert(
      fc.property(validAmount, ([currency, minor]) => {
        rejection(`-${formatAmount(minor, currency)}`, currency)
        rejection(formatAmount(-minor, currency), currency)
      })
    )
  })

  it("accepts only strings that AmountString accepts", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary-ascii", maxLength: 20 }), anyCurrency, (text, currency) => {
        if (Either.isRight(parseSync(text, currency))) expect(Schema.is(AmountString)(text)).toBe(true)
      })
    )
  })
})

describe("formatAmount", () => {
  it("writes exactly the currency's decimal places", () => {
    expect(formatAmount(1250n, "USD")).toBe("12.50")
    expect(formatAmount(100n, "USD")).toBe("1.00")
    expect(formatAmount(5n, "USD")).toBe("0.05")
    expect(formatAmount(0n, "USD")).toBe("0.00")
    expect(formatAmount(99999999999999n, "USD")).toBe("999999999999.99")
    expect(formatAmount(5000n, "KHR")).toBe("5000")
    expect(formatAmount(0n, "KHR")).toBe("0")
  })

  it("writes negative totals with a leading minus", () => {
    expect(formatAmount(-150n, "USD")).toBe("-1.50")
    expect(formatAmount(-5n, "USD")).toBe("-0.05")
    expect(formatAmount(-5000n, "KHR")).toBe("-5000")
  })

  it("stays exact beyond the range of JavaScript numbers", () => {
    expect(formatAmount(12345678901234567891n, "USD")).toBe("123456789012345678.91")
  })
})

describe("AmountString", () => {
  const Body = Schema.Struct({ amount: AmountString })
  const issuesOf = (input: unknown) => {
    const result = Schema.decodeUnknownEither(Body)(input)
    return Either.isLeft(result) ? ParseResult.ArrayFormatter.formatErrorSync(result.left) : []
  }

  it("accepts decimal strings, leaving currency rules to parseAmount", () => {
    for (const amount of ["12.50", "5000", "0.00", "1.234"]) {
      expect(Schema.decodeUnknownSync(Body)({ amount })).toEqual({ amount })
    }
  })

  it("explains that numbers must be sent as strings", () => {
    expect(issuesOf({ amount: 12.5 })).toEqual([{
      _tag: "Refinement",
      path: ["amount"],
      message: "must be a decimal string such as \"12.50\"; JSON numbers are not accepted as they can lose precision"
    }])
  })

  it("rejects other spellings", () => {
    for (const amount of ["-1", "1e3", " 1", "1.", ".5", ""]) {
      expect(issuesOf({ amount })).toEqual([{
        _tag: "Refinement",
        path: ["amount"],
        message: "must be a decimal string such as \"12.50\": digits, optionally a \".\" and more digits"
      }])
    }
  })
})
