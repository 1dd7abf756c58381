/**
 * The GameInventory entity (id = game id): every draw of a game — an instant play, the reveal of a scratch
 * card — and every issued card is a persisted message to the entity of its game, keyed by the play id, so
 * one game's plays are handled one at a time and a retry, or a replay after a runner crash, is answered
 * once.
 *
 * Each message is one SQL transaction under the game's row lock (so even two runners briefly hosting the
 * same game during a shard move queue on the database): the customer's plays counted, the prize
 * picked by weight among the active prizes with inventory left with HMAC-SHA256(seed, play id)
 * (domain/GameFairness.ts), the unit taken (guarded UPDATE, and a CHECK behind it), the play written, and
 * the `game.prize_awarded` outbox event and the console's play notice — all commit together or not at all.
 * A message replayed after its transaction committed finds its play already there and answers with it.
 *
 * Points prizes reach the wallet after the commit, through the CustomerWallet entity keyed by the play
 * (`credit:game:{playId}`): the service sends the credit as soon as the draw answers, and the `games`
 * outbox consumer below sends it again from the event, so a crash between the two loses nothing and the
 * wallet credits it once.
 */
import { ClusterSchema, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Effect, Layer, Option, Schema } from "effect"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import { draw, drawKey, type DrawKey } from "../../domain/GameFairness.ts"
import { Play, PlayStatus, PrizeKind } from "../../domain/Games.ts"
import { CustomerId, GameId, PlayId, PrizeId } from "../../domain/Ids.ts"
import { CustomerWalletEntity } from "../loyalty/Entity.ts"
import { newVoucherCode } from "../platform/Voucher.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { PublicLinks } from "../platform/PublicLinks.ts"
import { Outbox, OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { currentDate } from "../platform/Time.ts"
import { type GameRow, GamesRepo, type PlayRow, type PlayViewRow, type PrizeRow } from "./Repo.ts"
import { encodePlay, notPlayableReason, toPlay } from "./View.ts"

/** What a message answers: the play, and what the service needs to credit a points prize. */
export const PlayOutcome = Schema.Struct({
  playId: PlayId,
  customerId: CustomerId,
  status: PlayStatus,
  prize: Schema.NullOr(Schema.Struct({
    id: PrizeId,
    name: Schema.String,
    kind: PrizeKind,
    points: Schema.NullOr(Schema.Int)
  }))
})
export type PlayOutcome = typeof PlayOutcome.Type

const Failures = Schema.Union(InvalidState, NotFound)

/** How many customers' store and mode one game's entity keeps in memory. */
const MAX_REMEMBERED_CUSTOMERS = 10_000

/** Messages persisted and uninterruptible, for the reason the payment entity's are (src/payments/Entity.ts). */
export const GameInventoryEntity = Entity.make("GameInventory", [
  /** An instant play of a spin or lucky-draw game. */
  Rpc.make("Play", {
    payload: { playId: PlayId, customerId: CustomerId },
    success: PlayOutcome,
    error: Failures,
    primaryKey: (payload) => payload.playId
  }).annotate(ClusterSchema.Persisted, true),
  /** A scratch card issued to a customer, drawn later by `Reveal`. */
  Rpc.make("Issue", {
    payload: { playId: PlayId, customerId: CustomerId },
    success: PlayOutcome,
    error: Failures,
    primaryKey: (payload) => `issue:${payload.playId}`
  }).annotate(ClusterSchema.Persisted, true),
  /** Draws an issued scratch card; a card already drawn answers as it is. */
  Rpc.make("Reveal", {
    payload: { playId: PlayId },
    success: PlayOutcome,
    error: Failures,
    primaryKey: (payload) => payload.playId
  }).annotate(ClusterSchema.Persisted, true)
]).annotateRpcs(ClusterSchema.Uninterruptible, true)

export const outcomeOf = (view: PlayViewRow): PlayOutcome => ({
  playId: view.id,
  customerId: view.customer_id,
  status: view.status,
  prize: view.prize_id === null || view.prize_kind === null
    ? null
    : { id: view.prize_id, name: view.prize_name ?? "", kind: view.prize_kind, points: view.prize_points }
})

/** What one message's transaction leaves for the entity's caches once it commits. */
interface Committed {
  readonly outcome: PlayOutcome
  /** The game's prizes after the message (null: not read), with the draw count and prize table they match. */
  readonly prizes: { readonly version: number; readonly draws: number; readonly rows: ReadonlyArray<PrizeRow> } | null
}

export const GameInventoryEntityLive = GameInventoryEntity.toLayer(
  Effect.gen(function*() {
    const repo = yield* GamesRepo
    const outbox = yield* Outbox
    const secrets = yield* SecretBox
    const publicLinks = yield* PublicLinks
    // The cluster addresses the entity by the game's id: the one string here that arrives unbranded.
    const gameId = GameId.make((yield* Entity.CurrentAddress).entityId)

    // The seed never changes: its HMAC key is opened once per entity instance.
    let cachedKey: DrawKey | undefined
    const keyOf = (game: GameRow) =>
      cachedKey !== undefined ? Effect.succeed(cachedKey) : Effect.gen(function*() {
        const key = yield* drawKey(yield* secrets.open(game.seed_sealed))
        cachedKey = key
        return key
      })

    /**
     * The game's prizes as the last committed message left them. Every change of them happens under the
     * game's row lock and moves its draw count (a draw) or its prize table version (an edit), so the cache
     * is exact when both match what the lock answers — even after another runner held the game meanwhile.
     */
    let cachedPrizes: Committed["prizes"] = null
    /** A customer's store and mode never change; erasure is checked by the service before sending. */
    const customers = new Map<string, { readonly store_id: string; readonly livemode: boolean }>()

    const gameNotFound = () => new NotFound({ message: `No such game: ${gameId}`, param: "id" })
    const refuse = (message: string, param = "id") => new InvalidState({ message, param })

    /** Locks the game for this message, taking its next draw place; says whether `playId` is a replay. */
    const lockGame = (playId: PlayId) =>
      Effect.flatMap(
        repo.lockForDraw({ gameId, playId }),
        Option.match({ onNone: () => Effect.fail(gameNotFound()), onSome: Effect.succeed })
      )

    /** The game's active prizes in draw order (from the cache when it is current), refusing a game with none. */
    const activePrizes = (game: GameRow & { readonly draws: number }) =>
      Effect.gen(function*() {
        const cached = cachedPrizes
        const rows = cached !== null && cached.version === game.prize_version && cached.draws === game.draws - 1
          ? cached.rows
          : (yield* repo.prizesOf([gameId])).filter((prize) => prize.active)
        if (rows.length === 0) return yield* refuse(`Game ${gameId} has no prizes`)
        return rows
      })

    /** The play as it committed (built from what the transaction wrote), for the answer, outbox and feed. */
    const viewOf = (play: PlayRow, game: GameRow, prize: PrizeRow | null, customerLinkVersion: number): PlayViewRow => ({
      ...play,
      seed_commitment: game.seed_commitment,
      prize_name: prize?.name ?? null,
      prize_kind: prize?.kind ?? null,
      prize_points: prize?.points ?? null,
      prize_weight: prize?.weight ?? null,
      prize_inventory: prize?.inventory ?? null,
      prize_awarded: prize?.awarded ?? null,
      prize_active: prize?.active ?? null,
      prize_created_at: prize?.created_at ?? null,
      customer_link_version: customerLinkVersion
    })

    const replayedView = (playId: PlayId) =>
      Effect.flatMap(
        repo.findPlayView(playId),
        Option.match({ onNone: () => Effect.dieMessage(`play ${playId} was recorded but cannot be read`), onSome: Effect.succeed })
      )

    /** Announces a recorded play: the console feed always, the webhook when a prize was won. */
    const announce = (view: PlayViewRow, at: Date) =>
      Effect.gen(function*() {
        const play = encodePlay(toPlay(view, yield* publicLinks.urls))
        yield* repo.notifyPlay(JSON.stringify(play))
        if (view.prize_kind !== null && view.prize_kind !== "nothing") {
          yield* outbox.emit({ storeId: view.store_id, livemode: view.livemode, type: "game.prize_awarded", object: play, at })
        }
      })

    /**
     * Draws for `playId` among the game's active prizes with inventory left (the game is locked) and takes the
     * unit of the prize drawn: the prize (as it is after the award), its voucher code, and the prizes after.
     */
    const drawFor = (game: GameRow, prizes: ReadonlyArray<PrizeRow>, playId: PlayId) =>
      Effect.gen(function*() {
        const key = yield* keyOf(game)
        const candidates = prizes.map((prize) => ({
          id: prize.id,
          weight: prize.weight,
          remaining: prize.inventory === null ? null : prize.inventory - prize.awarded
        }))
        const picked = yield* draw(key, playId, candidates)
        if (picked === null) return { prize: null, voucherCode: null, prizes }
        const taken = yield* repo.awardUnit(picked.id)
        // Under the game's lock the prizes read are current: losing the unit here is a bug, not a race.
        if (Option.isNone(taken)) return yield* Effect.dieMessage(`prize ${picked.id} had no unit left under the game's lock`)
        return {
          prize: taken.value,
          voucherCode: taken.value.kind === "voucher" ? newVoucherCode() : null,
          prizes: prizes.map((prize) => (prize.id === taken.value.id ? taken.value : prize))
        }
      })

    /** The customer `customerId` of the game's store (the service checked the caller may name it). */
    const customerOf = (game: GameRow, customerId: CustomerId) =>
      Effect.gen(function*() {
        const known = customers.get(customerId)
        if (known !== undefined && known.store_id === game.store_id) return known
        const found = Option.filter(yield* repo.findCustomer(customerId), (row) => row.store_id === game.store_id)
        if (Option.isNone(found)) return yield* new NotFound({ message: `No such customer: ${customerId}`, param: "customer_id" })
        if (found.value.erased_at !== null) return yield* refuse(`Customer ${customerId} was erased`, "customer_id")
        // A bound on what one busy game remembers; forgetting only costs a read.
        if (customers.size >= MAX_REMEMBERED_CUSTOMERS) customers.clear()
        customers.set(customerId, { store_id: found.value.store_id, livemode: found.value.livemode })
        return found.value
      })

    const takeSlot = (game: GameRow, customerId: CustomerId) =>
      Effect.gen(function*() {
        const max = game.max_plays_per_customer
        // Unlimited: nothing to count.
        if (max === null) return
        if ((yield* repo.playsOfCustomer({ gameId, customerId })) >= max) {
          return yield* refuse(`Customer ${customerId} has played game ${gameId} the most times allowed (${max})`, "customer_id")
        }
      })

    /** Runs one message's transaction; once it commits, the caches take what it left. */
    const commit = (transaction: Effect.Effect<Committed, InvalidState | NotFound>) =>
      repo.inTransaction(transaction).pipe(
        Effect.tap((committed) => Effect.sync(() => {
          cachedPrizes = committed.prizes
        })),
        Effect.map((committed) => committed.outcome)
      )

    const play = (playId: PlayId, customerId: CustomerId) =>
      commit(Effect.gen(function*() {
        const game = yield* lockGame(playId)
        // Recorded before its reply was stored: the same play again.
        if (game.replayed) return { outcome: outcomeOf(yield* replayedView(playId)), prizes: null }
        const now = yield* currentDate
        const reason = notPlayableReason(game, now)
        if (reason !== undefined) return yield* refuse(reason)
        if (game.type === "scratch") {
          return yield* refuse(`Game ${gameId} is a scratch game: issue cards with POST /dashboard/games/{id}/issue`)
        }
        const customer = yield* customerOf(game, customerId)
        const prizes = yield* activePrizes(game)
        yield* takeSlot(game, customerId)
        const drawn = yield* drawFor(game, prizes, playId)
        const row: PlayRow = {
          id: playId,
          game_id: gameId,
          store_id: game.store_id,
          livemode: customer.livemode,
          customer_id: customerId,
          status: "played",
          prize_id: drawn.prize?.id ?? null,
          voucher_code: drawn.voucherCode,
          draw_seq: game.draws,
          prize_version: game.prize_version,
          created_at: now,
          revealed_at: now
        }
        const view = viewOf(row, game, drawn.prize, yield* repo.insertPlay(row))
        yield* announce(view, now)
        return { outcome: outcomeOf(view), prizes: { version: game.prize_version, draws: game.draws, rows: drawn.prizes } }
      }))

    const issue = (playId: PlayId, customerId: CustomerId) =>
      commit(Effect.gen(function*() {
        const game = yield* lockGame(playId)
        if (game.replayed) return { outcome: outcomeOf(yield* replayedView(playId)), prizes: null }
        const now = yield* currentDate
        const reason = notPlayableReason(game, now)
        if (reason !== undefined) return yield* refuse(reason)
        if (game.type !== "scratch") {
          return yield* refuse(`Game ${gameId} is a ${game.type} game: only scratch games issue cards; play it instead`)
        }
        const customer = yield* customerOf(game, customerId)
        const prizes = yield* activePrizes(game)
        yield* takeSlot(game, customerId)
        const row: PlayRow = {
          id: playId,
          game_id: gameId,
          store_id: game.store_id,
          livemode: customer.livemode,
          customer_id: customerId,
          status: "issued",
          prize_id: null,
          voucher_code: null,
          draw_seq: null,
          prize_version: null,
          created_at: now,
          revealed_at: null
        }
        const view = viewOf(row, game, null, yield* repo.insertPlay(row))
        yield* announce(view, now)
        return { outcome: outcomeOf(view), prizes: { version: game.prize_version, draws: game.draws, rows: prizes } }
      }))

    const reveal = (playId: PlayId) =>
      commit(Effect.gen(function*() {
        const game = yield* lockGame(playId)
        const found = Option.filter(yield* repo.lockPlay(playId), (row) => row.game_id === gameId)
        if (Option.isNone(found)) return yield* new NotFound({ message: `No such play: ${playId}`, param: "id" })
        // Revealed before (or an instant play): the same result again.
        if (found.value.status !== "issued") return { outcome: outcomeOf(yield* replayedView(playId)), prizes: null }
        if (game.deleted_at !== null) return yield* refuse(`Game ${gameId} was deleted`)
        const prizes = yield* activePrizes(game)
        const now = yield* currentDate
        const drawn = yield* drawFor(game, prizes, playId)
        const row: PlayRow = {
          ...found.value,
          status: "revealed",
          prize_id: drawn.prize?.id ?? null,
          voucher_code: drawn.voucherCode,
          draw_seq: game.draws,
          prize_version: game.prize_version,
          revealed_at: now
        }
        const view = viewOf(row, game, drawn.prize, yield* repo.markDrawn(row))
        yield* announce(view, now)
        return { outcome: outcomeOf(view), prizes: { version: game.prize_version, draws: game.draws, rows: drawn.prizes } }
      }))

    return GameInventoryEntity.of({
      Play: ({ payload }) => play(payload.playId, payload.customerId),
      Issue: ({ payload }) => issue(payload.playId, payload.customerId),
      Reveal: ({ payload }) => reveal(payload.playId)
    })
  }),
  { maxIdleTime: "2 minutes" }
).pipe(Layer.provide([GamesRepo.Default, SecretBox.Default, PublicLinks.Default]))

// ---------------------------------------------------------------------------------------------
// Points prizes to wallets
// ---------------------------------------------------------------------------------------------

/**
 * Credits a points prize of a play to the customer's wallet, once per play whatever is replayed (the wallet
 * message's primary key is `credit:game:{playId}`). A wallet that refuses (erased, at its maximum) is
 * logged, not retried.
 */
export const creditPrize = (outcome: PlayOutcome) =>
  Effect.gen(function*() {
    const prize = outcome.prize
    if (prize === null || prize.kind !== "points" || prize.points === null || prize.points <= 0) return
    const wallets = yield* CustomerWalletEntity.client
    yield* wallets(outcome.customerId).Credit({
      type: "game",
      key: outcome.playId,
      points: prize.points,
      reason: `Game prize: ${prize.name}`
    }).pipe(
      Effect.asVoid,
      Effect.catchTags({
        InvalidState: (error) => Effect.logWarning(`play ${outcome.playId}: points refused by the wallet`, error),
        NotFound: (error) => Effect.logWarning(`play ${outcome.playId}: wallet not found`, error)
      })
    )
  })

/**
 * What the consumer reads of the event's play; events written before plays had a `card_url` decode too
 * (a Struct ignores the fields it does not name).
 */
const decodePlay = Schema.decodeUnknown(Schema.Struct({
  id: Play.fields.id,
  customer_id: Play.fields.customer_id,
  status: Play.fields.status,
  prize: Play.fields.prize
}))

/** The `games` consumer: every `game.prize_awarded` event's points reach the wallet (the repair path). */
export const applyPrizeAwarded = (event: OutboxEvent) =>
  Effect.gen(function*() {
    const play = yield* Effect.orDie(decodePlay(event.object))
    if (play.prize === null) return
    yield* creditPrize({
      playId: play.id,
      customerId: play.customer_id,
      status: play.status,
      prize: { id: play.prize.id, name: play.prize.name, kind: play.prize.kind, points: play.prize.points }
    })
  })

const customerOfEvent = (event: OutboxEvent) => {
  const object = event.object as { readonly customer_id?: unknown } | null
  return typeof object?.customer_id === "string" ? object.customer_id : event.storeId
}

/** The consumer's name in `outbox_pending`, and the events it is subscribed to. */
export const GAMES_CONSUMER = "games"
export const GAME_PRIZE_EVENTS = ["game.prize_awarded"] as const

export const GamePrizeCreditsLive = OutboxConsumer.make(GAMES_CONSUMER, {
  types: GAME_PRIZE_EVENTS,
  keyOf: customerOfEvent,
  apply: applyPrizeAwarded
})
