/**
 * Referrals over HTTP against PostgreSQL: codes, share links and their QR; the whole funnel with its
 * numbers (points to both wallets, commissions per currency, partial and full refunds, summary, report,
 * payouts replayed with one key); each fraud rule, clear versus void; simultaneous conversions; tenancy,
 * roles and bad input.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import jsQR from "jsqr"
import { PNG } from "pngjs"
import type { CustomerId, StoreId } from "../../domain/Ids.ts"
import type { UpdateReferralProgram } from "../../domain/Referrals.ts"
import { applyReferralPaymentEvent, REFERRAL_PAYMENT_EVENTS, REFERRALS_CONSUMER } from "../../src/referrals/Conversion.ts"
import { ReferralsRepo } from "../../src/referrals/Repo.ts"
import { makeOutboxPass, Outbox, OutboxQueues } from "../../src/platform/Outbox.ts"
import { addMember } from "../support/Accounts.ts"
import { clientAs, expectFailure, listParams } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { createPayment, type Merchant, newMerchant, paidPayment, refund, simulate } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

let serial = 0
const freshEmail = () => `ref-${Date.now().toString(36)}-${++serial}@example.test`

const newCustomer = (
  app: TestAppShape,
  key: string,
  extra: { referral_code?: string; phone?: string; name?: string; email?: string } = {}
) => Effect.flatMap(clientAs(app, key), (api) => api.customers.create({ payload: { email: freshEmail(), ...extra }, headers: {} }))

const configure = (app: TestAppShape, merchant: Merchant, payload: UpdateReferralProgram) =>
  Effect.flatMap(clientAs(app, merchant.owner.token), (api) =>
    api.referralsConsole.configure({ path: { storeId: merchant.storeId }, payload }))

const PROGRAM = {
  active: true,
  referrer_points: 500,
  referee_points: 200,
  commission_percent: "5",
  commission_window_days: 30
} as const

const codeOf = (app: TestAppShape, key: string, id: CustomerId) =>
  Effect.flatMap(clientAs(app, key), (api) => api.referrals.code({ path: { id } }))

const balanceOf = (app: TestAppShape, key: string, id: CustomerId) =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.retrieve({ path: { id } })).pipe(Effect.map((c) => c.points_balance))

/** Waits until the referrals consumer applied every queued payment event. */
const settled = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let attempt = 0; attempt < 150; attempt++) {
    const [row] = yield* sql<{ pending: number }>`
      SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = ${REFERRALS_CONSUMER}`
    if (row!.pending === 0) return
    yield* Effect.sleep("100 millis")
  }
  return expect.fail("payment events stayed unapplied by the referrals consumer")
})

const eventsOf = (storeId: StoreId, type: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ payload: { data: { object: Record<string, unknown> } } }>`
      SELECT payload FROM outbox WHERE store_id = ${storeId} AND type = ${type} ORDER BY position`).pipe(
      Effect.map((rows) => rows.map((row) => row.payload.data.object))
    )

const referralEntries = (customerId: CustomerId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ points: number }>`SELECT points FROM points_entries WHERE customer_id = ${customerId} AND type = 'referral'`)

/** A referrer with its code, and a referee created with it. */
const referredPair = (app: TestAppShape, merchant: Merchant, referee: { phone?: string } = {}) =>
  Effect.gen(function*() {
    const referrer = yield* newCustomer(app, merchant.key, { name: "Sokha Chan", phone: "+855 12 000 111" })
    const { code } = yield* codeOf(app, merchant.key, referrer.id)
    const created = yield* newCustomer(app, merchant.key, { referral_code: code, ...referee })
    return { referrer, referee: created, code }
  })

const decodeQr = (dataUrl: string) => {
  const png = PNG.sync.read(Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ""), "base64"))
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data
}

describe("referrals", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("gives each customer one stable code, a share link that redirects to a join page, and a QR that decodes to it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app, "Riverside Coffee")
        const other = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key, { name: "Sokha Chan" })
        const api = yield* clientAs(app, merchant.key)

        const codes = yield* Effect.all(Array.from({ length: 5 }, () => codeOf(app, merchant.key, customer.id)), { concurrency: "unbounded" })
        const first = codes[0]!
        expect(new Set(codes.map((c) => c.code)).size).toBe(1)
        expect(first.code).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8}$/)
        expect(first.share_url).toMatch(new RegExp(`^https?://[^/]+/r/${first.code}$`))
        expect(first.share_url.endsWith(`/r/${first.code}`)).toBe(true)
        expect((yield* api.customers.retrieve({ path: { id: customer.id } })).referral_code).toBe(first.code)

        const qr = yield* api.referrals.qr({ path: { id: customer.id } })
        expect(qr).toMatchObject({ object: "referral_qr", code: first.code, share_url: first.share_url })
        expect(qr.png_data_url.startsWith("data:image/png;base64,")).toBe(true)
        expect(decodeQr(qr.png_data_url)).toBe(first.share_url)
        expect(qr.svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/)
        const consoleQr = yield* (yield* clientAs(app, merchant.owner.token)).referralsConsole.qr({ path: { customerId: customer.id } })
        expect(decodeQr(consoleQr.png_data_url)).toBe(first.share_url)

        // Another store's key or user sees no such customer.
        yield* expectFailure(codeOf(app, other.key, customer.id), "NotFound", "id")
        yield* expectFailure(
          Effect.flatMap(clientAs(app, other.owner.token), (o) => o.referralsConsole.qr({ path: { customerId: customer.id } })),
          "NotFound"
        )

        // The share link: 302 to the join page, which counts a visit.
        const redirect = yield* Effect.promise(() => app.fetch(`/r/${first.code}`, { redirect: "manual" }))
        expect(redirect.status).toBe(302)
        expect(redirect.headers.get("location")).toBe(`/r/${first.code}/join`)
        const join = yield* call(app, "GET", `/r/${first.code}/join`)
        expect(join.status).toBe(200)
        expect(join.body).toMatchObject({ object: "referral_invite", code: first.code, referrer: { name: "S**** C***" }, store: { name: "Riverside Coffee" } })
        const html = yield* Effect.promise(() => app.fetch(`/r/${first.code}/join`, { headers: { accept: "text/html" } }))
        expect(html.headers.get("content-type")).toContain("text/html")
        expect(yield* Effect.promise(() => html.text())).toContain(first.code)
        expect((yield* call(app, "GET", "/r/NOSUCHCODE")).status).toBe(404)
        const report = yield* (yield* clientAs(app, merchant.owner.token)).referralsConsole.report({ path: { storeId: merchant.storeId }, urlParams: {} })
        expect(report.funnel.visits).toBe(2)
      }))

    it.effect("runs the whole funnel: conversion points once, commissions per currency, refunds, summary, report, payouts", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const owner = yield* clientAs(app, merchant.owner.token)
        const storeId = merchant.storeId
        expect(yield* owner.referralsConsole.program({ path: { storeId } })).toEqual({
          object: "referral_program",
          store_id: storeId,
          active: false,
          referrer_points: 0,
          referee_points: 0,
          commission_percent: "0",
          commission_window_days: 30,
          max_referrals_per_day: 20
        })
        expect(yield* configure(app, merchant, PROGRAM)).toMatchObject({ ...PROGRAM, max_referrals_per_day: 20 })

        const { referee, referrer } = yield* referredPair(app, merchant)
        const [pending] = (yield* owner.referralsConsole.list({ path: { storeId }, urlParams: listParams() })).data
        expect(pending).toMatchObject({ object: "referral", referrer_id: referrer.id, referee_id: referee.id, status: "pending", flags: [] })

        const usd = yield* paidPayment(app, merchant.key, { customer_id: referee.id, amount: "100.00", currency: "USD" })
        const khr = yield* paidPayment(app, merchant.key, { customer_id: referee.id, amount: "40000", currency: "KHR" })
        const third = yield* paidPayment(app, merchant.key, { customer_id: referee.id, amount: "10.00", currency: "USD" })
        yield* settled
        expect(yield* balanceOf(app, merchant.key, referrer.id)).toBe(500)
        expect(yield* balanceOf(app, merchant.key, referee.id)).toBe(200)
        const [converted] = (yield* owner.referralsConsole.list({ path: { storeId }, urlParams: listParams() })).data
        expect(converted).toMatchObject({ status: "converted", converted_at: usd.paid_at })
        expect(yield* eventsOf(storeId, "referral.converted")).toHaveLength(1)

        const commissions = (yield* owner.referralsConsole.commissions({ path: { storeId }, urlParams: listParams() })).data
        expect(commissions.map((c) => [c.payment_id, c.amount, c.currency, c.status]).sort()).toEqual([
          [khr.id, "2000", "KHR", "accrued"],
          [third.id, "0.50", "USD", "accrued"],
          [usd.id, "5.00", "USD", "accrued"]
        ].sort())

        // A refund of 40 of 100 USD reduces that commission to 5% of 60; a full refund voids the KHR one.
        yield* refund(app, merchant.owner.token, usd.id, { amount: "40.00" })
        yield* refund(app, merchant.owner.token, khr.id)
        yield* settled
        const after = (yield* owner.referralsConsole.commissions({ path: { storeId }, urlParams: listParams() })).data
        expect(after.find((c) => c.payment_id === usd.id)).toMatchObject({ amount: "3.00", status: "accrued" })
        expect(after.find((c) => c.payment_id === khr.id)).toMatchObject({ status: "voided" })
        const voided = yield* owner.referralsConsole.commissions({ path: { storeId }, urlParams: listParams({ status: "voided" as const }) })
        expect(voided.data.map((c) => c.payment_id)).toEqual([khr.id])

        const summary = yield* owner.referralsConsole.summary({ path: { storeId }, urlParams: {} })
        expect(summary.data).toEqual([{
          referrer_id: referrer.id,
          accrued: { USD: "3.50", KHR: "0" },
          paid: { USD: "0.00", KHR: "0" },
          held: { USD: "0.00", KHR: "0" },
          referrals: 1
        }])

        // Payout twice with one key: one payout; a new key then finds nothing accrued.
        const payout = (key: string, body = {}) =>
          owner.referralsConsole.payout({ path: { storeId }, payload: body, headers: { "idempotency-key": key } })
        const paid = yield* payout("payout-1")
        expect(paid).toEqual({ object: "commission_payout", count: 2, totals: { USD: "3.50", KHR: "0" } })
        expect(yield* payout("payout-1")).toEqual(paid)
        expect(yield* payout("payout-2")).toEqual({ object: "commission_payout", count: 0, totals: { USD: "0.00", KHR: "0" } })
        yield* expectFailure(payout("payout-1", { referrer_id: referrer.id }), "IdempotencyConflict")
        expect(yield* eventsOf(storeId, "commission.paid")).toHaveLength(2)

        const report = yield* owner.referralsConsole.report({ path: { storeId }, urlParams: {} })
        expect(report.funnel).toEqual({ visits: 0, referrals: 1, converted: 1, flagged: 0, voided: 0, conversion_rate: 1 })
        expect(report.commissions).toEqual({
          held: { USD: "0.00", KHR: "0" },
          accrued: { USD: "0.00", KHR: "0" },
          paid: { USD: "3.50", KHR: "0" },
          voided: { USD: "0.00", KHR: "2000" }
        })
        // Replaying every payment event pays nothing twice.
        const passes = yield* makeOutboxPass(REFERRALS_CONSUMER, { types: REFERRAL_PAYMENT_EVENTS, apply: applyReferralPaymentEvent })
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          INSERT INTO outbox_pending (consumer, position)
          SELECT ${REFERRALS_CONSUMER}, position FROM outbox WHERE store_id = ${storeId} AND type IN ('payment.completed', 'payment.refunded')
          ON CONFLICT DO NOTHING`
        yield* passes.pipe(Effect.provide([ReferralsRepo.Default, Outbox.Default]))
        yield* settled
        expect(yield* balanceOf(app, merchant.key, referrer.id)).toBe(500)
        expect((yield* owner.referralsConsole.commissions({ path: { storeId }, urlParams: listParams() })).data).toHaveLength(3)
      }).pipe(Effect.provide(OutboxQueues.Default)))

    it.effect("flags self-referrals and referrers past the daily limit at creation, with a referral.flagged event", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const owner = yield* clientAs(app, merchant.owner.token)
        yield* configure(app, merchant, { ...PROGRAM, max_referrals_per_day: 2 })
        // The same phone as the referrer's, written differently.
        const { referee: self, referrer } = yield* referredPair(app, merchant, { phone: "85512000111" })
        const { code } = yield* codeOf(app, merchant.key, referrer.id)
        const second = yield* newCustomer(app, merchant.key, { referral_code: code.toLowerCase() })
        const third = yield* newCustomer(app, merchant.key, { referral_code: code })
        const flagged = (yield* owner.referralsConsole.flagged({ path: { storeId: merchant.storeId }, urlParams: listParams() })).data
        expect(flagged.map((r) => [r.referee_id, r.flags])).toEqual([
          [third.id, ["referrer_daily_limit"]],
          [self.id, ["self_referral"]]
        ])
        expect((yield* owner.referralsConsole.list({ path: { storeId: merchant.storeId }, urlParams: listParams() })).data
          .find((r) => r.referee_id === second.id)?.status).toBe("pending")
        const events = yield* eventsOf(merchant.storeId, "referral.flagged")
        expect(events).toHaveLength(2)
        expect(events[1]).toMatchObject({
          object: "referral",
          store_id: merchant.storeId,
          referrer_id: referrer.id,
          referee_id: third.id,
          status: "flagged",
          flags: ["referrer_daily_limit"]
        })

        // A flagged referral converts but holds its points and commissions.
        yield* paidPayment(app, merchant.key, { customer_id: self.id, amount: "20.00" })
        yield* settled
        expect(yield* balanceOf(app, merchant.key, self.id)).toBe(0)
        expect(yield* balanceOf(app, merchant.key, referrer.id)).toBe(0)
        const held = (yield* owner.referralsConsole.commissions({ path: { storeId: merchant.storeId }, urlParams: listParams() })).data
        expect(held.map((c) => [c.amount, c.status])).toEqual([["1.00", "held"]])
        // Held commissions are never paid out.
        expect(yield* owner.referralsConsole.payout({ path: { storeId: merchant.storeId }, payload: {}, headers: {} }))
          .toMatchObject({ count: 0 })
      }))

    it.effect("clears (points and commissions released once) or voids flagged referrals; a full refund of the converting payment flags", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const owner = yield* clientAs(app, merchant.owner.token)
        const storeId = merchant.storeId
        yield* configure(app, merchant, PROGRAM)
        const a = yield* referredPair(app, merchant, { phone: "855-12-000-111" })
        const b = yield* referredPair(app, merchant)
        yield* paidPayment(app, merchant.key, { customer_id: a.referee.id, amount: "30.00" })
        const converting = yield* paidPayment(app, merchant.key, { customer_id: b.referee.id, amount: "30.00" })
        const later = yield* paidPayment(app, merchant.key, { customer_id: b.referee.id, amount: "10.00" })
        yield* settled
        expect(yield* balanceOf(app, merchant.key, b.referee.id)).toBe(200)

        // The converting payment refunded in full: the referral is flagged, the later commission held.
        yield* refund(app, merchant.owner.token, converting.id)
        yield* settled
        const flagged = (yield* owner.referralsConsole.flagged({ path: { storeId }, urlParams: listParams() })).data
        const bReferral = flagged.find((r) => r.referee_id === b.referee.id)!
        expect(bReferral).toMatchObject({ status: "flagged", flags: ["converting_payment_refunded"] })
        const byPayment = (id: string) =>
          Effect.map(owner.referralsConsole.commissions({ path: { storeId }, urlParams: listParams() }), (list) => list.data.find((c) => c.payment_id === id))
        expect(yield* byPayment(later.id)).toMatchObject({ amount: "0.50", status: "held" })
        expect(yield* byPayment(converting.id)).toMatchObject({ status: "voided" })

        const aReferral = flagged.find((r) => r.referee_id === a.referee.id)!
        const review = (referralId: typeof aReferral.id, decision: "clear" | "void", note?: string) =>
          owner.referralsConsole.review({ path: { storeId, referralId }, payload: { decision, ...(note === undefined ? {} : { note }) } })

        // Clear: the held points reach both wallets once, the held commission accrues.
        const cleared = yield* review(aReferral.id, "clear", "Siblings sharing a phone")
        expect(cleared).toMatchObject({ status: "converted", review: { decision: "clear", note: "Siblings sharing a phone", reviewed_by: merchant.owner.userId } })
        expect(yield* balanceOf(app, merchant.key, a.referrer.id)).toBe(500)
        expect(yield* balanceOf(app, merchant.key, a.referee.id)).toBe(200)
        expect(yield* referralEntries(a.referrer.id)).toHaveLength(1)
        yield* expectFailure(review(aReferral.id, "clear"), "InvalidState", "referralId")

        // Void: the held commission is voided for good.
        expect(yield* review(bReferral.id, "void")).toMatchObject({ status: "voided", review: { decision: "void", note: null } })
        expect(yield* byPayment(later.id)).toMatchObject({ status: "voided" })
        yield* expectFailure(review(bReferral.id, "clear"), "InvalidState", "referralId")
        // A later payment of a voided referral earns nothing.
        yield* paidPayment(app, merchant.key, { customer_id: b.referee.id, amount: "10.00" })
        yield* settled
        const commissions = (yield* owner.referralsConsole.commissions({ path: { storeId }, urlParams: listParams({ status: "accrued" as const }) })).data
        expect(commissions.map((c) => c.amount)).toEqual(["1.50"])

        const report = yield* owner.referralsConsole.report({ path: { storeId }, urlParams: {} })
        expect(report.funnel).toMatchObject({ referrals: 2, converted: 2, flagged: 0, voided: 1, conversion_rate: 1 })
      }))

    it.effect("converts once when the referee's first two payments are paid at the same moment", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        yield* configure(app, merchant, PROGRAM)
        const { referee, referrer } = yield* referredPair(app, merchant)
        const payments = yield* Effect.all([1, 2].map(() => createPayment(app, merchant.key, { customer_id: referee.id, amount: "10.00" })))
        yield* Effect.forEach(payments, (payment) => simulate(app, merchant.key, payment.id, "scanned"))
        // Both paid at once, while extra consumer passes race the consumer's own.
        const pass = yield* makeOutboxPass(REFERRALS_CONSUMER, { types: REFERRAL_PAYMENT_EVENTS, apply: applyReferralPaymentEvent })
        yield* Effect.all([
          ...payments.map((payment) => simulate(app, merchant.key, payment.id, "paid")),
          ...[1, 2, 3].map(() => pass.pipe(Effect.provide([ReferralsRepo.Default, Outbox.Default])))
        ], { concurrency: "unbounded" })
        yield* Effect.all([1, 2, 3].map(() => pass.pipe(Effect.provide([ReferralsRepo.Default, Outbox.Default]))), { concurrency: "unbounded" })
        yield* settled
        expect(yield* eventsOf(merchant.storeId, "referral.converted")).toHaveLength(1)
        expect(yield* referralEntries(referrer.id)).toEqual([{ points: 500 }])
        expect(yield* referralEntries(referee.id)).toEqual([{ points: 200 }])
        expect(yield* balanceOf(app, merchant.key, referrer.id)).toBe(500)
        const owner = yield* clientAs(app, merchant.owner.token)
        const commissions = (yield* owner.referralsConsole.commissions({ path: { storeId: merchant.storeId }, urlParams: listParams() })).data
        expect(commissions.map((c) => c.amount)).toEqual(["0.50", "0.50"])
      }).pipe(Effect.provide(OutboxQueues.Default)))

    it.effect("refuses bad input with 400, another store's objects with 404, and roles without the permission with 403", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const other = yield* newMerchant(app)
        const token = merchant.owner.token
        const programPath = `/dashboard/stores/${merchant.storeId}/referral-program`
        const bad = (method: string, path: string, body: unknown, param: string, credential = token) =>
          Effect.map(call(app, method, path, { token: credential, body }), (answer) => {
            expect(answer.status, `${path} ${JSON.stringify(body)}`).toBe(400)
            expect(answer.body).toMatchObject({ error: { code: "invalid_request", param } })
          })
        yield* bad("PUT", programPath, { commission_percent: "101" }, "commission_percent")
        yield* bad("PUT", programPath, { commission_percent: "-1" }, "commission_percent")
        yield* bad("PUT", programPath, { commission_percent: 5 }, "commission_percent")
        yield* bad("PUT", programPath, { referrer_points: -1 }, "referrer_points")
        yield* bad("PUT", programPath, { commission_window_days: 1.5 }, "commission_window_days")
        yield* bad("PUT", programPath, { surprise: true }, "surprise")
        expect(yield* configure(app, merchant, { commission_percent: "100" })).toMatchObject({ commission_percent: "100" })
        expect(yield* configure(app, merchant, { commission_percent: "12.50" })).toMatchObject({ commission_percent: "12.5" })

        // A code of another store is 400 naming referral_code.
        const foreign = yield* newCustomer(app, other.key)
        const { code: foreignCode } = yield* codeOf(app, other.key, foreign.id)
        yield* bad("POST", "/v1/customers", { email: freshEmail(), referral_code: foreignCode }, "referral_code", merchant.key)
        yield* bad("POST", "/v1/customers", { email: freshEmail(), referral_code: "NOPE2345" }, "referral_code", merchant.key)

        const storeId = merchant.storeId
        const reviewPath = (id: string) => `/dashboard/stores/${storeId}/referrals/${id}/review`
        const { referee } = yield* referredPair(app, merchant)
        const [referral] = (yield* (yield* clientAs(app, token)).referralsConsole.list({ path: { storeId }, urlParams: listParams() })).data
        expect(referral!.referee_id).toBe(referee.id)
        yield* bad("POST", reviewPath(referral!.id), { decision: "maybe" }, "decision")
        const notFlagged = yield* call(app, "POST", reviewPath(referral!.id), { token, body: { decision: "clear" } })
        expect(notFlagged.status).toBe(409)
        expect((yield* call(app, "POST", reviewPath("ref_missing"), { token, body: { decision: "clear" } })).status).toBe(404)
        // Another store's owner sees neither the store nor the referral.
        const foreignApi = yield* clientAs(app, other.owner.token)
        yield* expectFailure(foreignApi.referralsConsole.list({ path: { storeId }, urlParams: listParams() }), "NotFound")
        expect((yield* call(app, "POST", `/dashboard/stores/${other.storeId}/referrals/${referral!.id}/review`, {
          token: other.owner.token,
          body: { decision: "clear" }
        })).status).toBe(404)
        const unknownReferrer = yield* call(app, "POST", `/dashboard/stores/${storeId}/commissions/payout`, { token, body: { referrer_id: foreign.id } })
        expect(unknownReferrer.status).toBe(404)

        // Analysts read; they neither configure, review nor pay out.
        const analyst = yield* Effect.promise(() => addMember(app, token, merchant.owner.organizationId, "analyst"))
        const analystApi = yield* clientAs(app, analyst.token)
        yield* analystApi.referralsConsole.summary({ path: { storeId }, urlParams: {} })
        yield* analystApi.referralsConsole.report({ path: { storeId }, urlParams: {} })
        yield* expectFailure(analystApi.referralsConsole.configure({ path: { storeId }, payload: { active: true } }), "Forbidden")
        yield* expectFailure(analystApi.referralsConsole.payout({ path: { storeId }, payload: {}, headers: {} }), "Forbidden")
        yield* expectFailure(analystApi.referralsConsole.review({ path: { storeId, referralId: referral!.id }, payload: { decision: "void" } }), "Forbidden")
        // A referee with a referrer cannot get another (one referral per referee, by key).
        const repo = yield* ReferralsRepo.pipe(Effect.provide(ReferralsRepo.Default))
        const again = yield* repo.insertReferral({
          id: "ref_again" as never,
          storeId,
          livemode: false,
          referrerId: foreign.id,
          refereeId: referee.id,
          status: "pending",
          flags: [],
          at: new Date()
        })
        expect(again._tag).toBe("None")
      }))
  })
})
