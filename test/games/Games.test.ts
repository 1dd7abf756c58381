/**
 * Games over HTTP against PostgreSQL: CRUD of games and prizes with the seed kept back until the game ends
 * or is deleted; 200 concurrent plays on a prize of inventory 10 (exactly 10 awarded, the wallet credited
 * once each, one webhook event each); a chi-square test of 1,200 seeded draws through the GameInventory
 * entity; the re-run of every draw from the disclosed seed across prize changes; scratch cards issued,
 * revealed and revealed again; the per-customer limit under races; hosted routes (JSON and HTML); access;
 * every bad input of the issue as a 4xx.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { FetchHttpClient } from "@effect/platform"
import { Chunk, Effect, Either, Stream } from "effect"
import { createHash } from "node:crypto"
import type { PlayRecorded } from "../../domain/Console.ts"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import type { CreateGame, Game, PrizeInput } from "../../domain/Games.ts"
import { DEFAULT_MAX_PLAYS_PER_CUSTOMER, verifyGame } from "../../domain/Games.ts"
import type { CustomerId, PlayId } from "../../domain/Ids.ts"
import { GameInventoryEntity } from "../../src/games/Entity.ts"
import { encryptSecret, MasterKey } from "../../src/platform/Crypto.ts"
import { addMember } from "../support/Accounts.ts"
import { clientAs, expectFailure, listParams } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { type Merchant, newMerchant } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

/** The path and query of a link the API handed out, to open it on the test app. */
const pathOf = (url: string) => {
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}
/** The customer's token, as its wallet link carries it (it also opens hosted play). */
const playerQuery = (customer: { readonly id: string; readonly wallet_url: string }) =>
  `c=${customer.id}&t=${new URL(customer.wallet_url).searchParams.get("t")}`

let serial = 0
const freshEmail = () => `game-${Date.now().toString(36)}-${++serial}@example.test`

const newCustomer = (app: TestAppShape, key: string, name = "Sokha Chan") =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.create({ payload: { email: freshEmail(), name }, headers: {} }))

const createGame = (app: TestAppShape, merchant: Merchant, payload: CreateGame) =>
  Effect.flatMap(clientAs(app, merchant.owner.token), (api) =>
    api.gamesConsole.create({ path: { storeId: merchant.storeId }, payload }))

const playOnce = (app: TestAppShape, key: string, gameId: Game["id"], customerId: CustomerId) =>
  Effect.flatMap(clientAs(app, key), (api) => api.games.play({ path: { id: gameId }, payload: { customer_id: customerId }, headers: {} }))

const balanceOf = (app: TestAppShape, key: string, id: CustomerId) =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.retrieve({ path: { id } })).pipe(Effect.map((c) => c.points_balance))

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** Every prize table and drawn play of a game, as an outside verifier would collect them. */
const drawRecord = (gameId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tables = yield* sql<{ version: number; prizes: Array<{ id: string; weight: number; remaining: number | null }> }>`
      SELECT version, prizes FROM game_prize_tables WHERE game_id = ${gameId} ORDER BY version`
    const plays = yield* sql<{ id: string; prize_id: string | null; prize_version: number }>`
      SELECT id, prize_id, prize_version FROM game_plays WHERE game_id = ${gameId} AND draw_seq IS NOT NULL ORDER BY draw_seq`
    return { tables, plays: plays.map((play) => ({ id: play.id, prizeId: play.prize_id, version: play.prize_version })) }
  })

/** A play id of the exact shape the service makes, numbered (seeded draws). */
const seededPlayId = (index: number) => `play_${String(index).padStart(24, "0")}` as PlayId

/** Replaces a game's seed with a known one (sealed under the service's master key), before any play. */
const setSeed = (gameId: string, seed: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { key } = yield* MasterKey
    yield* sql`UPDATE games SET seed_sealed = ${encryptSecret(key, seed)}, seed_commitment = ${sha256(seed)} WHERE id = ${gameId}`
  })

const eventsOf = (storeId: string, type: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ payload: { data: { object: Record<string, any> } } }>`
      SELECT payload FROM outbox WHERE store_id = ${storeId} AND type = ${type} ORDER BY position`).pipe(
      Effect.map((rows) => rows.map((row) => row.payload.data.object))
    )

/** Waits until the games consumer has applied every queued prize event. */
const settled = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let attempt = 0; attempt < 150; attempt++) {
    const [row] = yield* sql<{ pending: number }>`SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = 'games'`
    if (row!.pending === 0) return
    yield* Effect.sleep("100 millis")
  }
  return expect.fail("prize events stayed unapplied by the games consumer")
})

const consoleFor = (app: TestAppShape, token: string) =>
  makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: token }).pipe(Effect.provide(FetchHttpClient.layer))

const JACKPOT: PrizeInput = { name: "Jackpot", kind: "points", points: 50, weight: 1, inventory: 10 }

describe("games", () => {
  layer(testAppLayer(), { timeout: 300_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("creates, reads, updates and deletes games and prizes; the seed is disclosed only once deleted or ended", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app, "Riverside Coffee")
        const api = yield* clientAs(app, merchant.owner.token)
        const game = yield* createGame(app, merchant, {
          name: "Lunar wheel",
          type: "spin",
          max_plays_per_customer: 3,
          prizes: [
            { name: "100 points", kind: "points", points: 100, weight: 2, inventory: 5 },
            { name: "Free latte", kind: "voucher", weight: 1 },
            { name: "Try again", kind: "nothing", weight: 7 }
          ]
        })
        expect(game).toMatchObject({
          object: "game",
          store_id: merchant.storeId,
          name: "Lunar wheel",
          type: "spin",
          active: true,
          max_plays_per_customer: 3,
          starts_at: null,
          ends_at: null,
          seed: null,
          deleted_at: null
        })
        expect(game.id).toMatch(/^game_[0-9A-Za-z]{24}$/)
        expect(game.seed_commitment).toMatch(/^[0-9a-f]{64}$/)
        expect(game.prizes.map((p) => [p.name, p.kind, p.points, p.weight, p.inventory, p.awarded, p.active])).toEqual([
          ["100 points", "points", 100, 2, 5, 0, true],
          ["Free latte", "voucher", null, 1, null, 0, true],
          ["Try again", "nothing", null, 7, null, 0, true]
        ])
        expect((yield* api.gamesConsole.retrieve({ path: { gameId: game.id } })).seed).toBeNull()
        const listed = yield* api.gamesConsole.list({ path: { storeId: merchant.storeId }, urlParams: listParams() })
        expect(listed.data.map((g) => g.id)).toEqual([game.id])

        const updated = yield* api.gamesConsole.update({ path: { gameId: game.id }, payload: { name: "Lunar wheel 2", max_plays_per_customer: null } })
        expect(updated).toMatchObject({ name: "Lunar wheel 2", max_plays_per_customer: null, type: "spin" })
        // An update without the field leaves it as it is.
        expect(yield* api.gamesConsole.update({ path: { gameId: game.id }, payload: { active: true } }))
          .toMatchObject({ max_plays_per_customer: null })

        // A game created without max_plays_per_customer has the default; unlimited is asked for with null.
        const defaulted = yield* createGame(app, merchant, { name: "Default wheel", type: "spin" })
        expect(defaulted.max_plays_per_customer).toBe(DEFAULT_MAX_PLAYS_PER_CUSTOMER)
        expect(DEFAULT_MAX_PLAYS_PER_CUSTOMER).toBe(10)
        const unlimited = yield* createGame(app, merchant, { name: "Open wheel", type: "spin", max_plays_per_customer: null })
        expect(unlimited.max_plays_per_customer).toBeNull()

        const added = yield* api.gamesConsole.addPrize({ path: { gameId: game.id }, payload: { name: "Cookie", kind: "voucher", weight: 3, inventory: 2 } })
        expect(added).toMatchObject({ object: "prize", name: "Cookie", kind: "voucher", weight: 3, inventory: 2, awarded: 0, active: true })
        const changed = yield* api.gamesConsole.updatePrize({
          path: { prizeId: added.id },
          payload: { name: "Big cookie", kind: "voucher", weight: 4, inventory: 3 }
        })
        expect(changed).toMatchObject({ name: "Big cookie", weight: 4, inventory: 3 })
        // Never awarded: deleted for good.
        const deleted = yield* api.gamesConsole.deletePrize({ path: { prizeId: added.id } })
        expect(deleted.id).toBe(added.id)
        expect((yield* api.gamesConsole.retrieve({ path: { gameId: game.id } })).prizes.map((p) => p.id)).not.toContain(added.id)
        yield* expectFailure(api.gamesConsole.deletePrize({ path: { prizeId: added.id } }), "NotFound")

        // An awarded prize is deactivated, not deleted; it cannot be changed after, and its inventory not go below awarded.
        const customer = yield* newCustomer(app, merchant.key)
        const only = yield* createGame(app, merchant, { name: "One prize", type: "lucky_draw", prizes: [{ name: "Cookie", kind: "voucher", weight: 1, inventory: 3 }] })
        const won = yield* playOnce(app, merchant.key, only.id, customer.id)
        expect(won.prize?.id).toBe(only.prizes[0]!.id)
        expect(won.voucher_code).toMatch(/^[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/)
        yield* expectFailure(
          api.gamesConsole.updatePrize({ path: { prizeId: only.prizes[0]!.id }, payload: { name: "Cookie", kind: "voucher", weight: 1, inventory: 0 } }),
          "InvalidState",
          "inventory"
        )
        const deactivated = yield* api.gamesConsole.deletePrize({ path: { prizeId: only.prizes[0]!.id } })
        expect(deactivated).toMatchObject({ active: false, awarded: 1 })
        yield* expectFailure(
          api.gamesConsole.updatePrize({ path: { prizeId: only.prizes[0]!.id }, payload: { name: "Cookie", kind: "voucher", weight: 1 } }),
          "InvalidState"
        )
        // No active prize left: playing is 409.
        yield* expectFailure(playOnce(app, merchant.key, only.id, customer.id), "InvalidState")
        // The play keeps its prize.
        const plays = yield* api.gamesConsole.plays({ path: { gameId: only.id }, urlParams: listParams() })
        expect(plays.data.map((p) => [p.id, p.prize?.name, p.prize?.active])).toEqual([[won.id, "Cookie", false]])

        // Deleting discloses the seed; the game stays readable and can no longer be played or changed.
        const removed = yield* api.gamesConsole.delete({ path: { gameId: game.id } })
        expect(removed.deleted_at).not.toBeNull()
        expect(removed.active).toBe(false)
        expect(removed.seed).not.toBeNull()
        expect(sha256(removed.seed!)).toBe(game.seed_commitment)
        expect((yield* api.gamesConsole.delete({ path: { gameId: game.id } })).seed).toBe(removed.seed)
        expect((yield* api.gamesConsole.retrieve({ path: { gameId: game.id } })).seed).toBe(removed.seed)
        expect((yield* api.gamesConsole.list({ path: { storeId: merchant.storeId }, urlParams: listParams() })).data.map((g) => g.id))
          .not.toContain(game.id)
        yield* expectFailure(playOnce(app, merchant.key, game.id, customer.id), "InvalidState")
        yield* expectFailure(api.gamesConsole.update({ path: { gameId: game.id }, payload: { active: true } }), "InvalidState")
        yield* expectFailure(
          api.gamesConsole.addPrize({ path: { gameId: game.id }, payload: { name: "Late", kind: "nothing", weight: 1 } }),
          "InvalidState"
        )

        // An ended game (ends_at passed) discloses its seed too, and refuses plays.
        const ended = yield* createGame(app, merchant, {
          name: "Last year",
          type: "spin",
          starts_at: new Date(Date.now() - 86_400_000 * 2),
          ends_at: new Date(Date.now() - 86_400_000),
          prizes: [{ name: "Points", kind: "points", points: 5, weight: 1 }]
        })
        expect(ended.seed).not.toBeNull()
        expect(sha256(ended.seed!)).toBe(ended.seed_commitment)
        yield* expectFailure(playOnce(app, merchant.key, ended.id, customer.id), "InvalidState")
        const future = yield* createGame(app, merchant, {
          name: "Next year",
          type: "spin",
          starts_at: new Date(Date.now() + 86_400_000),
          prizes: [{ name: "Points", kind: "points", points: 5, weight: 1 }]
        })
        expect(future.seed).toBeNull()
        yield* expectFailure(playOnce(app, merchant.key, future.id, customer.id), "InvalidState")
      }))

    it.effect("200 concurrent plays on a prize of inventory 10 award exactly 10, credited once each, one event each", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customers = yield* Effect.all(Array.from({ length: 20 }, () => newCustomer(app, merchant.key)), { concurrency: 5 })
        const game = yield* createGame(app, merchant, { name: "Rush", type: "spin", prizes: [JACKPOT] })
        const results = yield* Effect.all(
          Array.from({ length: 200 }, (_, i) => playOnce(app, merchant.key, game.id, customers[i % customers.length]!.id)),
          { concurrency: "unbounded" }
        )
        const won = results.filter((play) => play.prize !== null)
        expect(won.length).toBe(10)
        expect(results.filter((play) => play.prize === null).length).toBe(190)
        expect(new Set(results.map((play) => play.id)).size).toBe(200)
        for (const play of results) {
          expect(play.status).toBe("played")
          expect(play.proof).toEqual({ seed_commitment: game.seed_commitment, nonce: play.id })
        }
        const api = yield* clientAs(app, merchant.owner.token)
        const stats = yield* api.gamesConsole.stats({ path: { gameId: game.id } })
        expect(stats).toEqual({
          object: "game_stats",
          plays: 200,
          issued: 0,
          wins: 10,
          win_rate: 0.05,
          prizes: [{ prize_id: game.prizes[0]!.id, name: "Jackpot", awarded: 10, inventory_left: 0 }]
        })
        yield* settled
        // Each win credited once (the service's credit and the consumer's repair share the wallet key).
        const sql = yield* SqlClient.SqlClient
        const entries = yield* sql<{ customer_id: string; points: number; entry_key: string }>`
          SELECT customer_id, points, entry_key FROM points_entries WHERE type = 'game' AND store_id = ${merchant.storeId}`
        expect(entries.length).toBe(10)
        expect(new Set(entries.map((e) => e.entry_key))).toEqual(new Set(won.map((play) => `credit:game:${play.id}`)))
        const total = (yield* Effect.forEach(customers, (c) => balanceOf(app, merchant.key, c.id))).reduce((a, b) => a + b, 0)
        expect(total).toBe(10 * 50)
        const events = yield* eventsOf(merchant.storeId, "game.prize_awarded")
        expect(events.map((e) => e["id"]).sort()).toEqual(won.map((p) => p.id).sort())
        expect(events[0]).toMatchObject({ object: "play", game_id: game.id, prize: { kind: "points", points: 50 } })
        // A customer's plays, filtered by status.
        const merchantApi = yield* clientAs(app, merchant.key)
        const mine = yield* merchantApi.games.customerPlays({ path: { id: customers[0]!.id }, urlParams: listParams({ status: "played" as const }) })
        expect(mine.data.length).toBe(10)
        expect((yield* merchantApi.games.customerPlays({ path: { id: customers[0]!.id }, urlParams: listParams({ status: "issued" as const }) })).data)
          .toEqual([])
      }))

    it.effect("1,200 seeded draws with unlimited inventory match the weights (chi-square, p > 0.001), and re-run from the seed", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const weights = [1, 2, 3, 4]
        const seed = "chi-square-seed-0001"
        // Four games on one seed and one prize table, drawn at once (each game's entity draws one at a time).
        const GAMES = 4
        // 1,200 draws: at least 120 expected in each slot, ample for a chi-square test with df 3 (its rule of thumb asks
        // 5), and the rate of a false alarm is the p-value bound whatever the count; each draw is a persisted message.
        const DRAWS = 1_200
        const games = yield* Effect.forEach(Array.from({ length: GAMES }, (_, g) => g), (g) =>
          Effect.tap(
            createGame(app, merchant, {
              name: `Fair wheel ${g}`,
              type: "spin",
              max_plays_per_customer: null,
              prizes: weights.map((weight, i) => ({ name: `Slot ${i}`, kind: "nothing" as const, weight }))
            }),
            (game) => setSeed(game.id, seed)
          ))
        const inventories = yield* GameInventoryEntity.client
        const outcomes = yield* Effect.forEach(
          games,
          (game, g) =>
            Effect.forEach(
              Array.from({ length: DRAWS / GAMES }, (_, i) => seededPlayId(g * 1_000_000 + i)),
              (playId) => Effect.map(inventories(game.id).Play({ playId, customerId: customer.id }), (outcome) => ({ game, outcome })),
              { concurrency: 32 }
            ),
          { concurrency: "unbounded" }
        ).pipe(Effect.map((perGame) => perGame.flat()))
        expect(outcomes.length).toBe(DRAWS)
        const observed = weights.map(() => 0)
        for (const { game, outcome } of outcomes) observed[game.prizes.findIndex((prize) => prize.id === outcome.prize!.id)]! += 1
        const total = weights.reduce((a, b) => a + b, 0)
        const chiSquare = weights.reduce((sum, weight, i) => {
          const expected = (DRAWS * weight) / total
          return sum + (observed[i]! - expected) ** 2 / expected
        }, 0)
        // 3 degrees of freedom: p > 0.001 means χ² < 16.266. Seeded (fixed seed, fixed play ids): it cannot flake.
        expect(chiSquare).toBeLessThan(16.266)
        // A replayed message answers its play, drawing nothing again.
        const first = outcomes[0]!
        // The same play, prize and draw place; the prize's counters in the carried play are read now.
        const { view: replayedView, ...replayed } = yield* inventories(first.game.id).Play({ playId: first.outcome.playId, customerId: customer.id })
        const { view: firstView, ...answered } = first.outcome
        expect(replayed).toEqual(answered)
        expect({ ...replayedView, prize_awarded: null }).toEqual({ ...firstView, prize_awarded: null })
        const api = yield* clientAs(app, merchant.owner.token)
        expect((yield* api.gamesConsole.stats({ path: { gameId: first.game.id } })).plays).toBe(DRAWS / GAMES)

        for (const game of games) {
          const removed = yield* api.gamesConsole.delete({ path: { gameId: game.id } })
          expect(removed.seed).toBe(seed)
          const record = yield* drawRecord(game.id)
          const report = yield* verifyGame({ seed: removed.seed!, seedCommitment: removed.seed_commitment, ...record })
          expect(report).toMatchObject({ valid: true, commitmentMatches: true, plays: DRAWS / GAMES, mismatches: [] })
        }
        console.log(`chi-square over ${DRAWS} seeded persisted draws, weights ${weights.join(":")}: ${chiSquare.toFixed(3)} (observed ${observed.join(", ")})`)
      }), { timeout: 900_000 })

    it.effect("re-runs every draw from the disclosed seed across prize changes, and catches a tampered record", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customers = yield* Effect.all(Array.from({ length: 5 }, () => newCustomer(app, merchant.key)))
        const api = yield* clientAs(app, merchant.owner.token)
        const game = yield* createGame(app, merchant, {
          name: "Changing wheel",
          type: "lucky_draw",
          max_plays_per_customer: null,
          prizes: [
            { name: "Jackpot", kind: "points", points: 20, weight: 3, inventory: 4 },
            { name: "Latte", kind: "voucher", weight: 2, inventory: 6 },
            { name: "Nothing", kind: "nothing", weight: 5 }
          ]
        })
        const playRound = (n: number) =>
          Effect.all(Array.from({ length: n }, (_, i) => playOnce(app, merchant.key, game.id, customers[i % 5]!.id)), { concurrency: 8 })
        yield* playRound(30)
        const extra = yield* api.gamesConsole.addPrize({ path: { gameId: game.id }, payload: { name: "Cookie", kind: "voucher", weight: 4, inventory: 3 } })
        yield* playRound(30)
        yield* api.gamesConsole.updatePrize({ path: { prizeId: game.prizes[2]!.id }, payload: { name: "Nothing", kind: "nothing", weight: 1 } })
        yield* playRound(30)
        yield* api.gamesConsole.deletePrize({ path: { prizeId: extra.id } })
        yield* playRound(30)

        const stats = yield* api.gamesConsole.stats({ path: { gameId: game.id } })
        expect(stats.plays).toBe(120)
        for (const prize of stats.prizes) if (prize.inventory_left !== null) expect(prize.inventory_left).toBeGreaterThanOrEqual(0)

        const removed = yield* api.gamesConsole.delete({ path: { gameId: game.id } })
        const record = yield* drawRecord(game.id)
        expect(new Set(record.plays.map((p) => p.version)).size).toBe(4)
        const report = yield* verifyGame({ seed: removed.seed!, seedCommitment: removed.seed_commitment, ...record })
        expect(report).toMatchObject({ valid: true, plays: 120, mismatches: [] })

        // A recorded prize changed after the fact, or a wrong seed, does not verify.
        const tampered = record.plays.map((play, i) => i === 7 ? { ...play, prizeId: play.prizeId === null ? game.prizes[0]!.id : null } : play)
        const caught = yield* verifyGame({ seed: removed.seed!, seedCommitment: removed.seed_commitment, tables: record.tables, plays: tampered })
        expect(caught.valid).toBe(false)
        expect(caught.mismatches.map((m) => m.playId)).toContain(record.plays[7]!.id)
        expect((yield* verifyGame({ seed: "not the seed", seedCommitment: removed.seed_commitment, ...record })).valid).toBe(false)
      }))

    it.effect("issues a scratch card, reveals it, and answers the same result on a second reveal", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const api = yield* clientAs(app, merchant.owner.token)
        const merchantApi = yield* clientAs(app, merchant.key)
        const game = yield* createGame(app, merchant, {
          name: "Scratch & win",
          type: "scratch",
          prizes: [{ name: "Free cake", kind: "voucher", weight: 1, inventory: 100 }, { name: "Bonus", kind: "points", points: 30, weight: 1 }]
        })
        const card = yield* api.gamesConsole.issue({ path: { gameId: game.id }, payload: { customer_id: customer.id } })
        expect(card).toMatchObject({ object: "play", status: "issued", prize: null, revealed_at: null, customer_id: customer.id, game_id: game.id })
        expect(card.voucher_code).toBeUndefined()
        const hosted = yield* call(app, "GET", pathOf(card.card_url))
        expect(hosted.status).toBe(200)
        expect(hosted.body).toMatchObject({ object: "hosted_play", id: card.id, status: "issued", prize: null, game: { name: "Scratch & win", type: "scratch" } })

        const revealed = yield* merchantApi.games.reveal({ path: { id: card.id } })
        expect(revealed.status).toBe("revealed")
        expect(revealed.prize).not.toBeNull()
        expect(revealed.revealed_at).not.toBeNull()
        const again = yield* merchantApi.games.reveal({ path: { id: card.id } })
        expect(again).toEqual(revealed)
        const publicAgain = yield* call(app, "POST", `/play/${card.id}/reveal${new URL(card.card_url).search}`)
        expect(publicAgain.status).toBe(201)
        const { customer_id: _customerId, ...publicPlay } = Schema_encodePlay(revealed)
        expect(publicAgain.body).toMatchObject({ ...publicPlay, object: "hosted_play", game: { name: "Scratch & win" } })
        expect(publicAgain.body.customer_id).toBeUndefined()

        // Racing reveals of one card: one draw, one answer.
        const second = yield* api.gamesConsole.issue({ path: { gameId: game.id }, payload: { customer_id: customer.id } })
        const raced = yield* Effect.all(Array.from({ length: 10 }, () => call(app, "POST", `/play/${second.id}/reveal${new URL(second.card_url).search}`)), { concurrency: "unbounded" })
        expect(new Set(raced.map((r) => r.status))).toEqual(new Set([201]))
        expect(new Set(raced.map((r) => JSON.stringify(r.body))).size).toBe(1)
        const stats = yield* api.gamesConsole.stats({ path: { gameId: game.id } })
        expect(stats).toMatchObject({ plays: 2, issued: 0 })
        if (revealed.prize?.kind === "points") {
          yield* settled
          expect(yield* balanceOf(app, merchant.key, customer.id)).toBeGreaterThanOrEqual(30)
        }

        // A scratch game is not played instantly; a spin game issues no cards.
        yield* expectFailure(playOnce(app, merchant.key, game.id, customer.id), "InvalidState")
        const spin = yield* createGame(app, merchant, { name: "Spin", type: "spin", prizes: [{ name: "x", kind: "nothing", weight: 1 }] })
        yield* expectFailure(api.gamesConsole.issue({ path: { gameId: spin.id }, payload: { customer_id: customer.id } }), "InvalidState")
        // Revealing an instant play answers it as it is.
        const instant = yield* playOnce(app, merchant.key, spin.id, customer.id)
        expect(yield* merchantApi.games.reveal({ path: { id: instant.id } })).toEqual(instant)
      }))

    it.effect("holds max_plays_per_customer under racing plays and racing card issues", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const other = yield* newCustomer(app, merchant.key)
        const game = yield* createGame(app, merchant, {
          name: "Three each",
          type: "spin",
          max_plays_per_customer: 3,
          prizes: [{ name: "Points", kind: "points", points: 1, weight: 1 }]
        })
        const raced = yield* Effect.all(
          Array.from({ length: 30 }, () => call(app, "POST", `/v1/games/${game.id}/play`, { token: merchant.key, body: { customer_id: customer.id } })),
          { concurrency: "unbounded" }
        )
        expect(raced.filter((r) => r.status === 201).length).toBe(3)
        expect(raced.filter((r) => r.status === 409).length).toBe(27)
        expect(raced.find((r) => r.status === 409)?.body).toMatchObject({ error: { code: "invalid_state", param: "customer_id" } })
        // The hosted play counts against the same limit; another customer has their own.
        expect((yield* call(app, "POST", `/play/game/${game.id}/play?${playerQuery(customer)}`)).status).toBe(409)
        expect((yield* call(app, "POST", `/play/game/${game.id}/play?${playerQuery(other)}`)).status).toBe(201)

        const scratch = yield* createGame(app, merchant, {
          name: "Two cards each",
          type: "scratch",
          max_plays_per_customer: 2,
          prizes: [{ name: "Nothing", kind: "nothing", weight: 1 }]
        })
        const issued = yield* Effect.all(
          Array.from({ length: 12 }, () =>
            call(app, "POST", `/dashboard/games/${scratch.id}/issue`, { token: merchant.owner.token, body: { customer_id: customer.id } })),
          { concurrency: "unbounded" }
        )
        expect(issued.filter((r) => r.status === 201).length).toBe(2)
        expect(issued.filter((r) => r.status === 409).length).toBe(10)
      }))

    it.effect("answers an idempotent play once: a retry with the same key gets the same play", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const game = yield* createGame(app, merchant, { name: "Once", type: "spin", prizes: [JACKPOT] })
        const send = () =>
          call(app, "POST", `/v1/games/${game.id}/play`, { token: merchant.key, body: { customer_id: customer.id }, headers: { "idempotency-key": "play-1" } })
        const answers = yield* Effect.all([send(), send(), send()], { concurrency: "unbounded" })
        expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
        expect(answers.every((a) => a.status === 201)).toBe(true)
        const api = yield* clientAs(app, merchant.owner.token)
        expect((yield* api.gamesConsole.stats({ path: { gameId: game.id } })).plays).toBe(1)
      }))

    it.effect("serves the hosted game and play as JSON and, for a browser, as escaped HTML under the CSP", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const hostile = "<script>alert(1)</script>"
        const game = yield* createGame(app, merchant, {
          name: hostile,
          type: "spin",
          prizes: [{ name: hostile, kind: "points", points: 10, weight: 1 }, { name: "Gone", kind: "voucher", weight: 1, inventory: 0 }]
        })
        const json = yield* call(app, "GET", `/play/game/${game.id}`)
        expect(json.status).toBe(200)
        expect(json.body).toMatchObject({
          object: "hosted_game",
          id: game.id,
          name: hostile,
          type: "spin",
          playable: true,
          seed: null,
          seed_commitment: game.seed_commitment,
          prizes: [{ name: hostile, available: true }, { name: "Gone", available: false }]
        })
        const html = yield* Effect.promise(() => app.fetch(`/play/game/${game.id}`, { headers: { accept: "text/html" } }))
        expect(html.headers.get("content-type")).toMatch(/text\/html/)
        expect(html.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/)
        const text = yield* Effect.promise(() => html.text())
        expect(text).not.toContain(hostile)
        expect(text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")

        const played = yield* call(app, "POST", `/play/game/${game.id}/play?${playerQuery(customer)}`)
        expect(played.status).toBe(201)
        expect(played.body).toMatchObject({ object: "hosted_play", status: "played", prize: { name: hostile } })
        const view = yield* call(app, "GET", pathOf(played.body.card_url))
        expect(view.body).toMatchObject({ object: "hosted_play", id: played.body.id, status: "played", game: { name: hostile } })
        const page = yield* Effect.promise(() => app.fetch(pathOf(played.body.card_url), { headers: { accept: "text/html" } }))
        const pageText = yield* Effect.promise(() => page.text())
        expect(pageText).not.toContain(hostile)
        expect(pageText).toContain("+10 points")
        expect((yield* call(app, "GET", `/play/game/game_zzzzzzzzzzzzzzzzzzzzzzzz`)).status).toBe(404)
        expect((yield* call(app, "GET", `/play/play_zzzzzzzzzzzzzzzzzzzzzzzz`)).status).toBe(404)
      }))

    it.scoped("follows a game's plays live over the console RPC, for readers of its store only", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const other = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const game = yield* createGame(app, merchant, { name: "Live", type: "spin", prizes: [{ name: "P", kind: "points", points: 1, weight: 1 }] })
        const elsewhere = yield* createGame(app, merchant, { name: "Elsewhere", type: "spin", prizes: [{ name: "P", kind: "nothing", weight: 1 }] })
        const client = yield* consoleFor(app, merchant.owner.token)
        const played: Array<string> = []
        const frames = yield* client.GamePlaysFeed({ game_id: game.id }).pipe(
          Stream.tap((frame) =>
            frame._tag === "GamePlaysFeedSynced"
              ? Effect.gen(function*() {
                yield* playOnce(app, merchant.key, elsewhere.id, customer.id)
                played.push((yield* playOnce(app, merchant.key, game.id, customer.id)).id)
                played.push((yield* playOnce(app, merchant.key, game.id, customer.id)).id)
              })
              : Effect.void
          ),
          Stream.filter((frame): frame is PlayRecorded => frame._tag === "PlayRecorded"),
          Stream.take(2),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.timeout("30 seconds")
        )
        expect(frames.map((frame) => frame.play.id)).toEqual(played)
        expect(frames[0]!.play).toMatchObject({ object: "play", game_id: game.id, status: "played" })
        const foreign = yield* consoleFor(app, other.owner.token)
        const refused = yield* Effect.either(Stream.runCollect(foreign.GamePlaysFeed({ game_id: game.id })))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("NotFound")
      }))

    it.effect("keeps tenants apart and roles to their permissions", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const other = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const foreign = yield* newCustomer(app, other.key)
        const game = yield* createGame(app, merchant, { name: "Mine", type: "scratch", prizes: [{ name: "P", kind: "nothing", weight: 1 }] })
        const otherApi = yield* clientAs(app, other.owner.token)
        yield* expectFailure(otherApi.gamesConsole.retrieve({ path: { gameId: game.id } }), "NotFound")
        yield* expectFailure(otherApi.gamesConsole.stats({ path: { gameId: game.id } }), "NotFound")
        yield* expectFailure(otherApi.gamesConsole.deletePrize({ path: { prizeId: game.prizes[0]!.id } }), "NotFound")
        yield* expectFailure(playOnce(app, other.key, game.id, foreign.id), "NotFound")
        // A customer of another store is 404 on issue and on the hosted play.
        const api = yield* clientAs(app, merchant.owner.token)
        yield* expectFailure(api.gamesConsole.issue({ path: { gameId: game.id }, payload: { customer_id: foreign.id } }), "NotFound", "customer_id")
        // Revealing a play of another store is 404.
        const card = yield* api.gamesConsole.issue({ path: { gameId: game.id }, payload: { customer_id: customer.id } })
        yield* expectFailure(Effect.flatMap(clientAs(app, other.key), (o) => o.games.reveal({ path: { id: card.id } })), "NotFound")
        yield* expectFailure(Effect.flatMap(clientAs(app, other.key), (o) => o.games.customerPlays({ path: { id: customer.id }, urlParams: listParams() })), "NotFound")
        // Roles: an analyst reads but cannot configure or issue; API keys are not console credentials.
        const analyst = yield* Effect.promise(() => addMember(app, merchant.owner.token, merchant.owner.organizationId, "analyst"))
        const analystApi = yield* clientAs(app, analyst.token)
        expect((yield* analystApi.gamesConsole.retrieve({ path: { gameId: game.id } })).id).toBe(game.id)
        yield* expectFailure(analystApi.gamesConsole.issue({ path: { gameId: game.id }, payload: { customer_id: customer.id } }), "Forbidden")
        yield* expectFailure(
          analystApi.gamesConsole.create({ path: { storeId: merchant.storeId }, payload: { name: "No", type: "spin" } }),
          "Forbidden"
        )
        yield* expectFailure(Effect.flatMap(clientAs(app, merchant.key), (k) => k.gamesConsole.retrieve({ path: { gameId: game.id } })), "Forbidden")
        yield* expectFailure(Effect.flatMap(clientAs(app, merchant.owner.token), (u) => u.games.play({ path: { id: game.id }, payload: { customer_id: customer.id }, headers: {} })), "Forbidden")
      }))

    it.effect("documents its 18 routes in the OpenAPI document, with the HTML pages and the webhook", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const document = yield* Effect.promise(() => app.fetch("/openapi.json").then((response) => response.json() as Promise<any>))
        const expected: Array<[string, string]> = [
          ["get", "/dashboard/stores/{storeId}/games"],
          ["post", "/dashboard/stores/{storeId}/games"],
          ["get", "/dashboard/games/{gameId}"],
          ["put", "/dashboard/games/{gameId}"],
          ["delete", "/dashboard/games/{gameId}"],
          ["post", "/dashboard/games/{gameId}/prizes"],
          ["put", "/dashboard/prizes/{prizeId}"],
          ["delete", "/dashboard/prizes/{prizeId}"],
          ["get", "/dashboard/games/{gameId}/plays"],
          ["get", "/dashboard/games/{gameId}/stats"],
          ["post", "/dashboard/games/{gameId}/issue"],
          ["post", "/v1/games/{id}/play"],
          ["post", "/v1/plays/{id}/reveal"],
          ["get", "/v1/customers/{id}/plays"],
          ["get", "/play/game/{gameId}"],
          ["post", "/play/game/{gameId}/play"],
          ["get", "/play/{playId}"],
          ["post", "/play/{playId}/reveal"]
        ]
        for (const [method, path] of expected) {
          const operation = document.paths[path]?.[method]
          const name = `${method.toUpperCase()} ${path}`
          expect(operation, name).toBeDefined()
          expect(operation.summary, name).toEqual(expect.any(String))
          expect(operation.description, name).toEqual(expect.any(String))
          const request = operation.requestBody?.content?.["application/json"]
          if (request !== undefined) expect(request.example, name).toBeDefined()
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            const json = response.content?.["application/json"]
            if (json !== undefined) expect(json.example, `${name} ${status}`).toBeDefined()
          }
          for (const status of ["405", "413", "415", "500"]) expect(operation.responses[status], `${name} ${status}`).toBeDefined()
        }
        for (const path of ["/play/game/{gameId}", "/play/{playId}"]) {
          expect(Object.keys(document.paths[path].get.responses["200"].content).sort()).toEqual(["application/json", "text/html"])
        }
        for (const dto of ["CreateGameDto", "UpdateGameDto", "PrizeDto", "IssuePlayDto", "PlayDto"]) {
          expect(document.components.schemas[dto], dto).toBeDefined()
        }
        const webhook = document.webhooks["game.prize_awarded"].post.requestBody.content["application/json"]
        expect(webhook.schema.properties.data.properties.object.$ref).toBe("#/components/schemas/Play")
        expect(webhook.example.data.object.object).toBe("play")
      }))

    it.effect("answers every bad input of the issue with a 4xx in the shared shape", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const other = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const foreign = yield* newCustomer(app, other.key)
        const token = merchant.owner.token
        const create = (body: unknown) => call(app, "POST", `/dashboard/stores/${merchant.storeId}/games`, { token, body })
        const expectError = (answer: { status: number; body: any }, status: number, param?: string) => {
          expect(answer.status, JSON.stringify(answer.body)).toBe(status)
          expect(answer.body.error.code).toBe(
            status === 400 ? "invalid_request" : status === 404 ? "not_found" : status === 409 ? "invalid_state" : expect.any(String)
          )
          if (param !== undefined) expect(answer.body.error.param).toBe(param)
        }
        const prize = (extra: Record<string, unknown>) => ({ name: "P", kind: "nothing", weight: 1, ...extra })
        expectError(yield* create({ name: "G", type: "spin", prizes: [prize({ weight: 0 })] }), 400, "prizes.0.weight")
        expectError(yield* create({ name: "G", type: "spin", prizes: [prize({ weight: -2 })] }), 400, "prizes.0.weight")
        expectError(yield* create({ name: "G", type: "spin", prizes: [prize({ weight: 1.5 })] }), 400, "prizes.0.weight")
        expectError(yield* create({ name: "G", type: "spin", prizes: [prize({ inventory: -1 })] }), 400, "prizes.0.inventory")
        expectError(yield* create({ name: "G", type: "spin", prizes: [prize({ kind: "points" })] }), 400, "prizes.0.points")
        expectError(yield* create({ name: "G", type: "spin", prizes: [prize({ points: 5 })] }), 400, "prizes.0.points")
        expectError(yield* create({ name: "G", type: "wheel" }), 400, "type")
        expectError(yield* create({ name: "", type: "spin" }), 400, "name")
        expectError(yield* create({ name: "G", type: "spin", max_plays_per_customer: 0 }), 400, "max_plays_per_customer")
        expectError(yield* create({ name: "G", type: "spin", starts_at: "2027-01-02T00:00:00Z", ends_at: "2027-01-01T00:00:00Z" }), 400, "ends_at")
        expectError(yield* create({ name: "G", type: "spin", starts_at: "yesterday" }), 400, "starts_at")
        expectError(yield* create({ name: "G", type: "spin", surprise: true }), 400, "surprise")

        // A game with no prizes cannot be played (409); an inactive one neither.
        const empty = (yield* create({ name: "Empty", type: "spin" })).body as Game
        expectError(yield* call(app, "POST", `/v1/games/${empty.id}/play`, { token: merchant.key, body: { customer_id: customer.id } }), 409)
        const addBad = (body: unknown) => call(app, "POST", `/dashboard/games/${empty.id}/prizes`, { token, body })
        expectError(yield* addBad(prize({ weight: 0 })), 400, "weight")
        expectError(yield* addBad(prize({ weight: 2.5 })), 400, "weight")
        expectError(yield* addBad(prize({ inventory: -3 })), 400, "inventory")
        const added = (yield* addBad(prize({}))).body as { id: string }
        expectError(yield* call(app, "PUT", `/dashboard/prizes/${added.id}`, { token, body: prize({ weight: -1 }) }), 400, "weight")
        expect((yield* call(app, "PUT", `/dashboard/games/${empty.id}`, { token, body: { active: false } })).status).toBe(200)
        expectError(yield* call(app, "POST", `/v1/games/${empty.id}/play`, { token: merchant.key, body: { customer_id: customer.id } }), 409)
        expectError(yield* call(app, "POST", `/play/game/${empty.id}/play?${playerQuery(customer)}`), 409)

        const open = (yield* create({ name: "Open", type: "spin", prizes: [prize({})] })).body as Game
        // `c` missing (400), of another store's customer even with its token, or without a token (404); an unknown game is 404.
        expectError(yield* call(app, "POST", `/play/game/${open.id}/play`), 400, "c")
        expectError(yield* call(app, "POST", `/play/game/${open.id}/play?${playerQuery(foreign)}`), 404, "c")
        expectError(yield* call(app, "POST", `/play/game/${open.id}/play?c=${customer.id}`), 404, "c")
        expectError(yield* call(app, "POST", `/play/game/${open.id}/play?c=cus_nothing`), 404, "c")
        expectError(yield* call(app, "POST", `/play/game/game_nothing/play?${playerQuery(customer)}`), 404)
        // The merchant API: another store's customer, a missing customer_id, an unknown play.
        expectError(yield* call(app, "POST", `/v1/games/${open.id}/play`, { token: merchant.key, body: { customer_id: foreign.id } }), 404, "customer_id")
        expectError(yield* call(app, "POST", `/v1/games/${open.id}/play`, { token: merchant.key, body: {} }), 400, "customer_id")
        expectError(yield* call(app, "POST", `/v1/plays/play_nothing/reveal`, { token: merchant.key }), 404)
        expectError(yield* call(app, "POST", `/play/play_nothing/reveal`), 404)
        expectError(yield* call(app, "GET", `/v1/customers/${customer.id}/plays?status=won`, { token: merchant.key }), 400, "status")

        // A customer who played (its standing now cached by the process) and is then erased plays no more.
        const player = yield* newCustomer(app, merchant.key)
        expect((yield* call(app, "POST", `/v1/games/${open.id}/play`, { token: merchant.key, body: { customer_id: player.id } })).status).toBe(201)
        expect((yield* call(app, "DELETE", `/dashboard/customers/${player.id}/pii`, { token })).status).toBe(200)
        expectError(yield* call(app, "POST", `/v1/games/${open.id}/play`, { token: merchant.key, body: { customer_id: player.id } }), 409, "customer_id")
      }))
  })
})

const Schema_encodePlay = (play: unknown) => JSON.parse(JSON.stringify(play))
