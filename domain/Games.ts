/**
 * Games (API.md "Games"): spin, lucky-draw and scratch-card games of a store, with weighted prizes that
 * honour their inventory, instant plays, scratch cards issued then revealed, and provable fairness.
 *
 * - The console routes (`/dashboard/…`) act with a user session: customer.read to read, marketing.manage
 *   (Owner, Admin) to configure games and prizes and to issue scratch cards.
 * - The merchant API (`/v1/…`) acts with an API key on its own store and mode.
 * - The hosted routes (`/play/…`) take no API key or session; what a customer may do there is opened by
 *   the token `t` of a link the API handed out (API.md "Hosted pages"): the customer's token (from its
 *   `wallet_url`) plays for that customer (`?c={customerId}&t=…`), a card's token (from the play's
 *   `card_url`) opens that card only. Ids are not secrets and open nothing by themselves.
 *
 * Fairness: a game commits to a secret seed when it is created (`seed_commitment` = SHA-256 hex of the
 * seed); each draw uses HMAC-SHA256(seed, play id) (domain/GameFairness.ts); the seed is disclosed on the
 * game once it has ended or is deleted, and `verifyGame` below re-runs every draw from it.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Effect, Schema } from "effect"
import { authenticated } from "./Auth.ts"
import {
  IdempotencyConflictResponse,
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse,
  RateLimitedResponse
} from "./Errors.ts"
import { type FairnessReport, type FairPrize, verifyDraws } from "./GameFairness.ts"
import { CustomerId, GameId, PlayId, PrizeId, StoreId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { IdempotencyHeaders } from "./Payments.ts"
import { boundedText, StoreBranding } from "./Stores.ts"
import { closed, MAX_NAME_LENGTH, oneOf } from "./Text.ts"

/** The largest weight, inventory, points value or per-customer limit: 2^31 − 1, the database's integer. */
export const MAX_GAME_INTEGER = 2_147_483_647
/** How many prizes one game may have (a spin wheel of more is unreadable, and each draw reads them all). */
export const MAX_PRIZES = 50

export const GameTypes = ["spin", "lucky_draw", "scratch"] as const
export const GameType = oneOf(...GameTypes).annotations({
  description: "`spin` and `lucky_draw` are played instantly (`POST /v1/games/{id}/play`); `scratch` cards are " +
    "issued to a customer (`POST /dashboard/games/{id}/issue`) and drawn when revealed"
})
export type GameType = typeof GameType.Type

export const PrizeKinds = ["points", "voucher", "nothing"] as const
export const PrizeKind = oneOf(...PrizeKinds).annotations({
  description: "`points` are credited to the customer's wallet (a `game` points entry); a `voucher` prize " +
    "gives the play a `voucher_code`; `nothing` is a losing slot (\"Try again\") with its own weight"
})
export type PrizeKind = typeof PrizeKind.Type

export const PlayStatuses = ["issued", "revealed", "played"] as const
export const PlayStatus = oneOf(...PlayStatuses).annotations({
  description: "`played`: an instant play, drawn when made; `issued`: a scratch card not yet revealed (no " +
    "prize yet); `revealed`: a scratch card drawn when revealed"
})
export type PlayStatus = typeof PlayStatus.Type

/** A whole number between `min` and 2^31 − 1, named `field` in its messages. */
const wholeNumber = (field: string, min: number) =>
  Schema.Number.pipe(
    Schema.int({ message: () => `${field} must be a whole number` }),
    Schema.between(min, MAX_GAME_INTEGER, { message: () => `${field} must be between ${min} and ${MAX_GAME_INTEGER}` })
  )

/** An ISO 8601 date-time between the years 2000 and 9999 (what the database and a game's life can hold). */
const Timestamp = Schema.DateFromString.pipe(
  Schema.filter((date) => !Number.isNaN(date.getTime()) || "must be an ISO 8601 date-time", { jsonSchema: {} }),
  Schema.filter(
    (date) => (date.getUTCFullYear() >= 2000 && date.getUTCFullYear() <= 9999) || "must be a date-time between the years 2000 and 9999",
    { jsonSchema: {} }
  )
).annotations({ examples: [new Date("2026-12-01T00:00:00.000Z")] })

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

export class Prize extends Schema.Class<Prize>("Prize")({
  id: PrizeId,
  object: Schema.Literal("prize"),
  name: Schema.String.annotations({ examples: ["100 bonus points"] }),
  kind: PrizeKind,
  points: Schema.NullOr(Schema.Int).annotations({ description: "Points a `points` prize credits; null otherwise", examples: [100] }),
  weight: Schema.Int.annotations({
    description: "Relative chance: a draw picks among the active prizes with inventory left with probability " +
      "weight / total weight",
    examples: [10]
  }),
  inventory: Schema.NullOr(Schema.Int).annotations({
    description: "How many may be awarded in all (awarded ones included); null: unlimited",
    examples: [10]
  }),
  awarded: Schema.Int.annotations({ description: "How many plays won it so far", examples: [3] }),
  active: Schema.Boolean.annotations({
    description: "A deleted prize that had been awarded stays, deactivated: it is never drawn again"
  }),
  created_at: Schema.String
}) {}

export class Game extends Schema.Class<Game>("Game")({
  id: GameId,
  object: Schema.Literal("game"),
  store_id: StoreId,
  name: Schema.String.annotations({ examples: ["Lunar New Year wheel"] }),
  type: GameType,
  active: Schema.Boolean.annotations({ description: "An inactive game cannot be played (409)" }),
  max_plays_per_customer: Schema.NullOr(Schema.Int).annotations({
    description: "Plays (instant plays and issued scratch cards) one customer may have; null: unlimited",
    examples: [3]
  }),
  starts_at: Schema.NullOr(Schema.String).annotations({ description: "Before it the game cannot be played; null: at once" }),
  ends_at: Schema.NullOr(Schema.String).annotations({
    description: "From it the game cannot be played and its seed is disclosed; null: open-ended"
  }),
  seed_commitment: Schema.String.annotations({
    description: "SHA-256 (lowercase hex) of the game's secret seed, fixed when the game is created",
    examples: ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"]
  }),
  seed: Schema.NullOr(Schema.String).annotations({
    description: "The secret seed, disclosed once the game has ended (`ends_at` passed) or was deleted; null " +
      "before. SHA-256 of it is `seed_commitment`; every draw is HMAC-SHA256(seed, play id)"
  }),
  prizes: Schema.Array(Prize).annotations({ description: "In draw order (creation order), deactivated ones too" }),
  deleted_at: Schema.NullOr(Schema.String).annotations({ description: "When the game was deleted; it stays readable" }),
  created_at: Schema.String
}) {}

export class GameList extends Schema.Class<GameList>("GameList")(ListOf(Game).fields) {}

export class PlayProof extends Schema.Class<PlayProof>("PlayProof")({
  seed_commitment: Schema.String.annotations({ description: "The game's commitment to its seed" }),
  nonce: Schema.String.annotations({
    description: "The HMAC message of this play's draw: the play id. The draw is HMAC-SHA256(seed, nonce) read " +
      "as a 256-bit integer r; among the prizes with inventory left in creation order (total weight W) it lands " +
      "on slot floor(r × W / 2^256)"
  })
}) {}

export class Play extends Schema.Class<Play>("Play")({
  id: PlayId,
  object: Schema.Literal("play"),
  game_id: GameId,
  customer_id: CustomerId,
  status: PlayStatus,
  prize: Schema.NullOr(Prize).annotations({
    description: "What the draw landed on; null for an issued card, or when no prize had inventory left"
  }),
  voucher_code: Schema.optional(Schema.String).annotations({
    description: "For a `voucher` prize: an unguessable code to hand over at the counter",
    examples: ["K7QX-M2PD-W9RT"]
  }),
  proof: PlayProof,
  card_url: Schema.String.annotations({
    description: "The play's public page, for the customer: `{PUBLIC_BASE_URL}/play/{id}?t=…`. Its token opens this " +
      "card only (its result and voucher code, and the reveal of an issued card), never the wallet or another " +
      "card; revoking the customer's links (or erasing the customer) replaces it",
    examples: ["https://pay.example.com/play/play_3kTMd92JxQeLp0aZ7yNcB1vW?t=Vb1Xq8Lm4Kz0Tn6Rw2Ys9Pd3Hc5Jf7Ga"]
  }),
  created_at: Schema.String,
  revealed_at: Schema.NullOr(Schema.String).annotations({
    description: "When the result was drawn (an instant play: when made; a scratch card: when revealed)"
  })
}) {}

export class PlayList extends Schema.Class<PlayList>("PlayList")(ListOf(Play).fields) {}

export class PrizeStats extends Schema.Class<PrizeStats>("PrizeStats")({
  prize_id: PrizeId,
  name: Schema.String,
  awarded: Schema.Int,
  inventory_left: Schema.NullOr(Schema.Int).annotations({ description: "null: unlimited" })
}) {}

export class GameStats extends Schema.Class<GameStats>("GameStats")({
  object: Schema.Literal("game_stats"),
  plays: Schema.Int.annotations({ description: "Drawn plays (instant plays and revealed cards)", examples: [120] }),
  issued: Schema.Int.annotations({ description: "Scratch cards issued and not yet revealed", examples: [4] }),
  wins: Schema.Int.annotations({ description: "Drawn plays that won a `points` or `voucher` prize", examples: [30] }),
  win_rate: Schema.Number.annotations({ description: "wins / plays, rounded to 4 decimals (0 without plays)", examples: [0.25] }),
  prizes: Schema.Array(PrizeStats)
}) {}

export class HostedGameStore extends Schema.Class<HostedGameStore>("HostedGameStore")({
  name: Schema.String.annotations({ examples: ["Riverside Coffee"] }),
  branding: StoreBranding
}) {}

export class HostedPrize extends Schema.Class<HostedPrize>("HostedPrize")({
  id: PrizeId,
  name: Schema.String,
  kind: PrizeKind,
  points: Schema.NullOr(Schema.Int),
  weight: Schema.Int,
  available: Schema.Boolean.annotations({ description: "Whether it can still be won (active, inventory left)" })
}) {}

export class HostedPlayer extends Schema.Class<HostedPlayer>("HostedPlayer")({
  play_url: Schema.String.annotations({
    description: "Where the play button posts: `{PUBLIC_BASE_URL}/play/game/{gameId}/play?c=…&t=…`"
  }),
  wallet_url: Schema.String.annotations({ description: "The customer's wallet, to see the points won" })
}) {}

export class HostedGame extends Schema.Class<HostedGame>("HostedGame")({
  id: GameId,
  object: Schema.Literal("hosted_game"),
  store: HostedGameStore,
  name: Schema.String,
  type: GameType,
  playable: Schema.Boolean.annotations({ description: "Active, started, not ended, not deleted, with prizes" }),
  starts_at: Schema.NullOr(Schema.String),
  ends_at: Schema.NullOr(Schema.String),
  seed_commitment: Schema.String,
  seed: Schema.NullOr(Schema.String).annotations({ description: "Disclosed once the game has ended or was deleted" }),
  prizes: Schema.Array(HostedPrize).annotations({ description: "The active prizes, in draw order" }),
  player: Schema.NullOr(HostedPlayer).annotations({
    description: "Opened with a customer's `c` and `t` that go together, while the customer can play an instant " +
      "game: where to play and the customer's wallet; null otherwise (no play button)"
  })
}) {}

/** A play as the public sees it through its card's token: no customer id. */
const { customer_id: _customerId, ...publicPlayFields } = Play.fields

export class HostedPlay extends Schema.Class<HostedPlay>("HostedPlay")({
  ...publicPlayFields,
  object: Schema.Literal("hosted_play"),
  game: Schema.Struct({
    name: Schema.String,
    type: GameType,
    store: HostedGameStore
  })
}) {}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

const GameName = boundedText(MAX_NAME_LENGTH).annotations({ description: "The game's name", examples: ["Lunar New Year wheel"] })
const PrizeName = boundedText(MAX_NAME_LENGTH).annotations({ description: "The prize's name", examples: ["100 bonus points"] })
/**
 * What a game created without `max_plays_per_customer` allows one customer: enough for a returning
 * shopper, too few for one customer to drain a game's prizes. Unlimited is asked for with null.
 */
export const DEFAULT_MAX_PLAYS_PER_CUSTOMER = 10

const MaxPlays = wholeNumber("max_plays_per_customer", 1).annotations({
  description: "Plays (instant plays and issued cards) one customer may have; null: unlimited",
  examples: [3]
})

export const PrizeInput = closed(Schema.Struct({
  name: PrizeName,
  kind: PrizeKind,
  points: Schema.optional(Schema.NullOr(wholeNumber("points", 1).annotations({
    description: "Required for a `points` prize (1 to 2^31 − 1); must be omitted or null otherwise",
    examples: [100]
  }))),
  weight: wholeNumber("weight", 1).annotations({ description: "A whole number ≥ 1: the prize's relative chance", examples: [10] }),
  inventory: Schema.optional(Schema.NullOr(wholeNumber("inventory", 0).annotations({
    description: "How many may be awarded in all (≥ 0); null or omitted: unlimited. On update it may not go below " +
      "`awarded` (409)",
    examples: [10]
  })))
}), "PrizeDto")
export type PrizeInput = typeof PrizeInput.Type

export const CreateGame = closed(Schema.Struct({
  name: GameName,
  type: GameType,
  active: Schema.optional(Schema.Boolean.annotations({ description: "Default true" })),
  max_plays_per_customer: Schema.optional(Schema.NullOr(MaxPlays).annotations({
    description: `Plays (instant plays and issued cards) one customer may have. Omitted: ` +
      `${DEFAULT_MAX_PLAYS_PER_CUSTOMER}; null: unlimited, an explicit choice`
  })),
  starts_at: Schema.optional(Schema.NullOr(Timestamp)),
  ends_at: Schema.optional(Schema.NullOr(Timestamp)),
  prizes: Schema.optional(Schema.Array(PrizeInput).pipe(
    Schema.maxItems(MAX_PRIZES, { message: () => `a game has at most ${MAX_PRIZES} prizes` })
  ).annotations({ description: `The first prizes, in draw order (at most ${MAX_PRIZES})` }))
}), "CreateGameDto")
export type CreateGame = typeof CreateGame.Type

export const UpdateGame = closed(Schema.Struct({
  name: Schema.optional(GameName),
  active: Schema.optional(Schema.Boolean),
  max_plays_per_customer: Schema.optional(Schema.NullOr(MaxPlays).annotations({
    description: "Plays one customer may have; null: unlimited; omitted: unchanged"
  })),
  starts_at: Schema.optional(Schema.NullOr(Timestamp)),
  ends_at: Schema.optional(Schema.NullOr(Timestamp))
}), "UpdateGameDto")
export type UpdateGame = typeof UpdateGame.Type

export const IssuePlay = closed(Schema.Struct({ customer_id: CustomerId }), "IssuePlayDto")
export type IssuePlay = typeof IssuePlay.Type

export const PlayInput = closed(Schema.Struct({ customer_id: CustomerId }), "PlayDto")
export type PlayInput = typeof PlayInput.Type

export const PlayListParams = Schema.Struct({
  ...ListParams.fields,
  status: Schema.optional(PlayStatus)
})
export type PlayListParams = typeof PlayListParams.Type

const CustomerToken = Schema.String.annotations({
  description: "The customer's public token, as in its `wallet_url`: with `c`, it opens play for that customer"
})

export const HostedPlayParams = Schema.Struct({
  c: CustomerId.annotations({ description: "The customer's id" }),
  t: Schema.optional(CustomerToken)
})

export const HostedGameParams = Schema.Struct({
  c: Schema.optional(Schema.String.annotations({ description: "The customer's id" })),
  t: Schema.optional(CustomerToken)
})

export const CardParams = Schema.Struct({
  t: Schema.optional(Schema.String.annotations({ description: "The card's token, as in the play's `card_url`" }))
})

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const READ = "Needs a user session with customer.read (Owner, Admin, Developer, Analyst)."
const MANAGE = "Needs a user session with marketing.manage (Owner, Admin)."
const REFUSED = "An inactive, not yet started, ended or deleted game is 409 `invalid_state`; so is a game with no " +
  "active prize, and a customer already at `max_plays_per_customer` (counted under the game's lock, so racing " +
  "plays cannot pass it)."
const DRAW = "The draw picks among the active prizes with inventory left, with probability weight / total weight, " +
  "using HMAC-SHA256(game seed, play id) (`proof`); a prize is never awarded past its inventory however many plays " +
  "race. With no prize left the play has `prize: null`. A `points` prize is credited to the wallet (a `game` points " +
  "entry, once per play); a `voucher` prize gives `voucher_code`. A won prize emits the `game.prize_awarded` webhook."

const GamePath = Schema.Struct({ gameId: GameId })

export class GamesConsoleGroup extends HttpApiGroup.make("gamesConsole")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/games")
      .setPath(Schema.Struct({ storeId: StoreId }))
      .setUrlParams(ListParams)
      .addSuccess(GameList)
      .annotate(OpenApi.Summary, "List games")
      .annotate(OpenApi.Description, `The store's games (deleted ones left out), newest first, with their prizes. ${READ}`)
  )
  .add(
    HttpApiEndpoint.post("create", "/dashboard/stores/:storeId/games")
      .setPath(Schema.Struct({ storeId: StoreId }))
      .setPayload(CreateGame)
      .addSuccess(Game, { status: 201 })
      .annotate(OpenApi.Summary, "Create a game")
      .annotate(
        OpenApi.Description,
        "Creates the game with its first prizes (more can be added) and a fresh secret seed, of which only " +
          "`seed_commitment` is shown until the game ends or is deleted. `ends_at` must be after `starts_at` (400). " +
          `A prize's weight is a whole number ≥ 1, its inventory ≥ 0 or null (unlimited); a \`points\` prize needs \`points\`. ` +
          `\`max_plays_per_customer\` omitted is ${DEFAULT_MAX_PLAYS_PER_CUSTOMER} plays per customer; unlimited plays are asked ` +
          `for with null. ${MANAGE}`
      )
  )
  .add(
    HttpApiEndpoint.get("retrieve", "/dashboard/games/:gameId")
      .setPath(GamePath)
      .addSuccess(Game)
      .annotate(OpenApi.Summary, "Game with its prizes")
      .annotate(OpenApi.Description, `A deleted game still answers (with \`deleted_at\` and its seed). ${READ}`)
  )
  .add(
    HttpApiEndpoint.put("update", "/dashboard/games/:gameId")
      .setPath(GamePath)
      .setPayload(UpdateGame)
      .addSuccess(Game)
      .annotate(OpenApi.Summary, "Update")
      .annotate(
        OpenApi.Description,
        "Send any of name, active, max_plays_per_customer, starts_at, ends_at; the rest stays (`type` cannot " +
          "change). Lowering `max_plays_per_customer` below what a customer has already played takes nothing " +
          `back. A deleted game is 409. ${MANAGE}`
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/dashboard/games/:gameId")
      .setPath(GamePath)
      .addSuccess(Game)
      .annotate(OpenApi.Summary, "Delete")
      .annotate(
        OpenApi.Description,
        "Ends the game for good: it can no longer be played or changed, its plays stay, and its seed is " +
          `disclosed so anyone can re-run the draws. Answers the deleted game; deleting again answers it unchanged. ${MANAGE}`
      )
  )
  .add(
    HttpApiEndpoint.post("addPrize", "/dashboard/games/:gameId/prizes")
      .setPath(GamePath)
      .setPayload(PrizeInput)
      .addSuccess(Prize, { status: 201 })
      .annotate(OpenApi.Summary, "Add a prize")
      .annotate(
        OpenApi.Description,
        `Appended to the draw order; later draws can land on it. At most ${MAX_PRIZES} prizes per game (409). ${MANAGE}`
      )
  )
  .add(
    HttpApiEndpoint.put("updatePrize", "/dashboard/prizes/:prizeId")
      .setPath(Schema.Struct({ prizeId: PrizeId }))
      .setPayload(PrizeInput)
      .addSuccess(Prize)
      .annotate(OpenApi.Summary, "Update a prize")
      .annotate(
        OpenApi.Description,
        "Replaces the prize's name, kind, points, weight and inventory (omitted `inventory`: unlimited). " +
          "`inventory` below the units already awarded is 409; so is a deactivated prize or a deleted game. " +
          `Plays already drawn keep what they won. ${MANAGE}`
      )
  )
  .add(
    HttpApiEndpoint.del("deletePrize", "/dashboard/prizes/:prizeId")
      .setPath(Schema.Struct({ prizeId: PrizeId }))
      .addSuccess(Prize)
      .annotate(OpenApi.Summary, "Delete a prize")
      .annotate(
        OpenApi.Description,
        "A prize never awarded is deleted (answered as it was); one that was awarded is deactivated (answered with " +
          `\`active: false\`) so its plays keep it, and is never drawn again. ${MANAGE}`
      )
  )
  .add(
    HttpApiEndpoint.get("plays", "/dashboard/games/:gameId/plays")
      .setPath(GamePath)
      .setUrlParams(PlayListParams)
      .addSuccess(PlayList)
      .annotate(OpenApi.Summary, "Recent plays")
      .annotate(OpenApi.Description, `The game's plays of both modes, newest first, optionally of one \`status\`. ${READ}`)
  )
  .add(
    HttpApiEndpoint.get("stats", "/dashboard/games/:gameId/stats")
      .setPath(GamePath)
      .addSuccess(GameStats)
      .annotate(OpenApi.Summary, "Play and win stats, prize distribution")
      .annotate(OpenApi.Description, `Counted in the database over every play of the game. ${READ}`)
  )
  .add(
    HttpApiEndpoint.post("issue", "/dashboard/games/:gameId/issue")
      .setPath(GamePath)
      .setPayload(IssuePlay)
      .addSuccess(Play, { status: 201 })
      .annotate(OpenApi.Summary, "Grant a play (scratch card) to a customer")
      .annotate(
        OpenApi.Description,
        "Issues an `issued` play of a `scratch` game (another type is 409) to a customer of the game's store (any " +
          "other is 404); it is drawn when revealed (`POST /v1/plays/{id}/reveal` or the hosted " +
          `\`POST /play/{playId}/reveal?t=…\`; the hosted card is the play's \`card_url\`, to give the customer). ${REFUSED} ${MANAGE}`
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Games (console)")
  .annotate(OpenApi.Description, "Games of chance (wheels and scratch cards) with prizes and inventory, their plays and statistics.")
{}

export class GamesGroup extends HttpApiGroup.make("games")
  .add(
    HttpApiEndpoint.post("play", "/v1/games/:id/play")
      .setPath(Schema.Struct({ id: GameId }))
      .setPayload(PlayInput)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Play, { status: 201 })
      .addError(IdempotencyConflictResponse)
      .annotate(OpenApi.Summary, "Play once; draws a weighted prize honoring inventory")
      .annotate(
        OpenApi.Description,
        "Plays a `spin` or `lucky_draw` game of the API key's store (a `scratch` game is 409: issue cards instead) " +
          `for a customer of the key's store and mode (any other is 404), and answers the drawn play. ${DRAW} ${REFUSED} ` +
          "With `Idempotency-Key`, a retry answers the same play and draws nothing again."
      )
  )
  .add(
    HttpApiEndpoint.post("reveal", "/v1/plays/:id/reveal")
      .setPath(Schema.Struct({ id: PlayId }))
      .addSuccess(Play, { status: 201 })
      .annotate(OpenApi.Summary, "Reveal an issued play; draws the prize")
      .annotate(
        OpenApi.Description,
        `Draws an \`issued\` scratch card of the key's store and mode (any other play is 404). ${DRAW} Revealing ` +
          "again, or revealing an instant play, answers the play as it is. A card of a deleted game is 409."
      )
  )
  .add(
    HttpApiEndpoint.get("customerPlays", "/v1/customers/:id/plays")
      .setPath(Schema.Struct({ id: CustomerId }))
      .setUrlParams(PlayListParams)
      .addSuccess(PlayList)
      .annotate(OpenApi.Summary, "List a customer's plays, filterable by status")
      .annotate(OpenApi.Description, "A customer of the API key's store and mode; newest first; `status` filters.")
  )
  .pipe(authenticated("apiKey"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Games")
  .annotate(OpenApi.Description, "Plays of games through the merchant API: play, reveal a scratch card, a customer's plays.")
{}

const HOSTED_LIMITS = "Rate limited per client address (plays and reveals together, " +
  "HOSTED_PLAYS_PER_ADDRESS_PER_MINUTE), per customer (HOSTED_PLAYS_PER_CUSTOMER_PER_MINUTE) and per card " +
  "(CARD_REVEALS_PER_PLAY_PER_MINUTE): 429 `rate_limited` with Retry-After beyond."

const HOSTED = "No API key or session. JSON by default; a request that prefers `text/html` (a browser) gets the page."
const CARD = "The card's token `t` (from the play's `card_url`) is the credential: a missing, wrong or revoked token " +
  "is 404 `not_found`, exactly as an unknown play; it opens this play only. The answer shows no customer id."

export class HostedGamesGroup extends HttpApiGroup.make("hostedGames")
  .add(
    HttpApiEndpoint.get("game", "/play/game/:gameId")
      .setPath(GamePath)
      .setUrlParams(HostedGameParams)
      .addSuccess(HostedGame)
      .annotate(OpenApi.Summary, "Hosted game metadata")
      .annotate(
        OpenApi.Description,
        "The store's name and branding, the game, its active prizes and whether it can be played, its seed " +
          "commitment (and seed once disclosed). Opened with a customer's id and token " +
          "(`?c={customerId}&t=…`, the token of its `wallet_url`, as the wallet's game links carry them), `player` " +
          "says where that customer plays, and the page of a spin or lucky-draw game has a play button (it calls " +
          "`POST /play/game/{gameId}/play?c=…&t=…`), shows the result with a spin and links to the wallet. A missing " +
          `or wrong pair shows the game without a play button. ${HOSTED}`
      )
  )
  .add(
    HttpApiEndpoint.post("instantPlay", "/play/game/:gameId/play")
      .setPath(GamePath)
      .setUrlParams(HostedPlayParams)
      .addSuccess(HostedPlay, { status: 201 })
      .annotate(OpenApi.Summary, "Instant play of a spin or lucky-draw game")
      .annotate(
        OpenApi.Description,
        "The hosted instant play for the customer `c`, opened by its public token `t` (the token of its " +
          "`wallet_url`). `c` missing: 400; not a customer of the game's store, or `t` missing, wrong or revoked: " +
          "404 `not_found` alike. Mode follows the customer. Answers the play with its `card_url` (no customer " +
          `id). ${DRAW} ${REFUSED} ${HOSTED_LIMITS}`
      )
      .addError(RateLimitedResponse)
  )
  .add(
    HttpApiEndpoint.get("play", "/play/:playId")
      .setPath(Schema.Struct({ playId: PlayId }))
      .setUrlParams(CardParams)
      .addSuccess(HostedPlay)
      .annotate(OpenApi.Summary, "Hosted play or scratch-card state")
      .annotate(
        OpenApi.Description,
        "A play with its game and store, opened through its `card_url` (`/play/{playId}?t=…`); a won voucher's code " +
          `shows here. The page of an issued scratch card has a scratch-to-reveal area. ${CARD} ${HOSTED}`
      )
  )
  .add(
    HttpApiEndpoint.post("reveal", "/play/:playId/reveal")
      .setPath(Schema.Struct({ playId: PlayId }))
      .setUrlParams(CardParams)
      .addSuccess(HostedPlay, { status: 201 })
      .annotate(OpenApi.Summary, "Reveal a scratch card")
      .annotate(
        OpenApi.Description,
        `Draws an issued scratch card, with the token of its \`card_url\`; a second reveal answers the same result. ${CARD} ` +
          HOSTED_LIMITS
      )
      .addError(RateLimitedResponse)
  )
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .addError(RateLimitedResponse)
  .annotate(OpenApi.Title, "Hosted games")
  .annotate(OpenApi.Description, "The customer-facing game and play pages (opened with their capability).")
{}

// ---------------------------------------------------------------------------------------------
// Fairness: re-running a game's draws (route-free)
// ---------------------------------------------------------------------------------------------

/** The prizes a game could draw from between two changes of its prize table, as they stood after the change. */
export interface PrizeTable {
  /** Grows by one with every change of the game's prizes (add, update, delete). */
  readonly version: number
  /** In draw (creation) order: the active prizes, with the units each had left as `remaining`. */
  readonly prizes: ReadonlyArray<FairPrize>
}

export interface DrawnPlay {
  readonly id: string
  readonly prizeId: string | null
  /** The prize table the play was drawn under. */
  readonly version: number
}

/**
 * Re-runs every draw of a game from its disclosed seed: the plays in draw order, each under the prize table in
 * force when it was drawn (a change of the prizes starts a new table, snapshotting what each had left), with
 * `verifyDraws` replaying each stretch of plays under one table. Valid when the seed matches the commitment and
 * every recomputed prize is the recorded one.
 */
export const verifyGame = (input: {
  readonly seed: string
  readonly seedCommitment: string
  readonly tables: ReadonlyArray<PrizeTable>
  readonly plays: ReadonlyArray<DrawnPlay>
}): Effect.Effect<FairnessReport> =>
  Effect.gen(function*() {
    const tables = new Map(input.tables.map((table) => [table.version, table.prizes]))
    const stretches: Array<{ version: number; plays: Array<DrawnPlay> }> = []
    for (const play of input.plays) {
      const last = stretches[stretches.length - 1]
      if (last !== undefined && last.version === play.version) last.plays.push(play)
      else stretches.push({ version: play.version, plays: [play] })
    }
    let commitmentMatches = true
    const mismatches: Array<FairnessReport["mismatches"][number]> = []
    if (stretches.length === 0) {
      commitmentMatches = (yield* verifyDraws({ seed: input.seed, seedCommitment: input.seedCommitment, prizes: [], plays: [] }))
        .commitmentMatches
    }
    for (const stretch of stretches) {
      const report = yield* verifyDraws({
        seed: input.seed,
        seedCommitment: input.seedCommitment,
        prizes: tables.get(stretch.version) ?? [],
        plays: stretch.plays.map((play) => ({ id: play.id, prizeId: play.prizeId }))
      })
      commitmentMatches = commitmentMatches && report.commitmentMatches
      mismatches.push(...report.mismatches)
    }
    return {
      commitmentMatches,
      plays: input.plays.length,
      mismatches,
      valid: commitmentMatches && mismatches.length === 0
    }
  })
