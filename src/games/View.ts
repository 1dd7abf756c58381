/** Rows of games as their wire objects (API.md "Games"). */
import { Schema } from "effect"
import {
  Game,
  GameStats,
  HostedGame,
  HostedGameStore,
  HostedPlay,
  HostedPlayer,
  HostedPrize,
  Play,
  PlayProof,
  Prize,
  PrizeStats
} from "../../domain/Games.ts"
import type { LinkUrls } from "../platform/PublicLinks.ts"
import type { GameRow, GameStatsRow, PlayViewRow, PrizeRow } from "./Repo.ts"


export const toPrize = (row: PrizeRow): Prize =>
  new Prize({
    id: row.id,
    object: "prize",
    name: row.name,
    kind: row.kind,
    points: row.points,
    weight: row.weight,
    inventory: row.inventory,
    awarded: row.awarded,
    active: row.active,
    created_at: row.created_at.toISOString()
  })

/** Whether the game has ended at `now`: its end passed, or it was deleted. Its seed is disclosed from then. */
export const hasEnded = (game: GameRow, now: Date): boolean =>
  game.deleted_at !== null || (game.ends_at !== null && game.ends_at.getTime() <= now.getTime())

/** Why the game cannot be played at `now`, or undefined when it can. */
export const notPlayableReason = (game: GameRow, now: Date): string | undefined => {
  if (game.deleted_at !== null) return `Game ${game.id} was deleted`
  if (!game.active) return `Game ${game.id} is not active`
  if (game.starts_at !== null && game.starts_at.getTime() > now.getTime()) {
    return `Game ${game.id} starts at ${game.starts_at.toISOString()}`
  }
  if (game.ends_at !== null && game.ends_at.getTime() <= now.getTime()) {
    return `Game ${game.id} ended at ${game.ends_at.toISOString()}`
  }
  return undefined
}

/** A prize a draw can land on now: active, with inventory left. */
export const isAvailable = (prize: PrizeRow) => prize.active && (prize.inventory === null || prize.awarded < prize.inventory)

export const toGame = (row: GameRow, prizes: ReadonlyArray<PrizeRow>, seed: string | null): Game =>
  new Game({
    id: row.id,
    object: "game",
    store_id: row.store_id,
    name: row.name,
    type: row.type,
    active: row.active,
    max_plays_per_customer: row.max_plays_per_customer,
    starts_at: row.starts_at?.toISOString() ?? null,
    ends_at: row.ends_at?.toISOString() ?? null,
    seed_commitment: row.seed_commitment,
    seed,
    prizes: prizes.map(toPrize),
    deleted_at: row.deleted_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString()
  })

/**
 * A play is built from rows the repo has already decoded, so its constructors skip checking it again (the
 * `true` below), as the payment's do (src/payments/View.ts): on the play path that check cost more than
 * the draw.
 */
const DECODED_ALREADY = true

/** The play as the merchant sees it, with the `card_url` to give its customer (under `links`). */
export const toPlay = (row: PlayViewRow, links: LinkUrls): Play =>
  new Play({
    id: row.id,
    object: "play",
    game_id: row.game_id,
    customer_id: row.customer_id,
    status: row.status,
    prize: row.prize_id === null || row.prize_kind === null
      ? null
      : new Prize({
        id: row.prize_id,
        object: "prize",
        name: row.prize_name ?? "",
        kind: row.prize_kind,
        points: row.prize_points,
        weight: row.prize_weight ?? 1,
        inventory: row.prize_inventory,
        awarded: row.prize_awarded ?? 0,
        active: row.prize_active ?? false,
        created_at: row.prize_created_at?.toISOString() ?? row.created_at.toISOString()
      }, DECODED_ALREADY),
    ...(row.voucher_code === null ? {} : { voucher_code: row.voucher_code }),
    proof: new PlayProof({ seed_commitment: row.seed_commitment, nonce: row.id }, DECODED_ALREADY),
    card_url: links.card(row.id, row.customer_link_version),
    created_at: row.created_at.toISOString(),
    revealed_at: row.revealed_at?.toISOString() ?? null
  }, DECODED_ALREADY)

export const encodePlay = Schema.encodeSync(Play)

/** The play as its card's token shows it: the same, with its game and store, and no customer id. */
export const toHostedPlay = (
  row: PlayViewRow,
  game: Pick<GameRow, "name" | "type">,
  store: HostedGameStore,
  links: LinkUrls
): HostedPlay => {
  const { customer_id: _customerId, ...play } = toPlay(row, links)
  return new HostedPlay({ ...play, object: "hosted_play", game: { name: game.name, type: game.type, store } })
}

export const toStats = (counts: typeof GameStatsRow.Type, prizes: ReadonlyArray<PrizeRow>): GameStats =>
  new GameStats({
    object: "game_stats",
    plays: counts.plays,
    issued: counts.issued,
    wins: counts.wins,
    win_rate: counts.plays === 0 ? 0 : Math.round((counts.wins / counts.plays) * 10_000) / 10_000,
    prizes: prizes.map((prize) =>
      new PrizeStats({
        prize_id: prize.id,
        name: prize.name,
        awarded: prize.awarded,
        inventory_left: prize.inventory === null ? null : prize.inventory - prize.awarded
      })
    )
  })

export const toHostedGame = (
  row: GameRow,
  prizes: ReadonlyArray<PrizeRow>,
  store: HostedGameStore,
  seed: string | null,
  now: Date,
  player: HostedPlayer | null
): HostedGame => {
  const active = prizes.filter((prize) => prize.active)
  return new HostedGame({
    id: row.id,
    object: "hosted_game",
    store,
    name: row.name,
    type: row.type,
    playable: notPlayableReason(row, now) === undefined && active.length > 0,
    starts_at: row.starts_at?.toISOString() ?? null,
    ends_at: row.ends_at?.toISOString() ?? null,
    seed_commitment: row.seed_commitment,
    seed,
    prizes: active.map((prize) =>
      new HostedPrize({
        id: prize.id,
        name: prize.name,
        kind: prize.kind,
        points: prize.points,
        weight: prize.weight,
        available: isAvailable(prize)
      })
    ),
    player
  })
}
