/**
 * Segments over HTTP against PostgreSQL: CRUD, previews of saved and unsaved rules on a seeded store (a
 * table of rule cases with known answers), erased customers never counting, tenancy and bad rules (a tier
 * that is not the store's among them).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { type CustomerId, TierId } from "../../domain/Ids.ts"
import type { Rule } from "../../domain/Promotions.ts"
import { clientAs, expectFailure, listParams } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { newMerchant } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()
let serial = 0
const freshEmail = () => `seg-${Date.now().toString(36)}-${++serial}@example.test`

describe("segments", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("previews rules on seeded customers, with known answers per field and op", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* newMerchant(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const storeId = merchant.storeId
        const customers = yield* clientAs(app, merchant.key)
        const ids: Array<CustomerId> = []
        for (let i = 0; i < 4; i++) {
          ids.push((yield* customers.customers.create({ payload: { email: freshEmail() }, headers: {} })).id)
        }
        const [a, b, c, d] = ids as [CustomerId, CustomerId, CustomerId, CustomerId]
        const gold = yield* api.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Gold", threshold: 100 } })
        // a: 2 USD payments (1000 + 500, 200 refunded), 400 lifetime points, opted in, created 40 days ago;
        // b: 1 KHR payment 45 days ago; c: nothing; d: erased.
        yield* sql`UPDATE customers SET lifetime_points = 400, points_balance = 150, prefers_marketing = true,
          created_at = now() - interval '40 days' WHERE id = ${a}`
        yield* sql`UPDATE customers SET lifetime_points = 50, points_balance = 50 WHERE id = ${b}`
        yield* sql`UPDATE customers SET erased_at = now(), email = NULL, external_id = NULL, name = NULL, phone = NULL, metadata = NULL, lifetime_points = 1000 WHERE id = ${d}`
        const pay = (id: CustomerId, amount: number, currency: string, refunded: number, daysAgo: number) =>
          sql`INSERT INTO payments (id, store_id, livemode, status, amount, currency, amount_refunded, provider,
                qr_payload, qr_md5, expires_at, paid_at, customer_id)
              VALUES (${"pay_seed" + ++serial}, ${storeId}, false, 'paid', ${amount}, ${currency}, ${refunded}, 'mock',
                'x', 'x', now(), now() - make_interval(days => ${daysAgo}), ${id})`
        yield* pay(a, 1000, "USD", 200, 2)
        yield* pay(a, 500, "USD", 0, 10)
        yield* pay(b, 40000, "KHR", 0, 45)
        yield* pay(d, 9999, "USD", 0, 1)

        const cases: ReadonlyArray<[Rule, ReadonlyArray<CustomerId>]> = [
          [{ field: "lifetime_value_usd", op: "eq", value: 1300 }, [a]],
          [{ field: "lifetime_value_usd", op: "gt", value: 0 }, [a]],
          [{ field: "lifetime_value_usd", op: "lt", value: 1 }, [b, c]],
          [{ field: "lifetime_value_khr", op: "gte", value: 40000 }, [b]],
          [{ field: "payments_count", op: "in", value: [1, 2] }, [a, b]],
          [{ field: "payments_count", op: "neq", value: 0 }, [a, b]],
          [{ field: "payments_last_30d", op: "eq", value: 2 }, [a]],
          [{ field: "payments_last_30d", op: "lte", value: 0 }, [b, c]],
          [{ field: "days_since_last_payment", op: "gte", value: 30 }, [b]],
          [{ field: "days_since_last_payment", op: "lt", value: 30 }, [a]],
          [{ field: "days_since_created", op: "gte", value: 39 }, [a]],
          [{ field: "points_balance", op: "gt", value: 100 }, [a]],
          [{ field: "lifetime_points", op: "lte", value: 50 }, [b, c]],
          [{ field: "tier_id", op: "eq", value: gold.id }, [a]],
          [{ field: "tier_id", op: "eq", value: null }, [b, c]],
          [{ field: "tier_id", op: "in", value: [gold.id] }, [a]],
          [{ field: "marketing_opt_in", op: "eq", value: true }, [a]],
          [{ field: "marketing_opt_in", op: "neq", value: true }, [b, c]]
        ]
        for (const [rule, expected] of cases) {
          const preview = yield* api.segments.previewRules({
            path: { storeId },
            urlParams: {},
            payload: { match: "all", rules: [rule] }
          })
          expect({ rule, ids: preview.sample.map((customer) => customer.id).sort() }).toEqual({ rule, ids: [...expected].sort() })
          expect(preview.count).toBe(expected.length)
        }
        const any = yield* api.segments.previewRules({
          path: { storeId },
          urlParams: {},
          payload: {
            match: "any",
            rules: [{ field: "lifetime_value_khr", op: "gt", value: 0 }, { field: "marketing_opt_in", op: "eq", value: true }]
          }
        })
        expect(any.count).toBe(2)

        // Saved segments: CRUD and their preview.
        const segment = yield* api.segments.create({
          path: { storeId },
          payload: { name: "Spenders", match: "all", rules: [{ field: "payments_count", op: "gte", value: 1 }] }
        })
        expect(segment).toMatchObject({ object: "segment", store_id: storeId, name: "Spenders", match: "all" })
        expect((yield* api.segments.preview({ path: { id: segment.id }, urlParams: {} })).count).toBe(2)
        const updated = yield* api.segments.update({
          path: { id: segment.id },
          payload: { rules: [{ field: "payments_count", op: "gte", value: 2 }] }
        })
        expect(updated.name).toBe("Spenders")
        expect((yield* api.segments.preview({ path: { id: segment.id }, urlParams: {} })).count).toBe(1)
        expect((yield* api.segments.list({ path: { storeId }, urlParams: listParams() })).data.map((s) => s.id)).toEqual([segment.id])

        // Another store's segment is 404.
        const other = yield* newMerchant(app)
        const otherApi = yield* clientAs(app, other.owner.token)
        yield* expectFailure(otherApi.segments.preview({ path: { id: segment.id }, urlParams: {} }), "NotFound", "id")
        yield* expectFailure(otherApi.segments.delete({ path: { id: segment.id } }), "NotFound", "id")

        expect((yield* api.segments.delete({ path: { id: segment.id } })).id).toBe(segment.id)
        yield* expectFailure(api.segments.preview({ path: { id: segment.id }, urlParams: {} }), "NotFound", "id")
      }))

    it.effect("refuses bad rules with 400 naming the rule", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const path = `/dashboard/stores/${merchant.storeId}/segments/preview`
        const rule = { field: "payments_count", op: "gte", value: 1 }
        const bad: ReadonlyArray<[unknown, RegExp]> = [
          [{ match: "all", rules: [] }, /^rules/],
          [{ match: "all", rules: Array.from({ length: 51 }, () => rule) }, /^rules/],
          [{ match: "all", rules: [{ field: "shoe_size", op: "eq", value: 1 }] }, /^rules\.0/],
          [{ match: "all", rules: [{ field: "payments_count", op: "like", value: 1 }] }, /^rules\.0/],
          [{ match: "all", rules: [rule, { field: "payments_count", op: "in", value: 3 }] }, /^rules\.1/],
          [{ match: "all", rules: [{ field: "marketing_opt_in", op: "eq", value: "yes" }] }, /^rules\.0/],
          [{ match: "all", rules: [{ ...rule, extra: 1 }] }, /^rules\.0/],
          [{ match: "some", rules: [rule] }, /^match/]
        ]
        for (const [body, param] of bad) {
          const response = yield* call(app, "POST", path, { token: merchant.owner.token, body })
          expect({ body, status: response.status }).toEqual({ body, status: 400 })
          const error = (response.body as { error: { param?: string } }).error
          expect(error.param ?? "", JSON.stringify(body)).toMatch(param)
        }
      }))

    it.effect("refuses rules naming another store's tier or an unknown one on create, update and preview", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const other = yield* newMerchant(app)
        const storeId = merchant.storeId
        const api = yield* clientAs(app, merchant.owner.token)
        const mine = yield* api.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Gold", threshold: 100 } })
        const theirs = yield* (yield* clientAs(app, other.owner.token)).loyaltyConsole.createTier({
          path: { storeId: other.storeId },
          payload: { name: "Gold", threshold: 100 }
        })
        const first = { field: "payments_count", op: "gte", value: 1 } as const
        const unknown = TierId.make("tier_doesnotexist0000000000")
        const badRules: ReadonlyArray<[ReadonlyArray<Rule>, string]> = [
          [[{ field: "tier_id", op: "eq", value: theirs.id }], "rules.0"],
          [[first, { field: "tier_id", op: "neq", value: unknown }], "rules.1"],
          [[first, first, { field: "tier_id", op: "in", value: [mine.id, theirs.id] }], "rules.2"]
        ]
        const segment = yield* api.segments.create({
          path: { storeId },
          payload: { name: "Gold members", match: "all", rules: [{ field: "tier_id", op: "in", value: [mine.id] }] }
        })
        for (const [rules, param] of badRules) {
          yield* expectFailure(api.segments.previewRules({ path: { storeId }, urlParams: {}, payload: { match: "all", rules } }), "InvalidRequest", param)
          yield* expectFailure(api.segments.create({ path: { storeId }, payload: { name: "Bad", match: "all", rules } }), "InvalidRequest", param)
          yield* expectFailure(api.segments.update({ path: { id: segment.id }, payload: { rules } }), "InvalidRequest", param)
        }
        // The refused update left the segment as it was; the store's own tier and "no tier" are fine.
        expect((yield* api.segments.list({ path: { storeId }, urlParams: listParams() })).data.map((s) => s.rules)).toEqual([segment.rules])
        const fine = yield* api.segments.previewRules({
          path: { storeId },
          urlParams: {},
          payload: { match: "any", rules: [{ field: "tier_id", op: "eq", value: mine.id }, { field: "tier_id", op: "eq", value: null }] }
        })
        expect(fine.count).toBe(0)
      }))
  })
})
