/**
 * The GameInventory entity's rules, in-process: a prize is never awarded past its inventory however many plays
 * race, a customer's play limit holds under races, a replayed play answers its first result, and a scratch card
 * reveals once.
 */
import { Entity } from "@effect/cluster"
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { seedCommitment } from "../../domain/GameFairness.ts"
import type { CustomerId, GameId, PlayId, StoreId } from "../../domain/Ids.ts"
import { GameInventoryEntity, GameInventoryEntityLive, type PlayOutcome } from "../../src/games/Entity.ts"
import { GamesRepo } from "../../src/games/Repo.ts"
import { SecretBox } from "../../src/platform/Crypto.ts"
import { newId } from "../../src/platform/Ids.ts"
import { Outbox } from "../../src/platform/Outbox.ts"
import { inProcessLayer, seedStore } from "../support/InProcess.ts"

const entityLayer = GameInventoryEntityLive.pipe(Layer.provide(Outbox.Default))

interface PrizeSeed {
  readonly name: string
  readonly kind: "points" | "voucher" | "nothing"
  readonly points: number | null
  readonly weight: number
  readonly inventory: number | null
}

/** A game written as the service writes one: sealed seed, its commitment, prizes in order, the prize table. */
const seedGame = (
  storeId: StoreId,
  options: { readonly type: "spin" | "scratch"; readonly maxPlays: number | null; readonly prizes: ReadonlyArray<PrizeSeed> }
) =>
  Effect.gen(function*() {
    const repo = yield* GamesRepo
    const secrets = yield* SecretBox
    const seed = randomBytes(32).toString("base64url")
    const id = newId("game") as GameId
    const at = new Date()
    yield* repo.inTransaction(Effect.gen(function*() {
      yield* repo.insertGame({
        id,
        store_id: storeId,
        name: "Lucky wheel",
        type: options.type,
        active: true,
        max_plays_per_customer: options.maxPlays,
        starts_at: null,
        ends_at: null,
        seed_sealed: yield* secrets.seal(seed),
        seed_commitment: yield* seedCommitment(seed),
        prize_version: 0,
        deleted_at: null,
        created_at: at,
        updated_at: at
      })
      for (const prize of options.prizes) {
        yield* repo.insertPrize({ id: newId("prz"), game_id: id, ...prize, awarded: 0, active: true, created_at: at })
      }
      yield* repo.snapshotTable({ gameId: id, at })
    }))
    return id
  }).pipe(Effect.provide(Layer.mergeAll(GamesRepo.Default, SecretBox.Default)))

const seedCustomer = (storeId: StoreId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = newId("cus") as CustomerId
    yield* sql`
      INSERT INTO customers (id, store_id, livemode, metadata, preferences_updated_at, created_at, updated_at)
      VALUES (${id}, ${storeId}, false, '{}'::jsonb, now(), now(), now())`
    return id
  }).pipe(Effect.orDie)

const awardedOf = (gameId: GameId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ name: string; awarded: number }>`SELECT name, awarded FROM game_prizes WHERE game_id = ${gameId} ORDER BY position`)
    .pipe(Effect.orDie)

/** What a play drew, without the view's prize counters (read back, they are the prize's current ones). */
const drawOf = (outcome: PlayOutcome) => ({
  playId: outcome.playId,
  customerId: outcome.customerId,
  status: outcome.status,
  prize: outcome.prize,
  voucher_code: outcome.view?.voucher_code,
  draw_seq: outcome.view?.draw_seq
})

describe("GameInventory entity (in-process)", () => {
  layer(inProcessLayer, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.scoped("racing plays never award a prize past its inventory", () =>
      Effect.gen(function*() {
        const games = yield* Entity.makeTestClient(GameInventoryEntity, entityLayer)
        const { storeId } = yield* seedStore
        // Only one prize, heavily weighted: every play wants it while any is left.
        const gameId = yield* seedGame(storeId, {
          type: "spin",
          maxPlays: null,
          prizes: [{ name: "Free drink", kind: "voucher", points: null, weight: 1_000, inventory: 5 }]
        })
        const customers = yield* Effect.forEach(Array.from({ length: 8 }), () => seedCustomer(storeId))
        const game = yield* games(gameId)
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 24 }, (_, i) => i),
          (i) => game.Play({ playId: newId("play") as PlayId, customerId: customers[i % customers.length]! }),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((outcome) => outcome.prize !== null)).toHaveLength(5)
        expect(yield* awardedOf(gameId)).toEqual([{ name: "Free drink", awarded: 5 }])
      }))

    it.scoped("a customer's play limit holds however many plays race", () =>
      Effect.gen(function*() {
        const games = yield* Entity.makeTestClient(GameInventoryEntity, entityLayer)
        const { storeId } = yield* seedStore
        const gameId = yield* seedGame(storeId, {
          type: "spin",
          maxPlays: 3,
          prizes: [{ name: "Better luck", kind: "nothing", points: null, weight: 1, inventory: null }]
        })
        const customerId = yield* seedCustomer(storeId)
        const game = yield* games(gameId)
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 10 }),
          () => Effect.either(game.Play({ playId: newId("play") as PlayId, customerId })),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter(Either.isRight)).toHaveLength(3)
        for (const refused of outcomes.filter(Either.isLeft)) expect(refused.left._tag).toBe("InvalidState")
      }))

    it.scoped("plays sent together are answered each in order: made, refused past the limit, a repeat as made", () =>
      Effect.gen(function*() {
        const games = yield* Entity.makeTestClient(GameInventoryEntity, entityLayer)
        const { storeId } = yield* seedStore
        const gameId = yield* seedGame(storeId, {
          type: "spin",
          maxPlays: 2,
          prizes: [{ name: "Free drink", kind: "voucher", points: null, weight: 1, inventory: null }]
        })
        const [limited, other] = yield* Effect.forEach([1, 2], () => seedCustomer(storeId))
        const game = yield* games(gameId)
        const plays = Array.from({ length: 3 }, () => ({ playId: newId("play") as PlayId, customerId: limited! }))
        const repeated = plays[0]!
        const otherPlay = { playId: newId("play") as PlayId, customerId: other! }
        const answers = yield* game.PlayMany({ plays: [plays[0]!, plays[1]!, plays[2]!, otherPlay, repeated] })

        expect(answers).toHaveLength(5)
        const [first, second, third, fourth, fifth] = answers
        expect(Either.getOrThrow(first!).playId).toBe(plays[0]!.playId)
        expect(Either.getOrThrow(second!).playId).toBe(plays[1]!.playId)
        // The limit of two plays is the customer's own: the third is refused, the other customer's play is made.
        expect(Either.isLeft(third!) && third.left._tag).toBe("InvalidState")
        expect(Either.getOrThrow(fourth!).customerId).toBe(other)
        // The same play twice in one message is made once and answered twice alike (the view of a play read
        // back has its prize as it is now, so the play itself is compared).
        expect(drawOf(Either.getOrThrow(fifth!))).toEqual(drawOf(Either.getOrThrow(first!)))
        expect(yield* awardedOf(gameId)).toEqual([{ name: "Free drink", awarded: 3 }])

        // Sent again (a retry of the whole message), every play answers as it was made; nothing is drawn again.
        const again = yield* game.PlayMany({ plays: [plays[0]!, plays[1]!, otherPlay] })
        expect(again.map((answer) => drawOf(Either.getOrThrow(answer)))).toEqual(
          [first, second, fourth].map((answer) => drawOf(Either.getOrThrow(answer!)))
        )
        expect(yield* awardedOf(gameId)).toEqual([{ name: "Free drink", awarded: 3 }])
      }))

    it.scoped("a replayed play answers its first result; a scratch card reveals once", () =>
      Effect.gen(function*() {
        const games = yield* Entity.makeTestClient(GameInventoryEntity, entityLayer)
        const { storeId } = yield* seedStore
        const spinId = yield* seedGame(storeId, {
          type: "spin",
          maxPlays: null,
          prizes: [
            { name: "10 points", kind: "points", points: 10, weight: 1, inventory: 100 },
            { name: "Better luck", kind: "nothing", points: null, weight: 1, inventory: null }
          ]
        })
        const customerId = yield* seedCustomer(storeId)
        const spin = yield* games(spinId)
        const playId = newId("play") as PlayId
        const first = yield* spin.Play({ playId, customerId })
        const again = yield* spin.Play({ playId, customerId })
        expect(again).toEqual(first)
        const awarded = (yield* awardedOf(spinId)).reduce((sum, prize) => sum + prize.awarded, 0)
        // Whatever it drew (a "nothing" prize counts too), the draw was taken once.
        expect(awarded).toBe(1)

        const scratchId = yield* seedGame(storeId, {
          type: "scratch",
          maxPlays: null,
          prizes: [{ name: "Free drink", kind: "voucher", points: null, weight: 1, inventory: 1 }]
        })
        const scratch = yield* games(scratchId)
        const cardId = newId("play") as PlayId
        const issued = yield* scratch.Issue({ playId: cardId, customerId })
        expect(issued.status).toBe("issued")
        const reveals = yield* Effect.forEach(Array.from({ length: 5 }), () => scratch.Reveal({ playId: cardId }), {
          concurrency: "unbounded"
        })
        for (const reveal of reveals) expect(reveal).toEqual(reveals[0])
        expect(reveals[0]!.status).toBe("revealed")
        expect(yield* awardedOf(scratchId)).toEqual([{ name: "Free drink", awarded: 1 }])
      }))
  })
})
