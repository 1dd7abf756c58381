/**
 * KHQR: the EMVCo merchant-presented QR payload of Cambodia's Bakong network, as a payment shows it.
 *
 * The payload is a run of TLV fields (2-digit tag, 2-digit length, value) ending in a CRC-16 in tag `63`;
 * a banking app reads the account, amount and expiry from it, and Bakong finds the transaction again by
 * the MD5 of the exact payload text. So this encoder is pure and deterministic: the same input always
 * gives the same payload and MD5, and an input that a banking app would refuse is refused here, with the
 * field to fix, before any payment is stored.
 */
import { createHash } from "node:crypto"
import { Data, Either } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
import { type Currency, formatAmount } from "../platform/Money.ts"

export type KhqrMerchantType = "individual" | "merchant"

export interface KhqrInput {
  /** `individual` (a personal Bakong account, tag 29) or `merchant` (a bank's merchant account, tag 30). */
  readonly merchantType: KhqrMerchantType
  /** The Bakong account that receives the money, `name@bank`. */
  readonly bakongAccountId: string
  /** The merchant id (merchant accounts) or account information (individual accounts). */
  readonly merchantId?: string | undefined
  readonly acquiringBank?: string | undefined
  readonly merchantName: string
  readonly merchantCity: string
  readonly currency: Currency
  /** The amount in minor units of `currency` (cents, riel). */
  readonly amountMinor: bigint
  readonly billNumber?: string | undefined
  readonly storeLabel?: string | undefined
  readonly terminalLabel?: string | undefined
  readonly createdAt: Date
  readonly expiresAt: Date
  /** ISO 18245 merchant category code; "5999" (miscellaneous retail) when not given. */
  readonly merchantCategoryCode?: string | undefined
}

export interface KhqrPayload {
  readonly payload: string
  /** Lowercase hex MD5 of `payload`: the key under which Bakong reports the transaction. */
  readonly md5: string
}

export type KhqrField =
  | "merchantType"
  | "bakongAccountId"
  | "merchantId"
  | "acquiringBank"
  | "merchantName"
  | "merchantCity"
  | "currency"
  | "amountMinor"
  | "billNumber"
  | "storeLabel"
  | "terminalLabel"
  | "createdAt"
  | "expiresAt"
  | "merchantCategoryCode"

/** An input the KHQR format cannot carry; `field` names the input property to fix. */
export class KhqrInvalid extends Data.TaggedError("KhqrInvalid")<{
  readonly field: KhqrField
  readonly message: string
}> {
  /**
   * The same rejection as the API's 400 answer. `param` is the request parameter the field came from
   * (e.g. `reference_id` for `billNumber`); without it the field name is used.
   */
  toInvalidRequest(param?: string): InvalidRequest {
    // Messages start with the KHQR field's name; the client knows its own parameter's name instead.
    const message = param !== undefined && this.message.startsWith(this.field)
      ? param + this.message.slice(this.field.length)
      : this.message
    return new InvalidRequest({ message, param: param ?? this.field })
  }
}

/**
 * The test merchant of the Bakong sandbox (`@devb` is the development bank): test-mode payments of a store
 * without its own Bakong account are encoded for it, so their QR codes scan in a sandbox app and can never
 * move real money.
 */
export const TEST_MERCHANT = {
  merchantType: "individual",
  bakongAccountId: "test_merchant@devb",
  merchantName: "KHQR TEST MERCHANT",
  merchantCity: "Phnom Penh",
  acquiringBank: "Dev Bank"
} as const satisfies Partial<KhqrInput>

// ---------------------------------------------------------------------------------------------
// CRC
// ---------------------------------------------------------------------------------------------

const textEncoder = new TextEncoder()

/**
 * CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor) of the UTF-8 bytes of `s`,
 * the checksum EMVCo QR payloads carry in tag `63`. "123456789" gives 0x29B1.
 */
export const crc16CcittFalse = (s: string): number => {
  let crc = 0xffff
  for (const byte of textEncoder.encode(s)) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
  }
  return crc
}

const crcHex = (s: string): string => crc16CcittFalse(s).toString(16).toUpperCase().padStart(4, "0")

// ---------------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------------

const TAG = {
  payloadFormat: "00",
  initiationMethod: "01",
  individualAccount: "29",
  merchantAccount: "30",
  merchantCategoryCode: "52",
  currency: "53",
  amount: "54",
  countryCode: "58",
  merchantName: "59",
  merchantCity: "60",
  additionalData: "62",
  crc: "63",
  timestamps: "99"
} as const

const ACCOUNT_SUBTAG = { bakongAccountId: "00", merchantId: "01", acquiringBank: "02" } as const
const ADDITIONAL_SUBTAG = { billNumber: "01", storeLabel: "03", terminalLabel: "07" } as const
const TIMESTAMP_SUBTAG = { createdAt: "00", expiresAt: "01" } as const

// ISO 4217 numeric codes.
const CURRENCY_CODE: Record<Currency, string> = { USD: "840", KHR: "116" }

// Maximum lengths of the KHQR specification; a banking app refuses a longer value.
const MAX_LENGTH = {
  bakongAccountId: 32,
  merchantId: 32,
  acquiringBank: 32,
  merchantName: 25,
  merchantCity: 15,
  billNumber: 25,
  storeLabel: 25,
  terminalLabel: 25
} as const satisfies Partial<Record<KhqrField, number>>

// EMVCo limits the transaction amount (tag 54) to 13 characters, the decimal point included.
const MAX_AMOUNT_LENGTH = 13
// A TLV length has two digits.
const MAX_VALUE_LENGTH = 99
// 13 digits of epoch milliseconds cover 2001-09-09 to 2286-11-20.
const MIN_EPOCH_MS = 1_000_000_000_000
const MAX_EPOCH_MS = 9_999_999_999_999

const PRINTABLE_ASCII = /^[\x20-\x7E]*$/
const BAKONG_ACCOUNT_ID = /^[^@\s]+@[^@\s]+$/
const MERCHANT_CATEGORY_CODE = /^\d{4}$/
const DEFAULT_MERCHANT_CATEGORY_CODE = "5999"

const tlv = (tag: string, value: string): string => {
  // Every value is validated before it gets here; a longer one is a bug in this module.
  if (value.length > MAX_VALUE_LENGTH) throw new Error(`KHQR tag ${tag} value is ${value.length} characters`)
  return tag + value.length.toString().padStart(2, "0") + value
}

/** TLV fields of the values that are present, in the order given. */
const tlvs = (fields: ReadonlyArray<readonly [string, string | undefined]>): string =>
  fields.map(([tag, value]) => (value === undefined ? "" : tlv(tag, value))).join("")

/**
 * The first problem of a payment's values, or undefined. Plain checks in order, rather than a generator
 * of `Either`s: every payment's creation runs them.
 */
type Problem = KhqrInvalid | undefined

const invalid = (field: KhqrField, message: string): KhqrInvalid => new KhqrInvalid({ field, message })

const checkText = (
  field: keyof typeof MAX_LENGTH,
  value: string | undefined,
  required: boolean
): Problem => {
  if (value === undefined) return required ? invalid(field, `${field} is required`) : undefined
  if (value.length === 0) {
    return invalid(field, required ? `${field} must not be empty` : `${field} must not be empty when given; omit it instead`)
  }
  if (!PRINTABLE_ASCII.test(value)) {
    return invalid(
      field,
      `${field} must be printable ASCII (letters, digits, spaces and punctuation) as KHQR requires; ` +
        `transliterate Khmer or accented text`
    )
  }
  if (value.length > MAX_LENGTH[field]) {
    return invalid(field, `${field} must be at most ${MAX_LENGTH[field]} characters in a KHQR, got ${value.length}`)
  }
  return undefined
}

const checkTimestamp = (field: "createdAt" | "expiresAt", value: Date): Problem => {
  const ms = value instanceof Date ? value.getTime() : Number.NaN
  if (!Number.isFinite(ms)) return invalid(field, `${field} must be a valid date`)
  if (ms < MIN_EPOCH_MS || ms > MAX_EPOCH_MS) {
    return invalid(field, `${field} must be between 2001-09-09 and 2286-11-20 (13 digits of epoch milliseconds)`)
  }
  return undefined
}

const validate = (input: KhqrInput): { readonly amount: string; readonly mcc: string } | KhqrInvalid => {
  if (input.merchantType !== "individual" && input.merchantType !== "merchant") {
    return invalid("merchantType", `merchantType must be "individual" or "merchant"`)
  }
  const accountIdProblem = checkText("bakongAccountId", input.bakongAccountId, true)
  if (accountIdProblem !== undefined) return accountIdProblem
  if (!BAKONG_ACCOUNT_ID.test(input.bakongAccountId)) {
    return invalid("bakongAccountId", `bakongAccountId must be a Bakong account id such as "name@bank"`)
  }
  const accountProblem = checkText("merchantId", input.merchantId, false) ??
    checkText("acquiringBank", input.acquiringBank, false)
  if (accountProblem !== undefined) return accountProblem
  // A merchant account is identified by its acquiring bank and the merchant id that bank assigned.
  if (input.merchantType === "merchant") {
    if (input.merchantId === undefined) return invalid("merchantId", "merchantId is required for a merchant account")
    if (input.acquiringBank === undefined) {
      return invalid("acquiringBank", "acquiringBank is required for a merchant account")
    }
  }
  const textProblem = checkText("merchantName", input.merchantName, true) ??
    checkText("merchantCity", input.merchantCity, true) ??
    checkText("billNumber", input.billNumber, false) ??
    checkText("storeLabel", input.storeLabel, false) ??
    checkText("terminalLabel", input.terminalLabel, false)
  if (textProblem !== undefined) return textProblem

  const mcc = input.merchantCategoryCode ?? DEFAULT_MERCHANT_CATEGORY_CODE
  if (!MERCHANT_CATEGORY_CODE.test(mcc)) {
    return invalid("merchantCategoryCode", "merchantCategoryCode must be 4 digits, such as \"5999\"")
  }

  if (input.currency !== "USD" && input.currency !== "KHR") {
    return invalid("currency", `currency must be "USD" or "KHR"`)
  }
  if (typeof input.amountMinor !== "bigint" || input.amountMinor <= 0n) {
    return invalid("amountMinor", "amount must be greater than zero")
  }
  const amount = formatAmount(input.amountMinor, input.currency)
  if (amount.length > MAX_AMOUNT_LENGTH) {
    return invalid(
      "amountMinor",
      `amount ${amount} ${input.currency} is too large for a KHQR: at most ${MAX_AMOUNT_LENGTH} characters`
    )
  }

  const timeProblem = checkTimestamp("createdAt", input.createdAt) ?? checkTimestamp("expiresAt", input.expiresAt)
  if (timeProblem !== undefined) return timeProblem
  if (input.expiresAt.getTime() <= input.createdAt.getTime()) {
    return invalid("expiresAt", "expiresAt must be after createdAt")
  }
  return { amount, mcc }
}

/**
 * Encodes a dynamic KHQR for one payment. Fails with `KhqrInvalid` when a value is missing, too long, not
 * printable ASCII, or otherwise not representable; `KhqrInvalid.toInvalidRequest` turns that into a 400.
 */
export const buildKhqr = (input: KhqrInput): Either.Either<KhqrPayload, KhqrInvalid> => {
  const valid = validate(input)
  if (valid instanceof KhqrInvalid) return Either.left(valid)
  const { amount, mcc } = valid
  const accountTemplate = tlvs([
    [ACCOUNT_SUBTAG.bakongAccountId, input.bakongAccountId],
    [ACCOUNT_SUBTAG.merchantId, input.merchantId],
    [ACCOUNT_SUBTAG.acquiringBank, input.acquiringBank]
  ])
  // Each part fits its own limit, but all three at full length overflow the template's two-digit length.
  if (accountTemplate.length > MAX_VALUE_LENGTH) {
    return Either.left(invalid(
      "bakongAccountId",
      `bakongAccountId, merchantId and acquiringBank together are too long for a KHQR: ` +
        `${accountTemplate.length} of at most ${MAX_VALUE_LENGTH} characters once encoded`
    ))
  }
  const additionalData = tlvs([
    [ADDITIONAL_SUBTAG.billNumber, input.billNumber],
    [ADDITIONAL_SUBTAG.storeLabel, input.storeLabel],
    [ADDITIONAL_SUBTAG.terminalLabel, input.terminalLabel]
  ])
  const timestamps = tlvs([
    [TIMESTAMP_SUBTAG.createdAt, String(input.createdAt.getTime())],
    [TIMESTAMP_SUBTAG.expiresAt, String(input.expiresAt.getTime())]
  ])

  const body = tlvs([
    [TAG.payloadFormat, "01"],
    // "12": a dynamic QR, shown for one transaction (a static one, "11", is printed and reused).
    [TAG.initiationMethod, "12"],
    [input.merchantType === "individual" ? TAG.individualAccount : TAG.merchantAccount, accountTemplate],
    [TAG.merchantCategoryCode, mcc],
    [TAG.currency, CURRENCY_CODE[input.currency]],
    [TAG.amount, amount],
    [TAG.countryCode, "KH"],
    [TAG.merchantName, input.merchantName],
    [TAG.merchantCity, input.merchantCity],
    [TAG.additionalData, additionalData.length > 0 ? additionalData : undefined],
    [TAG.timestamps, timestamps]
  ])
  // The checksum covers its own tag and length.
  const unsigned = `${body}${TAG.crc}04`
  const payload = unsigned + crcHex(unsigned)
  return Either.right({ payload, md5: createHash("md5").update(payload, "utf8").digest("hex") })
}
