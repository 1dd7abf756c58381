/**
 * SQL of games: games, prizes, prize tables, plays and per-customer play counts. Draws run inside the
 * GameInventory entity's transaction (src/games/Entity.ts) under the game's row lock; the unit of a prize is
 * taken with a guarded UPDATE (and `awarded <= inventory` is a CHECK), and a customer's plays are counted
 * under that lock, so neither inventory nor `max_plays_per_customer` can be overrun whatever races.
 */
import { SqlClient, SqlError } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { GameType, PlayStatus, PrizeKind } from "../../domain/Games.ts"
import { CustomerId, GameId, PlayId, PrizeId, StoreId } from "../../domain/Ids.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { customerLinkVersions, standingOfCustomer } from "../customers/Reads.ts"
import { traced } from "../platform/Traced.ts"

export const GameRow = Schema.Struct({
  id: GameId,
  store_id: StoreId,
  name: Schema.String,
  type: GameType,
  active: Schema.Boolean,
  max_plays_per_customer: Schema.NullOr(Schema.Number),
  starts_at: Schema.NullOr(Schema.DateFromSelf),
  ends_at: Schema.NullOr(Schema.DateFromSelf),
  seed_sealed: Schema.String,
  seed_commitment: Schema.String,
  prize_version: Schema.Number,
  deleted_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type GameRow = typeof GameRow.Type

export const PrizeRow = Schema.Struct({
  id: PrizeId,
  game_id: GameId,
  name: Schema.String,
  kind: PrizeKind,
  points: Schema.NullOr(Schema.Number),
  weight: Schema.Number,
  inventory: Schema.NullOr(Schema.Number),
  awarded: Schema.Number,
  active: Schema.Boolean,
  created_at: Schema.DateFromSelf
})
export type PrizeRow = typeof PrizeRow.Type

export const PlayRow = Schema.Struct({
  id: PlayId,
  game_id: GameId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  customer_id: CustomerId,
  status: PlayStatus,
  prize_id: Schema.NullOr(PrizeId),
  voucher_code: Schema.NullOr(Schema.String),
  draw_seq: Schema.NullOr(Schema.NumberFromString),
  prize_version: Schema.NullOr(Schema.Number),
  created_at: Schema.DateFromSelf,
  revealed_at: Schema.NullOr(Schema.DateFromSelf)
})
export type PlayRow = typeof PlayRow.Type

/** A play with what its wire form shows besides: the game's commitment and the prize it drew. */
export const PlayViewRow = Schema.Struct({
  ...PlayRow.fields,
  seed_commitment: Schema.String,
  prize_name: Schema.NullOr(Schema.String),
  prize_kind: Schema.NullOr(PrizeKind),
  prize_points: Schema.NullOr(Schema.Number),
  prize_weight: Schema.NullOr(Schema.Number),
  prize_inventory: Schema.NullOr(Schema.Number),
  prize_awarded: Schema.NullOr(Schema.Number),
  prize_active: Schema.NullOr(Schema.Boolean),
  prize_created_at: Schema.NullOr(Schema.DateFromSelf),
  /** The player's public link version, which the card's token is made with (src/platform/PublicLinks.ts). */
  customer_link_version: Schema.Number
})
export type PlayViewRow = typeof PlayViewRow.Type

export const TablePrize = Schema.Struct({ id: Schema.String, weight: Schema.Number, remaining: Schema.NullOr(Schema.Number) })
export const PrizeTableRow = Schema.Struct({ version: Schema.Number, prizes: Schema.Array(TablePrize) })
export const DrawnPlayRow = Schema.Struct({ id: PlayId, prize_id: Schema.NullOr(PrizeId), prize_version: Schema.Number })

export const GameStatsRow = Schema.Struct({ plays: Schema.Number, issued: Schema.Number, wins: Schema.Number })

/** The LISTEN/NOTIFY channel on which every recorded play (issued or drawn) is announced once it commits. */
export const PLAYS_CHANNEL = "game_plays"

export class GamesRepo extends Effect.Service<GamesRepo>()("games/GamesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // A decode failure or a SqlError is the infrastructure's, not the caller's: every method dies on them.
    const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(
        Effect.catchIf((error): error is SqlError.SqlError => error instanceof SqlError.SqlError, Effect.die)
      )

    // ---------------------------------------------------------------------------------------------
    // Games
    // ---------------------------------------------------------------------------------------------

    const insertGame = traced("GamesRepo.insertGame")(
      SqlSchema.single({
        Request: GameRow,
        Result: GameRow,
        execute: (row) => sql`INSERT INTO games ${sql.insert({ ...row })} RETURNING *`
      }),
      Effect.orDie
    )

    const findGame = traced("GamesRepo.findGame")(
      SqlSchema.findOne({ Request: Schema.String, Result: GameRow, execute: (id) => sql`SELECT * FROM games WHERE id = ${id}` }),
      Effect.orDie
    )

    /** The game, locked until the transaction ends: draws and prize changes of one game queue here. */
    const lockGame = traced("GamesRepo.lockGame")(
      SqlSchema.findOne({ Request: Schema.String, Result: GameRow, execute: (id) => sql`SELECT * FROM games WHERE id = ${id} FOR UPDATE` }),
      Effect.orDie
    )

    const saveGame = traced("GamesRepo.saveGame")(
      SqlSchema.single({
        Request: GameRow,
        Result: GameRow,
        execute: (row) =>
          sql`
            UPDATE games SET name = ${row.name}, active = ${row.active}, max_plays_per_customer = ${row.max_plays_per_customer},
              starts_at = ${row.starts_at}, ends_at = ${row.ends_at}, deleted_at = ${row.deleted_at}, updated_at = ${row.updated_at}
            WHERE id = ${row.id} RETURNING *`
      }),
      Effect.orDie
    )

    const gamesPage = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: Schema.String, ...PageRequest.fields }),
      Result: GameRow,
      execute: ({ limit, position, storeId }) =>
        sql`
          SELECT * FROM games WHERE store_id = ${storeId} AND deleted_at IS NULL AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`
    })
    const listGames = traced("GamesRepo.listGames")(
      (storeId: StoreId, limit: number, position?: PagePosition) => gamesPage({ storeId, limit, position }).pipe(Effect.orDie)
    )

    /** The store's spin and lucky-draw games open for play at `now` (active, in their window, with an active prize). */
    const openInstantGames = traced("GamesRepo.openInstantGames")(
      SqlSchema.findAll({
        Request: Schema.Struct({ storeId: Schema.String, now: Schema.DateFromSelf, limit: Schema.Number }),
        Result: GameRow,
        execute: ({ limit, now, storeId }) =>
          sql`
            SELECT g.* FROM games g
            WHERE g.store_id = ${storeId} AND g.deleted_at IS NULL AND g.active AND g.type <> 'scratch'
              AND (g.starts_at IS NULL OR g.starts_at <= ${now}) AND (g.ends_at IS NULL OR g.ends_at > ${now})
              AND EXISTS (SELECT 1 FROM game_prizes z WHERE z.game_id = g.id AND z.active)
            ORDER BY g.created_at DESC, g.id DESC
            LIMIT ${limit}`
      }),
      Effect.orDie
    )

    /**
     * Locks the game for one message and takes the next place in its draw order (a message that draws nothing
     * leaves a gap, which orders nothing wrongly), answering whether `playId` was recorded already (a replay).
     * The row lock holds until the transaction ends: one game's draws and prize changes queue here.
     */
    const lockForDraw = traced("GamesRepo.lockForDraw")(
      SqlSchema.findOne({
        Request: Schema.Struct({ gameId: Schema.String, playId: Schema.String }),
        Result: Schema.Struct({ ...GameRow.fields, draws: Schema.NumberFromString, replayed: Schema.Boolean }),
        execute: ({ gameId, playId }) =>
          sql`
            UPDATE games SET draws = draws + 1 WHERE id = ${gameId}
            RETURNING id, store_id, name, type, active, max_plays_per_customer, starts_at, ends_at, seed_sealed, seed_commitment,
              prize_version, deleted_at, created_at, updated_at, draws::text AS draws, EXISTS (SELECT 1 FROM game_plays WHERE id = ${playId}) AS replayed`
      }),
      Effect.orDie
    )

    /**
     * Locks the game for a batch of instant plays and takes `count` places in its draw order (the batch's
     * plays take them in order; a refused play leaves a gap), answering which of `playIds` were recorded
     * already (replays). One statement, whatever the batch's size.
     */
    const lockForDraws = traced("GamesRepo.lockForDraws")(
      SqlSchema.findOne({
        Request: Schema.Struct({ gameId: Schema.String, playIds: Schema.NonEmptyArray(Schema.String) }),
        Result: Schema.Struct({ ...GameRow.fields, draws: Schema.NumberFromString, replayed: Schema.Array(PlayId) }),
        execute: ({ gameId, playIds }) =>
          sql`
            UPDATE games SET draws = draws + ${playIds.length} WHERE id = ${gameId}
            RETURNING id, store_id, name, type, active, max_plays_per_customer, starts_at, ends_at, seed_sealed, seed_commitment,
              prize_version, deleted_at, created_at, updated_at, draws::text AS draws,
              ARRAY(SELECT id FROM game_plays WHERE id IN ${sql.in(playIds)}) AS replayed`
      }),
      Effect.orDie
    )

    /** The next place in the game's draw order (the game row is locked by the caller). */
    const nextDraw = traced("GamesRepo.nextDraw")(
      SqlSchema.single({
        Request: Schema.String,
        Result: Schema.Struct({ draws: Schema.NumberFromString }),
        execute: (id) => sql`UPDATE games SET draws = draws + 1 WHERE id = ${id} RETURNING draws::text AS draws`
      }),
      Effect.orDie
    )

    // ---------------------------------------------------------------------------------------------
    // Prizes and prize tables
    // ---------------------------------------------------------------------------------------------

    const prizesOfGames = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: PrizeRow,
      execute: (ids) =>
        sql`
          SELECT id, game_id, name, kind, points, weight, inventory, awarded, active, created_at
          FROM game_prizes WHERE game_id IN ${sql.in(ids)} ORDER BY game_id, position`
    })
    /** The prizes of each game, in draw (creation) order. */
    const prizesOf = traced("GamesRepo.prizesOf")(function*(gameIds: ReadonlyArray<GameId>) {
      if (gameIds.length === 0) return [] as ReadonlyArray<PrizeRow>
      return yield* prizesOfGames(gameIds)
    }, Effect.orDie)

    const findPrize = traced("GamesRepo.findPrize")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: PrizeRow,
        execute: (id) =>
          sql`SELECT id, game_id, name, kind, points, weight, inventory, awarded, active, created_at FROM game_prizes WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const insertPrize = traced("GamesRepo.insertPrize")(
      SqlSchema.single({
        Request: PrizeRow,
        Result: PrizeRow,
        execute: (row) =>
          sql`
            INSERT INTO game_prizes ${sql.insert({ ...row })}
            RETURNING id, game_id, name, kind, points, weight, inventory, awarded, active, created_at`
      }),
      Effect.orDie
    )

    const savePrize = traced("GamesRepo.savePrize")(
      SqlSchema.single({
        Request: PrizeRow,
        Result: PrizeRow,
        execute: (row) =>
          sql`
            UPDATE game_prizes SET name = ${row.name}, kind = ${row.kind}, points = ${row.points}, weight = ${row.weight},
              inventory = ${row.inventory}, active = ${row.active}
            WHERE id = ${row.id}
            RETURNING id, game_id, name, kind, points, weight, inventory, awarded, active, created_at`
      }),
      Effect.orDie
    )

    const deletePrize = traced("GamesRepo.deletePrize")(
      SqlSchema.void({ Request: Schema.String, execute: (id) => sql`DELETE FROM game_prizes WHERE id = ${id} AND awarded = 0` }),
      Effect.orDie
    )

    /**
     * Takes one unit of an active prize with inventory left (unlimited: nothing to take, counted only).
     * None when it has none left: under the game's lock that never happens, and the CHECK on the table
     * refuses an over-award even if it did.
     */
    const awardUnit = traced("GamesRepo.awardUnit")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: PrizeRow,
        execute: (id) =>
          sql`
            UPDATE game_prizes SET awarded = awarded + 1
            WHERE id = ${id} AND active AND (inventory IS NULL OR awarded < inventory)
            RETURNING id, game_id, name, kind, points, weight, inventory, awarded, active, created_at`
      }),
      Effect.orDie
    )

    /**
     * Starts a new prize table of the game (the game row is locked by the caller): its version, and what
     * each active prize has left now, in draw order. Draws from here on record this version.
     */
    const snapshotTable = traced("GamesRepo.snapshotTable")(
      SqlSchema.void({
        Request: Schema.Struct({ gameId: Schema.String, at: Schema.DateFromSelf }),
        execute: ({ at, gameId }) =>
          sql`
            WITH bumped AS (
              UPDATE games SET prize_version = prize_version + 1 WHERE id = ${gameId} RETURNING prize_version
            )
            INSERT INTO game_prize_tables (game_id, version, prizes, created_at)
            SELECT ${gameId}, bumped.prize_version, COALESCE((
              SELECT jsonb_agg(jsonb_build_object(
                'id', z.id, 'weight', z.weight,
                'remaining', CASE WHEN z.inventory IS NULL THEN NULL ELSE z.inventory - z.awarded END
              ) ORDER BY z.position)
              FROM game_prizes z WHERE z.game_id = ${gameId} AND z.active
            ), '[]'::jsonb), ${at}
            FROM bumped`
      }),
      Effect.orDie
    )

    const tablesOf = traced("GamesRepo.tablesOf")(
      SqlSchema.findAll({
        Request: Schema.String,
        Result: PrizeTableRow,
        execute: (gameId) => sql`SELECT version, prizes FROM game_prize_tables WHERE game_id = ${gameId} ORDER BY version`
      }),
      Effect.orDie
    )

    /** Every drawn play of the game, in draw order. */
    const drawnPlays = traced("GamesRepo.drawnPlays")(
      SqlSchema.findAll({
        Request: Schema.String,
        Result: DrawnPlayRow,
        execute: (gameId) =>
          sql`
            SELECT id, prize_id, prize_version FROM game_plays
            WHERE game_id = ${gameId} AND draw_seq IS NOT NULL ORDER BY draw_seq`
      }),
      Effect.orDie
    )

    // ---------------------------------------------------------------------------------------------
    // Plays
    // ---------------------------------------------------------------------------------------------

    /**
     * How many plays (instant plays and issued cards) the customer has of the game. Read under the game's
     * row lock, which every play of the game takes first, so racing plays cannot both see room for one more.
     */
    const playsOfCustomer = traced("GamesRepo.playsOfCustomer")(
      SqlSchema.single({
        Request: Schema.Struct({ gameId: Schema.String, customerId: Schema.String }),
        Result: Schema.Struct({ plays: Schema.Number }),
        execute: ({ customerId, gameId }) =>
          sql`SELECT count(*)::int AS plays FROM game_plays WHERE customer_id = ${customerId} AND game_id = ${gameId}`
      }),
      Effect.map((row: { readonly plays: number }) => row.plays),
      Effect.orDie
    )

    /** How many plays each of `customerIds` has of the game (read under the game's row lock, as above). */
    const playsOfCustomers = traced("GamesRepo.playsOfCustomers")(
      SqlSchema.findAll({
        Request: Schema.Struct({ gameId: Schema.String, customerIds: Schema.NonEmptyArray(Schema.String) }),
        Result: Schema.Struct({ customer_id: CustomerId, plays: Schema.Number }),
        execute: ({ customerIds, gameId }) =>
          sql`
            SELECT customer_id, count(*)::int AS plays FROM game_plays
            WHERE game_id = ${gameId} AND customer_id IN ${sql.in(customerIds)} GROUP BY customer_id`
      }),
      Effect.orDie
    )

    /**
     * Takes `count` units of each prize at once (a batch's awards), guarded as `awardUnit`: a prize without
     * that many left is not changed and is missing from the answer.
     */
    const awardUnits = traced("GamesRepo.awardUnits")(
      SqlSchema.findAll({
        Request: Schema.Array(Schema.Struct({ id: Schema.String, count: Schema.Number })),
        Result: PrizeRow,
        execute: (awards) =>
          sql`
            UPDATE game_prizes z SET awarded = z.awarded + a.count
            FROM jsonb_to_recordset(${JSON.stringify(awards)}::jsonb) AS a(id text, count int)
            WHERE z.id = a.id AND z.active AND (z.inventory IS NULL OR z.awarded + a.count <= z.inventory)
            RETURNING z.id, z.game_id, z.name, z.kind, z.points, z.weight, z.inventory, z.awarded, z.active, z.created_at`
      }),
      Effect.orDie
    )

    /** The player's link version, read in the same statement that writes the play (for the play's card link). */
    const RETURNING_LINK_VERSION = sql`
      RETURNING (SELECT c.public_link_version FROM (${customerLinkVersions(sql)}) c WHERE c.id = game_plays.customer_id)
        AS customer_link_version`
    const LinkVersion = Schema.Struct({ customer_link_version: Schema.Number })

    /** Records the play; answers its customer's link version. */
    const insertPlay = traced("GamesRepo.insertPlay")(
      SqlSchema.single({
        Request: PlayRow,
        Result: LinkVersion,
        execute: (row) =>
          sql`
            INSERT INTO game_plays (id, game_id, store_id, livemode, customer_id, status, prize_id, voucher_code, draw_seq,
              prize_version, created_at, revealed_at)
            VALUES (${row.id}, ${row.game_id}, ${row.store_id}, ${row.livemode}, ${row.customer_id}, ${row.status},
              ${row.prize_id}, ${row.voucher_code}, ${row.draw_seq}, ${row.prize_version}, ${row.created_at}, ${row.revealed_at})
            ${RETURNING_LINK_VERSION}`
      }),
      Effect.map((row: typeof LinkVersion.Type) => row.customer_link_version),
      Effect.orDie
    )

    /** Records a batch of plays in one statement; answers each play's customer link version by play id. */
    const insertPlays = traced("GamesRepo.insertPlays")(
      SqlSchema.findAll({
        Request: Schema.NonEmptyArray(PlayRow),
        Result: Schema.Struct({ id: PlayId, ...LinkVersion.fields }),
        execute: (rows) =>
          sql`
            INSERT INTO game_plays ${sql.insert(rows.map((row) => ({ ...row })))}
            ${RETURNING_LINK_VERSION}, id`
      }),
      Effect.map((rows: ReadonlyArray<{ readonly id: PlayId; readonly customer_link_version: number }>) =>
        new Map(rows.map((row) => [row.id, row.customer_link_version]))
      ),
      Effect.orDie
    )

    const PLAY_COLUMNS = sql`
      p.id, p.game_id, p.store_id, p.livemode, p.customer_id, p.status, p.prize_id, p.voucher_code,
      p.draw_seq::text AS draw_seq, p.prize_version, p.created_at, p.revealed_at`

    const findPlay = traced("GamesRepo.findPlay")(
      SqlSchema.findOne({ Request: Schema.String, Result: PlayRow, execute: (id) => sql`SELECT ${PLAY_COLUMNS} FROM game_plays p WHERE p.id = ${id}` }),
      Effect.orDie
    )

    const lockPlay = traced("GamesRepo.lockPlay")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: PlayRow,
        execute: (id) => sql`SELECT ${PLAY_COLUMNS} FROM game_plays p WHERE p.id = ${id} FOR UPDATE`
      }),
      Effect.orDie
    )

    /** Records the draw of an issued card (locked in this transaction); answers its customer's link version. */
    const markDrawn = traced("GamesRepo.markDrawn")(
      SqlSchema.single({
        Request: PlayRow,
        Result: LinkVersion,
        execute: (row) =>
          sql`
            UPDATE game_plays SET status = ${row.status}, prize_id = ${row.prize_id}, voucher_code = ${row.voucher_code},
              draw_seq = ${row.draw_seq}, prize_version = ${row.prize_version}, revealed_at = ${row.revealed_at}
            WHERE id = ${row.id} AND status = 'issued'
            ${RETURNING_LINK_VERSION}`
      }),
      Effect.map((row: typeof LinkVersion.Type) => row.customer_link_version),
      Effect.orDie
    )

    const VIEW = sql`
      SELECT ${PLAY_COLUMNS}, g.seed_commitment,
        z.name AS prize_name, z.kind AS prize_kind, z.points AS prize_points, z.weight AS prize_weight,
        z.inventory AS prize_inventory, z.awarded AS prize_awarded, z.active AS prize_active, z.created_at AS prize_created_at,
        c.public_link_version AS customer_link_version
      FROM game_plays p JOIN games g ON g.id = p.game_id JOIN (${customerLinkVersions(sql)}) c ON c.id = p.customer_id
        LEFT JOIN game_prizes z ON z.id = p.prize_id`

    const findPlayView = traced("GamesRepo.findPlayView")(
      SqlSchema.findOne({ Request: Schema.String, Result: PlayViewRow, execute: (id) => sql`${VIEW} WHERE p.id = ${id}` }),
      Effect.orDie
    )

    const columns = { createdAt: "p.created_at", id: "p.id" }

    const gamePlaysPage = SqlSchema.findAll({
      Request: Schema.Struct({ gameId: Schema.String, status: Schema.NullOr(Schema.String), ...PageRequest.fields }),
      Result: PlayViewRow,
      execute: ({ gameId, limit, position, status }) =>
        sql`
          ${VIEW} WHERE p.game_id = ${gameId} AND ${status === null ? sql`TRUE` : sql`p.status = ${status}`}
            AND ${keysetAfter(sql, position, columns)}
          ORDER BY ${newestFirst(sql, columns)} LIMIT ${limit + 1}`
    })
    const listGamePlays = traced("GamesRepo.listGamePlays")(
      (gameId: GameId, status: PlayStatus | null, limit: number, position?: PagePosition) =>
        gamePlaysPage({ gameId, status, limit, position }).pipe(Effect.orDie)
    )

    const customerPlaysPage = SqlSchema.findAll({
      Request: Schema.Struct({ customerId: Schema.String, status: Schema.NullOr(Schema.String), ...PageRequest.fields }),
      Result: PlayViewRow,
      execute: ({ customerId, limit, position, status }) =>
        sql`
          ${VIEW} WHERE p.customer_id = ${customerId} AND ${status === null ? sql`TRUE` : sql`p.status = ${status}`}
            AND ${keysetAfter(sql, position, columns)}
          ORDER BY ${newestFirst(sql, columns)} LIMIT ${limit + 1}`
    })
    const listCustomerPlays = traced("GamesRepo.listCustomerPlays")(
      (customerId: CustomerId, status: PlayStatus | null, limit: number, position?: PagePosition) =>
        customerPlaysPage({ customerId, status, limit, position }).pipe(Effect.orDie)
    )

    const stats = traced("GamesRepo.stats")(
      SqlSchema.single({
        Request: Schema.String,
        Result: GameStatsRow,
        execute: (gameId) =>
          sql`
            SELECT count(*) FILTER (WHERE p.status <> 'issued')::int AS plays,
                   count(*) FILTER (WHERE p.status = 'issued')::int AS issued,
                   count(*) FILTER (WHERE z.kind IN ('points', 'voucher'))::int AS wins
            FROM game_plays p LEFT JOIN game_prizes z ON z.id = p.prize_id
            WHERE p.game_id = ${gameId}`
      }),
      Effect.orDie
    )

    /** The player as a play checks it: its store and mode, whether it was erased, its links' version. */
    const findCustomer = (id: string) => standingOfCustomer(sql, id)

    return {
      inTransaction,
      insertGame,
      findGame,
      lockGame,
      saveGame,
      listGames,
      openInstantGames,
      nextDraw,
      lockForDraw,
      lockForDraws,
      playsOfCustomers,
      awardUnits,
      insertPlays,
      prizesOf,
      findPrize,
      insertPrize,
      savePrize,
      deletePrize,
      awardUnit,
      snapshotTable,
      tablesOf,
      drawnPlays,
      playsOfCustomer,
      insertPlay,
      findPlay,
      lockPlay,
      markDrawn,
      findPlayView,
      listGamePlays,
      listCustomerPlays,
      stats,
      findCustomer
    } as const
  })
}) {}
