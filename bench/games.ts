/**
 * Game draws (`npx tsx bench/games.ts`): how many draws per second the fairness computation itself gives —
 * HMAC-SHA256(seed, play id) and the weighted pick among prizes with inventory left (domain/GameFairness.ts) —
 * on one game drawn in sequence (as the per-game entity serializes its draws) and across BENCH_GAMES games
 * (16) drawn concurrently, BENCH_DRAWS draws per game (5,000). In-process, without the database: this is the
 * ceiling the draw computation puts on a game, not the end-to-end rate of persisted plays.
 */
import { Effect } from "effect"
import { draw, drawKey, type FairPrize } from "../domain/GameFairness.ts"

const positive = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  return Number.isInteger(value) && value > 0 ? value : fallback
}
const DRAWS = positive("BENCH_DRAWS", 5_000)
const GAMES = positive("BENCH_GAMES", 16)

const prizes: ReadonlyArray<FairPrize> = [
  { id: "prz_jackpot", weight: 1, remaining: 1_000_000 },
  { id: "prz_points", weight: 20, remaining: null },
  { id: "prz_voucher", weight: 9, remaining: null },
  { id: "prz_nothing", weight: 70, remaining: null }
]

const drawGame = (game: number) =>
  Effect.gen(function*() {
    const key = yield* drawKey(`bench-seed-${game}`)
    for (let index = 0; index < DRAWS; index++) yield* draw(key, `play_${game}_${index}`, prizes)
  })

const timed = <A>(effect: Effect.Effect<A>) =>
  Effect.gen(function*() {
    const started = performance.now()
    yield* effect
    return (performance.now() - started) / 1000
  })

const main = Effect.gen(function*() {
  yield* drawGame(-1) // warm-up
  const oneSeconds = yield* timed(drawGame(0))
  const manySeconds = yield* timed(
    Effect.forEach(Array.from({ length: GAMES }, (_, game) => game + 1), drawGame, { concurrency: "unbounded" })
  )
  const one = Math.round(DRAWS / oneSeconds)
  const many = Math.round((DRAWS * GAMES) / manySeconds)
  console.log("| Game draws (in-process, no database) | draws/s |")
  console.log("| --- | ---: |")
  console.log(`| one game, in sequence (${DRAWS.toLocaleString("en-US")} draws) | ${one.toLocaleString("en-US")} |`)
  console.log(`| ${GAMES} games, concurrently (${(DRAWS * GAMES).toLocaleString("en-US")} draws) | ${many.toLocaleString("en-US")} |`)
})

Effect.runPromise(main)
