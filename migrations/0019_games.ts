/**
 * Games: games with a sealed seed, their weighted prizes, the prize tables draws were made under, and plays
 * (instant plays and scratch cards).
 *
 * - A prize is never awarded past its inventory, whatever code sends: `awarded <= inventory` is a CHECK, and
 *   draws take a unit with a guarded UPDATE under the game's row lock.
 * - Every message of a game locks the game's row first (its draw counter is raised), so a customer's plays are
 *   counted (index `game_plays_customer_game`) with no other play of the game in flight: racing plays cannot pass
 *   `max_plays_per_customer`.
 * - Each change of a game's prizes snapshots the prize table (what each active prize had left) as a new
 *   version; every draw records its version and its place in the game's draw order, so the draws can be
 *   re-run from the seed once it is disclosed (domain/Games.ts `verifyGame`).
 * - The `games` outbox consumer credits points prizes to wallets after the draw commits (a repair path: the
 *   service credits at once too; the wallet's message key makes it once).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { subscribeOutboxConsumer } from "./0010_outbox_consumers.ts"

const GAMES_CONSUMER = "games"
const GAME_PRIZE_EVENTS = ["game.prize_awarded"] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE games (
      id                      text PRIMARY KEY,
      store_id                text NOT NULL REFERENCES stores (id),
      name                    text NOT NULL,
      type                    text NOT NULL CHECK (type IN ('spin', 'lucky_draw', 'scratch')),
      active                  boolean NOT NULL,
      max_plays_per_customer  integer CHECK (max_plays_per_customer >= 1),
      starts_at               timestamptz(3),
      ends_at                 timestamptz(3),
      seed_sealed             text NOT NULL,
      seed_commitment         text NOT NULL,
      prize_version           integer NOT NULL DEFAULT 0,
      draws                   bigint NOT NULL DEFAULT 0,
      deleted_at              timestamptz(3),
      created_at              timestamptz(3) NOT NULL,
      updated_at              timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX games_store ON games (store_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`

  yield* sql`
    CREATE TABLE game_prizes (
      id          text PRIMARY KEY,
      game_id     text NOT NULL REFERENCES games (id),
      position    bigserial NOT NULL,
      name        text NOT NULL,
      kind        text NOT NULL CHECK (kind IN ('points', 'voucher', 'nothing')),
      points      integer CHECK (points > 0),
      weight      integer NOT NULL CHECK (weight >= 1),
      inventory   integer CHECK (inventory >= 0),
      awarded     integer NOT NULL DEFAULT 0 CHECK (awarded >= 0),
      active      boolean NOT NULL,
      created_at  timestamptz(3) NOT NULL,
      CHECK (inventory IS NULL OR awarded <= inventory),
      CHECK ((kind = 'points') = (points IS NOT NULL))
    )`
  yield* sql`CREATE INDEX game_prizes_game ON game_prizes (game_id, position)`

  yield* sql`
    CREATE TABLE game_prize_tables (
      game_id     text NOT NULL REFERENCES games (id),
      version     integer NOT NULL,
      prizes      jsonb NOT NULL,
      created_at  timestamptz(3) NOT NULL,
      PRIMARY KEY (game_id, version)
    )`

  yield* sql`
    CREATE TABLE game_plays (
      id             text PRIMARY KEY,
      game_id        text NOT NULL REFERENCES games (id),
      store_id       text NOT NULL,
      livemode       boolean NOT NULL,
      customer_id    text NOT NULL REFERENCES customers (id),
      status         text NOT NULL CHECK (status IN ('issued', 'revealed', 'played')),
      prize_id       text REFERENCES game_prizes (id),
      voucher_code   text UNIQUE,
      draw_seq       bigint,
      prize_version  integer,
      created_at     timestamptz(3) NOT NULL,
      revealed_at    timestamptz(3),
      UNIQUE (game_id, draw_seq),
      CHECK ((status = 'issued') = (draw_seq IS NULL))
    )`
  yield* sql`CREATE INDEX game_plays_game ON game_plays (game_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX game_plays_customer ON game_plays (customer_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX game_plays_customer_game ON game_plays (customer_id, game_id)`
  yield* sql`CREATE INDEX game_plays_prize ON game_plays (prize_id) WHERE prize_id IS NOT NULL`

  yield* subscribeOutboxConsumer(GAMES_CONSUMER, GAME_PRIZE_EVENTS)
})
