/**
 * Analytics, ledger reports, revenue shares and risk cases against the real service, with numbers
 * computed by hand from seeded payments. Payments are made through the API and then moved to the days
 * the test needs (their `paid_at`), or copied by SQL when a long history is needed.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import * as fc from "fast-check"
import type { PaymentId, StoreId } from "../../domain/Ids.ts"
import { forecastSeries } from "../../src/analytics/Forecast.ts"
import { applyAnalyticsEvent } from "../../src/analytics/Jobs.ts"
import { AnalyticsRepo } from "../../src/analytics/Repo.ts"
import { paymentLines, refundLines, shareReversalOf, shareOf } from "../../src/ledger/Postings.ts"
import { makeOutboxPass, Outbox, OutboxQueues } from "../../src/platform/Outbox.ts"
import { signUp } from "../support/Accounts.ts"
import { clientAs, expectFailure } from "../support/Client.ts"
import { newMerchant, paidPayment, refund } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const ADMIN_EMAIL = "ledger-admin@example.test"
const DAY_MS = 24 * 60 * 60 * 1000
const today = () => new Date().toISOString().slice(0, 10)
const dayBefore = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10)

/** Moves a payment's paid time to noon UTC of `day`. */
const paidOn = (id: PaymentId, day: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE payments SET paid_at = ${new Date(`${day}T12:00:00Z`)} WHERE id = ${id}`).pipe(Effect.orDie)

/** Copies payment `template` as a paid payment of `amount` minor units paid at noon of `day`. */
const copyPaid = (template: PaymentId, amount: bigint, day: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO payments
      SELECT (jsonb_populate_record(NULL::payments, to_jsonb(p) || jsonb_build_object(
        'id', 'pay_' || substr(md5(random()::text), 1, 24),
        'amount', ${amount.toString()}::bigint, 'amount_refunded', 0, 'status', 'paid',
        'paid_at', ${new Date(`${day}T12:00:00Z`)}::timestamptz, 'created_at', ${new Date(`${day}T11:00:00Z`)}::timestamptz,
        'qr_md5', md5(random()::text)))).*
      FROM payments p WHERE p.id = ${template}`).pipe(Effect.orDie)

/** After history was rewritten by SQL behind the service's back, the store's daily rollup is rebuilt from it. */
const rebuildRollup = (storeId: StoreId) =>
  Effect.flatMap(Effect.provide(AnalyticsRepo, AnalyticsRepo.Default), (repo) => repo.rebuildStore(storeId))

const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, what = "the condition") =>
  Effect.retry(effect, Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(100))).pipe(
    Effect.catchAll(() => Effect.dieMessage(`${what} never held`))
  )

const owner = (app: TestAppShape) => newMerchant(app, "Analytics Cafe")

describe("analytics, ledger, revenue shares and risk", () => {
  describe("arithmetic", () => {
    layer(testAppLayer(), { timeout: 30_000, excludeTestServices: true })("pure", (it) => {
      it.effect("forecasts a straight line as the line, nothing from nothing, a constant as itself", () =>
        Effect.sync(() => {
          expect(forecastSeries([], 3)).toEqual([0, 0, 0])
          expect(forecastSeries([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000], 3)).toEqual([1100, 1200, 1300])
          expect(forecastSeries([0, 0, 0], 2)).toEqual([0, 0])
          expect(forecastSeries([250, 250, 250, 250], 2)).toEqual([250, 250])
          // A falling line stops at zero.
          expect(forecastSeries([300, 200, 100], 3)).toEqual([0, 0, 0])
        }))

      it.effect("keeps every posting balanced, and gives back exactly the shares across partial refunds", () =>
        Effect.sync(() =>
          fc.assert(fc.property(
            fc.bigInt({ min: 1n, max: 10_000_000n }),
            fc.array(fc.integer({ min: 1, max: 250_000 }).map((units) => (units / 10_000).toFixed(4)), { maxLength: 4 }),
            fc.array(fc.bigInt({ min: 1n, max: 10_000_000n }), { minLength: 1, maxLength: 5 }),
            (amount, percents, parts) => {
              const balanced = (lines: ReadonlyArray<{ debit: bigint; credit: bigint }>) =>
                lines.reduce((sum, line) => sum + line.debit - line.credit, 0n) === 0n
              const paid = paymentLines(amount, percents)
              expect(balanced(paid)).toBe(true)
              const shared = paid.filter((line) => line.account === "revenue_share_payable").reduce((sum, line) => sum + line.credit, 0n)
              expect(shared).toBe(percents.reduce((sum, percent) => sum + shareOf(amount, percent), 0n))
              // Refund the whole amount in parts: the reversals add up to exactly what was shared.
              const total = parts.reduce((sum, part) => sum + part, 0n)
              let refunded = 0n
              let reversed = 0n
              for (const part of parts) {
                const portion = (part * amount) / total
                const refundAmount = part === parts[parts.length - 1] ? amount - refunded : portion
                if (refundAmount <= 0n) continue
                const back = shareReversalOf({ paymentAmount: amount, sharedTotal: shared, refundedBefore: refunded, amount: refundAmount })
                expect(balanced(refundLines(refundAmount, back))).toBe(true)
                refunded += refundAmount
                reversed += back
              }
              if (refunded === amount) expect(reversed).toBe(shared)
            }
          ), { numRuns: 300, seed: 20261123 })))
    })
  })

  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), { timeout: 180_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("answers a zero-filled daily series with hand-computed figures, and refuses bad ranges", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const first = yield* paidPayment(app, merchant.key, { amount: "10.00" })
        const second = yield* paidPayment(app, merchant.key, { amount: "2.50" })
        const khr = yield* paidPayment(app, merchant.key, { amount: "40000", currency: "KHR" })
        yield* paidOn(first.id, dayBefore(2))
        yield* paidOn(second.id, dayBefore(2))
        yield* paidOn(khr.id, dayBefore(1))
        yield* refund(app, merchant.key, first.id, { amount: "4.00" })
        yield* rebuildRollup(merchant.storeId)

        const series = yield* api.analytics.timeseries({ path: { storeId: merchant.storeId }, urlParams: { from: dayBefore(3) } })
        expect(series.from).toBe(dayBefore(3))
        expect(series.to).toBe(today())
        expect(series.data).toEqual([
          { date: dayBefore(3), count: 0, revenue: { USD: "0.00", KHR: "0" }, refunds: { USD: "0.00", KHR: "0" } },
          { date: dayBefore(2), count: 2, revenue: { USD: "12.50", KHR: "0" }, refunds: { USD: "0.00", KHR: "0" } },
          { date: dayBefore(1), count: 1, revenue: { USD: "0.00", KHR: "40000" }, refunds: { USD: "0.00", KHR: "0" } },
          { date: today(), count: 0, revenue: { USD: "0.00", KHR: "0" }, refunds: { USD: "4.00", KHR: "0" } }
        ])
        // The rollup follows new payments by itself (the analytics consumer), and a replayed event changes nothing.
        yield* paidPayment(app, merchant.key, { amount: "1.25" })
        const sql = yield* SqlClient.SqlClient
        const rolledUp = Effect.map(
          sql<{ n: number; revenue: string }>`SELECT paid_count AS n, revenue::text AS revenue FROM analytics_daily
            WHERE store_id = ${merchant.storeId} AND day = ${today()}::date AND currency = 'USD'`,
          (rows) => rows[0]
        )
        yield* eventually(Effect.filterOrFail(rolledUp, (row) => row?.n === 1 && row.revenue === "125"), "today's rollup row")
        yield* sql`INSERT INTO outbox_pending (consumer, position) SELECT 'analytics', position FROM outbox
                   WHERE store_id = ${merchant.storeId} AND type IN ('payment.completed', 'payment.refunded') ON CONFLICT DO NOTHING`
        yield* eventually(Effect.flatMap(sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_pending WHERE consumer = 'analytics'`, ([row]) =>
          row!.n === 0 ? Effect.void : Effect.fail("pending")), "the re-queued events applied")
        expect(yield* rolledUp).toEqual({ n: 1, revenue: "125" })
        // Default: the last 30 days.
        const standard = yield* api.analytics.timeseries({ path: { storeId: merchant.storeId }, urlParams: {} })
        expect(standard.data).toHaveLength(30)

        const path = { storeId: merchant.storeId }
        yield* expectFailure(api.analytics.timeseries({ path, urlParams: { from: today(), to: dayBefore(1) } }), "InvalidRequest", "from")
        yield* expectFailure(api.analytics.timeseries({ path, urlParams: { from: dayBefore(400) } }), "InvalidRequest", "from")
        for (const bad of ["/dashboard/stores/x/analytics/timeseries?from=2026-02-30", "/dashboard/stores/x/analytics/forecast?days=0", "/dashboard/stores/x/analytics/forecast?days=91", "/dashboard/stores/x/analytics/timeseries?from=yesterday"]) {
          // Raw: the typed client refuses to send a malformed query.
          const response = yield* Effect.promise(() =>
            app.fetch(bad.replace("/x/", `/${merchant.storeId}/`), { headers: { authorization: `Bearer ${merchant.owner.token}` } }))
          expect(response.status, bad).toBe(400)
        }
        // Another organization's user sees no such store.
        const stranger = yield* Effect.promise(() => signUp(app))
        yield* expectFailure(
          Effect.flatMap(clientAs(app, stranger.token), (other) => other.analytics.timeseries({ path, urlParams: {} })),
          "NotFound"
        )
      }))

    it.effect("recomputes a day once for all the events of a pass that touch it, and counts every one", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const sql = yield* SqlClient.SqlClient
        const payments = [
          yield* paidPayment(app, merchant.key, { amount: "1.00" }),
          yield* paidPayment(app, merchant.key, { amount: "2.00" }),
          yield* paidPayment(app, merchant.key, { amount: "3.00" }),
          yield* paidPayment(app, merchant.key, { amount: "4.00" })
        ]
        // The last one moved to yesterday, as a late completion event would say.
        yield* paidOn(payments[3]!.id, dayBefore(1))
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        yield* outbox.emit({
          storeId: merchant.storeId,
          livemode: false,
          type: "payment.completed",
          object: { id: payments[3]!.id, paid_at: `${dayBefore(1)}T12:00:00Z` }
        })
        // The events again, for a consumer of the test's own (the service's consumer has its own queue).
        yield* sql`INSERT INTO outbox_pending (consumer, position) SELECT 'test-analytics', position FROM outbox
                   WHERE store_id = ${merchant.storeId} AND type = 'payment.completed'`
        const repo = yield* Effect.provide(AnalyticsRepo, AnalyticsRepo.Default)
        const recomputed: Array<string> = []
        const counting = AnalyticsRepo.make({
          ...repo,
          refreshDay: (input) => Effect.zipRight(Effect.sync(() => recomputed.push(input.day)), repo.refreshDay(input))
        })
        yield* sql`DELETE FROM analytics_daily WHERE store_id = ${merchant.storeId}`
        const pass = yield* makeOutboxPass("test-analytics", {
          types: ["payment.completed"],
          apply: (event) => Effect.provideService(applyAnalyticsEvent(event), AnalyticsRepo, counting)
        })
        expect(yield* pass).toBe(5)
        // Five events over two days: one recomputation per day, each counting all of its day's payments.
        expect(recomputed.sort()).toEqual([dayBefore(1), today()])
        const rows = yield* sql<{ day: string; n: number; revenue: string }>`
          SELECT day::text AS day, paid_count AS n, revenue::text AS revenue FROM analytics_daily
          WHERE store_id = ${merchant.storeId} AND currency = 'USD' ORDER BY day`
        expect(rows).toEqual([{ day: dayBefore(1), n: 1, revenue: "400" }, { day: today(), n: 3, revenue: "600" }])
      }).pipe(Effect.provide(OutboxQueues.Default)))

    it.effect("forecasts a straight-line history as the line, per currency", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const empty = yield* api.analytics.forecast({ path: { storeId: merchant.storeId }, urlParams: { days: 2 } })
        expect(empty.data.map((day) => day.revenue)).toEqual([{ USD: "0.00", KHR: "0" }, { USD: "0.00", KHR: "0" }])

        const template = yield* paidPayment(app, merchant.key, { amount: "1.00" })
        // Day t of the 90-day history (t = 0 the oldest, 89 today) took in (t + 1) × 1.00 USD.
        yield* Effect.forEach(Array.from({ length: 90 }, (_, t) => t), (t) => copyPaid(template.id, BigInt((t + 1) * 100), dayBefore(89 - t)), {
          discard: true
        })
        // The template itself would add 1.00 to today: take it out of the series.
        yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE payments SET paid_at = NULL, status = 'cancelled' WHERE id = ${template.id}`)
        yield* rebuildRollup(merchant.storeId)
        const forecast = yield* api.analytics.forecast({ path: { storeId: merchant.storeId }, urlParams: { days: 3 } })
        expect(forecast.history_days).toBe(90)
        expect(forecast.method).toBe("linear_trend_moving_average")
        expect(forecast.data.map((day) => day.revenue.USD)).toEqual(["91.00", "92.00", "93.00"])
        expect(forecast.data.map((day) => day.revenue.KHR)).toEqual(["0", "0", "0"])
        expect(forecast.data[0]!.date > today()).toBe(true)
      }))

    it.effect("sums an organization's stores over the last 30 days against the 30 before", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const customers = yield* clientAs(app, merchant.key)
        const ana = yield* customers.customers.create({ payload: { name: "Ana", external_id: "exec-ana" }, headers: {} })
        const a = yield* paidPayment(app, merchant.key, { amount: "20.00", customer_id: ana.id })
        yield* paidPayment(app, merchant.key, { amount: "5.00" })
        const old = yield* paidPayment(app, merchant.key, { amount: "7.00" })
        yield* paidOn(old.id, dayBefore(40))
        yield* refund(app, merchant.key, a.id, { amount: "1.00" })
        // One payment created and never paid.
        yield* Effect.flatMap(clientAs(app, merchant.key), (key) => key.payments.create({ payload: { amount: "3.00", currency: "USD" }, headers: {} }))
        const summary = yield* api.analytics.executive({ path: { orgId: merchant.owner.organizationId }, urlParams: {} })
        expect(summary).toMatchObject({
          object: "executive_summary",
          period_days: 30,
          revenue: { USD: "25.00", KHR: "0" },
          previous_revenue: { USD: "7.00", KHR: "0" },
          payments_count: 2,
          refund_rate: 0.5,
          active_customers: 1,
          stores: [{ store_id: merchant.storeId, name: "Analytics Cafe", revenue: { USD: "25.00", KHR: "0" } }]
        })
        // 2 paid of the 3 created this period (the old one was created today too, then moved): 2 / 4.
        expect(summary.success_rate).toBe(0.5)
      }))

    it.effect("posts revenue shares in the payment's entry, reverses them on refunds, and keeps every trial balance at zero", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const path = { storeId: merchant.storeId }
        const landlord = yield* api.revenueShares.create({ path, payload: { party: "Landlord", percent: "12.5" } })
        expect(landlord).toMatchObject({ object: "revenue_share", percent: "12.5", active: true })
        yield* api.revenueShares.create({ path, payload: { party: "Franchise", percent: "7.25" } })
        yield* expectFailure(api.revenueShares.create({ path, payload: { party: "Too much", percent: "80.3" } }), "InvalidState", "percent")
        // Raw: the typed client refuses to send these.
        for (const percent of ["0", "100.5", "-5", "12.34567", "abc"]) {
          const response = yield* Effect.promise(() =>
            app.fetch(`/dashboard/stores/${merchant.storeId}/revenue-shares`, {
              method: "POST",
              headers: { authorization: `Bearer ${merchant.owner.token}`, "content-type": "application/json" },
              body: JSON.stringify({ party: "Bad", percent })
            }))
          expect(response.status, percent).toBe(400)
          expect(((yield* Effect.promise(() => response.json())) as { error: { param: string } }).error.param).toBe("percent")
        }

        const payment = yield* paidPayment(app, merchant.key, { amount: "10.00" })
        yield* refund(app, merchant.key, payment.id, { amount: "5.00" })
        yield* refund(app, merchant.key, payment.id, { amount: "5.00" })
        const journals = yield* api.ledger.journals({ path, urlParams: { limit: 100 } })
        const paid = journals.data.find((entry) => entry.kind === "payment")!
        // 12.5 % of 10.00 = 1.25; 7.25 % = 0.725 → 0.72.
        expect(paid.lines).toEqual([
          { account: "provider_clearing", currency: "USD", debit: "10.00", credit: "0.00" },
          { account: "merchant_payable", currency: "USD", debit: "0.00", credit: "10.00" },
          { account: "merchant_payable", currency: "USD", debit: "1.25", credit: "0.00" },
          { account: "revenue_share_payable", currency: "USD", debit: "0.00", credit: "1.25" },
          { account: "merchant_payable", currency: "USD", debit: "0.72", credit: "0.00" },
          { account: "revenue_share_payable", currency: "USD", debit: "0.00", credit: "0.72" }
        ])
        // Shared 1.97: the first half refund gives back floor(1.97 / 2) = 0.98, the second the other 0.99.
        const reversals = journals.data.filter((entry) => entry.kind === "refund")
          .map((entry) => entry.lines.find((line) => line.account === "revenue_share_payable")!.debit).sort()
        expect(reversals).toEqual(["0.98", "0.99"])

        const balance = yield* api.ledger.trialBalance({ path, urlParams: {} })
        expect(balance.balanced).toBe(true)
        expect(balance.accounts.find((row) => row.account === "revenue_share_payable")).toMatchObject({ debit: "1.97", credit: "1.97", balance: "0.00" })
        expect(balance.totals.USD.debit).toBe(balance.totals.USD.credit)

        // Deactivated shares stop applying; the 100 % rule counts active ones only.
        yield* api.revenueShares.update({ path: { shareId: landlord.id }, payload: { active: false } })
        yield* api.revenueShares.create({ path, payload: { party: "Now fits", percent: "85" } })
        yield* expectFailure(api.revenueShares.update({ path: { shareId: landlord.id }, payload: { active: true } }), "InvalidState")
        const listed = yield* api.revenueShares.list({ path, urlParams: { limit: 100 } })
        expect(listed.data).toHaveLength(3)
        yield* api.revenueShares.delete({ path: { shareId: landlord.id } })
        yield* expectFailure(api.revenueShares.delete({ path: { shareId: landlord.id } }), "NotFound")

        // The ledger over today: each line with its account's running balance.
        const ledger = yield* api.ledger.ledger({ path, urlParams: {} })
        const clearing = ledger.data.filter((line) => line.account === "provider_clearing").map((line) => line.balance)
        expect(clearing).toEqual(["10.00", "5.00", "0.00"])
      }))

    it.effect("keeps the trial balance at zero and reconciliation clean over random payments, refunds and shares", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        // Random scenarios, fixed by the seed: shares (percents), then payments each refunded in random parts.
        const scenarios = fc.sample(
          fc.record({
            shares: fc.array(fc.integer({ min: 1, max: 2_500 }).map((hundredths) => (hundredths / 100).toFixed(2)), { maxLength: 3 }),
            payments: fc.array(
              fc.record({
                cents: fc.integer({ min: 1, max: 90_000 }),
                currency: fc.constantFrom("USD" as const, "KHR" as const),
                refundParts: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 3 })
              }),
              { minLength: 1, maxLength: 3 }
            )
          }),
          { numRuns: 4, seed: 1123 }
        )
        for (const scenario of scenarios) {
          const merchant = yield* owner(app)
          const api = yield* clientAs(app, merchant.owner.token)
          const path = { storeId: merchant.storeId }
          for (const [i, percent] of scenario.shares.entries()) {
            yield* api.revenueShares.create({ path, payload: { party: `Partner ${i}`, percent } })
          }
          for (const payment of scenario.payments) {
            const amount = payment.currency === "USD" ? (payment.cents / 100).toFixed(2) : String(payment.cents * 10)
            const paid = yield* paidPayment(app, merchant.key, { amount, currency: payment.currency })
            // Each part refunds that many quarters of what is left, the last part all of it.
            let left = payment.currency === "USD" ? payment.cents : payment.cents * 10
            for (const [index, quarters] of payment.refundParts.entries()) {
              const last = index === payment.refundParts.length - 1
              const part = last ? left : Math.floor((left * quarters) / 4)
              if (part <= 0) continue
              yield* refund(app, merchant.key, paid.id, { amount: payment.currency === "USD" ? (part / 100).toFixed(2) : String(part) })
              left -= part
            }
          }
          const balance = yield* api.ledger.trialBalance({ path, urlParams: {} })
          expect(balance.balanced, JSON.stringify(scenario)).toBe(true)
          expect(balance.totals.USD.debit).toBe(balance.totals.USD.credit)
          expect(balance.totals.KHR.debit).toBe(balance.totals.KHR.credit)
          const reconciled = yield* api.ledger.reconcile({ path })
          expect(reconciled.mismatches, JSON.stringify(scenario)).toEqual([])
        }
      }))

    it.effect("lets one of two racing creates past 100 % through", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const path = { storeId: merchant.storeId }
        const outcomes = yield* Effect.all(
          Array.from({ length: 6 }, (_, i) => Effect.either(api.revenueShares.create({ path, payload: { party: `Party ${i}`, percent: "40" } }))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((outcome) => outcome._tag === "Right")).toHaveLength(2)
        const listed = yield* api.revenueShares.list({ path, urlParams: { limit: 100 } })
        expect(listed.data.map((share) => share.percent)).toEqual(["40", "40"])
      }))

    it.effect("reconciles: finds a deleted journal line and a missing entry, and the backfill posts it once", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* owner(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const admin = yield* clientAs(app, (yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL }))).token)
        const path = { storeId: merchant.storeId }
        const a = yield* paidPayment(app, merchant.key, { amount: "8.00" })
        const b = yield* paidPayment(app, merchant.key, { amount: "3.00" })
        yield* refund(app, merchant.key, b.id, { amount: "1.00" })
        expect(yield* api.ledger.reconcile({ path })).toMatchObject({ ok: true, checked_payments: 2, checked_refunds: 1, mismatches: [] })

        // Behind the service's back, as a superuser with triggers off: a line of a's entry, and b's whole entry.
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL session_replication_role = replica`
          yield* sql`DELETE FROM journal_lines WHERE line = 2 AND entry_id = (SELECT id FROM journal_entries WHERE payment_id = ${a.id} AND kind = 'payment')`
          yield* sql`DELETE FROM journal_lines WHERE entry_id = (SELECT id FROM journal_entries WHERE payment_id = ${b.id} AND kind = 'payment')`
          yield* sql`DELETE FROM journal_entries WHERE payment_id = ${b.id} AND kind = 'payment'`
        }))
        const found = yield* api.ledger.reconcile({ path })
        expect(found.ok).toBe(false)
        expect(found.mismatches.map((m) => [m.kind, m.payment_id]).sort()).toEqual([
          ["missing_payment_entry", b.id],
          ["payment_entry_mismatch", a.id],
          ["unbalanced_entry", a.id]
        ].sort())
        expect(found.mismatches.find((m) => m.kind === "payment_entry_mismatch")!.actual).toContain("merchant_payable credit 0.00")

        // Only platform admins reach the platform routes.
        yield* expectFailure(api.ledger.backfill(), "Forbidden")
        yield* expectFailure(api.ledger.platformTrialBalance({ urlParams: {} }), "Forbidden")
        yield* expectFailure(api.ledger.platformReconcile(), "Forbidden")
        // Twice at once, then again: b's entry is posted once.
        // (Other tests of this database left paid payments without entries too: count them all.)
        const [missing] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM payments p WHERE paid_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM journal_entries e WHERE e.payment_id = p.id AND e.kind = 'payment')`
        const [first, second] = yield* Effect.all([admin.ledger.backfill(), admin.ledger.backfill()], { concurrency: 2 })
        expect(first!.created + second!.created).toBe(missing!.n)
        const [posted] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM journal_entries WHERE payment_id = ${b.id} AND kind = 'payment'`
        expect(posted!.n).toBe(1)
        const again = yield* admin.ledger.backfill()
        expect(again.created).toBe(0)
        expect(again.skipped).toBeGreaterThanOrEqual(4)
        const after = yield* api.ledger.reconcile({ path })
        expect(after.mismatches.map((m) => m.kind).sort()).toEqual(["payment_entry_mismatch", "unbalanced_entry"])
        const platform = yield* admin.ledger.platformReconcile()
        expect(platform.store_id).toBeNull()
        expect(platform.mismatches.some((m) => m.payment_id === a.id)).toBe(true)
      }))

    it.effect("opens each risk case once: large amount, velocity, refund ratio and a flagged referral; moves cases by the table", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* owner(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const key = yield* clientAs(app, merchant.key)
        const path = { storeId: merchant.storeId }
        const cases = (kind: string) =>
          Effect.map(api.risk.cases({ path, urlParams: { limit: 100 } }), (page) => page.data.filter((found) => found.kind === kind))

        // Large amount: above 1,000.00 USD.
        const big = yield* paidPayment(app, merchant.key, { amount: "1500.00" })
        const large = yield* eventually(Effect.filterOrFail(cases("large_amount"), (found) => found.length === 1), "one large_amount case")
        expect(large[0]).toMatchObject({ status: "open", subject: { type: "payment", id: big.id } })

        // Velocity: a sixth paid payment of one customer within 10 minutes; the seventh opens no second case.
        const ana = yield* key.customers.create({ payload: { name: "Ana", external_id: "risk-ana" }, headers: {} })
        for (let i = 0; i < 7; i++) yield* paidPayment(app, merchant.key, { amount: "1.00", customer_id: ana.id })
        const velocity = yield* eventually(Effect.filterOrFail(cases("velocity"), (found) => found.length === 1), "one velocity case")
        expect(velocity[0]!.subject).toEqual({ type: "customer", id: ana.id })

        // Refund ratio: refunds over half of what was paid in 24 h.
        yield* refund(app, merchant.key, big.id, { amount: "1000.00" })
        yield* eventually(Effect.filterOrFail(cases("refund_ratio"), (found) => found.length === 1), "one refund_ratio case")

        // A flagged referral, as the referrals area announces it.
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        const referral = { id: "ref_3kTMd92JxQeLp0aZ7yNcB1vW", object: "referral", status: "flagged", flags: ["self_referral"], referrer_id: ana.id, referee_id: ana.id }
        yield* outbox.emit({ storeId: merchant.storeId as StoreId, livemode: false, type: "referral.flagged", object: referral })
        yield* outbox.emit({ storeId: merchant.storeId as StoreId, livemode: false, type: "referral.flagged", object: referral })
        yield* eventually(Effect.filterOrFail(cases("referral_fraud"), (found) => found.length === 1), "one referral_fraud case")

        // Every event applied again: no case twice.
        yield* sql`INSERT INTO outbox_pending (consumer, position) SELECT 'risk', position FROM outbox WHERE store_id = ${merchant.storeId}
          AND type IN ('payment.completed', 'payment.refunded', 'referral.flagged') ON CONFLICT DO NOTHING`
        yield* eventually(Effect.flatMap(sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_pending WHERE consumer = 'risk'`, ([row]) =>
          row!.n === 0 ? Effect.void : Effect.fail("pending")), "the re-queued events applied")
        const all = yield* api.risk.cases({ path, urlParams: { limit: 100 } })
        expect(all.data.map((found) => found.kind).sort()).toEqual(["large_amount", "referral_fraud", "refund_ratio", "velocity"])
        const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox WHERE type = 'risk.case_opened' AND store_id = ${merchant.storeId}`
        expect(row!.n).toBe(4)

        // The moves.
        const caseId = { caseId: large[0]!.id }
        yield* expectFailure(api.risk.update({ path: caseId, payload: { status: "resolved" } }), "InvalidRequest", "resolution")
        yield* api.risk.update({ path: caseId, payload: { status: "investigating" } })
        const resolved = yield* api.risk.update({ path: caseId, payload: { status: "resolved", resolution: "Known wholesale customer" } })
        expect(resolved).toMatchObject({ status: "resolved", resolution: "Known wholesale customer" })
        yield* expectFailure(api.risk.update({ path: caseId, payload: { status: "open" } }), "InvalidState", "status")
        yield* expectFailure(api.risk.update({ path: caseId, payload: { status: "investigating" } }), "InvalidState")
        expect(yield* api.risk.summary({ path, urlParams: {} })).toMatchObject({ open: 3, investigating: 0, resolved: 1, dismissed: 0, total: 4 })
        const open = yield* api.risk.cases({ path, urlParams: { status: "open", limit: 100 } })
        expect(open.data).toHaveLength(3)
        // Another store's user: 404.
        const stranger = yield* clientAs(app, (yield* Effect.promise(() => signUp(app))).token)
        yield* expectFailure(stranger.risk.update({ path: caseId, payload: { status: "dismissed", resolution: "x" } }), "NotFound")
      }))
  })
})
