/**
 * Payments over HTTP, black-box: creation and its KHQR (read back with a parser and CRC written here,
 * sharing nothing with the encoder), validation, authentication and tenancy, test and live mode, every
 * row of the lifecycle table and every move it forbids, refunds (shape, listing, racing), idempotency
 * of create and refund, MFA-gated high-value refunds, listing with cursors and filters, expiry without a
 * reader, and the outbox events of a payment's life.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { OrganizationId, PaymentId, StoreId } from "../../domain/Ids.ts"
import { DEFAULT_LIST_LIMIT, type ListParams } from "../../domain/Lists.ts"
import {
  type CreatePayment,
  type CreateRefund,
  type Payment,
  PaymentList,
  type PaymentListParams,
  type Refund,
  type RefundList,
  type SimulatePayment
} from "../../domain/Payments.ts"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { addMember, createStore, type SignedUp, signUp, TEST_PASSWORD } from "../support/Accounts.ts"
import { clientAs, expectFailure, wireKeys } from "../support/Client.ts"
import { type CallResult, makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

// Raw calls only for what the typed client cannot send: malformed bodies and out-of-schema parameters.
const call = makeCall()

type SimulateStatus = typeof SimulatePayment.Type["status"]

// ---------------------------------------------------------------------------------------------
// An independent KHQR reader: EMVCo TLV fields and CRC-16/CCITT-FALSE, written from the format.
// ---------------------------------------------------------------------------------------------

interface TlvField {
  readonly tag: string
  readonly value: string
}

/** Splits `text` into its TLV fields (two-digit tag, two-digit length, value); throws on anything else. */
const readTlv = (text: string): ReadonlyArray<TlvField> => {
  const fields: Array<TlvField> = []
  let at = 0
  while (at < text.length) {
    const tag = text.substring(at, at + 2)
    const lengthText = text.substring(at + 2, at + 4)
    if (!/^\d\d$/.test(tag) || !/^\d\d$/.test(lengthText)) throw new Error(`not a TLV header at ${at}: ${text.substring(at)}`)
    const length = parseInt(lengthText, 10)
    const value = text.substring(at + 4, at + 4 + length)
    if (value.length !== length) throw new Error(`TLV ${tag} claims ${length} characters but ${value.length} remain`)
    fields.push({ tag, value })
    at += 4 + length
  }
  return fields
}

/** The fields of `text` by tag; a tag must not repeat. */
const tlvByTag = (text: string): Map<string, string> => {
  const map = new Map<string, string>()
  for (const field of readTlv(text)) {
    if (map.has(field.tag)) throw new Error(`tag ${field.tag} appears twice in ${text}`)
    map.set(field.tag, field.value)
  }
  return map
}

/** CRC-16/CCITT-FALSE bit by bit: poly 0x1021, init 0xFFFF, MSB first, no reflection, no final xor. */
const crc16 = (text: string): number => {
  let register = 0xffff
  for (const byte of Buffer.from(text, "utf8")) {
    for (let bit = 7; bit >= 0; bit--) {
      const inputBit = (byte >> bit) & 1
      const topBit = (register >> 15) & 1
      register = (register << 1) & 0xffff
      if ((inputBit ^ topBit) === 1) register ^= 0x1021
    }
  }
  return register
}

const md5 = (text: string) => createHash("md5").update(text, "utf8").digest("hex")

interface DecodedKhqr {
  readonly top: Map<string, string>
  readonly account: Map<string, string>
  readonly additional: Map<string, string> | undefined
  readonly timestamps: Map<string, string>
}

/** Reads a payment's KHQR and checks its frame: tag 63 last, 4 hex digits, the CRC of everything before. */
const decodeKhqr = (payload: string): DecodedKhqr => {
  const fields = readTlv(payload)
  expect(fields[0]).toEqual({ tag: "00", value: "01" })
  const last = fields[fields.length - 1]!
  expect(last.tag).toBe("63")
  expect(last.value).toMatch(/^[0-9A-F]{4}$/)
  expect(payload.endsWith(`6304${last.value}`)).toBe(true)
  const signed = payload.slice(0, payload.length - 4)
  expect(parseInt(last.value, 16)).toBe(crc16(signed))
  const top = tlvByTag(payload)
  const additional = top.get("62")
  return {
    top,
    account: tlvByTag(top.get("29") ?? ""),
    additional: additional === undefined ? undefined : tlvByTag(additional),
    timestamps: tlvByTag(top.get("99") ?? "")
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

const PAYMENT_FIELDS = [
  "amount",
  "amount_refunded",
  "branch_id",
  "checkout_url",
  "created_at",
  "currency",
  "customer_id",
  "description",
  "expires_at",
  "id",
  "livemode",
  "metadata",
  "object",
  "paid_at",
  "qr",
  "reference_id",
  "status",
  "store_id",
  "updated_at"
]

const REFUND_FIELDS = ["amount", "created_at", "currency", "id", "object", "payment_id", "reason", "status"]

const ADMIN_EMAIL = "payments-admin@example.test"

const CREDENTIALS = {
  bakong_account_id: "riverside_cafe@aclb",
  merchant_name: "Riverside Cafe",
  merchant_city: "Siem Reap",
  acquiring_bank: "ACLEDA Bank"
}

interface Merchant extends SignedUp {
  readonly storeId: string
  /** A test-mode API key secret of the store. */
  readonly key: string
}

/** The error envelope of a raw answer, for the requests the typed client cannot send (malformed input). */
const expectRawError = (response: CallResult, status: number, code: string, param?: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status)
  expect(response.body?.error?.code, JSON.stringify(response.body)).toBe(code)
  expect(typeof response.body.error.message).toBe("string")
  if (param !== undefined) expect(response.body.error.param, JSON.stringify(response.body)).toBe(param)
}

const apiKey = (app: TestAppShape, token: string, storeId: StoreId, mode: "test" | "live") =>
  Effect.gen(function*() {
    const api = yield* clientAs(app, token)
    const created = yield* api.apiKeys.create({ payload: { store_id: storeId, mode } })
    return created.secret
  })

const newStore = (app: TestAppShape, owner: SignedUp, name = "Test Store") =>
  Effect.gen(function*() {
    const store = yield* Effect.promise(() => createStore(app, owner.token, name))
    const key = yield* apiKey(app, owner.token, store.id, "test")
    return { ...owner, storeId: store.id, key } satisfies Merchant
  })

const newMerchant = (app: TestAppShape) =>
  Effect.flatMap(Effect.promise(() => signUp(app)), (owner) => newStore(app, owner))

/** Creates a payment (12.50 USD unless `payload` says otherwise); the typed client checks the 201. */
const createPayment = (
  app: TestAppShape,
  key: string,
  payload: Partial<CreatePayment> = {},
  idempotencyKey?: string
) =>
  Effect.flatMap(clientAs(app, key), (api) =>
    api.payments.create({
      payload: { amount: "12.50", currency: "USD", ...payload },
      headers: { "idempotency-key": idempotencyKey }
    }))

const newPayment = createPayment

const retrieve = (app: TestAppShape, key: string, id: PaymentId) =>
  Effect.flatMap(clientAs(app, key), (api) => api.payments.retrieve({ path: { id } }))

// The typed client always sends `limit` (the schema's type has its default filled in); the default
// itself is checked with a raw call.
const listPayments = (app: TestAppShape, token: string, urlParams: Partial<PaymentListParams> = {}) =>
  Effect.flatMap(clientAs(app, token), (api) => api.payments.list({ urlParams: { limit: DEFAULT_LIST_LIMIT, ...urlParams } }))

const listRefunds = (app: TestAppShape, token: string, id: PaymentId, urlParams: Partial<ListParams> = {}) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.payments.refunds({ path: { id }, urlParams: { limit: DEFAULT_LIST_LIMIT, ...urlParams } }))

const simulate = (app: TestAppShape, key: string, id: PaymentId, status: SimulateStatus) =>
  Effect.flatMap(clientAs(app, key), (api) => api.payments.simulate({ path: { id }, payload: { status } }))

const cancel = (app: TestAppShape, key: string, id: PaymentId) =>
  Effect.flatMap(clientAs(app, key), (api) => api.payments.cancel({ path: { id } }))

const refund = (
  app: TestAppShape,
  token: string,
  id: PaymentId,
  payload: CreateRefund = {},
  idempotencyKey?: string
) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.payments.refund({ path: { id }, payload, headers: { "idempotency-key": idempotencyKey } }))

type State = "pending" | "scanned" | "paid" | "expired" | "failed" | "cancelled" | "partially_refunded" | "refunded"
const STATES: ReadonlyArray<State> = [
  "pending",
  "scanned",
  "paid",
  "expired",
  "failed",
  "cancelled",
  "partially_refunded",
  "refunded"
]

type Action = "simulate:scanned" | "simulate:paid" | "simulate:failed" | "simulate:expired" | "cancel" | "refund"
const ACTIONS: ReadonlyArray<Action> = [
  "simulate:scanned",
  "simulate:paid",
  "simulate:failed",
  "simulate:expired",
  "cancel",
  "refund"
]

/** The lifecycle table: the only moves each state allows. */
const ALLOWED: Record<State, ReadonlyArray<Action>> = {
  pending: ["simulate:scanned", "simulate:failed", "simulate:expired", "cancel"],
  scanned: ["simulate:paid", "simulate:expired"],
  paid: ["refund"],
  partially_refunded: ["refund"],
  expired: [],
  failed: [],
  cancelled: [],
  refunded: []
}

const SIMULATED: Record<Exclude<Action, "cancel" | "refund">, SimulateStatus> = {
  "simulate:scanned": "scanned",
  "simulate:paid": "paid",
  "simulate:failed": "failed",
  "simulate:expired": "expired"
}

const act = (
  app: TestAppShape,
  key: string,
  id: PaymentId,
  action: Action
): Effect.Effect<unknown, Effect.Effect.Error<ReturnType<typeof refund>>> => {
  if (action === "cancel") return cancel(app, key, id)
  if (action === "refund") return refund(app, key, id, { amount: "1.00" })
  return simulate(app, key, id, SIMULATED[action])
}

/** A new 12.50 USD payment brought to `state` by the routes of its lifecycle. */
const paymentIn = (app: TestAppShape, key: string, state: State, payload: Partial<CreatePayment> = {}) =>
  Effect.gen(function*() {
    const payment = yield* newPayment(app, key, payload)
    const id = payment.id
    const steps: Record<State, ReadonlyArray<() => Effect.Effect<unknown, unknown>>> = {
      pending: [],
      scanned: [() => simulate(app, key, id, "scanned")],
      paid: [() => simulate(app, key, id, "scanned"), () => simulate(app, key, id, "paid")],
      expired: [() => simulate(app, key, id, "expired")],
      failed: [() => simulate(app, key, id, "failed")],
      cancelled: [() => cancel(app, key, id)],
      partially_refunded: [
        () => simulate(app, key, id, "scanned"),
        () => simulate(app, key, id, "paid"),
        () => refund(app, key, id, { amount: "2.50" })
      ],
      refunded: [
        () => simulate(app, key, id, "scanned"),
        () => simulate(app, key, id, "paid"),
        () => refund(app, key, id, {})
      ]
    }
    // Each step is a typed call: it fails the test unless it answers its declared 201.
    for (const step of steps[state]) yield* step()
    const current = yield* retrieve(app, key, id)
    expect(current.status).toBe(state)
    return current
  })

const verificationBody = (organizationId: OrganizationId) => ({
  organization_id: organizationId,
  business_name: "Riverside Cafe Co., Ltd.",
  registration_number: "KH-00012345",
  contact: { name: "Sok Dara", email: "dara@example.test" },
  documents: [{ type: "business_registration", url: "https://files.example.test/reg.pdf" }]
})

/** A merchant whose store is live: credentials, an approved verification, live mode on, and both keys. */
const liveMerchant = (app: TestAppShape) =>
  Effect.gen(function*() {
    const merchant = yield* newMerchant(app)
    const admin = yield* Effect.promise(() =>
      signUp(app, { email: ADMIN_EMAIL }).catch(async () => {
        // Already registered by an earlier test of this suite: sign in instead.
        const session = await Effect.runPromise(app.client.auth.login({ payload: { email: ADMIN_EMAIL, password: TEST_PASSWORD } }))
        return { token: session.access_token }
      })
    )
    const owner = yield* clientAs(app, merchant.token)
    const asAdmin = yield* clientAs(app, admin.token)
    yield* owner.stores.setCredentials({ path: { id: merchant.storeId }, payload: CREDENTIALS })
    const submitted = yield* owner.verification.submit({ payload: verificationBody(merchant.organizationId) })
    yield* asAdmin.verification.approve({ path: { id: submitted.id } })
    const live = yield* owner.stores.setLiveMode({ path: { id: merchant.storeId }, payload: { live_mode: true } })
    expect(live.live_mode).toBe(true)
    const liveKey = yield* apiKey(app, merchant.token, merchant.storeId, "live")
    return { ...merchant, liveKey }
  })

/** The ids of `created` (in creation order) as a newest-first list must order them. */
const newestFirstOrder = (created: ReadonlyArray<{ id: string; created_at: string }>) =>
  [...created]
    .map((item, index) => ({ item, index }))
    .sort((a, b) =>
      Date.parse(b.item.created_at) - Date.parse(a.item.created_at) ||
      (a.item.id < b.item.id ? 1 : a.item.id > b.item.id ? -1 : 0) ||
      b.index - a.index
    )
    .map(({ item }) => item.id)

const isSortedNewestFirst = (items: ReadonlyArray<{ id: string; created_at: string }>) =>
  items.every((item, i) => {
    if (i === 0) return true
    const previous = items[i - 1]!
    const dp = Date.parse(previous.created_at)
    const dc = Date.parse(item.created_at)
    return dp > dc || (dp === dc && previous.id > item.id)
  })

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

describe("payments", () => {
  layer(
    testAppLayer({ platformAdminEmails: [ADMIN_EMAIL], refundMfaThreshold: Option.none(), paymentDefaultExpirySeconds: 900 }),
    { timeout: 120_000, excludeTestServices: true }
  )("over HTTP", (it) => {
    it.effect("the independent CRC reader agrees with the CRC-16/CCITT-FALSE check value", () =>
      Effect.sync(() => {
        expect(crc16("123456789")).toBe(0x29b1)
        expect(crc16("")).toBe(0xffff)
      }))

    // -------------------------------------------------------------------------------------------
    // Create
    // -------------------------------------------------------------------------------------------

    it.effect("creates a pending payment with every field of the payment object and a valid KHQR", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const before = Date.now()
        const created = yield* Effect.flatMap(clientAs(app, merchant.key), (api) =>
          api.payments.create({
            payload: {
              amount: "12.50",
              currency: "USD",
              reference_id: "order-1",
              description: "Two iced coffees",
              metadata: { table: "7", waiter: "Sok" },
              expires_in: 600
            },
            headers: {},
            withResponse: true
          }))
        const after = Date.now()
        const [payment, response] = created
        // The keys on the wire, not those of the decoded class: nothing more, nothing less is answered.
        expect(yield* wireKeys(response)).toEqual(PAYMENT_FIELDS)
        expect(payment.id).toMatch(/^pay_[0-9A-Za-z]+$/)
        expect(payment).toMatchObject({
          object: "payment",
          status: "pending",
          amount: "12.50",
          currency: "USD",
          amount_refunded: "0.00",
          reference_id: "order-1",
          description: "Two iced coffees",
          metadata: { table: "7", waiter: "Sok" },
          livemode: false,
          store_id: merchant.storeId,
          paid_at: null
        })
        const createdAt = Date.parse(payment.created_at)
        const expiresAt = Date.parse(payment.expires_at)
        expect(new Date(createdAt).toISOString()).toBe(payment.created_at)
        expect(new Date(expiresAt).toISOString()).toBe(payment.expires_at)
        expect(new Date(Date.parse(payment.updated_at)).toISOString()).toBe(payment.updated_at)
        expect(createdAt).toBeGreaterThanOrEqual(before - 1000)
        expect(createdAt).toBeLessThanOrEqual(after + 1000)
        expect(expiresAt - createdAt).toBe(600_000)
        expect(Math.abs(expiresAt - (after + 600_000))).toBeLessThan(5_000)
        expect(() => new URL(payment.checkout_url)).not.toThrow()
        // Without PUBLIC_BASE_URL, the origin is the port the service is bound to.
        expect(new URL(payment.checkout_url).port).toBe(new URL(app.baseUrl).port)
        expect(payment.checkout_url.endsWith(`/checkout/${payment.id}`)).toBe(true)
        expect(Object.keys(payment.qr).sort()).toEqual(["md5", "payload"])
        expect(payment.qr.md5).toMatch(/^[0-9a-f]{32}$/)
        expect(payment.qr.md5).toBe(md5(payment.qr.payload))

        const khqr = decodeKhqr(payment.qr.payload)
        expect(khqr.top.get("00")).toBe("01")
        expect(khqr.top.get("01")).toBe("12")
        expect(khqr.account.get("00")).toBe("test_merchant@devb")
        expect(khqr.top.get("53")).toBe("840")
        expect(khqr.top.get("54")).toBe("12.50")
        expect(khqr.top.get("58")).toBe("KH")
        expect(khqr.top.get("59")).toBe("KHQR TEST MERCHANT")
        expect(khqr.top.get("60")).toBe("Phnom Penh")
        expect(khqr.additional?.get("01")).toBe("order-1")
        expect(khqr.timestamps.get("00")).toBe(String(createdAt))
        expect(khqr.timestamps.get("01")).toBe(String(expiresAt))

        // What was answered is what is stored.
        expect(yield* retrieve(app, merchant.key, payment.id)).toEqual(payment)
      }))

    it.effect("answers a new payment exactly as it is read back, metadata keys in the order the database keeps them", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const answers: Array<string> = []
        const recording = makeCall(answers)
        // Keys whose stored order (by UTF-8 length, then bytes) differs from the order sent and from
        // JavaScript's own string order: "\uFFFDa" and "\u{1D400}" are four bytes each, and their UTF-8
        // bytes order them the other way round from their UTF-16 code units.
        const metadata = {
          zz: "1",
          a: "2",
          "ß": "3",
          "é": "4",
          "\u{1D400}": "5",
          "\uFFFDa": "6",
          Z: "7",
          order_id: "8"
        }
        const created = yield* recording(app, "POST", "/v1/payments", {
          token: merchant.key,
          body: { amount: "3.00", currency: "USD", reference_id: "r-1", description: "Tea", metadata }
        })
        expect(created.status).toBe(201)
        const read = yield* recording(app, "GET", `/v1/payments/${created.body.id}`, { token: merchant.key })
        expect(read.status).toBe(200)
        expect(Object.keys(created.body.metadata)).toEqual(["Z", "a", "zz", "ß", "é", "\uFFFDa", "\u{1D400}", "order_id"])
        // Byte for byte: the creation's answer is the stored payment's.
        expect(answers[0]).toBe(answers[1])
      }))

    it.effect("creates KHR payments with whole riel, and applies the default expiry when expires_in is omitted", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const payment = yield* newPayment(app, merchant.key, { amount: "5000", currency: "KHR" })
        expect(payment).toMatchObject({
          amount: "5000",
          currency: "KHR",
          amount_refunded: "0",
          reference_id: null,
          description: null,
          metadata: {}
        })
        expect(Date.parse(payment.expires_at) - Date.parse(payment.created_at)).toBe(900_000)
        const khqr = decodeKhqr(payment.qr.payload)
        expect(khqr.top.get("53")).toBe("116")
        expect(khqr.top.get("54")).toBe("5000")
        // No reference_id: no bill number (and no empty additional-data template).
        expect(khqr.additional?.get("01")).toBeUndefined()
        expect(payment.qr.md5).toBe(md5(payment.qr.payload))

        // An amount with fewer decimals than the currency has is the same amount, written in full.
        const short = yield* newPayment(app, merchant.key, { amount: "12.5", currency: "USD" })
        expect(short.amount).toBe("12.50")
        expect(decodeKhqr(short.qr.payload).top.get("54")).toBe("12.50")
      }))

    it.effect("echoes metadata exactly as sent, or refuses it; it never drops keys silently", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const exact = { order: "A-17", ["k".repeat(40)]: "v", empty: "" }
        expect((yield* createPayment(app, merchant.key, { metadata: exact })).metadata).toEqual(exact)
        // Raw: the typed client would refuse these keys before sending them.
        for (const metadata of [{ order: "A-17", ["k".repeat(41)]: "v" }, { order: "A-17", "": "v" }]) {
          const response = yield* call(app, "POST", "/v1/payments", {
            token: merchant.key,
            body: { amount: "12.50", currency: "USD", metadata }
          })
          // A 201 that echoes other metadata than was sent loses the merchant's data without a word.
          if (response.status === 201) expect(response.body.metadata, "metadata echoed by a 201").toEqual(metadata)
          expectRawError(response, 400, "invalid_request")
          expect(response.body.error.param).toMatch(/^metadata/)
        }
      }))

    it.effect("encodes the store's own Bakong account once credentials are set, and cuts a long reference to a bill number", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        yield* (yield* clientAs(app, merchant.token)).stores.setCredentials({ path: { id: merchant.storeId }, payload: CREDENTIALS })
        const reference = "order-2024-0001-abcdefghijklmnopqrstuvwxyz" // 42 characters; a KHQR bill number holds 25
        const payment = yield* newPayment(app, merchant.key, { amount: "7.05", reference_id: reference })
        expect(payment.reference_id).toBe(reference)
        const khqr = decodeKhqr(payment.qr.payload)
        expect(khqr.account.get("00")).toBe(CREDENTIALS.bakong_account_id)
        expect(khqr.top.get("54")).toBe("7.05")
        expect(khqr.top.get("59")).toBe(CREDENTIALS.merchant_name)
        expect(khqr.top.get("60")).toBe(CREDENTIALS.merchant_city)
        expect(khqr.additional?.get("01")).toBe(reference.slice(0, 25))
        expect(khqr.timestamps.get("00")).toBe(String(Date.parse(payment.created_at)))
        expect(khqr.timestamps.get("01")).toBe(String(Date.parse(payment.expires_at)))
      }))

    // -------------------------------------------------------------------------------------------
    // Validation
    // -------------------------------------------------------------------------------------------

    it.effect("rejects each bad input with 400 invalid_request naming the parameter, never a 5xx", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const base = { amount: "12.50", currency: "USD" }
        const manyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]))
        const cases: ReadonlyArray<{ readonly body: Record<string, unknown>; readonly param: string | RegExp }> = [
          { body: { ...base, amount: 12.5 }, param: "amount" },
          { body: { ...base, amount: "0" }, param: "amount" },
          { body: { ...base, amount: "0.00" }, param: "amount" },
          { body: { ...base, amount: "-1" }, param: "amount" },
          { body: { ...base, amount: "1e3" }, param: "amount" },
          { body: { ...base, amount: " 12.50" }, param: "amount" },
          { body: { ...base, amount: "" }, param: "amount" },
          { body: { ...base, amount: "1.234" }, param: "amount" },
          { body: { amount: "1.5", currency: "KHR" }, param: "amount" },
          { body: { ...base, amount: "999999999999.99" }, param: "amount" },
          { body: { currency: "USD" }, param: "amount" },
          { body: { amount: "12.50" }, param: "currency" },
          { body: { ...base, currency: "EUR" }, param: "currency" },
          { body: { ...base, currency: "usd" }, param: "currency" },
          { body: { ...base, metadata: manyKeys }, param: /^metadata/ },
          { body: { ...base, metadata: { table: 7 } }, param: /^metadata/ },
          { body: { ...base, metadata: { note: "x".repeat(501) } }, param: /^metadata/ },
          { body: { ...base, metadata: "table 7" }, param: /^metadata/ },
          { body: { ...base, metadata: { ["k".repeat(41)]: "v" } }, param: /^metadata/ },
          { body: { ...base, metadata: { "": "v" } }, param: /^metadata/ },
          { body: { ...base, description: "d".repeat(501) }, param: "description" },
          { body: { ...base, reference_id: "r".repeat(65) }, param: "reference_id" },
          { body: { ...base, reference_id: "" }, param: "reference_id" },
          { body: { ...base, reference_id: "ចំណាំ" }, param: "reference_id" },
          { body: { ...base, expires_in: 0 }, param: "expires_in" },
          { body: { ...base, expires_in: 1.5 }, param: "expires_in" },
          { body: { ...base, expires_in: -5 }, param: "expires_in" },
          { body: { ...base, expires_in: "60" }, param: "expires_in" }
        ]
        // Every case is tried; the mismatches are reported together. Raw: most of these bodies are outside
        // the request schema, which the typed client would refuse to send.
        const mismatches: Array<string> = []
        let accepted = 0
        for (const { body, param } of cases) {
          const response = yield* call(app, "POST", "/v1/payments", { token: merchant.key, body })
          const error = response.body?.error
          const paramMatches = typeof param === "string" ? error?.param === param : param.test(String(error?.param))
          if (response.status === 201) accepted++
          if (
            response.status !== 400 || error?.code !== "invalid_request" || typeof error?.message !== "string" || !paramMatches
          ) {
            mismatches.push(`${JSON.stringify(body).slice(0, 100)} → ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`)
          }
        }
        expect(mismatches).toEqual([])
        // At the limits, the same fields are accepted.
        yield* createPayment(app, merchant.key, {
          metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v".repeat(500)])),
          description: "d".repeat(500),
          reference_id: "r".repeat(64),
          expires_in: 1
        })

        for (const raw of ["{\"amount\": ", "not json", "[1, 2]", "null", "\"12.50\""]) {
          const response = yield* call(app, "POST", "/v1/payments", { token: merchant.key, raw })
          expectRawError(response, 400, "invalid_request")
        }
        // Nothing was stored by the rejected requests.
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM payments WHERE store_id = ${merchant.storeId}`
        expect(rows[0]!.n).toBe(1 + accepted)
      }))

    // -------------------------------------------------------------------------------------------
    // Authentication, tenancy, modes
    // -------------------------------------------------------------------------------------------

    it.effect("needs an API key of the payment's own store: 401 without one, 403 for a session, 404 for another store", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const other = yield* newMerchant(app)
        const payment = yield* paymentIn(app, merchant.key, "paid")

        // "" is no credential at all.
        yield* expectFailure(createPayment(app, "", { amount: "1.00" }), "Unauthorized")
        yield* expectFailure(listPayments(app, ""), "Unauthorized")
        yield* expectFailure(retrieve(app, "", payment.id), "Unauthorized")
        yield* expectFailure(refund(app, "", payment.id), "Unauthorized")
        yield* expectFailure(createPayment(app, "sk_test_doesnotexist", { amount: "1.00" }), "Unauthorized")

        yield* expectFailure(createPayment(app, merchant.token), "Forbidden")

        yield* expectFailure(retrieve(app, other.key, payment.id), "NotFound")
        yield* expectFailure(refund(app, other.key, payment.id, { amount: "1.00" }), "NotFound")
        yield* expectFailure(refund(app, other.key, payment.id), "NotFound")
        yield* expectFailure(cancel(app, other.key, payment.id), "NotFound")
        yield* expectFailure(simulate(app, other.key, payment.id, "expired"), "NotFound")
        yield* expectFailure(listRefunds(app, other.key, payment.id), "NotFound")
        // Another tenant's session, too.
        yield* expectFailure(retrieve(app, other.token, payment.id), "NotFound")
        yield* expectFailure(refund(app, other.token, payment.id, { amount: "1.00" }), "NotFound")
        // An id that does not exist answers the same.
        yield* expectFailure(retrieve(app, merchant.key, PaymentId.make("pay_doesnotexist000000000000")), "NotFound")

        const list = yield* listPayments(app, other.key)
        expect(list.data).toEqual([])

        // The owner's own session sees the payment; nothing above changed it.
        const seen = yield* retrieve(app, merchant.token, payment.id)
        expect(seen).toMatchObject({ status: "paid", amount_refunded: "0.00" })
      }))

    it.effect("refuses a live key while the store is not live, with 409 invalid_state", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const liveKey = yield* apiKey(app, merchant.token, merchant.storeId, "live")
        yield* expectFailure(createPayment(app, liveKey), "InvalidState")
        // Credentials alone do not make the store live.
        yield* (yield* clientAs(app, merchant.token)).stores.setCredentials({ path: { id: merchant.storeId }, payload: CREDENTIALS })
        yield* expectFailure(createPayment(app, liveKey), "InvalidState")
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM payments WHERE store_id = ${merchant.storeId}`
        expect(rows[0]!.n).toBe(0)
      }))

    it.effect("keeps test and live payments apart; simulate is for test keys only", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* liveMerchant(app)
        const live = yield* newPayment(app, merchant.liveKey, { reference_id: "live-1" })
        expect(live.livemode).toBe(true)
        expect(decodeKhqr(live.qr.payload).account.get("00")).toBe(CREDENTIALS.bakong_account_id)
        const test = yield* newPayment(app, merchant.key, { reference_id: "test-1" })
        expect(test.livemode).toBe(false)

        yield* expectFailure(retrieve(app, merchant.key, live.id), "NotFound")
        yield* expectFailure(retrieve(app, merchant.liveKey, test.id), "NotFound")
        yield* expectFailure(cancel(app, merchant.key, live.id), "NotFound")
        yield* expectFailure(cancel(app, merchant.liveKey, test.id), "NotFound")
        yield* expectFailure(simulate(app, merchant.key, live.id, "scanned"), "NotFound")
        expect((yield* listPayments(app, merchant.key)).data.map((p) => p.id)).toEqual([test.id])
        expect((yield* listPayments(app, merchant.liveKey)).data.map((p) => p.id)).toEqual([live.id])

        yield* expectFailure(simulate(app, merchant.liveKey, live.id, "scanned"), "Forbidden")
        yield* expectFailure(simulate(app, merchant.liveKey, live.id, "paid"), "Forbidden")
        expect((yield* retrieve(app, merchant.liveKey, live.id)).status).toBe("pending")

        // Idempotency keys are scoped per mode: the same key in test and live mode makes two payments.
        const idempotencyKey = randomUUID()
        const inTest = yield* createPayment(app, merchant.key, { amount: "3.00" }, idempotencyKey)
        const inLive = yield* createPayment(app, merchant.liveKey, { amount: "3.00" }, idempotencyKey)
        expect(inLive.id).not.toBe(inTest.id)
        expect(inLive.livemode).toBe(true)
        expect(inTest.livemode).toBe(false)

        // A live payment can be cancelled (which also stops the provider polling for it).
        expect((yield* cancel(app, merchant.liveKey, live.id)).status).toBe("cancelled")
        expect((yield* cancel(app, merchant.liveKey, inLive.id)).status).toBe("cancelled")
      }))

    // -------------------------------------------------------------------------------------------
    // Lifecycle
    // -------------------------------------------------------------------------------------------

    it.effect("moves through each allowed row of the lifecycle table", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)

        // pending → scanned → paid
        const payment = yield* newPayment(app, key)
        const scanned = yield* simulate(app, key, payment.id, "scanned")
        expect(scanned).toMatchObject({ id: payment.id, object: "payment", status: "scanned", paid_at: null })
        expect(Date.parse(scanned.updated_at)).toBeGreaterThanOrEqual(Date.parse(payment.updated_at))
        const beforePaid = Date.now()
        const paid = yield* simulate(app, key, payment.id, "paid")
        expect(paid.status).toBe("paid")
        expect(paid.paid_at).not.toBeNull()
        expect(Math.abs(Date.parse(paid.paid_at ?? "") - beforePaid)).toBeLessThan(5_000)
        expect(yield* retrieve(app, key, payment.id)).toEqual(paid)

        // pending → expired, scanned → expired
        expect((yield* simulate(app, key, (yield* newPayment(app, key)).id, "expired")).status).toBe("expired")
        const scannedThenExpired = yield* paymentIn(app, key, "scanned")
        expect((yield* simulate(app, key, scannedThenExpired.id, "expired")).status).toBe("expired")

        // pending → failed, pending → cancelled
        const failed = yield* simulate(app, key, (yield* newPayment(app, key)).id, "failed")
        expect(failed).toMatchObject({ status: "failed", paid_at: null })
        const cancelled = yield* cancel(app, key, (yield* newPayment(app, key)).id)
        expect(cancelled).toMatchObject({ object: "payment", status: "cancelled", paid_at: null })

        // paid → partially_refunded → partially_refunded → refunded (amount omitted: the remaining balance)
        const first = yield* refund(app, key, payment.id, { amount: "5.00", reason: "one coffee was cold" })
        expect(yield* retrieve(app, key, payment.id)).toMatchObject({
          status: "partially_refunded",
          amount_refunded: "5.00"
        })
        expect(first).toMatchObject({ amount: "5.00", reason: "one coffee was cold" })
        yield* refund(app, key, payment.id, { amount: "2.50" })
        expect(yield* retrieve(app, key, payment.id)).toMatchObject({
          status: "partially_refunded",
          amount_refunded: "7.50"
        })
        const rest = yield* refund(app, key, payment.id, {})
        expect(rest).toMatchObject({ amount: "5.00", reason: null })
        const refunded = yield* retrieve(app, key, payment.id)
        expect(refunded).toMatchObject({ status: "refunded", amount_refunded: "12.50", amount: "12.50" })
        // Refunds do not touch paid_at.
        expect(refunded.paid_at).toBe(paid.paid_at)

        // paid → refunded at once, amount omitted; and with the exact remaining amount.
        const whole = yield* paymentIn(app, key, "paid")
        expect((yield* refund(app, key, whole.id)).amount).toBe("12.50")
        expect(yield* retrieve(app, key, whole.id)).toMatchObject({ status: "refunded", amount_refunded: "12.50" })
        const exact = yield* paymentIn(app, key, "paid")
        yield* refund(app, key, exact.id, { amount: "12.50" })
        expect((yield* retrieve(app, key, exact.id)).status).toBe("refunded")
        // partially_refunded → refunded with the exact remaining amount.
        const partial = yield* paymentIn(app, key, "partially_refunded")
        yield* refund(app, key, partial.id, { amount: "10.00" })
        expect(yield* retrieve(app, key, partial.id)).toMatchObject({ status: "refunded", amount_refunded: "12.50" })
      }))

    it.effect("answers every move the lifecycle forbids with 409 invalid_state and changes nothing", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const { key } = yield* newMerchant(app)
        for (const state of STATES) {
          const payment = yield* paymentIn(app, key, state)
          const events = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM outbox WHERE payload -> 'data' -> 'object' ->> 'id' = ${payment.id}`
          for (const action of ACTIONS) {
            if (ALLOWED[state].includes(action)) continue
            yield* expectFailure(act(app, key, payment.id, action), "InvalidState", undefined, `${action} on a ${state} payment`)
          }
          // A full refund with the amount omitted is refused the same way.
          if (!ALLOWED[state].includes("refund")) yield* expectFailure(refund(app, key, payment.id), "InvalidState")
          const after = yield* retrieve(app, key, payment.id)
          expect(after, `a ${state} payment after forbidden moves`).toEqual(payment)
          const eventsAfter = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM outbox WHERE payload -> 'data' -> 'object' ->> 'id' = ${payment.id}`
          expect(eventsAfter[0]!.n, `events of a ${state} payment`).toBe(events[0]!.n)
        }
        // An unknown simulate status is a bad request, not a transition (raw: outside the request schema).
        const pending = yield* newPayment(app, key)
        for (const status of ["refunded", "pending"]) {
          expectRawError(
            yield* call(app, "POST", `/v1/payments/${pending.id}/simulate`, { token: key, body: { status } }),
            400,
            "invalid_request",
            "status"
          )
        }
        expectRawError(yield* call(app, "POST", `/v1/payments/${pending.id}/simulate`, { token: key, body: {} }), 400, "invalid_request")
      }))

    // -------------------------------------------------------------------------------------------
    // Refunds
    // -------------------------------------------------------------------------------------------

    it.effect("refuses a refund above the remaining balance with 400 on amount, and bad amounts alike", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const payment = yield* paymentIn(app, key, "paid")
        yield* expectFailure(refund(app, key, payment.id, { amount: "12.51" }), "InvalidRequest", "amount")
        yield* refund(app, key, payment.id, { amount: "10.00" })
        yield* expectFailure(refund(app, key, payment.id, { amount: "2.51" }), "InvalidRequest", "amount")
        for (const amount of ["0", "0.00", "1.001"]) {
          yield* expectFailure(refund(app, key, payment.id, { amount }), "InvalidRequest", "amount")
        }
        // Raw: amounts and a reason outside the request schema, which the typed client would not send.
        for (const amount of ["-1", "1e2", 1]) {
          expectRawError(
            yield* call(app, "POST", `/v1/payments/${payment.id}/refund`, { token: key, body: { amount } }),
            400,
            "invalid_request",
            "amount"
          )
        }
        expectRawError(
          yield* call(app, "POST", `/v1/payments/${payment.id}/refund`, { token: key, body: { reason: "r".repeat(501) } }),
          400,
          "invalid_request",
          "reason"
        )
        expectRawError(yield* call(app, "POST", `/v1/payments/${payment.id}/refund`, { token: key, raw: "{\"amount\":" }), 400, "invalid_request")
        expect(yield* retrieve(app, key, payment.id)).toMatchObject({
          status: "partially_refunded",
          amount_refunded: "10.00"
        })
        // KHR refunds are whole riel.
        const khr = yield* paymentIn(app, key, "paid", { amount: "5000", currency: "KHR" })
        yield* expectFailure(refund(app, key, khr.id, { amount: "1.5" }), "InvalidRequest", "amount")
        expect(yield* refund(app, key, khr.id, { amount: "1500" })).toMatchObject({ amount: "1500", currency: "KHR" })
        yield* expectFailure(refund(app, key, khr.id, { amount: "3501" }), "InvalidRequest", "amount")
      }))

    it.effect("answers refund objects and lists them newest first, in pages", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const payment = yield* paymentIn(app, key, "paid", { amount: "10.00" })
        const created: Array<Refund> = []
        const api = yield* clientAs(app, key)
        for (let i = 0; i < 5; i++) {
          const payload = i % 2 === 0 ? { amount: "1.00", reason: `reason ${i}` } : { amount: "1.00" }
          const [response, wire] = yield* api.payments.refund({
            path: { id: payment.id },
            payload,
            headers: {},
            withResponse: true
          })
          // The keys on the wire, not those of the decoded class.
          expect(yield* wireKeys(wire)).toEqual(REFUND_FIELDS)
          expect(response.id).toMatch(/^re_[0-9A-Za-z]+$/)
          expect(response).toMatchObject({
            object: "refund",
            payment_id: payment.id,
            amount: "1.00",
            currency: "USD",
            reason: i % 2 === 0 ? `reason ${i}` : null,
            status: "succeeded"
          })
          expect(new Date(Date.parse(response.created_at)).toISOString()).toBe(response.created_at)
          created.push(response)
        }
        const expectedOrder = newestFirstOrder(created)

        const all = yield* listRefunds(app, key, payment.id)
        expect(all).toMatchObject({ object: "list", has_more: false, next_cursor: null })
        expect(all.data.map((r) => r.id)).toEqual(expectedOrder)
        expect(all.data).toEqual(expectedOrder.map((id) => created.find((r) => r.id === id)))

        const seen: Array<string> = []
        let cursor: string | null = null
        let pages = 0
        do {
          const page: RefundList = yield* listRefunds(app, key, payment.id, { limit: 2, ...(cursor === null ? {} : { cursor }) })
          expect(page.data.length).toBeLessThanOrEqual(2)
          seen.push(...page.data.map((r) => r.id))
          expect(page.has_more).toBe(page.next_cursor !== null)
          cursor = page.next_cursor
          pages++
        } while (cursor !== null && pages < 10)
        expect(pages).toBe(3)
        expect(seen).toEqual(expectedOrder)

        const untouched = yield* paymentIn(app, key, "paid")
        expect(yield* listRefunds(app, key, untouched.id)).toEqual({
          object: "list",
          data: [],
          has_more: false,
          next_cursor: null
        })
        yield* expectFailure(listRefunds(app, key, payment.id, { cursor: "bogus!" }), "InvalidRequest", "cursor")
      }))

    it.effect("never refunds more than was paid when 25 refunds race", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const { key } = yield* newMerchant(app)
        const payment = yield* paymentIn(app, key, "paid", { amount: "10.00" })
        const responses = yield* Effect.forEach(
          Array.from({ length: 25 }, (_, i) => i),
          () => Effect.either(refund(app, key, payment.id, { amount: "1.00" })),
          { concurrency: "unbounded" }
        )
        const succeeded = responses.filter(Either.isRight).map((r) => r.right)
        const refused = responses.filter(Either.isLeft).map((r) => r.left)
        expect(succeeded).toHaveLength(10)
        expect(new Set(succeeded.map((r) => r.id)).size).toBe(10)
        expect(refused).toHaveLength(15)
        // The losers arrive when nothing, or too little, is left: a refund above the balance (400
        // invalid_request) or of a payment that is already fully refunded (409 invalid_state); never a
        // server error.
        for (const error of refused) expect(["InvalidRequest", "InvalidState"], String(error)).toContain(error._tag)
        expect(yield* retrieve(app, key, payment.id)).toMatchObject({ status: "refunded", amount_refunded: "10.00" })
        const rows = yield* sql<{ n: number; total: string }>`
          SELECT count(*)::int AS n, coalesce(sum(amount), 0)::text AS total FROM refunds WHERE payment_id = ${payment.id}`
        expect(rows[0]).toEqual({ n: 10, total: "1000" })
      }))

    it.effect("answers 400 on amount to refunds that race past the balance of a partly refundable payment", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const { key } = yield* newMerchant(app)
        const payment = yield* paymentIn(app, key, "paid", { amount: "10.00" })
        // Three refunds of 3.00 fit; 1.00 stays, so the payment stays partially refunded and every other
        // request is above the remaining balance.
        const responses = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          () => Effect.either(refund(app, key, payment.id, { amount: "3.00" })),
          { concurrency: "unbounded" }
        )
        expect(responses.filter(Either.isRight)).toHaveLength(3)
        for (const response of responses.filter(Either.isLeft)) {
          yield* expectFailure(response, "InvalidRequest", "amount")
        }
        expect(yield* retrieve(app, key, payment.id)).toMatchObject({
          status: "partially_refunded",
          amount_refunded: "9.00"
        })
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM refunds WHERE payment_id = ${payment.id}`
        expect(rows[0]!.n).toBe(3)
      }))

    // -------------------------------------------------------------------------------------------
    // Idempotency
    // -------------------------------------------------------------------------------------------

    it.effect("replays a create with the same Idempotency-Key and body, and refuses another body", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* newMerchant(app)
        const idempotencyKey = randomUUID()
        const body = { amount: "4.20", reference_id: "idem-1", metadata: { a: "1", b: "2" } }
        // The typed client reads only the declared 201: a replay answered with another status fails here.
        const first = yield* createPayment(app, merchant.key, body, idempotencyKey)
        // The same body with its keys in another order is the same request.
        const second = yield* createPayment(app, merchant.key, { metadata: { b: "2", a: "1" }, reference_id: "idem-1", amount: "4.20" }, idempotencyKey)
        expect(second).toEqual(first)

        yield* expectFailure(createPayment(app, merchant.key, { ...body, amount: "4.21" }, idempotencyKey), "IdempotencyConflict")

        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM payments WHERE store_id = ${merchant.storeId}`
        expect(rows[0]!.n).toBe(1)

        // Without a key, each request is a new payment.
        const a = yield* createPayment(app, merchant.key, body)
        const b = yield* createPayment(app, merchant.key, body)
        expect(a.id).not.toBe(b.id)

        // The key belongs to the store: another store's same key makes its own payment.
        const other = yield* newStore(app, merchant, "Second store")
        const elsewhere = yield* createPayment(app, other.key, body, idempotencyKey)
        expect(elsewhere.id).not.toBe(first.id)
        expect(elsewhere.store_id).toBe(other.storeId)

        // A replay is the original even after the payment moved on.
        yield* simulate(app, merchant.key, first.id, "scanned")
        const replay = yield* createPayment(app, merchant.key, body, idempotencyKey)
        expect(replay.id).toBe(first.id)
      }))

    it.effect("answers 20 concurrent creates with one Idempotency-Key with one payment", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* newMerchant(app)
        const idempotencyKey = randomUUID()
        const responses = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          () => createPayment(app, merchant.key, { amount: "8.00", reference_id: "burst" }, idempotencyKey),
          { concurrency: "unbounded" }
        )
        // Each answered its declared 201 (the typed client reads nothing else), all with the one payment.
        expect(new Set(responses.map((r) => r.id)).size).toBe(1)
        for (const response of responses) expect(response).toEqual(responses[0])
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM payments WHERE store_id = ${merchant.storeId}`
        expect(rows[0]!.n).toBe(1)
      }))

    it.effect("makes one refund for one Idempotency-Key", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const { key } = yield* newMerchant(app)
        const payment = yield* paymentIn(app, key, "paid")
        const idempotencyKey = randomUUID()
        const first = yield* refund(app, key, payment.id, { amount: "2.00", reason: "late" }, idempotencyKey)
        const second = yield* refund(app, key, payment.id, { amount: "2.00", reason: "late" }, idempotencyKey)
        expect(second).toEqual(first)
        yield* expectFailure(refund(app, key, payment.id, { amount: "3.00", reason: "late" }, idempotencyKey), "IdempotencyConflict")

        // Concurrent retries of another key also make one refund.
        const burstKey = randomUUID()
        const burst = yield* Effect.forEach(
          Array.from({ length: 10 }, (_, i) => i),
          () => refund(app, key, payment.id, { amount: "1.00" }, burstKey),
          { concurrency: "unbounded" }
        )
        expect(new Set(burst.map((r) => r.id)).size).toBe(1)

        expect(yield* retrieve(app, key, payment.id)).toMatchObject({ amount_refunded: "3.00" })
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM refunds WHERE payment_id = ${payment.id}`
        expect(rows[0]!.n).toBe(2)
      }))

    // -------------------------------------------------------------------------------------------
    // Listing
    // -------------------------------------------------------------------------------------------

    it.effect("lists payments newest first, pages with cursors while new ones arrive, and checks limit", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const created: Array<Payment> = []
        for (let i = 0; i < 25; i++) created.push(yield* newPayment(app, key, { reference_id: `ord-${i}` }))
        const expectedOrder = newestFirstOrder(created)

        // Raw: without `limit` (the typed client always sends one), read with the list's own schema.
        const firstPageResponse = yield* call(app, "GET", "/v1/payments", { token: key })
        expect(firstPageResponse.status).toBe(200)
        const firstPage = yield* Schema.decodeUnknown(PaymentList)(firstPageResponse.body)
        expect(firstPage.object).toBe("list")
        expect(firstPage.data).toHaveLength(20)
        expect(firstPage.has_more).toBe(true)
        expect(typeof firstPage.next_cursor).toBe("string")
        expect(firstPage.data.map((p) => p.id)).toEqual(expectedOrder.slice(0, 20))
        expect(firstPage.data[0]).toEqual(created.find((p) => p.id === expectedOrder[0]))

        const seen: Array<string> = []
        let cursor: string | null = null
        let pages = 0
        do {
          const page: PaymentList = yield* listPayments(app, key, { limit: 10, ...(cursor === null ? {} : { cursor }) })
          seen.push(...page.data.map((p) => p.id))
          expect(page.has_more).toBe(page.next_cursor !== null)
          cursor = page.next_cursor
          pages++
          // Newer payments arrive between pages; they are before the cursor and never show up later.
          yield* newPayment(app, key, { reference_id: `late-${pages}` })
          yield* newPayment(app, key, { reference_id: `late-${pages}-b` })
        } while (cursor !== null && pages < 10)
        expect(pages).toBe(3)
        expect(seen).toEqual(expectedOrder)
        expect(new Set(seen).size).toBe(25)

        const everything = yield* listPayments(app, key, { limit: 100 })
        expect(everything.data).toHaveLength(31)
        expect(everything.has_more).toBe(false)
        expect(everything.next_cursor).toBeNull()
        expect(isSortedNewestFirst(everything.data)).toBe(true)

        // Raw: limits outside the schema, which the typed client would not send.
        for (const limit of ["0", "-1", "abc", "1.5", ""]) {
          expectRawError(yield* call(app, "GET", `/v1/payments?limit=${limit}`, { token: key }), 400, "invalid_request", "limit")
        }
        for (const cursor of ["bogus!", "bm90IGpzb24", Buffer.from(JSON.stringify({ t: "yesterday", id: "x" })).toString("base64url")]) {
          yield* expectFailure(listPayments(app, key, { cursor }), "InvalidRequest", "cursor")
        }
      }))

    it.effect("clamps limit to 100", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        yield* Effect.forEach(
          Array.from({ length: 103 }, (_, i) => i),
          (i) => newPayment(app, key, { amount: "1.00", reference_id: `bulk-${i}` }),
          { concurrency: 8, discard: true }
        )
        // Raw: above 100 is outside the schema's type, so the typed client would refuse to send it.
        for (const limit of ["100", "101", "500", "100000"]) {
          const pageResponse = yield* call(app, "GET", `/v1/payments?limit=${limit}`, { token: key })
          expect(pageResponse.status).toBe(200)
          const page = yield* Schema.decodeUnknown(PaymentList)(pageResponse.body)
          expect(page.data, `limit=${limit}`).toHaveLength(100)
          expect(page.has_more).toBe(true)
          const restResponse = yield* call(app, "GET", `/v1/payments?limit=${limit}&cursor=${page.next_cursor}`, { token: key })
          expect(restResponse.status).toBe(200)
          const rest = yield* Schema.decodeUnknown(PaymentList)(restResponse.body)
          expect(rest.data).toHaveLength(3)
          expect(rest.has_more).toBe(false)
          expect(new Set([...page.data, ...rest.data].map((p) => p.id)).size).toBe(103)
        }
      }))

    it.effect("filters payments by status, reference_id and creation time (ISO 8601 or Unix seconds)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const early = yield* newPayment(app, key, { reference_id: "early" })
        yield* Effect.sleep("1100 millis")
        const middle = yield* paymentIn(app, key, "paid", { reference_id: "middle" })
        const late = yield* paymentIn(app, key, "cancelled", { reference_id: "shared" })
        const latest = yield* newPayment(app, key, { reference_id: "shared" })
        const ids = (page: PaymentList) => page.data.map((p) => p.id)
        const list = (urlParams: Partial<PaymentListParams>) => listPayments(app, key, urlParams)

        expect(ids(yield* list({ status: "paid" }))).toEqual([middle.id])
        expect(ids(yield* list({ status: "cancelled" }))).toEqual([late.id])
        expect(ids(yield* list({ status: "pending" }))).toEqual(newestFirstOrder([early, latest]))
        expect(ids(yield* list({ status: "refunded" }))).toEqual([])
        expect(ids(yield* list({ reference_id: "middle" }))).toEqual([middle.id])
        expect(ids(yield* list({ reference_id: "shared" }))).toEqual(newestFirstOrder([late, latest]))
        expect(ids(yield* list({ reference_id: "shared", status: "pending" }))).toEqual([latest.id])
        expect(ids(yield* list({ reference_id: "nothing-like-it" }))).toEqual([])

        // The typed client writes the brackets percent-encoded (created%5Bgte%5D).
        const all = newestFirstOrder([early, middle, late, latest])
        expect(ids(yield* list({ "created[gte]": middle.created_at }))).toEqual(all.filter((id) => id !== early.id))
        expect(ids(yield* list({ "created[lte]": early.created_at }))).toEqual([early.id])
        expect(ids(yield* list({ "created[gte]": middle.created_at, "created[lte]": middle.created_at }))).toEqual([middle.id])
        // Unix seconds: a whole second after `early` and at or before `middle`, and the other way round.
        const afterEarly = Math.floor(Date.parse(early.created_at) / 1000) + 1
        const beforeMiddle = Math.ceil(Date.parse(middle.created_at) / 1000) - 1
        expect(ids(yield* list({ "created[gte]": String(afterEarly) }))).toEqual(all.filter((id) => id !== early.id))
        expect(ids(yield* list({ "created[lte]": String(beforeMiddle) }))).toEqual([early.id])
        // Raw: the brackets written as they are, as a hand-written query string has them.
        const bracketed = yield* call(app, "GET", `/v1/payments?created[gte]=${afterEarly}&status=paid`, { token: key })
        expect(bracketed.status).toBe(200)
        expect(ids(yield* Schema.decodeUnknown(PaymentList)(bracketed.body))).toEqual([middle.id])

        yield* expectFailure(list({ "created[gte]": "yesterday" }), "InvalidRequest", "created[gte]")
        yield* expectFailure(list({ "created[lte]": "2024-13-45" }), "InvalidRequest", "created[lte]")
        // Raw: a status outside the schema.
        expectRawError(yield* call(app, "GET", "/v1/payments?status=done", { token: key }), 400, "invalid_request", "status")
      }))

    // -------------------------------------------------------------------------------------------
    // Expiry and events
    // -------------------------------------------------------------------------------------------

    it.effect("expires open payments when expires_in passes, without anyone reading them", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const { key } = yield* newMerchant(app)
        const pending = yield* newPayment(app, key, { expires_in: 2, reference_id: "expire-pending" })
        const scanned = yield* newPayment(app, key, { expires_in: 2, reference_id: "expire-scanned" })
        yield* simulate(app, key, scanned.id, "scanned")
        const paid = yield* paymentIn(app, key, "paid", { expires_in: 2 })
        const cancelled = yield* paymentIn(app, key, "cancelled", { expires_in: 2 })
        const open = yield* newPayment(app, key, { expires_in: 600 })
        // Nobody reads them meanwhile: only the sweeper can move them.
        yield* Effect.sleep("4 seconds")
        const rows = yield* sql<{ id: string; status: string; expired: boolean }>`
          SELECT id, status, expired_at IS NOT NULL AS expired FROM payments
          WHERE id IN (${pending.id}, ${scanned.id}, ${paid.id}, ${cancelled.id}, ${open.id})`
        const statusOf = Object.fromEntries(rows.map((row) => [row.id, row.status]))
        expect(statusOf).toEqual({
          [pending.id]: "expired",
          [scanned.id]: "expired",
          [paid.id]: "paid",
          [cancelled.id]: "cancelled",
          [open.id]: "pending"
        })
        const events = yield* sql<{ payment_id: string; n: number }>`
          SELECT payload -> 'data' -> 'object' ->> 'id' AS payment_id, count(*)::int AS n FROM outbox
          WHERE type = 'payment.expired'
            AND payload -> 'data' -> 'object' ->> 'id' IN (${pending.id}, ${scanned.id}, ${paid.id}, ${cancelled.id}, ${open.id})
          GROUP BY 1`
        expect(Object.fromEntries(events.map((e) => [e.payment_id, e.n]))).toEqual({ [pending.id]: 1, [scanned.id]: 1 })
        const [event] = yield* sql<{ payload: any; store_id: string; livemode: boolean }>`
          SELECT payload, store_id, livemode FROM outbox WHERE type = 'payment.expired'
            AND payload -> 'data' -> 'object' ->> 'id' = ${pending.id}`
        const payload = typeof event!.payload === "string" ? JSON.parse(event!.payload) : event!.payload
        expect(payload.data.object).toMatchObject({ id: pending.id, status: "expired", reference_id: "expire-pending" })
        expect(event!.store_id).toBe(pending.store_id)

        const seen = yield* retrieve(app, key, pending.id)
        expect(seen.status).toBe("expired")
        yield* expectFailure(cancel(app, key, pending.id), "InvalidState")
      }))

    it.effect("writes an outbox event for each change of a payment, carrying the payment", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const { key, storeId } = yield* newMerchant(app)
        const payment = yield* newPayment(app, key, { reference_id: "order-events", amount: "20.00" })
        yield* simulate(app, key, payment.id, "scanned")
        yield* simulate(app, key, payment.id, "paid")
        yield* refund(app, key, payment.id, { amount: "5.00" })
        yield* refund(app, key, payment.id)
        const failed = yield* paymentIn(app, key, "failed", { reference_id: "order-failed" })
        const cancelled = yield* paymentIn(app, key, "cancelled", { reference_id: "order-cancelled" })

        const rows = yield* sql<{ event_id: string; type: string; payload: any; store_id: string; livemode: boolean }>`
          SELECT event_id, type, payload, store_id, livemode FROM outbox
          WHERE payload -> 'data' -> 'object' ->> 'id' = ${payment.id}
          ORDER BY position`
        expect(rows.map((row) => row.type)).toEqual([
          "payment.scanned",
          "payment.completed",
          "payment.refunded",
          "payment.refunded"
        ])
        const expectedStatus = ["scanned", "paid", "partially_refunded", "refunded"]
        const expectedRefunded = ["0.00", "0.00", "5.00", "20.00"]
        rows.forEach((row, index) => {
          const payload = typeof row.payload === "string" ? JSON.parse(row.payload) : row.payload
          expect(row.store_id).toBe(storeId)
          expect(row.livemode).toBe(false)
          expect(payload.id).toBe(row.event_id)
          expect(payload.id).toMatch(/^evt_[0-9A-Za-z]+$/)
          expect(payload).toMatchObject({ type: row.type, livemode: false })
          expect(new Date(Date.parse(payload.created_at)).toISOString()).toBe(payload.created_at)
          expect(Object.keys(payload.data)).toEqual(["object"])
          expect(Object.keys(payload.data.object).sort()).toEqual(PAYMENT_FIELDS)
          expect(payload.data.object).toMatchObject({
            id: payment.id,
            object: "payment",
            reference_id: "order-events",
            status: expectedStatus[index],
            amount_refunded: expectedRefunded[index],
            store_id: storeId
          })
        })
        expect(new Set(rows.map((row) => row.event_id)).size).toBe(4)
        // payment.completed carries the paid payment, with its paid_at.
        const completed = rows[1]!
        const completedPayload = typeof completed.payload === "string" ? JSON.parse(completed.payload) : completed.payload
        expect(completedPayload.data.object.paid_at).not.toBeNull()
        expect(completedPayload.data.object.paid_at).toBe((yield* retrieve(app, key, payment.id)).paid_at)

        const others = yield* sql<{ id: string; type: string; reference_id: string }>`
          SELECT payload -> 'data' -> 'object' ->> 'id' AS id, type,
            payload -> 'data' -> 'object' ->> 'reference_id' AS reference_id
          FROM outbox WHERE payload -> 'data' -> 'object' ->> 'id' IN (${failed.id}, ${cancelled.id})
          ORDER BY position`
        expect(others).toEqual([
          { id: failed.id, type: "payment.failed", reference_id: "order-failed" },
          { id: cancelled.id, type: "payment.cancelled", reference_id: "order-cancelled" }
        ])
      }))
  })

  // ---------------------------------------------------------------------------------------------
  // High-value refunds: their own service, with a threshold
  // ---------------------------------------------------------------------------------------------

  layer(testAppLayer({ refundMfaThreshold: Option.some("100.00") }), { timeout: 120_000, excludeTestServices: true })(
    "with a high-value refund threshold of 100.00",
    (it) => {
      it.effect("needs an Owner session with MFA and a fresh code at or above the threshold", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const sql = yield* SqlClient.SqlClient
          const owner = yield* newMerchant(app)
          const payment = yield* paymentIn(app, owner.key, "paid", { amount: "500.00" })
          const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
          const admin = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "admin"))

          // Below the threshold an API key refunds.
          expect((yield* refund(app, owner.key, payment.id, { amount: "99.99" })).amount).toBe("99.99")

          // At or above it, an API key is refused, whether the amount is given or implied.
          yield* expectFailure(refund(app, owner.key, payment.id, { amount: "100.00" }), "Forbidden")
          yield* expectFailure(refund(app, owner.key, payment.id, { amount: "250.00" }), "Forbidden")
          yield* expectFailure(refund(app, owner.key, payment.id), "Forbidden")
          // Roles below Owner are refused too.
          yield* expectFailure(refund(app, analyst.token, payment.id, { amount: "100.00" }), "Forbidden")
          yield* expectFailure(refund(app, admin.token, payment.id, { amount: "100.00" }), "Forbidden")
          // The Owner without MFA enabled is told MFA is required.
          yield* expectFailure(refund(app, owner.token, payment.id, { amount: "100.00" }), "MfaRequired")

          const ownerApi = yield* clientAs(app, owner.token)
          const { secret } = yield* ownerApi.session.mfaSetup()
          yield* ownerApi.session.mfaEnable({ payload: { code: yield* currentTotp(secret) } })

          yield* expectFailure(refund(app, owner.token, payment.id, { amount: "100.00" }), "MfaRequired")
          yield* expectFailure(refund(app, owner.token, payment.id, { amount: "100.00", mfa_code: "000000" }), "MfaRequired")
          // Still nothing but the first refund happened.
          expect((yield* retrieve(app, owner.key, payment.id)).amount_refunded).toBe("99.99")

          // The enabling code's time step is spent; the next step's code is fresh.
          const fresh = yield* currentTotp(secret, Math.floor(Date.now() / 1000) + 30)
          const approved = yield* refund(app, owner.token, payment.id, { amount: "100.00", mfa_code: fresh })
          expect(approved).toMatchObject({ object: "refund", amount: "100.00", payment_id: payment.id })
          // A code is good for one operation.
          yield* expectFailure(refund(app, owner.token, payment.id, { amount: "100.00", mfa_code: fresh }), "MfaRequired")

          expect(yield* retrieve(app, owner.key, payment.id)).toMatchObject({
            status: "partially_refunded",
            amount_refunded: "199.99"
          })
          const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM refunds WHERE payment_id = ${payment.id}`
          expect(rows[0]!.n).toBe(2)

          // An Analyst cannot refund at all, an Admin can while the refunded total stays below the threshold.
          yield* expectFailure(refund(app, analyst.token, payment.id, { amount: "1.00" }), "Forbidden")
          const another = yield* paymentIn(app, owner.key, "paid", { amount: "500.00" })
          expect((yield* refund(app, admin.token, another.id, { amount: "1.00" })).amount).toBe("1.00")
        }))

      it.effect("compares the threshold in the payment's own currency", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { key } = yield* newMerchant(app)
          // 99 riel is below 100.00; 100 riel is not.
          const khr = yield* paymentIn(app, key, "paid", { amount: "5000", currency: "KHR" })
          yield* refund(app, key, khr.id, { amount: "99" })
          yield* expectFailure(refund(app, key, khr.id, { amount: "100" }), "Forbidden")
          // A small payment refunded whole (amount omitted) stays below the threshold.
          const small = yield* paymentIn(app, key, "paid", { amount: "12.50" })
          expect((yield* refund(app, key, small.id)).amount).toBe("12.50")
        }))
    }
  )
})
