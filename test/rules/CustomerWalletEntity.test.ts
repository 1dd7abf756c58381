/**
 * The CustomerWallet entity's rules, in-process: a balance never goes negative however many redemptions race,
 * a reward's stock is never oversold, a replayed message applies once, and a cancelled redemption gives its
 * points and its unit back exactly once.
 */
import { Entity } from "@effect/cluster"
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer } from "effect"
import type { CustomerId, RedemptionId, RewardId, StoreId } from "../../domain/Ids.ts"
import { CustomerWalletEntity, CustomerWalletEntityLive } from "../../src/loyalty/Entity.ts"
import { LoyaltyRepo } from "../../src/loyalty/Repo.ts"
import { Outbox } from "../../src/platform/Outbox.ts"
import { newId } from "../../src/platform/Ids.ts"
import { inProcessLayer, seedStore } from "../support/InProcess.ts"

const entityLayer = CustomerWalletEntityLive.pipe(Layer.provide(Layer.mergeAll(LoyaltyRepo.Default, Outbox.Default)))

const seedCustomer = (storeId: StoreId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = newId("cus") as CustomerId
    yield* sql`
      INSERT INTO customers (id, store_id, livemode, name, metadata, preferences_updated_at, created_at, updated_at)
      VALUES (${id}, ${storeId}, false, 'Sokha Chan', '{}'::jsonb, now(), now(), now())`
    return id
  }).pipe(Effect.orDie)

const seedReward = (storeId: StoreId, pointsCost: number, stock: number | null) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = newId("rwd") as RewardId
    yield* sql`
      INSERT INTO loyalty_rewards (id, store_id, name, points_cost, stock, active, created_at)
      VALUES (${id}, ${storeId}, 'Iced coffee', ${pointsCost}, ${stock}, true, now())`
    return id
  }).pipe(Effect.orDie)

const balances = (customerId: CustomerId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ balance: number; entries: number; sum: number }>`
      SELECT c.points_balance AS balance,
             (SELECT count(*)::int FROM points_entries e WHERE e.customer_id = c.id) AS entries,
             (SELECT coalesce(sum(points), 0)::int FROM points_entries e WHERE e.customer_id = c.id) AS sum
      FROM customers c WHERE c.id = ${customerId}`).pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

const redeemPoints = (requestKey: string, points: number) => ({
  requestKey,
  redemptionId: newId("rdm") as RedemptionId,
  rewardId: null,
  points,
  reason: null
})

describe("CustomerWallet entity (in-process)", () => {
  layer(inProcessLayer, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.scoped("racing redemptions never take a balance below zero", () =>
      Effect.gen(function*() {
        const wallets = yield* Entity.makeTestClient(CustomerWalletEntity, entityLayer)
        const { storeId } = yield* seedStore
        const customerId = yield* seedCustomer(storeId)
        const wallet = yield* wallets(customerId)
        yield* wallet.Credit({ type: "game", key: "prize-1", points: 1_000, reason: null })

        const outcomes = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          (i) => Effect.either(wallet.Redeem(redeemPoints(`redeem-${i}`, 300))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter(Either.isRight)).toHaveLength(3)
        for (const refused of outcomes.filter(Either.isLeft)) expect(refused.left._tag).toBe("InvalidState")
        const after = yield* balances(customerId)
        expect(after.balance).toBe(100)
        // The balance is the sum of its entries: nothing was applied without its entry or twice.
        expect(after.sum).toBe(after.balance)
        expect(after.entries).toBe(4)

        const overdraw = yield* Effect.either(wallet.Adjust({ requestKey: "debit", points: -101, reason: "correction" }))
        expect(Either.isLeft(overdraw) && overdraw.left._tag).toBe("InvalidState")
      }))

    it.scoped("changes sent at once apply in turn: each against the balance before it, a refusal taking nothing, one key once", () =>
      Effect.gen(function*() {
        const wallets = yield* Entity.makeTestClient(CustomerWalletEntity, entityLayer)
        const { storeId } = yield* seedStore
        const customerId = yield* seedCustomer(storeId)
        const wallet = yield* wallets(customerId)
        const credit = { type: "promotion" as const, key: "promo:pay_2", points: 100, reason: null }

        // Sent together, they wait in the wallet's queue together and are applied in passes.
        const [credited, first, second, creditedAgain, adjusted, third] = yield* Effect.all([
          wallet.Credit(credit),
          Effect.either(wallet.Redeem(redeemPoints("together-1", 60))),
          Effect.either(wallet.Redeem(redeemPoints("together-2", 60))),
          wallet.Credit(credit),
          wallet.Adjust({ requestKey: "together-adjust", points: 10, reason: "goodwill" }),
          Effect.either(wallet.Redeem(redeemPoints("together-1", 60)))
        ], { concurrency: "unbounded" })
        expect(creditedAgain.id).toBe(credited.id)
        expect(adjusted.points).toBe(10)
        const redeemed = [first, second].filter(Either.isRight)
        for (const refused of [first, second].filter(Either.isLeft)) expect(refused.left._tag).toBe("InvalidState")
        // The same request key twice answers one redemption (or the same refusal).
        if (Either.isRight(first)) expect(Either.isRight(third) && third.right.id).toBe(first.right.id)
        const after = yield* balances(customerId)
        expect(after.balance).toBe(110 - 60 * redeemed.length)
        expect(after.balance).toBeGreaterThanOrEqual(0)
        expect(after.sum).toBe(after.balance)
        expect(after.entries).toBe(2 + redeemed.length)
        // The entries chain: each starts from the balance another left (the first from zero), and the last
        // leaves the wallet's balance.
        const sql = yield* SqlClient.SqlClient
        const left = [...yield* sql<{ points: number; balance_after: number }>`
          SELECT points, balance_after FROM points_entries WHERE customer_id = ${customerId}`]
        let balance = 0
        while (left.length > 0) {
          const next = left.findIndex((entry) => entry.balance_after - entry.points === balance)
          expect(next).toBeGreaterThanOrEqual(0)
          balance = left.splice(next, 1)[0]!.balance_after
        }
        expect(balance).toBe(after.balance)
      }))

    it.scoped("a change written without the lock writes nothing over a wallet changed underneath; it applies against what is there", () =>
      Effect.gen(function*() {
        const wallets = yield* Entity.makeTestClient(CustomerWalletEntity, entityLayer)
        const { storeId } = yield* seedStore
        const customerId = yield* seedCustomer(storeId)
        const wallet = yield* wallets(customerId)
        // The wallet now knows its balance (100) and starts its next pass from it.
        yield* wallet.Credit({ type: "game", key: "prize-1", points: 100, reason: null })

        // Another writer changes the balance behind the wallet's back, with its entry.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE customers SET points_balance = 150, lifetime_points = 150 WHERE id = ${customerId}`
        yield* sql`
          INSERT INTO points_entries (id, customer_id, store_id, livemode, type, points, balance_after, shortfall, entry_key, created_at)
          VALUES (${newId("lpe")}, ${customerId}, ${storeId}, false, 'adjust', 50, 150, 0, 'elsewhere', now())`

        const credited = yield* wallet.Credit({ type: "game", key: "prize-2", points: 30, reason: null })
        expect(credited.balance_after).toBe(180)
        const adjusted = yield* wallet.Adjust({ requestKey: "after", points: -80, reason: "correction" })
        expect(adjusted.balance_after).toBe(100)
        const after = yield* balances(customerId)
        expect(after.balance).toBe(100)
        expect(after.sum).toBe(after.balance)
        expect(after.entries).toBe(4)

        // An erasure underneath is seen the same way: the change is applied by the locked pass, from the row as it is.
        yield* sql`UPDATE customers SET erased_at = now(), name = NULL, metadata = NULL WHERE id = ${customerId}`
        const late = yield* wallet.Credit({ type: "game", key: "prize-3", points: 5, reason: null })
        expect(late.balance_after).toBe(105)
      }))

    it.scoped("a reward's stock is never oversold by racing redemptions of many wallets", () =>
      Effect.gen(function*() {
        const wallets = yield* Entity.makeTestClient(CustomerWalletEntity, entityLayer)
        const { storeId } = yield* seedStore
        const rewardId = yield* seedReward(storeId, 50, 4)
        const customers = yield* Effect.forEach(Array.from({ length: 10 }), () => seedCustomer(storeId))
        yield* Effect.forEach(customers, (id) =>
          Effect.flatMap(wallets(id), (wallet) => wallet.Credit({ type: "referral", key: `welcome-${id}`, points: 50, reason: null })))

        const outcomes = yield* Effect.forEach(
          customers,
          (id) =>
            Effect.flatMap(wallets(id), (wallet) =>
              Effect.either(wallet.Redeem({ ...redeemPoints(`reward-${id}`, 0), points: null, rewardId }))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter(Either.isRight)).toHaveLength(4)
        const sql = yield* SqlClient.SqlClient
        const [reward] = yield* sql<{ stock: number }>`SELECT stock FROM loyalty_rewards WHERE id = ${rewardId}`
        expect(reward!.stock).toBe(0)
      }))

    it.scoped("a replayed message applies once; a cancelled redemption gives its points and unit back once", () =>
      Effect.gen(function*() {
        const wallets = yield* Entity.makeTestClient(CustomerWalletEntity, entityLayer)
        const { storeId } = yield* seedStore
        const customerId = yield* seedCustomer(storeId)
        const rewardId = yield* seedReward(storeId, 200, 1)
        const wallet = yield* wallets(customerId)

        const credit = { type: "promotion" as const, key: "promo:pay_1", points: 500, reason: null }
        const first = yield* wallet.Credit(credit)
        const again = yield* wallet.Credit(credit)
        expect(again.id).toBe(first.id)
        expect((yield* balances(customerId)).balance).toBe(500)

        const message = { ...redeemPoints("once", 0), points: null, rewardId }
        const redemption = yield* wallet.Redeem(message)
        const replayed = yield* wallet.Redeem({ ...message, redemptionId: newId("rdm") as RedemptionId })
        expect(replayed.id).toBe(redemption.id)
        expect((yield* balances(customerId)).balance).toBe(300)

        yield* wallet.CancelRedemption({ redemptionId: redemption.id, requestKey: "cancel-1" })
        const repeat = yield* wallet.CancelRedemption({ redemptionId: redemption.id, requestKey: "cancel-1" })
        expect(repeat.status).toBe("cancelled")
        const other = yield* Effect.either(wallet.CancelRedemption({ redemptionId: redemption.id, requestKey: "cancel-2" }))
        expect(Either.isLeft(other) && other.left._tag).toBe("InvalidState")
        expect((yield* balances(customerId)).balance).toBe(500)
        const sql = yield* SqlClient.SqlClient
        const [reward] = yield* sql<{ stock: number }>`SELECT stock FROM loyalty_rewards WHERE id = ${rewardId}`
        expect(reward!.stock).toBe(1)
      }))
  })
})
