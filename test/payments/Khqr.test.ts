import { describe, expect, it } from "@effect/vitest"
import { BakongKHQR, type KhqrDecoded } from "bakong-khqr"
import crc16 from "bakong-khqr/src/helper/crc16"
import cutString from "bakong-khqr/src/helper/cutString"
import { createHash } from "node:crypto"
import { Effect, Either } from "effect"
import * as fc from "fast-check"
import { InvalidRequest } from "../../domain/Errors.ts"
import {
  buildKhqr,
  crc16CcittFalse,
  type KhqrField,
  KhqrInvalid,
  type KhqrInput,
  type KhqrPayload,
  TEST_MERCHANT
} from "../../src/payments/Khqr.ts"

// ---------------------------------------------------------------------------------------------
// The independent check: the `bakong-khqr` SDK, NBC's reference implementation, reads what the encoder
// wrote. It shares nothing with src/payments/Khqr.ts (its CRC is table-driven, the encoder's bitwise).
// ---------------------------------------------------------------------------------------------

const referenceCrc = (text: string): number => Number.parseInt(crc16(text), 16)

const crcVerifies = (payload: string): boolean =>
  /6304[0-9A-F]{4}$/.test(payload) && crc16(payload.slice(0, -4)) === payload.slice(-4)

/** The top-level tags of a payload in their order, cut by the SDK's own TLV reader. */
const tagsOf = (payload: string): ReadonlyArray<string> => {
  const tags: Array<string> = []
  for (let rest = payload; rest.length > 0;) {
    const field = cutString(rest)
    if (field.value.length !== Number(rest.slice(2, 4))) throw new Error(`TLV ${field.tag} runs past the end of ${payload}`)
    tags.push(field.tag)
    rest = field.slicedString
  }
  return tags
}

/** Every field of the payload as the SDK reads it. */
const decode = (payload: string): KhqrDecoded => {
  const decoded = BakongKHQR.decode(payload)
  expect(decoded.status.code).toBe(0)
  return decoded.data
}

const CREATED = new Date("2024-05-01T10:00:00.000Z")
const EXPIRES = new Date("2024-05-01T10:15:00.000Z")

const baseInput: KhqrInput = {
  ...TEST_MERCHANT,
  currency: "USD",
  amountMinor: 1250n,
  createdAt: CREATED,
  expiresAt: EXPIRES
}

const build = (input: KhqrInput): KhqrPayload => {
  const result = buildKhqr(input)
  if (Either.isLeft(result)) throw new Error(`rejected: ${result.left.message}`)
  return result.right
}

const rejection = (input: KhqrInput): KhqrInvalid => {
  const result = buildKhqr(input)
  if (Either.isRight(result)) throw new Error(`accepted: ${result.right.payload}`)
  expect(result.left).toBeInstanceOf(KhqrInvalid)
  expect(result.left._tag).toBe("KhqrInvalid")
  return result.left
}

// The amount read back without the service's own parser, which caps amounts below KHQR's 13 characters.
const readAmountMinor = (amount: string, currency: "USD" | "KHR"): bigint => {
  const match = (currency === "USD" ? /^(\d+)\.(\d{2})$/ : /^(\d+)()$/).exec(amount)
  if (match === null) throw new Error(`not a ${currency} amount: ${amount}`)
  return BigInt(match[1] ?? "") * (currency === "USD" ? 100n : 1n) + BigInt(match[2] || "0")
}

const md5Hex = (text: string) => createHash("md5").update(text, "utf8").digest("hex")

describe("crc16CcittFalse", () => {
  it("matches the catalogue check value 0x29B1 for \"123456789\"", () => {
    expect(crc16CcittFalse("123456789")).toBe(0x29b1)
    expect(referenceCrc("123456789")).toBe(0x29b1)
  })

  it("is 0xFFFF (the initial value) for the empty string", () => {
    expect(crc16CcittFalse("")).toBe(0xffff)
  })

  it("agrees with the independent table-driven routine", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        expect(crc16CcittFalse(text)).toBe(referenceCrc(text))
      })
    )
  })
})

describe("buildKhqr", () => {
  it("encodes the test merchant's USD payment field by field", () => {
    const { payload, md5 } = build({ ...baseInput, billNumber: "order-1" })
    expect(tagsOf(payload)).toEqual(["00", "01", "29", "52", "53", "54", "58", "59", "60", "62", "99", "63"])
    expect(decode(payload)).toEqual(expect.objectContaining({
      payloadFormatIndicator: "01",
      pointofInitiationMethod: "12",
      merchantType: "29",
      bakongAccountID: "test_merchant@devb",
      accountInformation: null,
      acquiringBank: "Dev Bank",
      merchantCategoryCode: "5999",
      transactionCurrency: "840",
      transactionAmount: "12.50",
      countryCode: "KH",
      merchantName: "KHQR TEST MERCHANT",
      merchantCity: "Phnom Penh",
      billNumber: "order-1",
      storeLabel: null,
      terminalLabel: null,
      creationTimestamp: "1714557600000",
      expirationTimestamp: "1714558500000",
      crc: payload.slice(-4)
    }))
    expect(crcVerifies(payload)).toBe(true)
    expect(md5).toBe(md5Hex(payload))
    expect(md5).toMatch(/^[0-9a-f]{32}$/)
  })

  it("produces exactly the expected payload for a fixed input (golden vector)", () => {
    const { payload } = build({
      ...baseInput,
      billNumber: "order-1",
      createdAt: new Date(1_700_000_000_000),
      expiresAt: new Date(1_700_000_900_000)
    })
    expect(payload).toBe(
      "000201" + "010212" + "2934" + "0018test_merchant@devb" + "0208Dev Bank" + "52045999" + "5303840" +
        "540512.50" + "5802KH" + "5918KHQR TEST MERCHANT" + "6010Phnom Penh" + "6211" + "0107order-1" +
        "9934" + "00131700000000000" + "01131700000900000" + "6304" + "4E34"
    )
    expect(referenceCrc(payload.slice(0, -4))).toBe(0x4e34)
  })

  it("is a KHQR the SDK's own verify accepts (CRC, layout and a live expiry)", () => {
    const createdAt = new Date()
    const { payload } = build({ ...baseInput, billNumber: "order-1", createdAt, expiresAt: new Date(createdAt.getTime() + 15 * 60_000) })
    expect(BakongKHQR.verify(payload).isValid).toBe(true)
    expect(BakongKHQR.verify(payload.replace("12.50", "12.51")).isValid).toBe(false)
  })

  it("is deterministic: the same input gives the same payload and md5", () => {
    expect(build(baseInput)).toEqual(build({ ...baseInput }))
  })

  it("encodes a merchant account in tag 30 with its merchant id and bank, and a KHR amount without decimals", () => {
    const { payload } = build({
      merchantType: "merchant",
      bakongAccountId: "shop@aclb",
      merchantId: "M-000123",
      acquiringBank: "ACLEDA",
      merchantName: "Coffee Corner",
      merchantCity: "Siem Reap",
      currency: "KHR",
      amountMinor: 5000n,
      storeLabel: "Riverside",
      terminalLabel: "POS-2",
      merchantCategoryCode: "5812",
      createdAt: CREATED,
      expiresAt: EXPIRES
    })
    expect(tagsOf(payload)).toContain("30")
    expect(tagsOf(payload)).not.toContain("29")
    expect(decode(payload)).toEqual(expect.objectContaining({
      merchantType: "30",
      bakongAccountID: "shop@aclb",
      merchantID: "M-000123",
      acquiringBank: "ACLEDA",
      merchantCategoryCode: "5812",
      transactionCurrency: "116",
      transactionAmount: "5000",
      merchantName: "Coffee Corner",
      merchantCity: "Siem Reap",
      billNumber: null,
      storeLabel: "Riverside",
      terminalLabel: "POS-2"
    }))
    expect(crcVerifies(payload)).toBe(true)
  })

  it("leaves out tag 62 when there is no additional data, and sub-tags that are not given", () => {
    const { payload } = build({
      merchantType: "individual",
      bakongAccountId: "alice@wing",
      merchantName: "Alice",
      merchantCity: "Kampot",
      currency: "USD",
      amountMinor: 1n,
      createdAt: CREATED,
      expiresAt: EXPIRES
    })
    expect(tagsOf(payload)).not.toContain("62")
    expect(decode(payload)).toEqual(expect.objectContaining({
      bakongAccountID: "alice@wing",
      accountInformation: null,
      acquiringBank: null,
      transactionAmount: "0.01"
    }))
    expect(crcVerifies(payload)).toBe(true)
  })

  it("accepts values at exactly their maximum length", () => {
    const { payload } = build({
      ...baseInput,
      merchantName: "N".repeat(25),
      merchantCity: "C".repeat(15),
      billNumber: "B".repeat(25),
      storeLabel: "S".repeat(25),
      terminalLabel: "T".repeat(25),
      bakongAccountId: `${"a".repeat(27)}@devb`
    })
    const decoded = decode(payload)
    expect(decoded["merchantName"]).toHaveLength(25)
    expect(decoded["merchantCity"]).toHaveLength(15)
    expect(decoded["bakongAccountID"]).toBe(`${"a".repeat(27)}@devb`)
    expect(crcVerifies(payload)).toBe(true)
  })

  it("detects any change to the payload through the CRC", () => {
    const { payload } = build(baseInput)
    const altered = payload.replace("12.50", "12.51")
    expect(altered).not.toBe(payload)
    expect(crcVerifies(altered)).toBe(false)
  })
})

describe("buildKhqr rejections", () => {
  const cases: ReadonlyArray<readonly [string, Partial<KhqrInput>, KhqrField]> = [
    ["an overlong merchant name", { merchantName: "N".repeat(26) }, "merchantName"],
    ["an overlong merchant city", { merchantCity: "C".repeat(16) }, "merchantCity"],
    ["an overlong bill number", { billNumber: "B".repeat(26) }, "billNumber"],
    ["an overlong store label", { storeLabel: "S".repeat(26) }, "storeLabel"],
    ["an overlong terminal label", { terminalLabel: "T".repeat(26) }, "terminalLabel"],
    ["an overlong account id", { bakongAccountId: `${"a".repeat(28)}@devb` }, "bakongAccountId"],
    ["an overlong merchant id", { merchantId: "M".repeat(33) }, "merchantId"],
    ["an overlong acquiring bank", { acquiringBank: "A".repeat(33) }, "acquiringBank"],
    ["a Khmer merchant name", { merchantName: "ហាងកាហ្វេ" }, "merchantName"],
    ["an accented merchant city", { merchantCity: "Sîem Reap" }, "merchantCity"],
    ["a control character in the bill number", { billNumber: "order\n1" }, "billNumber"],
    ["an emoji in the store label", { storeLabel: "Shop 😀" }, "storeLabel"],
    ["an empty merchant name", { merchantName: "" }, "merchantName"],
    ["an empty optional bill number", { billNumber: "" }, "billNumber"],
    ["an account id without a bank", { bakongAccountId: "test_merchant" }, "bakongAccountId"],
    ["a merchant category code that is not 4 digits", { merchantCategoryCode: "599" }, "merchantCategoryCode"],
    ["a zero amount", { amountMinor: 0n }, "amountMinor"],
    ["a negative amount", { amountMinor: -100n }, "amountMinor"],
    // "10000000000.00" is 14 characters; EMVCo allows 13.
    ["a USD amount longer than 13 characters", { amountMinor: 1_000_000_000_000n }, "amountMinor"],
    ["a KHR amount longer than 13 digits", { currency: "KHR", amountMinor: 10_000_000_000_000n }, "amountMinor"],
    ["an expiry before the creation", { expiresAt: new Date(CREATED.getTime() - 1) }, "expiresAt"],
    ["an expiry equal to the creation", { expiresAt: CREATED }, "expiresAt"],
    ["an invalid creation date", { createdAt: new Date(Number.NaN) }, "createdAt"],
    ["a creation time of fewer than 13 digits", { createdAt: new Date(999_999_999_999) }, "createdAt"],
    [
      "a merchant account without a merchant id",
      { merchantType: "merchant", acquiringBank: "Dev Bank" },
      "merchantId"
    ],
    [
      "a merchant account without an acquiring bank",
      { merchantType: "merchant", merchantId: "M1", acquiringBank: undefined },
      "acquiringBank"
    ],
    [
      "an account template too long for its two-digit length",
      { bakongAccountId: `${"a".repeat(27)}@devb`, merchantId: "M".repeat(32), acquiringBank: "A".repeat(32) },
      "bakongAccountId"
    ]
  ]

  for (const [name, change, field] of cases) {
    it(`rejects ${name} naming ${field}`, () => {
      const error = rejection({ ...baseInput, ...change })
      expect(error.field).toBe(field)
      expect(error.message).toContain(field === "amountMinor" ? "amount" : field)
    })
  }

  it("says to transliterate non-ASCII text", () => {
    expect(rejection({ ...baseInput, merchantName: "Café" }).message).toMatch(/ASCII.*transliterate/)
  })

  it("becomes an InvalidRequest naming the request parameter", () => {
    const error = rejection({ ...baseInput, billNumber: "x".repeat(40) })
    const asRequest = error.toInvalidRequest("reference_id")
    expect(asRequest).toBeInstanceOf(InvalidRequest)
    expect(asRequest.param).toBe("reference_id")
    // The message speaks of the client's parameter, not the KHQR field behind it.
    expect(asRequest.message).toBe(error.message.replace(/^billNumber/, "reference_id"))
    expect(error.toInvalidRequest().param).toBe("billNumber")
    expect(error.toInvalidRequest().message).toBe(error.message)
  })

  it.effect("fails an Effect with KhqrInvalid when yielded there", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(Effect.gen(function*() {
        return yield* buildKhqr({ ...baseInput, merchantCity: "x".repeat(20) })
      }))
      expect(Either.isLeft(result) && result.left._tag).toBe("KhqrInvalid")
    }))
})

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const printable = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength, maxLength })
const accountPart = (maxLength: number) =>
  fc.string({
    unit: fc.integer({ min: 0x21, max: 0x7e }).filter((code) => code !== 0x40).map((code) => String.fromCharCode(code)),
    minLength: 1,
    maxLength
  })
const optional = <A>(arbitrary: fc.Arbitrary<A>) => fc.option(arbitrary, { nil: undefined })

const MIN_MS = 1_000_000_000_000
const MAX_MS = 9_999_999_999_999

const validInput: fc.Arbitrary<KhqrInput> = fc.record({
  merchantType: fc.constantFrom("individual" as const, "merchant" as const),
  bakongAccountId: fc.tuple(accountPart(20), accountPart(11)).map(([name, bank]) => `${name}@${bank}`),
  // 4 + 32 + 4 + 27 + 4 + 28 = 99: the account template always fits its two-digit length.
  merchantId: printable(1, 27),
  acquiringBank: printable(1, 28),
  dropOptionalAccountParts: fc.boolean(),
  merchantName: printable(1, 25),
  merchantCity: printable(1, 15),
  currency: fc.constantFrom("USD" as const, "KHR" as const),
  amountSeed: fc.bigInt({ min: 1n, max: 9_999_999_999_999n }),
  billNumber: optional(printable(1, 25)),
  storeLabel: optional(printable(1, 25)),
  terminalLabel: optional(printable(1, 25)),
  createdMs: fc.integer({ min: MIN_MS, max: MAX_MS - 1 }),
  lifetimeMs: fc.integer({ min: 1, max: 7 * 24 * 3600 * 1000 }),
  merchantCategoryCode: optional(fc.stringMatching(/^\d{4}$/))
}).map((r) => {
  const dropParts = r.dropOptionalAccountParts && r.merchantType === "individual"
  return {
    merchantType: r.merchantType,
    bakongAccountId: r.bakongAccountId,
    merchantId: dropParts ? undefined : r.merchantId,
    acquiringBank: dropParts ? undefined : r.acquiringBank,
    merchantName: r.merchantName,
    merchantCity: r.merchantCity,
    currency: r.currency,
    // At most 13 characters: "9999999999.99" USD, "9999999999999" KHR.
    amountMinor: r.currency === "USD" ? (r.amountSeed % 999_999_999_999n) + 1n : r.amountSeed,
    billNumber: r.billNumber,
    storeLabel: r.storeLabel,
    terminalLabel: r.terminalLabel,
    createdAt: new Date(r.createdMs),
    expiresAt: new Date(Math.min(r.createdMs + r.lifetimeMs, MAX_MS)),
    merchantCategoryCode: r.merchantCategoryCode
  }
})

describe("buildKhqr properties", () => {
  it("every valid input gives a payload that parses, verifies and carries every value back", () => {
    fc.assert(
      fc.property(validInput, (input) => {
        const { payload, md5 } = build(input)
        expect(payload).toMatch(/^[\x20-\x7E]+$/)
        expect(crcVerifies(payload)).toBe(true)
        expect(md5).toBe(md5Hex(payload))

        const tags = tagsOf(payload)
        expect(new Set(tags).size).toBe(tags.length)
        expect(tags.slice(0, 2)).toEqual(["00", "01"])
        expect(tags.at(-1)).toBe("63")
        expect(tags.at(-2)).toBe("99")
        const accountTag = input.merchantType === "individual" ? "29" : "30"
        expect(tags).toContain(accountTag)
        expect(tags).not.toContain(input.merchantType === "individual" ? "30" : "29")

        const decoded = decode(payload)
        expect(decoded.merchantType).toBe(accountTag)
        expect(decoded["payloadFormatIndicator"]).toBe("01")
        expect(decoded["pointofInitiationMethod"]).toBe("12")
        expect(decoded["bakongAccountID"]).toBe(input.bakongAccountId)
        // The SDK names sub-tag 01 after the account's kind: account information (29) or merchant id (30).
        expect(decoded[input.merchantType === "individual" ? "accountInformation" : "merchantID"]).toBe(input.merchantId ?? null)
        expect(decoded["acquiringBank"]).toBe(input.acquiringBank ?? null)

        expect(decoded["merchantCategoryCode"]).toBe(input.merchantCategoryCode ?? "5999")
        expect(decoded["transactionCurrency"]).toBe(input.currency === "USD" ? "840" : "116")
        expect(decoded["countryCode"]).toBe("KH")
        expect(decoded["merchantName"]).toBe(input.merchantName)
        expect(decoded["merchantCity"]).toBe(input.merchantCity)

        const amount = decoded["transactionAmount"] ?? ""
        expect(amount.length).toBeLessThanOrEqual(13)
        expect(amount).toMatch(input.currency === "USD" ? /^\d+\.\d{2}$/ : /^\d+$/)
        expect(readAmountMinor(amount, input.currency)).toBe(input.amountMinor)

        const noAdditionalData = input.billNumber === undefined && input.storeLabel === undefined &&
          input.terminalLabel === undefined
        expect(tags.includes("62")).toBe(!noAdditionalData)
        expect(decoded["billNumber"]).toBe(input.billNumber ?? null)
        expect(decoded["storeLabel"]).toBe(input.storeLabel ?? null)
        expect(decoded["terminalLabel"]).toBe(input.terminalLabel ?? null)

        expect(decoded["creationTimestamp"]).toMatch(/^\d{13}$/)
        expect(Number(decoded["creationTimestamp"])).toBe(input.createdAt.getTime())
        expect(Number(decoded["expirationTimestamp"])).toBe(input.expiresAt.getTime())
      }),
      { numRuns: 500 }
    )
  })

  it("any non-ASCII character in the merchant name is rejected, never encoded", () => {
    const withNonAscii = fc.tuple(printable(0, 10), fc.integer({ min: 0x80, max: 0xffff }), printable(0, 10))
      .filter(([, code]) => code < 0xd800 || code > 0xdfff)
      .map(([before, code, after]) => before + String.fromCharCode(code) + after)
    fc.assert(
      fc.property(withNonAscii, (merchantName) => {
        expect(rejection({ ...baseInput, merchantName }).field).toBe("merchantName")
      })
    )
  })
})
