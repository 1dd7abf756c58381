/**
 * Wallets across a runner killed while their messages are in flight: 2 shard runners and 1 API node as
 * real processes on one fresh PostgreSQL database (the setup of Cluster.test.ts). Customers of an active
 * program are paid (earning through the outbox and the CustomerWallet entity) and redeem points with
 * Idempotency-Keys, retried as a careful client does; in the middle, the runner that hosts most of the
 * wallets is SIGKILLed. Afterwards no points are lost or doubled: every paid payment earned exactly once,
 * every answered redemption exists once, and each balance is its entries' sum.
 *
 * Skipped without a PostgreSQL server (or with TEST_DATABASE=embedded).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import type { ApiClient } from "../../domain/Client.ts"
import type { CustomerId } from "../../domain/Ids.ts"
import { postgresAvailable } from "../support/TestDatabase.ts"
import {
  carefulClient,
  carefully,
  createDatabase,
  type ClusterDatabase,
  LocalCluster,
  makeMerchant,
  shardOf,
  succeed,
  waitFor
} from "../support/Cluster.ts"

const enabled = process.env["TEST_DATABASE"] !== "embedded" && await postgresAvailable()

const CUSTOMERS = 16
const PAYMENTS_EACH = 4
const REDEMPTIONS_EACH = 4
const START_POINTS = 1000
// 1.00 USD at 10 points per USD.
const POINTS_PER_PAYMENT = 10
const REDEEM_POINTS = 7

describe.skipIf(!enabled)("loyalty wallets across a killed runner", () => {
  let db: ClusterDatabase
  let cluster: LocalCluster
  let baseUrl: string

  beforeAll(async () => {
    db = await createDatabase("loyalty_cluster")
    cluster = new LocalCluster(db)
    baseUrl = await cluster.start(2)
  }, 180_000)

  afterAll(async () => {
    await cluster?.killAll()
    await db?.drop()
  })

  it("loses and doubles no points when the runner hosting most wallets is killed mid-load", { timeout: 300_000 }, async () => {
    const { ownerToken, secret, storeId } = await makeMerchant(baseUrl)
    const owner = await carefulClient(baseUrl, ownerToken)
    const merchant = await carefulClient(baseUrl, secret)
    await succeed("activate", owner.loyaltyConsole.configure({ path: { storeId: storeId }, payload: { active: true, points_per_unit: { USD: "10" } } }))

    const customers: Array<CustomerId> = []
    for (let i = 0; i < CUSTOMERS; i++) {
      const customer = await succeed("customer", merchant.customers.create({ payload: { external_id: `wallet-${i}` }, headers: {} }))
      await succeed("adjust", owner.loyaltyConsole.adjust({ path: { id: customer.id }, payload: { points: START_POINTS, reason: "Opening balance" } }))
      customers.push(customer.id)
    }

    // The runner that owns the most wallets' shards is the one to kill.
    const owners = await cluster.shardOwners()
    const walletsOf = (address: string) => customers.filter((id) => owners.get(address)?.includes(shardOf(id))).length
    const victim = [...cluster.runners].sort((a, b) => walletsOf(b.address) - walletsOf(a.address))[0]!

    const answeredRedemptions = new Map<string, string>()
    const payAndRedeem = async (api: ApiClient, customerId: CustomerId, round: number) => {
      const created = await carefully(api.payments.create({
        payload: { amount: "1.00", currency: "USD", customer_id: customerId },
        headers: { "idempotency-key": `pay-${customerId}-${round}` }
      }))
      if (Either.isRight(created.outcome)) {
        const id = created.outcome.right.id
        await carefully(api.payments.simulate({ path: { id }, payload: { status: "scanned" } }))
        await carefully(api.payments.simulate({ path: { id }, payload: { status: "paid" } }))
      }
      if (round < REDEMPTIONS_EACH) {
        const idempotencyKey = `redeem-${customerId}-${round}`
        const redeemed = await carefully(api.loyalty.redeemPoints({
          payload: { customer_id: customerId, points: REDEEM_POINTS },
          headers: { "idempotency-key": idempotencyKey }
        }))
        if (Either.isRight(redeemed.outcome)) answeredRedemptions.set(idempotencyKey, redeemed.outcome.right.id)
      }
    }

    const load = Promise.all(customers.map(async (customerId) => {
      for (let round = 0; round < PAYMENTS_EACH; round++) await payAndRedeem(merchant, customerId, round)
    }))
    // Kill once the load is under way: wallet messages (earnings from the outbox, redemptions) are in flight.
    await waitFor("the load to be under way", 60_000, async () => {
      const [row] = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM points_entries WHERE type <> 'adjust'`)
      return row!.count >= CUSTOMERS ? true : undefined
    }, 20)
    victim.signal("SIGKILL")
    await load
    await cluster.allShardsHeldBy(cluster.runners.filter((runner) => runner !== victim), 120_000)

    // Every paid payment's event applied to its wallet.
    await waitFor("every payment event to reach its wallet", 120_000, async () => {
      const [row] = await db.query<{ pending: number }>(
        `SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = 'loyalty'`
      )
      return row!.pending === 0 ? true : undefined
    }, 250)

    const paid = await db.query<{ id: string; earned: number }>(
      `SELECT p.id, (SELECT count(*)::int FROM points_entries e WHERE e.payment_id = p.id AND e.type = 'earn') AS earned
       FROM payments p WHERE p.store_id = $1 AND p.status = 'paid'`,
      [storeId]
    )
    expect(paid.length).toBeGreaterThan(0)
    for (const payment of paid) expect(payment.earned, payment.id).toBe(1)

    const redemptions = await db.query<{ id: string }>(
      `SELECT id FROM loyalty_redemptions WHERE store_id = $1`,
      [storeId]
    )
    const redemptionIds = new Set(redemptions.map((row) => row.id))
    // Each answered redemption exists; none exists that no key asked for (a retry never redeems twice).
    for (const id of answeredRedemptions.values()) expect(redemptionIds.has(id), id).toBe(true)
    expect(redemptions.length).toBeLessThanOrEqual(CUSTOMERS * REDEMPTIONS_EACH)
    expect(answeredRedemptions.size).toBe(redemptions.length)

    const wallets = await db.query<{ id: string; points_balance: number; sum: number; redeemed: number; paid: number }>(
      `SELECT c.id, c.points_balance,
         (SELECT COALESCE(sum(points), 0)::int FROM points_entries e WHERE e.customer_id = c.id) AS sum,
         (SELECT count(*)::int FROM loyalty_redemptions r WHERE r.customer_id = c.id) AS redeemed,
         (SELECT count(*)::int FROM payments p WHERE p.customer_id = c.id AND p.status = 'paid') AS paid
       FROM customers c WHERE c.store_id = $1`,
      [storeId]
    )
    for (const wallet of wallets) {
      expect(wallet.points_balance, wallet.id).toBe(wallet.sum)
      expect(wallet.points_balance, wallet.id).toBe(START_POINTS + wallet.paid * POINTS_PER_PAYMENT - wallet.redeemed * REDEEM_POINTS)
    }
    console.log(
      `wallets across a killed runner: killed ${victim.name} hosting ${walletsOf(victim.address)} of ${CUSTOMERS} wallets; ` +
        `${paid.length} payments earned once each, ${redemptions.length} redemptions, every balance its entries' sum`
    )
  })
})
