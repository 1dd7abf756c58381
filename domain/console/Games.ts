/**
 * The console's games: a store's games with their prizes, the live figures of one, scratch cards issued
 * to a customer, and — once the game has ended — its draw record, from which the browser re-runs every
 * draw with the disclosed seed (`verifyGame` in domain/Games.ts). The handlers call GamesService, as the
 * `/dashboard/…/games` routes do: customer.read to read, marketing.manage to change.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { CreateGame, Game, GameList, GameStats, Play, PlayList, PlayListParams, UpdateGame } from "../Games.ts"
import { CustomerId, GameId, PlayId, PrizeId, StoreId } from "../Ids.ts"
import { ListParams, MAX_LIST_LIMIT } from "../Lists.ts"

/** The prizes each stretch of plays was drawn under, and the plays in draw order: what re-running the draws needs. */
export class GameDrawRecord extends Schema.Class<GameDrawRecord>("GameDrawRecord")({
  object: Schema.Literal("game_draw_record"),
  game_id: GameId,
  seed_commitment: Schema.String,
  /** Null until the game has ended or was deleted. */
  seed: Schema.NullOr(Schema.String),
  tables: Schema.Array(Schema.Struct({
    version: Schema.Number,
    prizes: Schema.Array(Schema.Struct({ id: Schema.String, weight: Schema.Number, remaining: Schema.NullOr(Schema.Number) }))
  })),
  plays: Schema.Array(Schema.Struct({ id: PlayId, prize_id: Schema.NullOr(PrizeId), version: Schema.Number }))
}) {}

const Failures = Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
const Limit = Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_LIST_LIMIT)))

export class ConsoleGamesRpcs extends RpcGroup.make(
  Rpc.make("ListGames", {
    payload: { store_id: StoreId, cursor: ListParams.fields.cursor, limit: Limit },
    success: GameList,
    error: Failures
  }),
  /** Creates a game with its first prizes (`POST /dashboard/stores/:id/games`). */
  Rpc.make("CreateGame", {
    payload: { store_id: StoreId, ...CreateGame.fields },
    success: Game,
    error: Failures
  }),
  Rpc.make("GetGame", { payload: { id: GameId }, success: Game, error: Failures }),
  /** Activates, pauses, renames or ends a game (ends_at now ends it, and discloses its seed). */
  Rpc.make("UpdateGame", { payload: { id: GameId, ...UpdateGame.fields }, success: Game, error: Failures }),
  Rpc.make("GameStats", { payload: { id: GameId }, success: GameStats, error: Failures }),
  Rpc.make("ListGamePlays", {
    payload: { id: GameId, cursor: ListParams.fields.cursor, limit: Limit, status: PlayListParams.fields.status },
    success: PlayList,
    error: Failures
  }),
  /** Issues a scratch card of the game to a customer of its store. */
  Rpc.make("IssueScratchCard", { payload: { id: GameId, customer_id: CustomerId }, success: Play, error: Failures }),
  Rpc.make("GameDrawRecord", { payload: { id: GameId }, success: GameDrawRecord, error: Failures })
).middleware(ConsoleAuthentication) {}
