/** The console's games procedures (domain/console/Games.ts): each one call of GamesService, which checks access. */
import { Effect } from "effect"
import { ConsoleGamesRpcs } from "../../../domain/console/Games.ts"
import { DEFAULT_LIST_LIMIT } from "../../../domain/Lists.ts"
import { GamesService } from "../../games/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsoleGamesLive = ConsoleGamesRpcs.toLayer(Effect.gen(function*() {
  const games = yield* GamesService
  return ConsoleGamesRpcs.of({
    ListGames: ({ cursor, limit, store_id }) => hideDefects(games.list(store_id, { limit: limit ?? DEFAULT_LIST_LIMIT, cursor })),
    CreateGame: ({ store_id, ...input }) => hideDefects(games.create(store_id, input)),
    GetGame: ({ id }) => hideDefects(games.retrieve(id)),
    UpdateGame: ({ id, ...changes }) => hideDefects(games.update(id, changes)),
    GameStats: ({ id }) => hideDefects(games.stats(id)),
    ListGamePlays: ({ cursor, id, limit, status }) =>
      hideDefects(games.plays(id, { limit: limit ?? DEFAULT_LIST_LIMIT, cursor, status })),
    IssueScratchCard: ({ customer_id, id }) => hideDefects(games.issue(id, customer_id)),
    GameDrawRecord: ({ id }) => hideDefects(games.drawRecord(id))
  })
}))
