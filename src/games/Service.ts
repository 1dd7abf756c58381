/**
 * The rules of games: who may see and change which game and prize, the validation the schemas cannot
 * express, the seed (sealed at rest, disclosed once the game ends or is deleted), and the plays, which go
 * through the GameInventory entity of their game (src/games/Entity.ts).
 *
 * The console acts with a user session under the access policy (customer.read to read, marketing.manage to
 * configure and issue); the merchant API with an API key on its own store and mode; the hosted routes with
 * the token of a public link (src/platform/PublicLinks.ts): the customer's token plays for that customer, a
 * card's token opens that play. An id alone opens nothing, and a wrong token answers as an unknown id.
 */
import { ClusterError } from "@effect/cluster"
import { type Array as Arr, Duration, Effect, Option, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { Permission } from "../../domain/Access.ts"
import type { ApiKeyPrincipal } from "../../domain/Auth.ts"
import { GamePlaysFeedSynced, type GamePlaysFeedFrame, PlayRecorded } from "../../domain/Console.ts"
import { GameDrawRecord } from "../../domain/console/Games.ts"
import { InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import { seedCommitment } from "../../domain/GameFairness.ts"
import {
  type CreateGame,
  GameList,
  HostedGameStore,
  DEFAULT_MAX_PLAYS_PER_CUSTOMER,
  HostedPlayer,
  MAX_PRIZES,
  Play,
  PlayList,
  type PlayInput,
  type PlayListParams,
  type PrizeInput,
  type UpdateGame
} from "../../domain/Games.ts"
import type { CustomerId, GameId, PlayId, PrizeId, StoreId } from "../../domain/Ids.ts"
import type { ListParams } from "../../domain/Lists.ts"
import { Schema } from "effect"
import { AccessService, type StoreAccess, storeData, touchesStoreData } from "../access/Service.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { Idempotency, scopeOf } from "../platform/Idempotency.ts"
import { makeMessageBatches } from "../platform/MessageBatches.ts"
import { newId } from "../platform/Ids.ts"
import { pageAfter } from "../platform/Pagination.ts"
import { PublicLinks } from "../platform/PublicLinks.ts"
import { currentDate } from "../platform/Time.ts"
import { StoresService } from "../stores/Service.ts"
import { CustomerStandings } from "../customers/Standings.ts"
import { creditPrize, GameInventoryEntity, type PlayOutcome, type PlayRequest } from "./Entity.ts"
import { type GameRow, GamesRepo, PLAYS_CHANNEL, type PlayViewRow, type PrizeRow } from "./Repo.ts"
import { encodePlay, hasEnded, notPlayableReason, toGame, toHostedGame, toHostedPlay, toPlay, toPrize, toStats } from "./View.ts"
import { traced } from "../platform/Traced.ts"

/** How long one GamePlaysFeed subscription lasts: a client subscribes again, authorized afresh. */
export const GAME_PLAYS_FEED_LIFETIME = Duration.minutes(15)

type InfrastructureError = ClusterError.MailboxFull | ClusterError.AlreadyProcessingMessage | ClusterError.PersistenceError

/** The entity's own failures (mailbox full, persistence trouble) are the infrastructure's, not the client's. */
const infrastructureDies = <A, E, R>(call: Effect.Effect<A, E | InfrastructureError, R>): Effect.Effect<A, Exclude<E, InfrastructureError>, R> =>
  call.pipe(
    Effect.catchIf(
      (error): error is InfrastructureError =>
        error instanceof ClusterError.MailboxFull || error instanceof ClusterError.AlreadyProcessingMessage ||
        error instanceof ClusterError.PersistenceError,
      Effect.die
    )
  ) as never

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/**
 * The play id of an idempotent request: derived from its request token, so a retry that takes over a
 * crashed attempt sends the same message (the same play) again rather than drawing a second time.
 */
export const playIdOfToken = (token: string): PlayId => {
  const digest = createHash("sha256").update(`play:${token}`).digest()
  return `play_${Array.from(digest.subarray(0, 24), (byte) => BASE62[byte % 62]).join("")}` as PlayId
}

/** A new secret seed: 32 random bytes, base64url. */
const newSeed = () => randomBytes(32).toString("base64url")

/** How many games' stores one process remembers for plays. */
const MAX_REMEMBERED_GAMES = 10_000

const decodeNotice = Schema.decodeUnknownOption(Schema.parseJson(Play))

export class GamesService extends Effect.Service<GamesService>()("games/GamesService", {
  scoped: Effect.gen(function*() {
    const repo = storeData(yield* GamesRepo, "inTransaction")
    const access = yield* AccessService
    const idempotency = yield* Idempotency
    const secrets = yield* SecretBox
    const stores = yield* StoresService
    const changeFeed = yield* ChangeFeed
    const inventoryEntity = yield* GameInventoryEntity.client
    /** A game's inventory entity changes the game's data: it is reached with proof of access like the repo. */
    const inventories = (id: GameId) => storeData(inventoryEntity(id))
    /**
     * A game's instant plays from this process go to its entity together (src/platform/MessageBatches.ts):
     * each caller was authorized before handing its play over, so the message is sent as the system's.
     */
    const playTogether = yield* makeMessageBatches((gameId: GameId, plays: Arr.NonEmptyReadonlyArray<PlayRequest>) =>
      inventories(gameId).PlayMany({ plays }).pipe(infrastructureDies, AccessService.asSystem("instant plays their callers were allowed"))
    )
    /** Plays `playId` for `customerId` on `gameId`: a change of the game's data, so it needs the proof of access. */
    const playOn = (gameId: GameId, request: PlayRequest) => touchesStoreData(playTogether(gameId, request))
    const publicLinks = yield* PublicLinks
    const standings = yield* CustomerStandings

    const gameNotFound = (id: string, param = "gameId") => new NotFound({ message: `No such game: ${id}`, param })
    const prizeNotFound = (id: string) => new NotFound({ message: `No such prize: ${id}`, param: "prizeId" })
    const playNotFound = (id: string, param = "id") => new NotFound({ message: `No such play: ${id}`, param })
    const customerNotFound = (id: string, param = "customer_id") => new NotFound({ message: `No such customer: ${id}`, param })

    // ---------------------------------------------------------------------------------------------
    // Access
    // ---------------------------------------------------------------------------------------------

    const gameOfUser = <A, E, R>(id: GameId, permission: Permission, use: (found: GameRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findGame(id), (row) => row.store_id, permission, () => gameNotFound(id), use)
      )

    const prizeOfUser = <A, E, R>(id: PrizeId, permission: Permission, use: (prize: PrizeRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(
          Effect.gen(function*() {
            const prize = yield* repo.findPrize(id)
            if (Option.isNone(prize)) return Option.none<{ readonly prize: PrizeRow; readonly game: GameRow }>()
            return Option.map(yield* repo.findGame(prize.value.game_id), (game) => ({ prize: prize.value, game }))
          }),
          ({ game }) => game.store_id,
          permission,
          () => prizeNotFound(id),
          ({ prize }) => use(prize)
        )
      )

    const storeOfUser = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))

    /** `use` on a game of the API key's store; any other does not exist. */
    const gameOfKey = <A, E, R>(
      id: GameId,
      use: (found: { readonly key: ApiKeyPrincipal; readonly game: GameRow }) => Effect.Effect<A, E, R>
    ) =>
      access.withApiKey((key) =>
        Effect.flatMap(repo.findGame(id), (found): Effect.Effect<A, E | NotFound, R> => {
          const own = Option.filter(found, (row) => row.store_id === key.storeId)
          return Option.isNone(own) ? Effect.fail(gameNotFound(id, "id")) : use({ key, game: own.value })
        }))

    /**
     * A game's store never changes, so a play looks it up once per process rather than once per play; the
     * game's state (active, deleted, its window) is the entity's to check, under the game's lock.
     */
    const storeOfGame = new Map<GameId, StoreId>()
    const ownGame = <A, E, R>(id: GameId, use: (key: ApiKeyPrincipal) => Effect.Effect<A, E, R>) =>
      access.withApiKey((key) =>
        Effect.gen(function*() {
          let storeId = storeOfGame.get(id)
          if (storeId === undefined) {
            const found = yield* repo.findGame(id)
            if (Option.isSome(found)) {
              // A bound on what the process remembers; forgetting only costs a read.
              if (storeOfGame.size >= MAX_REMEMBERED_GAMES) storeOfGame.clear()
              storeOfGame.set(id, storeId = found.value.store_id)
            }
          }
          if (storeId !== key.storeId) return yield* gameNotFound(id, "id")
          return yield* use(key)
        }))

    /**
     * A customer of the store (and mode, when given) who can play; erased customers cannot. Its standing
     * comes from the process's cache of them (src/customers/Standings.ts): every play asks.
     */
    const customerOfStore = (id: CustomerId, storeId: StoreId, livemode: boolean | undefined, param: string) =>
      Effect.gen(function*() {
        const found = Option.filter(
          yield* standings.of(id),
          (row) => row.store_id === storeId && (livemode === undefined || row.livemode === livemode)
        )
        if (Option.isNone(found)) return yield* customerNotFound(id, param)
        if (found.value.erased_at !== null) {
          return yield* new InvalidState({ message: `Customer ${id} was erased and can no longer play`, param })
        }
        return found.value
      })

    // ---------------------------------------------------------------------------------------------
    // Views
    // ---------------------------------------------------------------------------------------------

    /** The seed, disclosed once the game has ended or was deleted; null before. */
    const disclosedSeed = (row: GameRow) =>
      Effect.gen(function*() {
        return hasEnded(row, yield* currentDate) ? yield* secrets.open(row.seed_sealed) : null
      })

    const gameView = (row: GameRow, prizes?: ReadonlyArray<PrizeRow>) =>
      Effect.gen(function*() {
        return toGame(row, prizes ?? (yield* repo.prizesOf([row.id])), yield* disclosedSeed(row))
      })

    const playView = (id: PlayId) =>
      Effect.gen(function*() {
        const found = yield* repo.findPlayView(id)
        if (Option.isNone(found)) return yield* playNotFound(id)
        return toPlay(found.value, yield* publicLinks.urls)
      })

    const playsOf = (rows: ReadonlyArray<PlayViewRow>) =>
      Effect.map(publicLinks.urls, (links) => rows.map((row) => toPlay(row, links)))

    /**
     * Sends the play's points prize on its way to the wallet. A credit that fails here is logged: the
     * `games` outbox consumer sends it again from the committed event.
     */
    const credit = (outcome: PlayOutcome) =>
      creditPrize(outcome).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning(`play ${outcome.playId}: credit deferred to the games consumer`, cause))
      )

    /** The play the entity answered, once its points prize is on its way to the wallet. */
    const settle = (outcome: PlayOutcome) =>
      Effect.zipRight(
        credit(outcome),
        outcome.view === undefined ? playView(outcome.playId) : Effect.map(publicLinks.urls, (links) => toPlay(outcome.view!, links))
      )

    // ---------------------------------------------------------------------------------------------
    // Validation the schemas cannot express
    // ---------------------------------------------------------------------------------------------

    const checkPrize = (input: PrizeInput, param = "") =>
      Effect.gen(function*() {
        const points = input.points ?? null
        if (input.kind === "points" && points === null) {
          return yield* new InvalidRequest({ message: "points is required for a prize of kind points", param: `${param}points` })
        }
        if (input.kind !== "points" && points !== null) {
          return yield* new InvalidRequest({ message: `points must be omitted for a prize of kind ${input.kind}`, param: `${param}points` })
        }
        return points
      })

    const checkWindow = (startsAt: Date | null, endsAt: Date | null) =>
      startsAt !== null && endsAt !== null && endsAt.getTime() <= startsAt.getTime()
        ? Effect.fail(new InvalidRequest({ message: "ends_at must be after starts_at", param: "ends_at" }))
        : Effect.void

    /** Runs a change of the game's prizes under its lock, then snapshots its prize table. */
    const changePrizes = <A, E, R>(gameId: GameId, change: (game: GameRow) => Effect.Effect<A, E, R>) =>
      repo.inTransaction(Effect.gen(function*() {
        const game = Option.getOrThrow(yield* repo.lockGame(gameId))
        if (game.deleted_at !== null) {
          return yield* new InvalidState({ message: `Game ${gameId} was deleted: its prizes can no longer change`, param: "gameId" })
        }
        const result = yield* change(game)
        yield* repo.snapshotTable({ gameId, at: yield* currentDate })
        return result
      }))

    // ---------------------------------------------------------------------------------------------
    // Console: games
    // ---------------------------------------------------------------------------------------------

    const list = traced("Games.list")(function*(storeId: StoreId, params: ListParams) {
      return yield* storeOfUser(storeId, "customer.read", () =>
        Effect.gen(function*() {
          const page = yield* pageAfter(params, (position) => repo.listGames(storeId, params.limit, position))
          const prizes = yield* repo.prizesOf(page.data.map((game) => game.id))
          const data = yield* Effect.forEach(page.data, (game) => gameView(game, prizes.filter((prize) => prize.game_id === game.id)))
          return new GameList({ ...page, data })
        }))
    })

    const create = traced("Games.create")(function*(storeId: StoreId, input: CreateGame) {
      return yield* storeOfUser(storeId, "marketing.manage", () =>
        Effect.gen(function*() {
          const startsAt = input.starts_at ?? null
          const endsAt = input.ends_at ?? null
          yield* checkWindow(startsAt, endsAt)
          const prizeInputs = input.prizes ?? []
          const points = yield* Effect.forEach(prizeInputs, (prize, index) => checkPrize(prize, `prizes.${index}.`))
          const seed = newSeed()
          const at = yield* currentDate
          const id = newId("game")
          const game = yield* repo.inTransaction(Effect.gen(function*() {
            const game = yield* repo.insertGame({
              id,
              store_id: storeId,
              name: input.name,
              type: input.type,
              active: input.active ?? true,
              // Omitted is the default; null is unlimited, asked for.
              max_plays_per_customer: input.max_plays_per_customer === undefined
                ? DEFAULT_MAX_PLAYS_PER_CUSTOMER
                : input.max_plays_per_customer,
              starts_at: startsAt,
              ends_at: endsAt,
              seed_sealed: yield* secrets.seal(seed),
              seed_commitment: yield* seedCommitment(seed),
              prize_version: 0,
              deleted_at: null,
              created_at: at,
              updated_at: at
            })
            // One by one, so each prize's position (the draw order) follows the order sent.
            for (const [index, prize] of prizeInputs.entries()) {
              yield* repo.insertPrize({
                id: newId("prz"),
                game_id: id,
                name: prize.name,
                kind: prize.kind,
                points: points[index] ?? null,
                weight: prize.weight,
                inventory: prize.inventory ?? null,
                awarded: 0,
                active: true,
                created_at: at
              })
            }
            yield* repo.snapshotTable({ gameId: id, at })
            return game
          }))
          return yield* gameView(game)
        }))
    })

    const retrieve = traced("Games.retrieve")(function*(id: GameId) {
      return yield* gameOfUser(id, "customer.read", gameView)
    })

    const update = traced("Games.update")(function*(id: GameId, input: UpdateGame) {
      return yield* gameOfUser(id, "marketing.manage", (current) =>
        Effect.gen(function*() {
          if (current.deleted_at !== null) {
            return yield* new InvalidState({ message: `Game ${id} was deleted: it can no longer change`, param: "gameId" })
          }
          const startsAt = input.starts_at === undefined ? current.starts_at : input.starts_at
          const endsAt = input.ends_at === undefined ? current.ends_at : input.ends_at
          yield* checkWindow(startsAt, endsAt)
          const saved = yield* repo.inTransaction(Effect.gen(function*() {
            const locked = Option.getOrThrow(yield* repo.lockGame(id))
            return yield* repo.saveGame({
              ...locked,
              name: input.name ?? locked.name,
              active: input.active ?? locked.active,
              max_plays_per_customer: input.max_plays_per_customer === undefined
                ? locked.max_plays_per_customer
                : input.max_plays_per_customer,
              starts_at: startsAt,
              ends_at: endsAt,
              updated_at: yield* currentDate
            })
          }))
          return yield* gameView(saved)
        }))
    })

    const remove = traced("Games.remove")(function*(id: GameId) {
      return yield* gameOfUser(id, "marketing.manage", (current) =>
        Effect.gen(function*() {
          if (current.deleted_at !== null) return yield* gameView(current)
          const saved = yield* repo.inTransaction(Effect.gen(function*() {
            const locked = Option.getOrThrow(yield* repo.lockGame(id))
            if (locked.deleted_at !== null) return locked
            const at = yield* currentDate
            return yield* repo.saveGame({ ...locked, active: false, deleted_at: at, updated_at: at })
          }))
          return yield* gameView(saved)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Console: prizes
    // ---------------------------------------------------------------------------------------------

    const addPrize = traced("Games.addPrize")(function*(gameId: GameId, input: PrizeInput) {
      return yield* gameOfUser(gameId, "marketing.manage", () =>
        Effect.gen(function*() {
          const points = yield* checkPrize(input)
          const prize = yield* changePrizes(gameId, () =>
            Effect.gen(function*() {
              const active = (yield* repo.prizesOf([gameId])).filter((prize) => prize.active)
              if (active.length >= MAX_PRIZES) {
                return yield* new InvalidState({ message: `A game has at most ${MAX_PRIZES} prizes`, param: "gameId" })
              }
              return yield* repo.insertPrize({
                id: newId("prz"),
                game_id: gameId,
                name: input.name,
                kind: input.kind,
                points,
                weight: input.weight,
                inventory: input.inventory ?? null,
                awarded: 0,
                active: true,
                created_at: yield* currentDate
              })
            }))
          return toPrize(prize)
        }))
    })

    const updatePrize = traced("Games.updatePrize")(function*(prizeId: PrizeId, input: PrizeInput) {
      return yield* prizeOfUser(prizeId, "marketing.manage", (found) =>
        Effect.gen(function*() {
          const points = yield* checkPrize(input)
          const saved = yield* changePrizes(found.game_id, () =>
            Effect.gen(function*() {
              const prize = Option.getOrThrow(yield* repo.findPrize(prizeId))
              if (!prize.active) {
                return yield* new InvalidState({ message: `Prize ${prizeId} was deleted (deactivated): it can no longer change`, param: "prizeId" })
              }
              const inventory = input.inventory ?? null
              if (inventory !== null && inventory < prize.awarded) {
                return yield* new InvalidState({
                  message: `inventory cannot go below the ${prize.awarded} already awarded`,
                  param: "inventory"
                })
              }
              if (prize.awarded > 0 && (input.kind !== prize.kind || points !== prize.points)) {
                return yield* new InvalidState({
                  message: `Prize ${prizeId} was already awarded: its kind and points cannot change (add a new prize instead)`,
                  param: "kind"
                })
              }
              return yield* repo.savePrize({ ...prize, name: input.name, kind: input.kind, points, weight: input.weight, inventory })
            }))
          return toPrize(saved)
        }))
    })

    const deletePrize = traced("Games.deletePrize")(function*(prizeId: PrizeId) {
      return yield* prizeOfUser(prizeId, "marketing.manage", (found) =>
        Effect.gen(function*() {
          const answered = yield* changePrizes(found.game_id, () =>
            Effect.gen(function*() {
              const prize = Option.getOrThrow(yield* repo.findPrize(prizeId))
              if (prize.awarded > 0) return yield* repo.savePrize({ ...prize, active: false })
              yield* repo.deletePrize(prizeId)
              return prize
            }))
          return toPrize(answered)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Console: plays, stats, scratch cards, live feed
    // ---------------------------------------------------------------------------------------------

    const plays = traced("Games.plays")(function*(gameId: GameId, params: PlayListParams) {
      return yield* gameOfUser(gameId, "customer.read", (game) =>
        Effect.gen(function*() {
          const page = yield* pageAfter(params, (position) => repo.listGamePlays(game.id, params.status ?? null, params.limit, position))
          return new PlayList({ ...page, data: yield* playsOf(page.data) })
        }))
    })

    const stats = traced("Games.stats")(function*(gameId: GameId) {
      return yield* gameOfUser(gameId, "customer.read", (game) =>
        Effect.gen(function*() {
          return toStats(yield* repo.stats(game.id), yield* repo.prizesOf([game.id]))
        }))
    })

    const issue = traced("Games.issue")(function*(gameId: GameId, customerId: CustomerId) {
      return yield* gameOfUser(gameId, "marketing.manage", (game) =>
        Effect.gen(function*() {
          yield* customerOfStore(customerId, game.store_id, undefined, "customer_id")
          const outcome = yield* infrastructureDies(inventories(game.id).Issue({ playId: newId("play"), customerId }))
          return yield* playView(outcome.playId)
        }))
    })

    const playsFeed = traced("Games.playsFeed")(function*(gameId: GameId) {
      return yield* gameOfUser(gameId, "customer.read", (game) =>
        Effect.gen(function*() {
          const frames = Stream.unwrapScoped(Effect.map(changeFeed.subscribe(PLAYS_CHANNEL), (notices) =>
            Stream.concat(
              Stream.succeed<GamePlaysFeedFrame>(new GamePlaysFeedSynced({ reason: "subscribed" })),
              Stream.filterMap(notices, (notice): Option.Option<GamePlaysFeedFrame> =>
                notice._tag === "Resync"
                  ? Option.some(new GamePlaysFeedSynced({ reason: "reconnected" }))
                  : decodeNotice(notice.payload).pipe(
                    Option.filter((play) => play.game_id === game.id),
                    Option.map((play) => new PlayRecorded({ play }))
                  ))
            )))
          return Stream.interruptWhen(frames, Effect.sleep(GAME_PLAYS_FEED_LIFETIME))
        }))
    })

    /**
     * What re-running the game's draws needs: the prize tables and the drawn plays in draw order, with the
     * seed once it is disclosed (the console verifies every draw in the browser from these).
     */
    const drawRecord = traced("Games.drawRecord")(function*(gameId: GameId) {
      return yield* gameOfUser(gameId, "customer.read", (game) =>
        Effect.gen(function*() {
          const tables = yield* repo.tablesOf(game.id)
          const drawn = yield* repo.drawnPlays(game.id)
          return new GameDrawRecord({
            object: "game_draw_record",
            game_id: game.id,
            seed_commitment: game.seed_commitment,
            seed: yield* disclosedSeed(game),
            tables,
            plays: drawn.map((play) => ({ id: play.id, prize_id: play.prize_id, version: play.prize_version }))
          })
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Merchant API
    // ---------------------------------------------------------------------------------------------

    const play = traced("Games.play")(function*(gameId: GameId, input: PlayInput, idempotencyKey: string | undefined) {
      return yield* ownGame(gameId, (key) =>
        Effect.gen(function*() {
          yield* customerOfStore(input.customer_id, key.storeId, key.livemode, "customer_id")
          return yield* idempotency.once(
            scopeOf({ storeId: key.storeId, livemode: key.livemode }, idempotencyKey),
            { operation: "games.play", input: { game: gameId, ...input } },
            201,
            encodePlay,
            (token) =>
              playOn(gameId, { playId: playIdOfToken(token), customerId: input.customer_id }).pipe(Effect.flatMap(settle))
          )
        }))
    })

    const reveal = traced("Games.reveal")(function*(playId: PlayId) {
      return yield* access.withApiKey((key) =>
        Effect.gen(function*() {
          const found = Option.filter(yield* repo.findPlay(playId), (row) => row.store_id === key.storeId && row.livemode === key.livemode)
          if (Option.isNone(found)) return yield* playNotFound(playId)
          const outcome = yield* infrastructureDies(inventories(found.value.game_id).Reveal({ playId }))
          return yield* settle(outcome)
        }))
    })

    const customerPlays = traced("Games.customerPlays")(function*(customerId: CustomerId, params: PlayListParams) {
      return yield* access.withApiKey((key) =>
        Effect.gen(function*() {
          const found = Option.filter(yield* repo.findCustomer(customerId), (row) => row.store_id === key.storeId && row.livemode === key.livemode)
          if (Option.isNone(found)) return yield* customerNotFound(customerId, "id")
          const page = yield* pageAfter(params, (position) => repo.listCustomerPlays(customerId, params.status ?? null, params.limit, position))
          return new PlayList({ ...page, data: yield* playsOf(page.data) })
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Hosted (public)
    // ---------------------------------------------------------------------------------------------

    const storeOf = (storeId: StoreId) =>
      Effect.map(stores.getById(storeId).pipe(Effect.orDie), (store) => new HostedGameStore({ name: store.name, branding: store.branding }))

    const publicGame = (id: GameId) =>
      Effect.flatMap(repo.findGame(id), Option.match({ onNone: () => Effect.fail(gameNotFound(id)), onSome: Effect.succeed }))

    /**
     * The customer `c` of the game's store if `t` is its current public token; None for a missing or wrong
     * pair and for an unknown or foreign customer alike, so a caller cannot tell them apart.
     */
    const playerOf = (game: GameRow, customerId: string | undefined, token: string | undefined) =>
      Effect.gen(function*() {
        if (customerId === undefined || token === undefined) return Option.none()
        return Option.filter(
          yield* repo.findCustomer(customerId),
          (row) => row.store_id === game.store_id && publicLinks.opensCustomer(row.id, row.public_link_version, token)
        )
      })

    const hostedGame = traced("Games.hostedGame")(function*(id: GameId, customerId?: string, token?: string) {
      const game = yield* publicGame(id)
      const now = yield* currentDate
      const prizes = yield* repo.prizesOf([id])
      const customer = yield* playerOf(game, customerId, token)
      const links = yield* publicLinks.urls
      const canPlay = game.type !== "scratch" && notPlayableReason(game, now) === undefined
      const player = Option.isSome(customer) && customer.value.erased_at === null && canPlay
        ? new HostedPlayer({
          play_url: links.instantPlay(game.id, customer.value.id, customer.value.public_link_version),
          wallet_url: links.wallet(customer.value.id, customer.value.public_link_version)
        })
        : null
      return toHostedGame(game, prizes, yield* storeOf(game.store_id), yield* disclosedSeed(game), now, player)
    }, AccessService.forPublicLink("the hosted game page; the player is named only by their customer link"))

    /** The play `playId` as its card shows it, with its game and store (the play was just recorded). */
    const hostedPlayOf = (playId: PlayId) =>
      Effect.gen(function*() {
        const row = Option.getOrThrow(yield* repo.findPlayView(playId))
        const game = Option.getOrThrow(yield* repo.findGame(row.game_id))
        return toHostedPlay(row, game, yield* storeOf(game.store_id), yield* publicLinks.urls)
      })

    /** The play `playId` if `t` is its card's token; a wrong token answers as an unknown play. */
    const cardOf = (playId: PlayId, token: string | undefined) =>
      Effect.gen(function*() {
        const found = Option.filter(
          yield* repo.findPlayView(playId),
          (row) => publicLinks.opensCard(row.id, row.customer_link_version, token)
        )
        if (Option.isNone(found)) return yield* playNotFound(playId, "playId")
        return found.value
      })

    const hostedPlay = traced("Games.hostedPlay")(function*(gameId: GameId, customerId: CustomerId, token: string | undefined) {
      const game = yield* publicGame(gameId)
      const customer = yield* playerOf(game, customerId, token)
      if (Option.isNone(customer)) return yield* customerNotFound(customerId, "c")
      if (customer.value.erased_at !== null) {
        return yield* new InvalidState({ message: `Customer ${customerId} was erased and can no longer play`, param: "c" })
      }
      const outcome = yield* playOn(game.id, { playId: newId("play"), customerId })
      yield* credit(outcome)
      return yield* hostedPlayOf(outcome.playId)
    }, AccessService.forPublicLink("a play from the hosted game page, by the customer's own link"))

    const hostedPlayView = traced("Games.hostedPlayView")(function*(playId: PlayId, token: string | undefined) {
      const card = yield* cardOf(playId, token)
      const game = Option.getOrThrow(yield* repo.findGame(card.game_id))
      return toHostedPlay(card, game, yield* storeOf(game.store_id), yield* publicLinks.urls)
    }, AccessService.forPublicLink("a game card, opened by its card link"))

    const hostedReveal = traced("Games.hostedReveal")(function*(playId: PlayId, token: string | undefined) {
      const card = yield* cardOf(playId, token)
      const outcome = yield* infrastructureDies(inventories(card.game_id).Reveal({ playId }))
      yield* credit(outcome)
      return yield* hostedPlayOf(playId)
    }, AccessService.forPublicLink("a scratch card revealed by its card link"))

    /** The store's instant games open for play now (for the customer's wallet, which links to them). */
    const openInstantGames = traced("Games.openInstantGames")(function*(storeId: StoreId, limit: number) {
      return yield* repo.openInstantGames({ storeId, now: yield* currentDate, limit })
    })

    return {
      list,
      create,
      retrieve,
      update,
      remove,
      addPrize,
      updatePrize,
      deletePrize,
      plays,
      stats,
      issue,
      playsFeed,
      drawRecord,
      play,
      reveal,
      customerPlays,
      hostedGame,
      hostedPlay,
      hostedPlayView,
      hostedReveal,
      openInstantGames
    } as const
  }),
  dependencies: [
    GamesRepo.Default,
    AccessService.Default,
    Idempotency.Default,
    StoresService.Default,
    SecretBox.Default,
    PublicLinks.Default,
    CustomerStandings.Default
  ]
}) {}
