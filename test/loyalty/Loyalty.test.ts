/**
 * Loyalty over HTTP against PostgreSQL: the program, tiers and rewards; earning from paid payments
 * (through the outbox, once per payment however often its event is delivered, with the tier's
 * multiplier), proportional reversal on refunds; redemptions racing for a balance and for a stock;
 * cancel and fulfil; adjustments; liability; webhook events; roles, tenancy and bad input.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { FetchHttpClient } from "@effect/platform"
import { Chunk, Effect, Either, Stream } from "effect"
import type { PointsEntryAdded } from "../../domain/Console.ts"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import type { CustomerId, RewardId } from "../../domain/Ids.ts"
import { CustomerWalletEntity } from "../../src/loyalty/Entity.ts"
import { addMember } from "../support/Accounts.ts"
import { clientAs, expectFailure, listParams } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { type Merchant, newMerchant, paidPayment, refund } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

/** The path and query of a link the API handed out, to open it on the test app. */
const pathOf = (url: string) => {
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}

const consoleFor = (app: TestAppShape, sessionToken: string) =>
  makeConsoleClient({ baseUrl: app.baseUrl, sessionToken }).pipe(Effect.provide(FetchHttpClient.layer))

let serial = 0
const freshEmail = () => `loyal-${Date.now().toString(36)}-${++serial}@example.test`

const newCustomer = (app: TestAppShape, key: string, name?: string) =>
  Effect.flatMap(clientAs(app, key), (api) =>
    api.customers.create({ payload: { email: freshEmail(), ...(name === undefined ? {} : { name }) }, headers: {} }))

const activate = (app: TestAppShape, merchant: Merchant, USD = "10") =>
  Effect.flatMap(clientAs(app, merchant.owner.token), (api) =>
    api.loyaltyConsole.configure({ path: { storeId: merchant.storeId }, payload: { active: true, points_per_unit: { USD } } }))

const customerOf = (app: TestAppShape, key: string, id: CustomerId) =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.retrieve({ path: { id } }))

/** Waits until the customer's balance is `balance` (earning runs behind the payment, from the outbox). */
const balanceBecomes = (app: TestAppShape, key: string, id: CustomerId, balance: number) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 100; attempt++) {
      const customer = yield* customerOf(app, key, id)
      if (customer.points_balance === balance) return customer
      yield* Effect.sleep("100 millis")
    }
    return expect.fail(`the balance of ${id} never became ${balance}: ${(yield* customerOf(app, key, id)).points_balance}`)
  })

/** Waits until every paid or refunded payment event in the outbox was applied to its wallet. */
const outboxApplied = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let attempt = 0; attempt < 100; attempt++) {
    const [row] = yield* sql<{ pending: number }>`
      SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = 'loyalty'`
    if (row!.pending === 0) return
    yield* Effect.sleep("100 millis")
  }
  return expect.fail("payment events stayed unapplied")
})

const adjust = (app: TestAppShape, token: string, id: CustomerId, points: number, reason = "Welcome gift") =>
  Effect.flatMap(clientAs(app, token), (api) => api.loyaltyConsole.adjust({ path: { id }, payload: { points, reason } }))

const createReward = (app: TestAppShape, merchant: Merchant, points_cost: number, stock?: number | null) =>
  Effect.flatMap(clientAs(app, merchant.owner.token), (api) =>
    api.loyaltyConsole.createReward({
      path: { storeId: merchant.storeId },
      payload: { name: "Free iced latte", points_cost, ...(stock === undefined ? {} : { stock }) }
    }))

const redeemReward = (app: TestAppShape, key: string, customer_id: CustomerId, reward_id: RewardId, idempotencyKey?: string) =>
  Effect.flatMap(clientAs(app, key), (api) =>
    api.loyalty.redeemReward({ payload: { customer_id, reward_id }, headers: { "idempotency-key": idempotencyKey } }))

const redeemPoints = (app: TestAppShape, key: string, customer_id: CustomerId, points: number) =>
  Effect.flatMap(clientAs(app, key), (api) => api.loyalty.redeemPoints({ payload: { customer_id, points }, headers: {} }))

describe("loyalty", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("configures the program, tiers and rewards, with their defaults, conflicts and deletion rules", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const storeId = merchant.storeId
        expect(yield* api.loyaltyConsole.program({ path: { storeId } })).toMatchObject({
          object: "loyalty_program",
          store_id: storeId,
          active: false,
          points_per_unit: { USD: "10", KHR: "0.0025" }
        })
        const configured = yield* api.loyaltyConsole.configure({ path: { storeId }, payload: { points_per_unit: { KHR: "0.003" } } })
        expect(configured.points_per_unit).toEqual({ USD: "10", KHR: "0.003" })
        expect(configured.active).toBe(false)

        const gold = yield* api.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Gold", threshold: 100, earn_multiplier: "1.5" } })
        expect(gold).toMatchObject({ object: "tier", name: "Gold", threshold: 100, earn_multiplier: "1.5" })
        expect(gold.id).toMatch(/^tier_[0-9A-Za-z]{24}$/)
        yield* expectFailure(api.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Again", threshold: 100 } }), "InvalidState", "threshold")
        const silver = yield* api.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Silver", threshold: 10 } })
        expect(silver.earn_multiplier).toBe("1")
        expect((yield* api.loyaltyConsole.updateTier({ path: { id: silver.id }, payload: { name: "Bronze" } })).name).toBe("Bronze")
        yield* expectFailure(api.loyaltyConsole.updateTier({ path: { id: silver.id }, payload: { threshold: 100 } }), "InvalidState", "threshold")
        expect((yield* api.loyaltyConsole.tiers({ path: { storeId }, urlParams: listParams() })).data.map((tier) => tier.name)).toEqual(["Bronze", "Gold"])
        yield* api.loyaltyConsole.deleteTier({ path: { id: silver.id } })
        yield* expectFailure(api.loyaltyConsole.deleteTier({ path: { id: silver.id } }), "NotFound", "id")

        const reward = yield* createReward(app, merchant, 50, 3)
        expect(reward).toMatchObject({ object: "reward", points_cost: 50, stock: 3, active: true, description: null })
        expect(reward.id).toMatch(/^rwd_[0-9A-Za-z]{24}$/)
        const unlimited = yield* createReward(app, merchant, 10)
        expect(unlimited.stock).toBeNull()
        const updated = yield* api.loyaltyConsole.updateReward({ path: { id: reward.id }, payload: { stock: null, description: "Any size" } })
        expect(updated).toMatchObject({ stock: null, description: "Any size" })
        // Never redeemed: deleted. Redeemed once: deactivated, and then no longer listed on the merchant API.
        yield* api.loyaltyConsole.deleteReward({ path: { id: unlimited.id } })
        yield* expectFailure(api.loyaltyConsole.updateReward({ path: { id: unlimited.id }, payload: { name: "x" } }), "NotFound", "id")
        const customer = yield* newCustomer(app, merchant.key)
        yield* adjust(app, merchant.owner.token, customer.id, 50)
        yield* redeemReward(app, merchant.key, customer.id, reward.id)
        const deactivated = yield* api.loyaltyConsole.deleteReward({ path: { id: reward.id } })
        expect(deactivated.active).toBe(false)
        const listed = yield* Effect.flatMap(clientAs(app, merchant.key), (keyApi) => keyApi.loyalty.rewards({ urlParams: listParams() }))
        expect(listed.data.map((row) => row.id)).not.toContain(reward.id)
        yield* adjust(app, merchant.owner.token, customer.id, 50)
        yield* expectFailure(redeemReward(app, merchant.key, customer.id, reward.id), "InvalidState", "reward_id")
      }))

    it.effect("earns from paid payments once, with the tier's multiplier, and reverses half on a half refund", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* newMerchant(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const customer = yield* newCustomer(app, merchant.key)

        // Inactive program: a paid payment earns nothing.
        yield* paidPayment(app, merchant.key, { customer_id: customer.id, amount: "10.00" })
        yield* outboxApplied
        expect((yield* customerOf(app, merchant.key, customer.id)).points_balance).toBe(0)

        yield* activate(app, merchant)
        const gold = yield* api.loyaltyConsole.createTier({ path: { storeId: merchant.storeId }, payload: { name: "Gold", threshold: 100, earn_multiplier: "2" } })
        // 12.50 USD × 10 = 125 points, no tier yet.
        const first = yield* paidPayment(app, merchant.key, { customer_id: customer.id, amount: "12.50" })
        const afterFirst = yield* balanceBecomes(app, merchant.key, customer.id, 125)
        expect(afterFirst).toMatchObject({ lifetime_points: 125, tier: { id: gold.id, name: "Gold" } })
        // Now Gold (×2): 20.05 USD × 10 × 2 = 401.
        yield* paidPayment(app, merchant.key, { customer_id: customer.id, amount: "20.05" })
        yield* balanceBecomes(app, merchant.key, customer.id, 526)

        // The paid event delivered twice more (queued for the wallet again, and a copy of the event): earned once.
        yield* sql`
          INSERT INTO outbox_pending (consumer, position)
          SELECT 'loyalty', position FROM outbox
          WHERE type = 'payment.completed' AND payload -> 'data' -> 'object' ->> 'id' = ${first.id}`
        yield* sql`
          INSERT INTO outbox (event_id, store_id, livemode, type, payload)
          SELECT 'evt_' || md5(random()::text), store_id, livemode, type, payload FROM outbox
          WHERE type = 'payment.completed' AND payload -> 'data' -> 'object' ->> 'id' = ${first.id}`
        yield* outboxApplied
        const [earned] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM points_entries WHERE payment_id = ${first.id} AND type = 'earn'`
        expect(earned!.count).toBe(1)
        expect((yield* customerOf(app, merchant.key, customer.id)).points_balance).toBe(526)

        // A refund of half the first payment takes back half its 125 points (62, floored).
        yield* refund(app, merchant.key, first.id, { amount: "6.25" })
        yield* balanceBecomes(app, merchant.key, customer.id, 526 - 62)
        // The rest of it: the other 63.
        yield* refund(app, merchant.key, first.id, {})
        const after = yield* balanceBecomes(app, merchant.key, customer.id, 526 - 125)
        expect(after.lifetime_points).toBe(401)

        const ledger = yield* api.loyaltyConsole.customerLoyalty({ path: { id: customer.id }, urlParams: listParams() })
        expect(ledger.entries.data.map((entry) => [entry.type, entry.points])).toEqual([
          ["reverse", -63],
          ["reverse", -62],
          ["earn", 401],
          ["earn", 125]
        ])
        expect(ledger.entries.data[0]).toMatchObject({ object: "points_entry", payment_id: first.id, balance_after: 401, shortfall: 0 })
        const [events] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM outbox WHERE type = 'loyalty.points_earned' AND store_id = ${merchant.storeId}`
        expect(events!.count).toBe(2)
      }))

    it.effect("lets exactly 10 of 50 simultaneous redemptions through a wallet that affords 10", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        yield* adjust(app, merchant.owner.token, customer.id, 1000)
        const outcomes = yield* Effect.all(
          Array.from({ length: 50 }, () => Effect.either(redeemPoints(app, merchant.key, customer.id, 100))),
          { concurrency: "unbounded" }
        )
        const won = outcomes.filter((outcome) => outcome._tag === "Right")
        expect(won).toHaveLength(10)
        for (const outcome of outcomes) if (outcome._tag === "Left") expect(outcome.left._tag).toBe("InvalidState")
        expect((yield* customerOf(app, merchant.key, customer.id)).points_balance).toBe(0)
        const codes = new Set(won.map((outcome) => outcome._tag === "Right" ? outcome.right.voucher_code : ""))
        expect(codes.size).toBe(10)
        for (const code of codes) expect(code).toMatch(/^[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/)
      }))

    it.effect("never sells a reward past its stock: 30 customers racing for 5", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const reward = yield* createReward(app, merchant, 10, 5)
        const customers = yield* Effect.all(Array.from({ length: 30 }, () =>
          Effect.tap(newCustomer(app, merchant.key), (customer) => adjust(app, merchant.owner.token, customer.id, 10))), { concurrency: 8 })
        const outcomes = yield* Effect.all(
          customers.map((customer) => Effect.either(redeemReward(app, merchant.key, customer.id, reward.id))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((outcome) => outcome._tag === "Right")).toHaveLength(5)
        const rewards = yield* Effect.flatMap(clientAs(app, merchant.owner.token), (api) =>
          api.loyaltyConsole.rewards({ path: { storeId: merchant.storeId }, urlParams: listParams() }))
        expect(rewards.data[0]!.stock).toBe(0)
        const balances = yield* Effect.forEach(customers, (customer) => customerOf(app, merchant.key, customer.id))
        expect(balances.filter((customer) => customer.points_balance === 0)).toHaveLength(5)
      }))

    it.effect("cancels once (points and stock back), fulfils only issued redemptions, replays an Idempotency-Key", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* newMerchant(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const reward = yield* createReward(app, merchant, 40, 2)
        const customer = yield* newCustomer(app, merchant.key)
        yield* adjust(app, merchant.owner.token, customer.id, 100)

        const first = yield* redeemReward(app, merchant.key, customer.id, reward.id, "redeem-1")
        const replay = yield* redeemReward(app, merchant.key, customer.id, reward.id, "redeem-1")
        expect(replay).toEqual(first)
        expect(first).toMatchObject({ object: "redemption", status: "issued", reward_id: reward.id, points: 40, fulfilled_at: null })
        expect((yield* customerOf(app, merchant.key, customer.id)).points_balance).toBe(60)

        const cancels = yield* Effect.all(
          Array.from({ length: 5 }, () => Effect.either(api.loyaltyConsole.cancel({ path: { id: first.id } }))),
          { concurrency: "unbounded" }
        )
        expect(cancels.filter((outcome) => outcome._tag === "Right")).toHaveLength(1)
        expect((yield* customerOf(app, merchant.key, customer.id)).points_balance).toBe(100)
        const [stock] = yield* sql<{ stock: number }>`SELECT stock FROM loyalty_rewards WHERE id = ${reward.id}`
        expect(stock!.stock).toBe(2)
        yield* expectFailure(api.loyaltyConsole.cancel({ path: { id: first.id } }), "InvalidState", "id")
        yield* expectFailure(api.loyaltyConsole.fulfill({ path: { id: first.id } }), "InvalidState", "id")

        const second = yield* redeemReward(app, merchant.key, customer.id, reward.id)
        const fulfilled = yield* api.loyaltyConsole.fulfill({ path: { id: second.id } })
        expect(fulfilled.status).toBe("fulfilled")
        expect(fulfilled.fulfilled_at).not.toBeNull()
        yield* expectFailure(api.loyaltyConsole.cancel({ path: { id: second.id } }), "InvalidState", "id")
        expect(yield* Effect.flatMap(clientAs(app, merchant.key), (keyApi) => keyApi.loyalty.redemption({ path: { id: second.id } })))
          .toMatchObject({ status: "fulfilled" })
        const listed = yield* api.loyaltyConsole.redemptions({ path: { storeId: merchant.storeId }, urlParams: listParams() })
        expect(listed.data.map((row) => row.id)).toEqual([second.id, first.id])
        const [events] = yield* sql<{ created: number; cancelled: number }>`
          SELECT count(*) FILTER (WHERE type = 'loyalty.redemption.created')::int AS created,
            count(*) FILTER (WHERE type = 'loyalty.redemption.cancelled')::int AS cancelled
          FROM outbox WHERE store_id = ${merchant.storeId}`
        expect(events).toEqual({ created: 2, cancelled: 1 })
      }))

    it.effect("adjusts with a reason, refuses a debit below zero, and values the liability", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const api = yield* clientAs(app, merchant.owner.token)
        const customer = yield* newCustomer(app, merchant.key)
        const entry = yield* adjust(app, merchant.owner.token, customer.id, 300, "Goodwill")
        expect(entry).toMatchObject({ object: "points_entry", type: "adjust", points: 300, balance_after: 300, reason: "Goodwill" })
        expect(entry.id).toMatch(/^lpe_[0-9A-Za-z]{24}$/)
        yield* expectFailure(adjust(app, merchant.owner.token, customer.id, -301), "InvalidState", "points")
        expect((yield* adjust(app, merchant.owner.token, customer.id, -100)).balance_after).toBe(200)
        const liability = yield* api.loyaltyConsole.liability({ path: { storeId: merchant.storeId }, urlParams: { point_value: "0.015", currency: "USD" } })
        expect(liability).toMatchObject({ object: "loyalty_liability", outstanding_points: 200, point_value: "0.015", currency: "USD", amount: "3.00" })
        // An adjustment does not count toward lifetime points.
        expect((yield* customerOf(app, merchant.key, customer.id)).lifetime_points).toBe(0)
      }))

    it.effect("applies another program's credit once per key, counting it toward lifetime points", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const wallets = yield* CustomerWalletEntity.client
        const credit = wallets(customer.id).Credit({ type: "referral", key: "ref_1", points: 50, reason: "Referred a friend" })
        const first = yield* credit
        const again = yield* credit
        expect(again.id).toBe(first.id)
        expect(first).toMatchObject({ type: "referral", points: 50, balance_after: 50 })
        expect(yield* customerOf(app, merchant.key, customer.id)).toMatchObject({ points_balance: 50, lifetime_points: 50 })
      }))

    it.effect("serves the public wallet: JSON by default, an escaped HTML page under the nonce CSP for a browser", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const api = yield* clientAs(app, merchant.owner.token)
        yield* api.loyaltyConsole.createTier({ path: { storeId: merchant.storeId }, payload: { name: "Gold <b>", threshold: 500 } })
        yield* api.loyaltyConsole.createReward({ path: { storeId: merchant.storeId }, payload: { name: "<script>alert(1)</script>", points_cost: 100 } })
        const customer = yield* newCustomer(app, merchant.key, "Sokha Chan")
        yield* adjust(app, merchant.owner.token, customer.id, 120)
        const token = new URL(customer.wallet_url).searchParams.get("t") ?? ""
        const wallet = yield* Effect.flatMap(clientAs(app, ""), (anyone) =>
          anyone.wallet.view({ path: { customerId: customer.id }, urlParams: { t: token } }))
        expect(wallet).toMatchObject({
          object: "wallet",
          customer: { name: "S**** C***" },
          points_balance: 120,
          tier: null,
          next_tier: { name: "Gold <b>", threshold: 500, points_needed: 500 }
        })
        expect(wallet.rewards.map((reward) => reward.name)).toEqual(["<script>alert(1)</script>"])
        expect(wallet.recent_entries).toEqual([
          { type: "adjust", points: 120, created_at: expect.any(String), label: "Adjusted by the store" }
        ])

        const html = yield* Effect.promise(() =>
          app.fetch(pathOf(customer.wallet_url), { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } }))
        expect(html.status).toBe(200)
        expect(html.headers.get("content-type")).toContain("text/html")
        expect(html.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/)
        const text = yield* Effect.promise(() => html.text())
        expect(text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
        expect(text).not.toContain("<script>alert(1)")
        expect(text).toContain("500 points to Gold &lt;b&gt;")
        const missing = yield* call(app, "GET", "/wallet/cus_doesnotexist000000000000")
        expect(missing.status).toBe(404)
        expect(missing.body).toMatchObject({ error: { code: "not_found" } })
      }))

    it.scoped("streams a customer's points entries over the console's WalletFeed, to readers of its store only", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const other = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const neighbour = yield* newCustomer(app, merchant.key)
        const client = yield* consoleFor(app, merchant.owner.token)
        const frames = yield* client.WalletFeed({ customer_id: customer.id }).pipe(
          Stream.tap((frame) =>
            frame._tag === "WalletFeedSynced"
              ? Effect.gen(function*() {
                yield* adjust(app, merchant.owner.token, neighbour.id, 7)
                yield* adjust(app, merchant.owner.token, customer.id, 40)
                yield* redeemPoints(app, merchant.key, customer.id, 15)
              })
              : Effect.void
          ),
          Stream.filter((frame): frame is PointsEntryAdded => frame._tag === "PointsEntryAdded"),
          Stream.take(2),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.timeout("30 seconds")
        )
        expect(frames.map((frame) => [frame.entry.type, frame.entry.points, frame.entry.balance_after])).toEqual([
          ["adjust", 40, 40],
          ["redeem", -15, 25]
        ])
        const foreign = yield* consoleFor(app, other.owner.token)
        const refused = yield* Effect.either(Stream.runCollect(foreign.WalletFeed({ customer_id: customer.id })))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("NotFound")
      }))

    it.effect("refuses bad input with 400, another store's objects with 404, and roles without the permission with 403", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const other = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const token = merchant.owner.token
        const bad = (path: string, body: unknown, param: string, credential = token) =>
          Effect.map(call(app, "POST", path, { token: credential, body }), (answer) => {
            expect(answer.status, `${path} ${JSON.stringify(body)}`).toBe(400)
            expect(answer.body).toMatchObject({ error: { code: "invalid_request", param } })
          })
        const adjustPath = `/dashboard/customers/${customer.id}/loyalty/adjust`
        yield* bad(adjustPath, { points: 1.5, reason: "x" }, "points")
        yield* bad(adjustPath, { points: 0, reason: "x" }, "points")
        yield* bad(adjustPath, { points: 2 ** 31, reason: "x" }, "points")
        yield* bad(adjustPath, { points: 5 }, "reason")
        yield* bad(adjustPath, { points: "5", reason: "x" }, "points")
        yield* bad(`/dashboard/stores/${merchant.storeId}/rewards`, { name: "x", points_cost: -1 }, "points_cost")
        yield* bad(`/dashboard/stores/${merchant.storeId}/rewards`, { name: "x", points_cost: 1, stock: 0.5 }, "stock")
        yield* bad(`/dashboard/stores/${merchant.storeId}/tiers`, { name: "x", threshold: 1, earn_multiplier: "0" }, "earn_multiplier")
        yield* bad(`/dashboard/stores/${merchant.storeId}/tiers`, { name: "x", threshold: -1 }, "threshold")
        for (const points of [-5, 2.5, 2 ** 31, 0]) {
          yield* bad("/v1/loyalty/redeem", { customer_id: customer.id, points }, "points", merchant.key)
        }
        const liability = yield* call(app, "GET", `/dashboard/stores/${merchant.storeId}/loyalty/liability?point_value=-1`, { token })
        expect(liability.status).toBe(400)
        yield* expectFailure(redeemPoints(app, merchant.key, customer.id, 1), "InvalidState", "points")

        // Another store's reward, customer and redemption do not exist.
        const foreignReward = yield* createReward(app, other, 1)
        yield* expectFailure(redeemReward(app, merchant.key, customer.id, foreignReward.id), "NotFound", "reward_id")
        yield* expectFailure(redeemPoints(app, other.key, customer.id, 1), "NotFound", "customer_id")
        yield* expectFailure(adjust(app, other.owner.token, customer.id, 1), "NotFound", "id")
        const foreignApi = yield* clientAs(app, other.owner.token)
        yield* expectFailure(foreignApi.loyaltyConsole.updateReward({ path: { id: (yield* createReward(app, merchant, 1)).id }, payload: { name: "x" } }), "NotFound", "id")
        yield* expectFailure(foreignApi.loyaltyConsole.program({ path: { storeId: merchant.storeId } }), "NotFound")

        // Analysts read; they neither adjust nor configure.
        const analyst = yield* Effect.promise(() => addMember(app, token, merchant.owner.organizationId, "analyst"))
        const analystApi = yield* clientAs(app, analyst.token)
        yield* analystApi.loyaltyConsole.customerLoyalty({ path: { id: customer.id }, urlParams: listParams() })
        yield* analystApi.loyaltyConsole.liability({ path: { storeId: merchant.storeId }, urlParams: { point_value: "0.01", currency: "USD" } })
        yield* expectFailure(adjust(app, analyst.token, customer.id, 1), "Forbidden")
        yield* expectFailure(activate(app, { ...merchant, owner: { ...merchant.owner, token: analyst.token } }), "Forbidden")
      }))
  })
})
