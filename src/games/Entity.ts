/**
 * The GameInventory entity (id = game id): every draw of a game — an instant play, the reveal of a scratch
 * card — and every issued card is a message to the entity of its game, keyed by the play id, so one game's
 * plays are handled one at a time and a retry, or a replay after a runner crash, is answered once.
 *
 * What makes a play once is its play id: the play row's primary key, checked under the game's lock. So the
 * messages are not stored in the cluster's message table: a message sent again — a caller's retry with its
 * Idempotency-Key, or the cluster's own resend to the game's next runner when the one it went to died —
 * finds its play and answers with it. Storing each message and its reply cost five statements per play
 * (the message, the reply's transaction) for a guarantee the play row already gives; a play whose
 * request died with its runner was never answered, and its caller's retry applies it once.
 *
 * The entity takes its messages as they come (many at once) and applies them one after another through
 * a queue of its own: the instant plays waiting together are applied as one batch, in one SQL transaction
 * under the game's row lock (so even two runners briefly hosting the same game during a shard move queue
 * on the database) whose statements do not grow with the batch: the game locked with its draw places
 * taken, the customers' plays counted, each prize picked by weight among the active prizes with inventory
 * left with HMAC-SHA256(seed, play id) (domain/GameFairness.ts) in order, the units taken (guarded UPDATE,
 * and a CHECK behind it), the plays written, and the `game.prize_awarded` outbox events and the console's
 * play notices — all commit together or not at all. A play refused (the customer's limit reached, an
 * erased customer) is answered with its refusal and takes nothing; the others of its batch go on. Issuing
 * and revealing scratch cards are one transaction each, in the same queue. A message replayed after its
 * transaction committed finds its play already there and answers with it.
 *
 * Why a batch: one game's messages are applied one at a time, so its rate is one over the time a message
 * holds the game; a transaction per play held it for seven round trips, a batch holds it for seven
 * round trips whatever number of plays waited.
 *
 * Points prizes reach the wallet after the commit, through the CustomerWallet entity keyed by the play
 * (`credit:game:{playId}`): the service sends the credit as soon as the draw answers, and the `games`
 * outbox consumer below sends it again from the event, so a crash between the two loses nothing and the
 * wallet credits it once.
 */
import { ClusterSchema, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Array as Arr, Deferred, Effect, Exit, Layer, Option, Schema } from "effect"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import { draw, drawKey, type DrawKey } from "../../domain/GameFairness.ts"
import { Play, PlayStatus, PrizeKind } from "../../domain/Games.ts"
import { CustomerId, GameId, PlayId, PrizeId } from "../../domain/Ids.ts"
import { CustomerWalletEntity } from "../loyalty/Entity.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { makeEntityQueue, type Pending } from "../platform/EntityQueue.ts"
import { newVoucherCode } from "../platform/Voucher.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { PublicLinks } from "../platform/PublicLinks.ts"
import { Outbox, OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { currentDate } from "../platform/Time.ts"
import { type GameRow, GamesRepo, type PlayRow, PlayViewRow, PLAYS_CHANNEL, type PrizeRow } from "./Repo.ts"
import { encodePlay, notPlayableReason, toPlay } from "./View.ts"

/** A play as it committed, as a reply carries it (its dates encoded for storage). */
export const PlayViewState = Schema.Struct({
  ...PlayViewRow.fields,
  created_at: Schema.Date,
  revealed_at: Schema.NullOr(Schema.Date),
  prize_created_at: Schema.NullOr(Schema.Date)
})

/**
 * What a message answers: the play, what the service needs to credit a points prize, and the play as it
 * committed, so the service answers without reading it again (absent only from replies stored before it
 * was carried; the service then reads the play).
 */
export const PlayOutcome = Schema.Struct({
  playId: PlayId,
  customerId: CustomerId,
  status: PlayStatus,
  prize: Schema.NullOr(Schema.Struct({
    id: PrizeId,
    name: Schema.String,
    kind: PrizeKind,
    points: Schema.NullOr(Schema.Int)
  })),
  view: Schema.optional(PlayViewState)
})
export type PlayOutcome = typeof PlayOutcome.Type

const Failures = Schema.Union(InvalidState, NotFound)

/** One instant play as the entity takes it: the play to make, and for whom. */
export const PlayRequest = Schema.Struct({ playId: PlayId, customerId: CustomerId })
export type PlayRequest = typeof PlayRequest.Type

/** How many customers' store and mode one game's entity keeps in memory. */
const MAX_REMEMBERED_CUSTOMERS = 10_000

/**
 * Messages uninterruptible, for the reason the payment entity's are (src/payments/Entity.ts): a caller
 * that stops waiting does not stop the draw it asked for.
 */
export const GameInventoryEntity = Entity.make("GameInventory", [
  /**
   * An instant play of a spin or lucky-draw game. The service sends its plays with `PlayMany`; this one
   * answers runners of the version before it while a cluster is upgraded, and tests.
   */
  Rpc.make("Play", {
    payload: PlayRequest.fields,
    success: PlayOutcome,
    error: Failures,
    primaryKey: (payload) => payload.playId
  }),
  /**
   * Instant plays sent together (src/platform/MessageBatches.ts): applied next to each other in the game's
   * queue, each answered with its own outcome or refusal, in order. No primary key: each play is made once
   * by its play id, and a retried play must not make the plays sent beside it fail as duplicates.
   */
  Rpc.make("PlayMany", {
    payload: { plays: Schema.NonEmptyArray(PlayRequest) },
    success: Schema.Array(Schema.Either({ right: PlayOutcome, left: Failures }))
  }),
  /** A scratch card issued to a customer, drawn later by `Reveal`. */
  Rpc.make("Issue", {
    payload: { playId: PlayId, customerId: CustomerId },
    success: PlayOutcome,
    error: Failures,
    primaryKey: (payload) => `issue:${payload.playId}`
  }),
  /** Draws an issued scratch card; a card already drawn answers as it is. */
  Rpc.make("Reveal", {
    payload: { playId: PlayId },
    success: PlayOutcome,
    error: Failures,
    primaryKey: (payload) => payload.playId
  })
]).annotateRpcs(ClusterSchema.Uninterruptible, true)

/** The answer of a play, with the play itself. */
export const outcomeOf = (view: PlayViewRow): PlayOutcome => ({
  playId: view.id,
  customerId: view.customer_id,
  status: view.status,
  prize: view.prize_id === null || view.prize_kind === null
    ? null
    : { id: view.prize_id, name: view.prize_name ?? "", kind: view.prize_kind, points: view.prize_points },
  view
})

type Refusal = InvalidState | NotFound

/** An instant play waiting in its game's queue (src/platform/EntityQueue.ts): applied with the plays waiting beside it. */
interface PlayJob extends PlayRequest {
  readonly _tag: "Play"
}

const playJob = (play: PlayRequest): PlayJob => ({ _tag: "Play", playId: play.playId, customerId: play.customerId })

/** A message applied in a transaction of its own (issuing or revealing a scratch card). */
interface AloneJob {
  readonly _tag: "Alone"
  readonly transaction: Effect.Effect<Committed, Refusal>
}

type Job = PlayJob | AloneJob

/** The prizes as a draw weighs them: each with its weight and the units it has left (null: unlimited). */
const candidatesOf = (prizes: ReadonlyArray<PrizeRow>) =>
  prizes.map((prize) => ({
    id: prize.id,
    weight: prize.weight,
    remaining: prize.inventory === null ? null : prize.inventory - prize.awarded
  }))

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
    const changeFeed = yield* ChangeFeed
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

    /**
     * The game's active prizes in draw order (from the cache when it is current), refusing a game with none;
     * `taken` is how many draw places the lock just took.
     */
    const activePrizes = (game: GameRow & { readonly draws: number }, taken = 1) =>
      Effect.gen(function*() {
        const cached = cachedPrizes
        const rows = cached !== null && cached.version === game.prize_version && cached.draws === game.draws - taken
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
        yield* changeFeed.announce(PLAYS_CHANNEL, JSON.stringify(play))
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
        const picked = yield* draw(key, playId, candidatesOf(prizes))
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
    const commit = (transaction: Effect.Effect<Committed, Refusal>) =>
      repo.inTransaction(transaction).pipe(
        Effect.tap((committed) => Effect.sync(() => {
          cachedPrizes = committed.prizes
        })),
        Effect.map((committed) => committed.outcome)
      )

    /**
     * One batch of instant plays (see the module's comment): one transaction, in which each play is drawn
     * in the batch's order against the prizes as the plays before it left them. Answers each play's exit,
     * in the jobs' order, and the prizes after the batch for the cache.
     */
    const playBatch = (jobs: Arr.NonEmptyReadonlyArray<PlayJob>) =>
      repo.inTransaction(Effect.gen(function*() {
        const locked = yield* repo.lockForDraws({ gameId, playIds: Arr.map(jobs, (job) => job.playId) })
        if (Option.isNone(locked)) {
          return { exits: jobs.map(() => Exit.fail(gameNotFound())), prizes: null }
        }
        const { replayed, ...game } = locked.value
        const recorded = new Set<string>(replayed)
        const placesBefore = game.draws - jobs.length
        const now = yield* currentDate
        let closed: Refusal | undefined = undefined
        const reason = notPlayableReason(game, now)
        if (reason !== undefined) closed = refuse(reason)
        else if (game.type === "scratch") {
          closed = refuse(`Game ${gameId} is a scratch game: issue cards with POST /dashboard/games/{id}/issue`)
        }

        // The prizes as the batch goes, and each customer's plays (counted only under a limit).
        let prizes: ReadonlyArray<PrizeRow> = []
        if (closed === undefined) {
          const active = yield* Effect.either(activePrizes(game, jobs.length))
          if (active._tag === "Left") closed = active.left
          else prizes = active.right
        }
        const max = game.max_plays_per_customer
        const playsSoFar = new Map<string, number>()
        const fresh = jobs.filter((job) => !recorded.has(job.playId))
        if (closed === undefined && max !== null && Arr.isNonEmptyReadonlyArray(fresh)) {
          const counted = yield* repo.playsOfCustomers({ gameId, customerIds: Arr.map(fresh, (job) => job.customerId) })
          for (const row of counted) playsSoFar.set(row.customer_id, row.plays)
        }

        // Each job's exit; a play made in this batch is answered once it is written, a replay once read.
        const exits: Array<Exit.Exit<PlayOutcome, Refusal> | "replay" | "made"> = []
        const made: Array<{ readonly index: number; readonly row: PlayRow; readonly prize: PrizeRow | null }> = []
        const awards = new Map<string, number>()
        for (const [index, job] of jobs.entries()) {
          // Recorded before (its reply was not stored), or twice in this batch: answered as recorded, below.
          if (recorded.has(job.playId)) {
            exits.push("replay")
            continue
          }
          recorded.add(job.playId)
          if (closed !== undefined) {
            exits.push(Exit.fail(closed))
            continue
          }
          const customer = yield* Effect.either(customerOf(game, job.customerId))
          if (customer._tag === "Left") {
            exits.push(Exit.fail(customer.left))
            continue
          }
          if (max !== null) {
            const plays = playsSoFar.get(job.customerId) ?? 0
            if (plays >= max) {
              exits.push(Exit.fail(refuse(`Customer ${job.customerId} has played game ${gameId} the most times allowed (${max})`, "customer_id")))
              continue
            }
            playsSoFar.set(job.customerId, plays + 1)
          }
          const picked = yield* draw(yield* keyOf(game), job.playId, candidatesOf(prizes))
          let won: PrizeRow | null = null
          if (picked !== null) {
            const at = prizes.findIndex((row) => row.id === picked.id)
            const before = prizes[at]
            if (before === undefined) return yield* Effect.dieMessage(`game ${gameId}: drew prize ${picked.id}, which it does not have`)
            won = { ...before, awarded: before.awarded + 1 }
            prizes = prizes.with(at, won)
            awards.set(picked.id, (awards.get(picked.id) ?? 0) + 1)
          }
          made.push({
            index,
            prize: won,
            row: {
              id: job.playId,
              game_id: gameId,
              store_id: game.store_id,
              livemode: customer.right.livemode,
              customer_id: job.customerId,
              status: "played",
              prize_id: won?.id ?? null,
              voucher_code: won?.kind === "voucher" ? newVoucherCode() : null,
              draw_seq: placesBefore + index + 1,
              prize_version: game.prize_version,
              created_at: now,
              revealed_at: now
            }
          })
          exits.push("made")
        }

        if (awards.size > 0) {
          const taken = yield* repo.awardUnits([...awards].map(([id, count]) => ({ id, count })))
          // Under the game's lock the prizes read are current: a unit missing here is a bug, not a race.
          if (taken.length !== awards.size) return yield* Effect.dieMessage(`game ${gameId}: a prize had fewer units left than drawn under the game's lock`)
        }
        if (Arr.isNonEmptyReadonlyArray(made)) {
          const versions = yield* repo.insertPlays(Arr.map(made, (play) => play.row))
          const links = yield* publicLinks.urls
          const wire: Array<ReturnType<typeof encodePlay>> = []
          for (const play of made) {
            const view = viewOf(play.row, game, play.prize, versions.get(play.row.id) ?? 0)
            wire.push(encodePlay(toPlay(view, links)))
            exits[play.index] = Exit.succeed(outcomeOf(view))
          }
          yield* changeFeed.announceAll(PLAYS_CHANNEL, wire.map((play) => JSON.stringify(play)))
          yield* outbox.emitMany(made.flatMap((play, at) =>
            play.prize !== null && play.prize.kind !== "nothing"
              ? [{ storeId: game.store_id, livemode: play.row.livemode, type: "game.prize_awarded", object: wire[at], at: now }]
              : []
          ))
        }
        const answered: Array<Exit.Exit<PlayOutcome, Refusal>> = []
        for (const [index, exit] of exits.entries()) {
          if (exit === "made") return yield* Effect.dieMessage(`game ${gameId}: a play of the batch was not written`)
          answered.push(exit === "replay" ? Exit.succeed(outcomeOf(yield* replayedView(jobs[index]!.playId))) : exit)
        }
        return {
          exits: answered,
          prizes: closed === undefined ? { version: game.prize_version, draws: game.draws, rows: prizes } : null
        }
      }))

    const issue = (playId: PlayId, customerId: CustomerId): Effect.Effect<Committed, Refusal> =>
      Effect.gen(function*() {
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
      })

    const reveal = (playId: PlayId): Effect.Effect<Committed, Refusal> =>
      Effect.gen(function*() {
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
      })

    const runPlays = (batch: Arr.NonEmptyReadonlyArray<Pending<Job, PlayOutcome, Refusal>>) =>
      playBatch(Arr.map(batch, (pending) => pending.job as PlayJob)).pipe(
        Effect.exit,
        Effect.flatMap(Exit.match({
          onFailure: (cause) => {
            // Rolled back: what the batch read of the prizes may not be what the database holds.
            cachedPrizes = null
            return Effect.forEach(batch, (pending) => Deferred.failCause(pending.done, cause), { discard: true })
          },
          onSuccess: ({ exits, prizes }) => {
            cachedPrizes = prizes
            return Effect.forEach(batch, (pending, index) => Deferred.done(pending.done, exits[index]!), { discard: true })
          }
        }))
      )

    /** Applies one pass of the game's queue in order: runs of instant plays as batches, anything else alone. */
    const { submit, submitAll } = yield* makeEntityQueue<Job, PlayOutcome, Refusal>((waiting) =>
      Effect.gen(function*() {
        let start = 0
        while (start < waiting.length) {
          const first = waiting[start]!
          if (first.job._tag === "Alone") {
            yield* Deferred.done(first.done, yield* Effect.exit(commit(first.job.transaction)))
            start++
            continue
          }
          let end = start + 1
          while (end < waiting.length && waiting[end]!.job._tag === "Play") end++
          yield* runPlays(waiting.slice(start, end) as unknown as Arr.NonEmptyReadonlyArray<Pending<Job, PlayOutcome, Refusal>>)
          start = end
        }
      })
    )

    return GameInventoryEntity.of({
      Play: ({ payload }) => submit(playJob(payload)),
      PlayMany: ({ payload }) => submitAll(Arr.map(payload.plays, playJob)),
      Issue: ({ payload }) => submit({ _tag: "Alone", transaction: issue(payload.playId, payload.customerId) }),
      Reveal: ({ payload }) => submit({ _tag: "Alone", transaction: reveal(payload.playId) })
    })
  }),
  // Every waiting message is taken at once: the game's queue orders them (src/platform/EntityQueue.ts).
  { maxIdleTime: "2 minutes", concurrency: "unbounded" }
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
