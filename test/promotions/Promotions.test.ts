/**
 * Promotions over HTTP against PostgreSQL: every move of the status machine from every status (allowed
 * ones land, the rest are 409 naming the status), four-eyes approval, the audit trail, the events,
 * awarding exactly once per promotion and payment however often the paid event comes, the 30-day
 * simulation against a hand-computed seed, ending overdue promotions, and the bad inputs of the contract.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { CustomerId, PromotionId, StoreId } from "../../domain/Ids.ts"
import type { Promotion, PromotionStatus } from "../../domain/Promotions.ts"
import { PromotionsService } from "../../src/promotions/Service.ts"
import { addMember } from "../support/Accounts.ts"
import { clientAs, listParams } from "../support/Client.ts"
import { type CallResult, makeCall } from "../support/Http.ts"
import { newMerchant, paidPayment } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()
let serial = 0
const DAY = 86_400_000

interface Team {
  readonly storeId: StoreId
  readonly key: string
  readonly owner: { readonly token: string; readonly userId: string }
  readonly admin: { readonly token: string; readonly userId: string }
  readonly analyst: { readonly token: string; readonly userId: string }
}

const newTeam = (app: TestAppShape) =>
  Effect.gen(function*() {
    const merchant = yield* newMerchant(app)
    const admin = yield* Effect.promise(() => addMember(app, merchant.owner.token, merchant.owner.organizationId, "admin"))
    const analyst = yield* Effect.promise(() => addMember(app, merchant.owner.token, merchant.owner.organizationId, "analyst"))
    return { storeId: merchant.storeId, key: merchant.key, owner: merchant.owner, admin, analyst } satisfies Team
  })

const window = (fromDays = -1, toDays = 30) => ({
  starts_at: new Date(Date.now() + fromDays * DAY).toISOString(),
  ends_at: new Date(Date.now() + toDays * DAY).toISOString()
})

const expectStatus = (result: CallResult, status: number, label: string) =>
  expect({ label, status: result.status, body: result.status === status ? null : result.body }).toEqual({ label, status, body: null })

const createPromotion = (app: TestAppShape, team: Team, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const created = yield* call(app, "POST", `/dashboard/stores/${team.storeId}/promotions`, {
      token: team.admin.token,
      body: { name: `Promo ${++serial}`, bonus_points: 50, ...window(), ...body }
    })
    expectStatus(created, 201, "create")
    return created.body as Promotion
  })

const move = (app: TestAppShape, token: string, id: PromotionId, action: string, body?: unknown) =>
  call(app, "POST", `/dashboard/promotions/${id}/${action}`, { token, ...(body === undefined ? {} : { body }) })

/** A new promotion brought to `status` by the shortest path: the admin submits and acts, the owner decides. */
const promotionIn = (app: TestAppShape, team: Team, status: PromotionStatus, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const promotion = yield* createPromotion(app, team, body)
    const steps: Record<PromotionStatus, ReadonlyArray<[string, string, unknown?]>> = {
      draft: [],
      pending_approval: [["submit", team.admin.token]],
      approved: [["submit", team.admin.token], ["approve", team.owner.token]],
      rejected: [["submit", team.admin.token], ["reject", team.owner.token, { reason: "Too generous" }]],
      active: [["submit", team.admin.token], ["approve", team.owner.token], ["activate", team.admin.token]],
      paused: [["submit", team.admin.token], ["approve", team.owner.token], ["activate", team.admin.token], ["pause", team.admin.token]],
      ended: [["submit", team.admin.token], ["approve", team.owner.token], ["activate", team.admin.token], ["end", team.admin.token]]
    }
    let current = promotion
    for (const [action, token, payload] of steps[status]) {
      const moved = yield* move(app, token, promotion.id, action, payload)
      expectStatus(moved, 201, `${action} towards ${status}`)
      current = moved.body as Promotion
    }
    expect(current.status).toBe(status)
    return current
  })

const pendingFor = (consumer: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let attempt = 0; attempt < 150; attempt++) {
      const [row] = yield* sql<{ pending: number }>`SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = ${consumer}`
      if (row!.pending === 0) return
      yield* Effect.sleep("100 millis")
    }
    return expect.fail(`${consumer} events stayed unapplied`)
  })

const promotionPoints = (customerId: CustomerId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ key: string; points: number }>`
      SELECT entry_key AS key, points FROM points_entries WHERE customer_id = ${customerId} AND type = 'promotion'`
    return [...rows].sort(byKey)
  })

const byKey = (a: { readonly key: string }, b: { readonly key: string }) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0

const newCustomer = (app: TestAppShape, key: string) =>
  Effect.flatMap(clientAs(app, key), (api) =>
    api.customers.create({ payload: { email: `promo-${Date.now().toString(36)}-${++serial}@example.test` }, headers: {} }))

describe("promotions", () => {
  layer(testAppLayer(), { timeout: 300_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("runs every move from every status: the table's moves land, every other is 409 naming the status", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const team = yield* newTeam(app)
        const statuses: ReadonlyArray<PromotionStatus> = ["draft", "pending_approval", "approved", "rejected", "active", "paused", "ended"]
        const allowed: Record<string, Partial<Record<PromotionStatus, PromotionStatus | "deleted">>> = {
          update: { draft: "draft", rejected: "draft" },
          submit: { draft: "pending_approval" },
          approve: { pending_approval: "approved" },
          reject: { pending_approval: "rejected" },
          activate: { approved: "active", paused: "active" },
          pause: { active: "paused" },
          end: { active: "ended", paused: "ended" },
          delete: { draft: "deleted", pending_approval: "deleted", approved: "deleted", rejected: "deleted", ended: "deleted" }
        }
        for (const [action, outcomes] of Object.entries(allowed)) {
          for (const from of statuses) {
            const promotion = yield* promotionIn(app, team, from)
            const result = action === "update"
              ? yield* call(app, "PATCH", `/dashboard/promotions/${promotion.id}`, { token: team.admin.token, body: { bonus_points: 75 } })
              : action === "delete"
              ? yield* call(app, "DELETE", `/dashboard/promotions/${promotion.id}`, { token: team.admin.token })
              : yield* move(
                app,
                action === "approve" || action === "reject" ? team.owner.token : team.admin.token,
                promotion.id,
                action,
                action === "reject" ? { reason: "No" } : undefined
              )
            const to = outcomes[from]
            const label = `${action} from ${from}`
            if (to === undefined) {
              expectStatus(result, 409, label)
              expect((result.body as { error: { message: string } }).error.message, label).toContain(from)
              continue
            }
            expectStatus(result, action === "update" || action === "delete" ? 200 : 201, label)
            if (to === "deleted") {
              const gone = yield* call(app, "PATCH", `/dashboard/promotions/${promotion.id}`, { token: team.admin.token, body: { name: "x" } })
              expectStatus(gone, 404, `${label}, then gone`)
              continue
            }
            const after = result.body as Promotion
            expect(after.status, label).toBe(to)
            const last = after.audit.at(-1)!
            expect(last, label).toMatchObject({ action, from, to })
            if (action === "update") {
              expect(after.bonus_points).toBe(75)
              expect(after.rejection_reason).toBeNull()
            }
          }
        }
      }))

    it.effect("lets one of racing moves land: ten activations at once give one 201, one audit entry and one event", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const team = yield* newTeam(app)
        const approved = yield* promotionIn(app, team, "approved")
        const results = yield* Effect.all(
          Array.from({ length: 10 }, () => move(app, team.admin.token, approved.id, "activate")),
          { concurrency: "unbounded" }
        )
        expect(results.map((result) => result.status).sort()).toEqual([201, ...Array.from({ length: 9 }, () => 409)])
        const [audit] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM promotion_audit WHERE promotion_id = ${approved.id} AND action = 'activate'`
        expect(audit!.count).toBe(1)
        const [events] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM outbox
          WHERE type = 'promotion.activated' AND payload -> 'data' -> 'object' ->> 'id' = ${approved.id}`
        expect(events!.count).toBe(1)
      }))

    it.effect("needs an Owner other than the submitter to approve or reject; keeps who did what in the audit trail", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const team = yield* newTeam(app)
        const submitted = yield* promotionIn(app, team, "pending_approval")
        for (const [who, token] of [["analyst", team.analyst.token], ["admin", team.admin.token]] as const) {
          expectStatus(yield* move(app, token, submitted.id, "approve"), 403, `approve by ${who}`)
          expectStatus(yield* move(app, token, submitted.id, "reject", { reason: "No" }), 403, `reject by ${who}`)
        }
        // The analyst may read but not write.
        expectStatus(yield* call(app, "GET", `/dashboard/stores/${team.storeId}/promotions`, { token: team.analyst.token }), 200, "analyst lists")
        expectStatus(yield* move(app, team.analyst.token, submitted.id, "pause"), 403, "analyst pauses")

        // The owner's own submission: neither approve nor reject.
        const own = yield* createPromotion(app, team)
        expectStatus(yield* move(app, team.owner.token, own.id, "submit"), 201, "owner submits")
        expectStatus(yield* move(app, team.owner.token, own.id, "approve"), 403, "owner approves own")
        expectStatus(yield* move(app, team.owner.token, own.id, "reject", { reason: "No" }), 403, "owner rejects own")
        // Activate before approval: 409.
        expectStatus(yield* move(app, team.admin.token, own.id, "activate"), 409, "activate before approval")

        const approved = yield* move(app, team.owner.token, submitted.id, "approve")
        expectStatus(approved, 201, "owner approves the admin's")
        const promotion = approved.body as Promotion
        expect(promotion).toMatchObject({ status: "approved", submitted_by: team.admin.userId, approved_by: team.owner.userId })
        expect(promotion.audit.map((entry) => [entry.action, entry.from, entry.to, entry.user_id])).toEqual([
          ["create", null, "draft", team.admin.userId],
          ["submit", "draft", "pending_approval", team.admin.userId],
          ["approve", "pending_approval", "approved", team.owner.userId]
        ])

        // A rejection keeps its reason on the promotion and in the trail; an update returns it to draft.
        const second = yield* promotionIn(app, team, "pending_approval")
        const rejected = (yield* move(app, team.owner.token, second.id, "reject", { reason: "Budget not approved" })).body as Promotion
        expect(rejected).toMatchObject({ status: "rejected", rejection_reason: "Budget not approved" })
        expect(rejected.audit.at(-1)).toMatchObject({ action: "reject", reason: "Budget not approved", user_id: team.owner.userId })
      }))

    it.effect("refuses bad input: dates, segments of other stores, deleting in-use segments and active promotions", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const team = yield* newTeam(app)
        const other = yield* newMerchant(app)
        const base = `/dashboard/stores/${team.storeId}/promotions`
        const now = Date.now()
        const bad: ReadonlyArray<[Record<string, unknown>, number, string]> = [
          [{ starts_at: new Date(now).toISOString(), ends_at: new Date(now - DAY).toISOString() }, 400, "ends_at"],
          [{ starts_at: new Date(now).toISOString(), ends_at: new Date(now).toISOString() }, 400, "ends_at"],
          [{ starts_at: "tomorrow" }, 400, "starts_at"],
          [{ bonus_points: 0 }, 400, "bonus_points"],
          [{ bonus_points: 1.5 }, 400, "bonus_points"],
          [{ min_amount: { amount: "5.00", currency: "EUR" } }, 400, "min_amount"],
          // Amounts are decimal strings in the major unit, with the currency's decimal places.
          [{ min_amount: { amount: 500, currency: "USD" } }, 400, "min_amount.amount"],
          [{ min_amount: { amount: "5.001", currency: "USD" } }, 400, "min_amount.amount"],
          [{ min_amount: { amount: "500.5", currency: "KHR" } }, 400, "min_amount.amount"],
          [{ min_amount: { amount: "0.00", currency: "USD" } }, 400, "min_amount.amount"],
          [{ min_amount: { amount: "-5", currency: "USD" } }, 400, "min_amount.amount"],
          [{ surprise: true }, 400, ""]
        ]
        for (const [body, status, param] of bad) {
          const result = yield* call(app, "POST", base, { token: team.admin.token, body: { name: "Bad", bonus_points: 5, ...window(), ...body } })
          expectStatus(result, status, JSON.stringify(body))
          expect((result.body as { error: { param?: string } }).error.param ?? "").toContain(param)
        }

        // The minimum goes back as it was written, in the major unit, and can be changed or removed.
        const fiveDollars = yield* createPromotion(app, team, { min_amount: { amount: "5", currency: "USD" } })
        expect(fiveDollars.min_amount).toEqual({ amount: "5.00", currency: "USD" })
        const inRiel = yield* call(app, "PATCH", `/dashboard/promotions/${fiveDollars.id}`, {
          token: team.admin.token,
          body: { min_amount: { amount: "20000", currency: "KHR" } }
        })
        expectStatus(inRiel, 200, "update the minimum")
        expect((inRiel.body as Promotion).min_amount).toEqual({ amount: "20000", currency: "KHR" })
        const badUpdate = yield* call(app, "PATCH", `/dashboard/promotions/${fiveDollars.id}`, {
          token: team.admin.token,
          body: { min_amount: { amount: "1.5", currency: "KHR" } }
        })
        expectStatus(badUpdate, 400, "update with riel decimals")
        expect((badUpdate.body as { error: { param?: string } }).error.param).toBe("min_amount.amount")
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ min_amount: string }>`SELECT min_amount::text FROM promotions WHERE id = ${fiveDollars.id}`
        expect(stored!.min_amount).toBe("20000")
        const removed = yield* call(app, "PATCH", `/dashboard/promotions/${fiveDollars.id}`, {
          token: team.admin.token,
          body: { min_amount: null }
        })
        expectStatus(removed, 200, "remove the minimum")
        expect((removed.body as Promotion).min_amount).toBeUndefined()

        const theirs = yield* (yield* clientAs(app, other.owner.token)).segments.create({
          path: { storeId: other.storeId },
          payload: { name: "Theirs", match: "all", rules: [{ field: "payments_count", op: "gte", value: 1 }] }
        })
        const foreign = yield* call(app, "POST", base, { token: team.admin.token, body: { name: "X", bonus_points: 5, segment_id: theirs.id, ...window() } })
        expectStatus(foreign, 404, "segment of another store")
        expect((foreign.body as { error: { param: string } }).error.param).toBe("segment_id")
        // Another store's promotion looks like none.
        const mine = yield* createPromotion(app, team)
        expectStatus(yield* call(app, "DELETE", `/dashboard/promotions/${mine.id}`, { token: other.owner.token }), 404, "another store's promotion")
        expectStatus(yield* call(app, "GET", `/dashboard/promotions/${mine.id}/simulate`, { token: other.owner.token }), 404, "simulate another store's")

        // A segment in use by a promotion that has not ended cannot go; once the promotion ended, it can.
        const segment = yield* (yield* clientAs(app, team.admin.token)).segments.create({
          path: { storeId: team.storeId },
          payload: { name: "Regulars", match: "all", rules: [{ field: "payments_count", op: "gte", value: 3 }] }
        })
        const using = yield* promotionIn(app, team, "active", { segment_id: segment.id })
        expectStatus(yield* call(app, "DELETE", `/dashboard/segments/${segment.id}`, { token: team.admin.token }), 409, "segment in use")
        expectStatus(yield* call(app, "DELETE", `/dashboard/promotions/${using.id}`, { token: team.admin.token }), 409, "delete active")
        expectStatus(yield* move(app, team.admin.token, using.id, "end"), 201, "end")
        expectStatus(yield* call(app, "DELETE", `/dashboard/segments/${segment.id}`, { token: team.admin.token }), 200, "segment after end")
        const ended = yield* call(app, "GET", `/dashboard/stores/${team.storeId}/promotions`, { token: team.admin.token })
        expect((ended.body as { data: ReadonlyArray<Promotion> }).data.find((p) => p.id === using.id)?.segment_id).toBeNull()
        // An update naming another store's segment is 404 too; the rejected update leaves the promotion as it was.
        const draft = yield* createPromotion(app, team)
        const patched = yield* call(app, "PATCH", `/dashboard/promotions/${draft.id}`, { token: team.admin.token, body: { segment_id: theirs.id } })
        expectStatus(patched, 404, "update with another store's segment")
        const reordered = yield* call(app, "PATCH", `/dashboard/promotions/${draft.id}`, {
          token: team.admin.token,
          body: { ends_at: new Date(Date.parse(draft.starts_at) - 1000).toISOString() }
        })
        expectStatus(reordered, 400, "update with ends_at before starts_at")
      }))

    it.effect("awards each active promotion once per qualifying paid payment, in its segment, window and minimum, however often the event comes", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const team = yield* newTeam(app)
        const admin = yield* clientAs(app, team.admin.token)
        const optedIn = yield* admin.segments.create({
          path: { storeId: team.storeId },
          payload: { name: "Opted in", match: "all", rules: [{ field: "marketing_opt_in", op: "eq", value: true }] }
        })
        const inSegment = yield* promotionIn(app, team, "active", { segment_id: optedIn.id, bonus_points: 50 })
        const bigBaskets = yield* promotionIn(app, team, "active", { bonus_points: 7, min_amount: { amount: "10.00", currency: "USD" } })
        yield* promotionIn(app, team, "approved", { bonus_points: 1000 })
        yield* promotionIn(app, team, "paused", { bonus_points: 2000 })
        yield* promotionIn(app, team, "active", { bonus_points: 3000, ...window(2, 30) })

        const fan = yield* newCustomer(app, team.key)
        const other = yield* newCustomer(app, team.key)
        yield* sql`UPDATE customers SET prefers_marketing = true WHERE id = ${fan.id}`

        const fanPaid = yield* paidPayment(app, team.key, { customer_id: fan.id, amount: "12.50" })
        yield* paidPayment(app, team.key, { customer_id: other.id, amount: "5.00" })
        const otherBig = yield* paidPayment(app, team.key, { customer_id: other.id, amount: "20.00" })
        yield* paidPayment(app, team.key, { amount: "99.00" })
        yield* pendingFor("promotions")

        expect(yield* promotionPoints(fan.id)).toEqual([
          { key: `credit:promotion:${bigBaskets.id}:${fanPaid.id}`, points: 7 },
          { key: `credit:promotion:${inSegment.id}:${fanPaid.id}`, points: 50 }
        ].sort(byKey))
        expect(yield* promotionPoints(other.id)).toEqual([{ key: `credit:promotion:${bigBaskets.id}:${otherBig.id}`, points: 7 }])

        // The paid events again: queued once more for the consumer, and as copies of the events.
        yield* sql`
          INSERT INTO outbox_pending (consumer, position)
          SELECT 'promotions', position FROM outbox WHERE store_id = ${team.storeId} AND type = 'payment.completed'
          ON CONFLICT DO NOTHING`
        yield* sql`
          INSERT INTO outbox (event_id, store_id, livemode, type, payload)
          SELECT 'evt_' || md5(random()::text || position::text), store_id, livemode, type, payload FROM outbox
          WHERE store_id = ${team.storeId} AND type = 'payment.completed'`
        yield* pendingFor("promotions")
        expect((yield* promotionPoints(fan.id)).length).toBe(2)
        expect((yield* promotionPoints(other.id)).length).toBe(1)
        const customer = yield* (yield* clientAs(app, team.key)).customers.retrieve({ path: { id: fan.id } })
        expect(customer.points_balance).toBe(57)

        // Paused, the promotion awards nothing more.
        expectStatus(yield* move(app, team.admin.token, inSegment.id, "pause"), 201, "pause")
        yield* paidPayment(app, team.key, { customer_id: fan.id, amount: "12.50" })
        yield* pendingFor("promotions")
        expect((yield* promotionPoints(fan.id)).length).toBe(3)
      }))

    it.effect("simulates the last 30 days of real payments: numbers checked against a hand-computed seed, nothing written", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const team = yield* newTeam(app)
        const ids: Array<CustomerId> = []
        for (let i = 0; i < 4; i++) ids.push((yield* newCustomer(app, team.key)).id)
        const [s1, s2, s3, s4] = ids as [CustomerId, CustomerId, CustomerId, CustomerId]
        yield* sql`UPDATE customers SET prefers_marketing = true WHERE id IN (${s1}, ${s2})`
        // s4 is erased (as erasure leaves a row: personal data gone, consent withdrawn).
        yield* sql`UPDATE customers SET erased_at = now(), email = NULL, external_id = NULL, name = NULL, phone = NULL,
          metadata = NULL WHERE id = ${s4}`
        const pay = (customer: CustomerId, amount: number, currency: string, daysAgo: number, livemode = false) =>
          sql`INSERT INTO payments (id, store_id, livemode, status, amount, currency, amount_refunded, provider,
                qr_payload, qr_md5, expires_at, paid_at, customer_id)
              VALUES (${"pay_sim" + ++serial}, ${team.storeId}, ${livemode}, 'paid', ${amount}, ${currency}, 0, 'mock',
                'x', 'x', now(), now() - make_interval(days => ${daysAgo}), ${customer})`
        yield* pay(s1, 1500, "USD", 2)
        yield* pay(s1, 800, "USD", 5)
        yield* pay(s1, 2000, "USD", 40)
        // A live customer with one live payment: only the live simulation sees it.
        const live = `cus_live${++serial}` as CustomerId
        yield* sql`INSERT INTO customers (id, store_id, livemode, metadata, preferences_updated_at, created_at, updated_at)
          VALUES (${live}, ${team.storeId}, true, '{}'::jsonb, now(), now(), now())`
        yield* pay(live, 9000, "USD", 1, true)
        yield* pay(s2, 1200, "USD", 10)
        yield* pay(s2, 5000, "KHR", 1)
        yield* pay(s3, 3000, "USD", 1)
        yield* pay(s4, 3000, "USD", 1)
        const admin = yield* clientAs(app, team.admin.token)
        const optedIn = yield* admin.segments.create({
          path: { storeId: team.storeId },
          payload: { name: "Opted in", match: "all", rules: [{ field: "marketing_opt_in", op: "eq", value: true }] }
        })
        const targeted = yield* createPromotion(app, team, { segment_id: optedIn.id, bonus_points: 25, min_amount: { amount: "10.00", currency: "USD" } })
        const everyone = yield* createPromotion(app, team, { bonus_points: 10 })
        const [before] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM points_entries`

        // Opted in (s1, s2), USD ≥ 10.00, test mode, last 30 days: s1's 1500 and s2's 1200.
        expect(yield* admin.promotions.simulate({ path: { id: targeted.id }, urlParams: {} })).toEqual({
          object: "promotion_simulation",
          window_days: 30,
          eligible_customers: 2,
          qualifying_payments: 2,
          estimated_bonus_points: 50
        })
        // Everyone not erased, any amount: s1 (1500, 800), s2 (1200, 5000 KHR), s3 (3000).
        expect(yield* admin.promotions.simulate({ path: { id: everyone.id }, urlParams: {} })).toMatchObject({
          eligible_customers: 3,
          qualifying_payments: 5,
          estimated_bonus_points: 50
        })
        // Live mode: the live customer's one payment.
        expect(yield* admin.promotions.simulate({ path: { id: everyone.id }, urlParams: { livemode: true } })).toMatchObject({
          eligible_customers: 1,
          qualifying_payments: 1,
          estimated_bonus_points: 10
        })
        const [after] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM points_entries`
        expect(after!.count).toBe(before!.count)
      }))

    it.effect("announces activation and ending as events, and ends promotions whose end date passed", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const team = yield* newTeam(app)
        const ended = yield* promotionIn(app, team, "ended")
        const events = yield* sql<{ type: string; status: string; livemode: boolean }>`
          SELECT type, payload -> 'data' -> 'object' ->> 'status' AS status, livemode FROM outbox
          WHERE store_id = ${team.storeId} AND payload -> 'data' -> 'object' ->> 'id' = ${ended.id} ORDER BY position`
        expect(events).toEqual([
          { type: "promotion.activated", status: "active", livemode: true },
          { type: "promotion.ended", status: "ended", livemode: true }
        ])

        const overdue = yield* promotionIn(app, team, "paused")
        yield* sql`UPDATE promotions SET ends_at = now() - interval '1 minute' WHERE id = ${overdue.id}`
        // The cron's work, run now rather than at the next minute.
        const endedNow = yield* Effect.flatMap(PromotionsService, (promotions) => promotions.endOverdue()).pipe(
          Effect.provide(PromotionsService.Default)
        )
        expect(endedNow).toBeGreaterThanOrEqual(1)
        const [row] = yield* sql<{ status: string }>`SELECT status FROM promotions WHERE id = ${overdue.id}`
        expect(row!.status).toBe("ended")
        const listed = yield* (yield* clientAs(app, team.admin.token)).promotions.list({ path: { storeId: team.storeId }, urlParams: listParams() })
        expect(listed.data.find((p) => p.id === overdue.id)?.audit.at(-1)).toMatchObject({ action: "end", from: "paused", to: "ended", user_id: null })
        // An approved promotion whose end date passed cannot be activated.
        const late = yield* promotionIn(app, team, "approved")
        yield* sql`UPDATE promotions SET ends_at = now() - interval '1 minute', starts_at = now() - interval '2 days' WHERE id = ${late.id}`
        expectStatus(yield* move(app, team.admin.token, late.id as PromotionId, "activate"), 409, "activate after end date")
      }))
  })
})

