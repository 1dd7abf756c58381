/**
 * Provable fairness of game draws (API.md "Games"), route-free so that anyone holding a game's disclosed seed
 * can re-run its draws: the service draws with these same functions, and `verifyDraws` replays every play.
 *
 * - A game commits to a secret seed: `seed_commitment` = SHA-256 hex of the seed's UTF-8 bytes.
 * - A draw's randomness is HMAC-SHA256(key = seed, message = play id), read as a 256-bit unsigned integer r.
 * - Among the prizes with inventory left, in their canonical order (creation order), with total weight W, the
 *   draw lands on the slot floor(r × W / 2^256): the prize whose cumulative weight range holds it. Using all 256
 *   bits makes the bias at most W / 2^256, nothing a test or an attacker can see. With no prize left, the draw
 *   is "nothing" (null).
 *
 * Web Crypto (`crypto.subtle`) is used so the same code runs in the service, in a script and in a browser.
 */
import { Effect } from "effect"

export interface FairPrize {
  readonly id: string
  readonly weight: number
  /** Units left to award; null = unlimited. */
  readonly remaining: number | null
}

export interface RecordedPlay {
  readonly id: string
  /** The prize the play recorded, or null for "nothing". */
  readonly prizeId: string | null
}

export interface DrawMismatch {
  readonly playId: string
  readonly recorded: string | null
  readonly recomputed: string | null
}

export interface FairnessReport {
  readonly commitmentMatches: boolean
  readonly plays: number
  readonly mismatches: ReadonlyArray<DrawMismatch>
  readonly valid: boolean
}

/** The imported HMAC key (the Web Crypto `CryptoKey`, named structurally so no DOM typings are needed). */
export type DrawKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>

const encoder = new TextEncoder()
const TWO_256 = 1n << 256n

const hex = (bytes: ArrayBuffer): string =>
  Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, "0")).join("")

/** SHA-256 hex of the seed: what a game publishes before any play. */
export const seedCommitment = (seed: string): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", encoder.encode(seed))).pipe(Effect.map(hex))

/** The HMAC key of a seed, imported once per game rather than per draw. */
export const drawKey = (seed: string): Effect.Effect<DrawKey> =>
  Effect.promise(() =>
    crypto.subtle.importKey("raw", encoder.encode(seed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
  )

/** HMAC-SHA256(seed, play id) as a 256-bit unsigned integer. */
export const drawRandomness = (key: DrawKey, playId: string): Effect.Effect<bigint> =>
  Effect.promise(() => crypto.subtle.sign("HMAC", key, encoder.encode(playId))).pipe(
    Effect.map((signature) => BigInt(`0x${hex(signature)}`))
  )

/** The prize a randomness value lands on among the prizes with inventory left (pure; null = "nothing"). */
export const pickPrize = <P extends FairPrize>(prizes: ReadonlyArray<P>, randomness: bigint): P | null => {
  const eligible = prizes.filter((prize) => prize.weight >= 1 && (prize.remaining === null || prize.remaining > 0))
  const total = eligible.reduce((sum, prize) => sum + BigInt(prize.weight), 0n)
  if (total === 0n) return null
  const slot = (randomness * total) / TWO_256
  let upper = 0n
  for (const prize of eligible) {
    upper += BigInt(prize.weight)
    if (slot < upper) return prize
  }
  return null
}

/** One draw: the prize HMAC-SHA256(seed, play id) picks among `prizes`. */
export const draw = <P extends FairPrize>(key: DrawKey, playId: string, prizes: ReadonlyArray<P>) =>
  drawRandomness(key, playId).pipe(Effect.map((randomness) => pickPrize(prizes, randomness)))

/**
 * Re-runs every draw of a game from its disclosed seed: checks the seed against the commitment, then replays
 * the plays in the order they were drawn, starting from each prize's initial inventory (null = unlimited) and
 * taking one unit of the prize each play recorded, and reports every play whose recomputed prize differs.
 */
export const verifyDraws = (input: {
  readonly seed: string
  readonly seedCommitment: string
  /** In canonical (creation) order, with their initial inventory as `remaining`. */
  readonly prizes: ReadonlyArray<FairPrize>
  /** In draw order. */
  readonly plays: ReadonlyArray<RecordedPlay>
}): Effect.Effect<FairnessReport> =>
  Effect.gen(function*() {
    const commitment = yield* seedCommitment(input.seed)
    const key = yield* drawKey(input.seed)
    const remaining = new Map(input.prizes.map((prize) => [prize.id, prize.remaining]))
    const mismatches: Array<DrawMismatch> = []
    for (const play of input.plays) {
      const current = input.prizes.map((prize) => ({ ...prize, remaining: remaining.get(prize.id) ?? null }))
      const recomputed = (yield* draw(key, play.id, current))?.id ?? null
      if (recomputed !== play.prizeId) mismatches.push({ playId: play.id, recorded: play.prizeId, recomputed })
      // The recorded award is what consumed inventory, so the replay follows it even past a mismatch.
      const left = play.prizeId === null ? undefined : remaining.get(play.prizeId)
      if (play.prizeId !== null && left !== undefined && left !== null) remaining.set(play.prizeId, left - 1)
    }
    const commitmentMatches = commitment === input.seedCommitment.toLowerCase()
    return {
      commitmentMatches,
      plays: input.plays.length,
      mismatches,
      valid: commitmentMatches && mismatches.length === 0
    }
  })
