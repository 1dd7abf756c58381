import { describe, expect, it } from "@effect/vitest"
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
// An independent reader: written from the EMVCo layout, sharing nothing with the encoder.
// ---------------------------------------------------------------------------------------------

interface Field {
  readonly tag: string
  readonly value: string
}

const parseTlv = (text: string): ReadonlyArray<Field> => {
  const fields: Array<Field> = []
  let position = 0
  while (position < text.length) {
    const header = text.slice(position, position + 4)
    if (!/^\d{4}$/.test(header)) throw new Error(`bad TLV header "${header}" at ${position} of ${text}`)
    const tag = header.slice(0, 2)
    const length = Number(header.slice(2))
    const value = text.slice(position + 4, position + 4 + length)
    if (value.length !== length) throw new Error(`TLV ${tag} runs past the end of ${text}`)
    fields.push({ tag, value })
    position += 4 + length
  }
  return fields
}

const asMap = (fields: ReadonlyArray<Field>): ReadonlyMap<string, string> => {
  const map = new Map<string, string>()
  for (const { tag, value } of fields) {
    if (map.has(tag)) throw new Error(`tag ${tag} appears twice`)
    map.set(tag, value)
  }
  return map
}

// Table-driven, unlike the encoder's bitwise loop.
const CRC_TABLE = Array.from({ length: 256 }, (_, index) => {
  let value = index << 8
  for (let bit = 0; bit < 8; bit++) value = value & 0x8000 ? (value << 1) ^ 0x1021 : value << 1
  return value & 0xffff
})
const referenceCrc = (text: string): number => {
  let crc = 0xffff
  for (const byte of Buffer.from(text, "utf8")) {
    crc = ((crc << 8) & 0xffff) ^ (CRC_TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0)
  }
  return crc
}

const crcVerifies = (payload: string): boolean => {
  const tail = payload.slice(-8)
  if (!/^6304[0-9A-F]{4}$/.test(tail)) return false
  return referenceCrc(payload.slice(0, -4)) === Number.parseInt(tail.slice(4), 16)
}

// ---------------------------------------------------------------------------------------------

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
    const fields = parseTlv(payload)
    expect(fields.map((field) => field.tag)).toEqual(["00", "01", "29", "52", "53", "54", "58", "59", "60", "62", "99", "63"])
    const top = asMap(fields)
    expect(top.get("00")).toBe("01")
    expect(top.get("01")).toBe("12")
    expect(parseTlv(top.get("29") ?? "")).toEqual([
      { tag: "00", value: "test_merchant@devb" },
      { tag: "02", value: "Dev Bank" }
    ])
    expect(top.get("52")).toBe("5999")
    expect(top.get("53")).toBe("840")
    expect(top.get("54")).toBe("12.50")
    expect(top.get("58")).toBe("KH")
    expect(top.get("59")).toBe("KHQR TEST MERCHANT")
    expect(top.get("60")).toBe("Phnom Penh")
    expect(parseTlv(top.get("62") ?? "")).toEqual([{ tag: "01", value: "order-1" }])
    expect(parseTlv(top.get("99") ?? "")).toEqual([
      { tag: "00", value: "1714557600000" },
      { tag: "01", value: "1714558500000" }
    ])
    expect(top.get("63")).toMatch(/^[0-9A-F]{4}$/)
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
    const top = asMap(parseTlv(payload))
    expect(top.has("29")).toBe(false)
    expect(parseTlv(top.get("30") ?? "")).toEqual([
      { tag: "00", value: "shop@aclb" },
      { tag: "01", value: "M-000123" },
      { tag: "02", value: "ACLEDA" }
    ])
    expect(top.get("52")).toBe("5812")
    expect(top.get("53")).toBe("116")
    expect(top.get("54")).toBe("5000")
    expect(top.get("59")).toBe("Coffee Corner")
    expect(top.get("60")).toBe("Siem Reap")
    expect(parseTlv(top.get("62") ?? "")).toEqual([
      { tag: "03", value: "Riverside" },
      { tag: "07", value: "POS-2" }
    ])
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
    const top = asMap(parseTlv(payload))
    expect(top.has("62")).toBe(false)
    expect(parseTlv(top.get("29") ?? "")).toEqual([{ tag: "00", value: "alice@wing" }])
    expect(top.get("54")).toBe("0.01")
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
    const top = asMap(parseTlv(payload))
    expect(top.get("59")).toHaveLength(25)
    expect(top.get("60")).toHaveLength(15)
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

        const fields = parseTlv(payload)
        const top = asMap(fields)
        expect(fields[0]).toEqual({ tag: "00", value: "01" })
        expect(fields[1]).toEqual({ tag: "01", value: "12" })
        expect(fields.at(-1)?.tag).toBe("63")
        expect(fields.at(-2)?.tag).toBe("99")

        const accountTag = input.merchantType === "individual" ? "29" : "30"
        expect(top.has(input.merchantType === "individual" ? "30" : "29")).toBe(false)
        const account = asMap(parseTlv(top.get(accountTag) ?? ""))
        expect(account.get("00")).toBe(input.bakongAccountId)
        expect(account.get("01")).toBe(input.merchantId)
        expect(account.get("02")).toBe(input.acquiringBank)

        expect(top.get("52")).toBe(input.merchantCategoryCode ?? "5999")
        expect(top.get("53")).toBe(input.currency === "USD" ? "840" : "116")
        expect(top.get("58")).toBe("KH")
        expect(top.get("59")).toBe(input.merchantName)
        expect(top.get("60")).toBe(input.merchantCity)

        const amount = top.get("54") ?? ""
        expect(amount.length).toBeLessThanOrEqual(13)
        expect(amount).toMatch(input.currency === "USD" ? /^\d+\.\d{2}$/ : /^\d+$/)
        expect(readAmountMinor(amount, input.currency)).toBe(input.amountMinor)

        const additional = top.get("62")
        if (input.billNumber === undefined && input.storeLabel === undefined && input.terminalLabel === undefined) {
          expect(additional).toBeUndefined()
        } else {
          const data = asMap(parseTlv(additional ?? ""))
          expect(data.get("01")).toBe(input.billNumber)
          expect(data.get("03")).toBe(input.storeLabel)
          expect(data.get("07")).toBe(input.terminalLabel)
        }

        const timestamps = asMap(parseTlv(top.get("99") ?? ""))
        expect(timestamps.get("00")).toMatch(/^\d{13}$/)
        expect(Number(timestamps.get("00"))).toBe(input.createdAt.getTime())
        expect(Number(timestamps.get("01"))).toBe(input.expiresAt.getTime())
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
