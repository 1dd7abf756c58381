/**
 * The route-free fairness functions (domain/GameFairness.ts): draws follow the weights (a chi-square test over
 * 10,000 draws, seeded so it cannot flake), never pass a prize's inventory, and a re-run from the disclosed
 * seed reproduces every recorded prize while catching a tampered play or a seed that does not match.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { draw, drawKey, type FairPrize, type RecordedPlay, seedCommitment, verifyDraws } from "../../domain/GameFairness.ts"

const SEED = "b6f1c0de-fairness-test-seed"
const playId = (index: number) => `play_${index.toString().padStart(24, "0")}`

/** Plays `count` draws in order, consuming inventory as the entity does; answers the recorded plays. */
const playAll = (seed: string, prizes: ReadonlyArray<FairPrize>, count: number) =>
  Effect.gen(function*() {
    const key = yield* drawKey(seed)
    const remaining = new Map(prizes.map((prize) => [prize.id, prize.remaining]))
    const plays: Array<RecordedPlay> = []
    for (let index = 0; index < count; index++) {
      const current = prizes.map((prize) => ({ ...prize, remaining: remaining.get(prize.id) ?? null }))
      const prize = yield* draw(key, playId(index), current)
      if (prize !== null && prize.remaining !== null) remaining.set(prize.id, prize.remaining - 1)
      plays.push({ id: playId(index), prizeId: prize?.id ?? null })
    }
    return plays
  })

const chiSquare = (observed: ReadonlyArray<number>, expected: ReadonlyArray<number>) =>
  observed.reduce((sum, count, index) => sum + (count - expected[index]!) ** 2 / expected[index]!, 0)

/** Chi-square critical value for 3 degrees of freedom at p = 0.001. */
const CRITICAL_3DF_P001 = 16.266

describe("game fairness", () => {
  const weighted: ReadonlyArray<FairPrize> = [
    { id: "prz_a", weight: 1, remaining: null },
    { id: "prz_b", weight: 2, remaining: null },
    { id: "prz_c", weight: 3, remaining: null },
    { id: "prz_d", weight: 14, remaining: null }
  ]

  it.effect("10,000 draws with unlimited inventory match the weights (chi-square, p > 0.001)", () =>
    Effect.gen(function*() {
      const plays = yield* playAll(SEED, weighted, 10_000)
      const observed = weighted.map((prize) => plays.filter((play) => play.prizeId === prize.id).length)
      const total = weighted.reduce((sum, prize) => sum + prize.weight, 0)
      const expected = weighted.map((prize) => (10_000 * prize.weight) / total)
      expect(observed.reduce((a, b) => a + b, 0)).toBe(10_000)
      expect(chiSquare(observed, expected)).toBeLessThan(CRITICAL_3DF_P001)
      // The test has power: the same draws are far from a uniform split, which it must reject.
      expect(chiSquare(observed, weighted.map(() => 2_500))).toBeGreaterThan(CRITICAL_3DF_P001)
    }))

  it.effect("a prize is never awarded past its inventory; with nothing left the draw is nothing", () =>
    Effect.gen(function*() {
      const prizes: ReadonlyArray<FairPrize> = [
        { id: "prz_win", weight: 5, remaining: 10 },
        { id: "prz_lose", weight: 1, remaining: 3 }
      ]
      const plays = yield* playAll(SEED, prizes, 200)
      expect(plays.filter((play) => play.prizeId === "prz_win")).toHaveLength(10)
      expect(plays.filter((play) => play.prizeId === "prz_lose")).toHaveLength(3)
      expect(plays.filter((play) => play.prizeId === null)).toHaveLength(187)
    }))

  it.effect("re-running every draw from the disclosed seed reproduces each recorded prize", () =>
    Effect.gen(function*() {
      const prizes: ReadonlyArray<FairPrize> = [
        { id: "prz_win", weight: 2, remaining: 25 },
        { id: "prz_small", weight: 7, remaining: null },
        { id: "prz_none", weight: 11, remaining: null }
      ]
      const plays = yield* playAll(SEED, prizes, 500)
      const commitment = yield* seedCommitment(SEED)
      expect(commitment).toMatch(/^[0-9a-f]{64}$/)

      const report = yield* verifyDraws({ seed: SEED, seedCommitment: commitment, prizes, plays })
      expect(report).toEqual({ commitmentMatches: true, plays: 500, mismatches: [], valid: true })

      const tamperedIndex = plays.findIndex((play) => play.prizeId !== "prz_win")
      const tampered = plays.map((play, index) => index === tamperedIndex ? { ...play, prizeId: "prz_win" } : play)
      const caught = yield* verifyDraws({ seed: SEED, seedCommitment: commitment, prizes, plays: tampered })
      expect(caught.valid).toBe(false)
      expect(caught.mismatches[0]).toEqual({
        playId: plays[tamperedIndex]!.id,
        recorded: "prz_win",
        recomputed: plays[tamperedIndex]!.prizeId
      })

      const otherSeed = yield* verifyDraws({ seed: `${SEED}x`, seedCommitment: commitment, prizes, plays })
      expect(otherSeed.commitmentMatches).toBe(false)
      expect(otherSeed.valid).toBe(false)
    }))

  it.effect("the commitment is the SHA-256 hex of the seed", () =>
    Effect.gen(function*() {
      expect(yield* seedCommitment("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }))
})
