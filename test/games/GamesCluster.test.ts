/**
 * Game draws across a runner killed mid-draw: 2 shard runners and 1 API node as real processes on one fresh
 * PostgreSQL database (the setup of test/e2e/Cluster.test.ts). Customers play several games, each with a
 * points prize of inventory 10 and a per-customer limit, through the API node with Idempotency-Keys, retried
 * as a careful client does; in the middle of it the runner hosting the most games is SIGKILLed. Afterwards:
 * no prize is awarded past its inventory (the counters match the plays), no answered play is lost or
 * doubled, no customer passed the limit, every won points prize reached the wallet exactly once, and every
 * game's draws re-run from its disclosed seed.
 *
 * Skipped without a PostgreSQL server (or with TEST_DATABASE=embedded).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { verifyGame } from "../../domain/Games.ts"
import type { CustomerId, GameId } from "../../domain/Ids.ts"
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

const GAMES = 6
const CUSTOMERS = 12
const MAX_PLAYS = 4
// One more round than the limit allows: the last is refused (409) unless an earlier one was.
const ROUNDS = MAX_PLAYS + 1
const INVENTORY = 10
const POINTS = 5

describe.skipIf(!enabled)("game draws across a killed runner", () => {
  let db: ClusterDatabase
  let cluster: LocalCluster
  let baseUrl: string

  beforeAll(async () => {
    db = await createDatabase("games_cluster")
    cluster = new LocalCluster(db)
    baseUrl = await cluster.start(2)
  }, 180_000)

  afterAll(async () => {
    await cluster?.killAll()
    await db?.drop()
  })

  it("awards no prize past its inventory and loses no play when the runner hosting most games is killed", { timeout: 400_000 }, async () => {
    const { ownerToken, secret, storeId } = await makeMerchant(baseUrl)
    const owner = await carefulClient(baseUrl, ownerToken)
    const merchant = await carefulClient(baseUrl, secret)

    const customers: Array<CustomerId> = []
    for (let i = 0; i < CUSTOMERS; i++) {
      customers.push((await succeed("customer", merchant.customers.create({ payload: { external_id: `player-${i}` }, headers: {} }))).id)
    }
    const games: Array<{ id: GameId; prize: string; commitment: string }> = []
    for (let g = 0; g < GAMES; g++) {
      const game = await succeed("create game", owner.gamesConsole.create({
        path: { storeId: storeId },
        payload: {
          name: `Wheel ${g}`,
          type: "spin",
          max_plays_per_customer: MAX_PLAYS,
          prizes: [
            { name: "Jackpot", kind: "points", points: POINTS, weight: 2, inventory: INVENTORY },
            { name: "Try again", kind: "nothing", weight: 3 }
          ]
        }
      }))
      games.push({ id: game.id, prize: game.prizes[0]!.id, commitment: game.seed_commitment })
    }

    const owners = await cluster.shardOwners()
    const gamesOf = (address: string) => games.filter((game) => owners.get(address)?.includes(shardOf(game.id))).length
    const victim = [...cluster.runners].sort((a, b) => gamesOf(b.address) - gamesOf(a.address))[0]!

    /** Idempotency-Key → the answered play id (201) or "refused" (409). */
    const answers = new Map<string, string>()
    const unexpected: Array<string> = []
    let retried = 0
    const load = Promise.all(customers.flatMap((customer) =>
      games.map(async (game) => {
        for (let round = 0; round < ROUNDS; round++) {
          const idempotencyKey = `${game.id}-${customer}-${round}`
          const answer = await carefully(merchant.games.play({
            path: { id: game.id },
            payload: { customer_id: customer },
            headers: { "idempotency-key": idempotencyKey }
          }))
          if (answer.retried.length > 0) retried++
          if (Either.isRight(answer.outcome)) answers.set(idempotencyKey, answer.outcome.right.id)
          else if (answer.outcome.left._tag === "InvalidState") answers.set(idempotencyKey, "refused")
          else unexpected.push(`${idempotencyKey}: ${answer.outcome.left._tag} (retried after: ${answer.retried.join(" | ") || "none"})`)
        }
      })
    ))
    // Kill once draws are under way: messages of the victim's games are in flight.
    await waitFor("the plays to be under way", 60_000, async () => {
      const [row] = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM game_plays`)
      return row!.count >= 40 ? true : undefined
    }, 20)
    victim.signal("SIGKILL")
    const [atKill] = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM game_plays`)
    await load
    await cluster.allShardsHeldBy(cluster.runners.filter((runner) => runner !== victim), 120_000)
    expect(unexpected).toEqual([])
    expect(answers.size).toBe(CUSTOMERS * GAMES * ROUNDS)

    // No prize past its inventory: the counter equals the plays that won it, and both are at most 10.
    for (const game of games) {
      const [prize] = await db.query<{ awarded: number; inventory: number }>(`SELECT awarded, inventory FROM game_prizes WHERE id = $1`, [game.prize])
      const [won] = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM game_plays WHERE prize_id = $1`, [game.prize])
      expect(prize!.awarded, game.id).toBe(won!.count)
      expect(prize!.awarded, game.id).toBeLessThanOrEqual(INVENTORY)
    }
    // No play lost, none doubled: every answered play exists, and every play was answered to one key.
    const plays = await db.query<{ id: string; game_id: string; customer_id: string }>(
      `SELECT id, game_id, customer_id FROM game_plays WHERE store_id = $1`,
      [storeId]
    )
    const recorded = new Set(plays.map((play) => play.id))
    const answered = [...answers.values()].filter((value) => value !== "refused")
    for (const id of answered) expect(recorded.has(id), id).toBe(true)
    expect(new Set(answered).size).toBe(answered.length)
    expect(plays.length).toBe(answered.length)
    // The kill came mid-load: most plays were drawn after it.
    expect(atKill!.count).toBeLessThan(plays.length)
    // No customer past the limit; each has exactly MAX_PLAYS plays of each game (the extra round refused).
    const perCustomer = new Map<string, number>()
    for (const play of plays) perCustomer.set(`${play.game_id}/${play.customer_id}`, (perCustomer.get(`${play.game_id}/${play.customer_id}`) ?? 0) + 1)
    for (const count of perCustomer.values()) expect(count).toBe(MAX_PLAYS)

    // Every won points prize reaches the wallet once (the games consumer repairs what the kill interrupted).
    await waitFor("every prize event to be applied", 120_000, async () => {
      const [row] = await db.query<{ pending: number }>(`SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = 'games'`)
      return row!.pending === 0 ? true : undefined
    }, 250)
    const credits = await db.query<{ play: string; entries: number }>(
      `SELECT p.id AS play, (SELECT count(*)::int FROM points_entries e WHERE e.entry_key = 'credit:game:' || p.id) AS entries
       FROM game_plays p JOIN game_prizes z ON z.id = p.prize_id WHERE p.store_id = $1 AND z.kind = 'points'`,
      [storeId]
    )
    for (const credit of credits) expect(credit.entries, credit.play).toBe(1)
    const [balances] = await db.query<{ balance: number }>(
      `SELECT COALESCE(sum(points_balance), 0)::int AS balance FROM customers WHERE store_id = $1`,
      [storeId]
    )
    expect(balances!.balance).toBe(credits.length * POINTS)

    // Every game's draws re-run from its disclosed seed.
    for (const game of games) {
      const deleted = await succeed("delete game", owner.gamesConsole.delete({ path: { gameId: game.id } }))
      const tables = await db.query<{ version: number; prizes: Array<{ id: string; weight: number; remaining: number | null }> }>(
        `SELECT version, prizes FROM game_prize_tables WHERE game_id = $1 ORDER BY version`,
        [game.id]
      )
      const drawn = await db.query<{ id: string; prize_id: string | null; prize_version: number }>(
        `SELECT id, prize_id, prize_version FROM game_plays WHERE game_id = $1 AND draw_seq IS NOT NULL ORDER BY draw_seq`,
        [game.id]
      )
      const report = await Effect.runPromise(verifyGame({
        seed: deleted.seed!,
        seedCommitment: game.commitment,
        tables,
        plays: drawn.map((play) => ({ id: play.id, prizeId: play.prize_id, version: play.prize_version }))
      }))
      expect(report.valid, `${game.id}: ${JSON.stringify(report.mismatches.slice(0, 3))}`).toBe(true)
    }
    console.log(
      `games across a killed runner: killed ${victim.name} hosting ${gamesOf(victim.address)} of ${GAMES} games; ` +
        `${atKill!.count} plays recorded when killed, ${retried} requests retried across the kill; ${plays.length} plays recorded and answered once each ` +
        `(${answers.size - answered.length} refused at the limit), ${credits.length} points prizes credited once, none past ${INVENTORY}`
    )
  })
})
