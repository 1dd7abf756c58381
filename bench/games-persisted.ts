/**
 * Game draws end to end, recorded in the database (`npm run bench:games`, after the in-process ceiling of
 * bench/games.ts): instant plays over HTTP (`POST /v1/games/{id}/play`), each a message to the game's
 * GameInventory entity, which applies the plays waiting together in one SQL transaction (slots, draws, units,
 * plays, outbox), points credited to the wallet after it.
 *
 * 1. A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server), or the embedded
 *    one; the service as a child process (the bundle `npm start` runs; BENCH_FROM_SOURCE=1: the sources
 *    through tsx); over HTTP a user, a store, a test API key,
 *    BENCH_CUSTOMERS customers (50) and BENCH_GAMES + 1 spin games (16 + 1) of four prizes, one of them
 *    points (unlimited inventory, so every draw runs the whole path).
 * 2. One game: BENCH_PLAYS plays (1,000) sent BENCH_CONCURRENCY at a time (64) to one game — the entity's
 *    serialized ceiling: plays per second and the p50/p99 answer time.
 * 3. BENCH_GAMES games (16): BENCH_PLAYS_PER_GAME plays each (250), all games at once, the same concurrency per
 *    game: plays per second in all.
 * 4. A markdown table for the README (and the figures as JSON to BENCH_SUMMARY_FILE).
 */
import { cpus } from "node:os"
import { randomBytes } from "node:crypto"
import {
  formatInt,
  formatMs,
  log,
  openDatabase,
  percentile,
  positiveNumber,
  postJson,
  runBench,
  setLogPrefix,
  startService,
  writeSummary
} from "./support.ts"

setLogPrefix("bench:games")

const CUSTOMERS = Math.round(positiveNumber("BENCH_CUSTOMERS", 50))
const GAMES = Math.round(positiveNumber("BENCH_GAMES", 16))
const PLAYS = Math.round(positiveNumber("BENCH_PLAYS", 1_000))
const PLAYS_PER_GAME = Math.round(positiveNumber("BENCH_PLAYS_PER_GAME", 250))
const CONCURRENCY = Math.round(positiveNumber("BENCH_CONCURRENCY", 64))

const PRIZES = [
  { name: "100 points", kind: "points", points: 100, weight: 1 },
  { name: "Free latte", kind: "voucher", weight: 2 },
  { name: "Cookie", kind: "voucher", weight: 3 },
  { name: "Try again", kind: "nothing", weight: 14 }
]

/** `count` plays of `gameId` sent `concurrency` at a time; the answer time of each. */
const playMany = async (baseUrl: string, key: string, gameId: string, customers: ReadonlyArray<string>, count: number, concurrency: number) => {
  const latencies: Array<number> = []
  let next = 0
  let failures = 0
  const worker = async () => {
    while (next < count) {
      const index = next++
      const started = performance.now()
      const response = await fetch(new URL(`/v1/games/${gameId}/play`, baseUrl), {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ customer_id: customers[index % customers.length] })
      })
      await response.arrayBuffer()
      if (response.status !== 201) failures++
      latencies.push(performance.now() - started)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  if (failures > 0) throw new Error(`${failures} of ${count} plays of ${gameId} did not answer 201`)
  return latencies
}

runBench(async () => {
  const database = await openDatabase()
  // BENCH_CPU_PROFILE_DIR: the service runs under V8's CPU profiler, its .cpuprofile written there on exit.
  const profileDir = process.env["BENCH_CPU_PROFILE_DIR"]
  const service = await startService(database, {
    fromSource: process.env["BENCH_FROM_SOURCE"] === "1",
    ...(profileDir === undefined ? {} : { nodeOptions: ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] })
  })
  const { baseUrl } = service
  const session = await postJson(baseUrl, "/auth/register", {
    email: `bench-${randomBytes(5).toString("hex")}@example.test`,
    password: "correct horse battery staple"
  })
  const token = session.access_token as string
  const store = await postJson(baseUrl, "/stores", { name: "Bench Store" }, token)
  const key = (await postJson(baseUrl, "/api-keys", { store_id: store.id, mode: "test" }, token)).secret as string
  const customers: Array<string> = []
  for (let i = 0; i < CUSTOMERS; i++) customers.push((await postJson(baseUrl, "/v1/customers", { external_id: `bench-${i}` }, key)).id)
  const games: Array<string> = []
  for (let i = 0; i <= GAMES; i++) {
    games.push((await postJson(baseUrl, `/dashboard/stores/${store.id}/games`, { name: `Wheel ${i}`, type: "spin", max_plays_per_customer: null, prizes: PRIZES }, token)).id)
  }
  log(`${CUSTOMERS} customers, ${GAMES + 1} games; warming up`)
  await playMany(baseUrl, key, games[0]!, customers, 200, CONCURRENCY)

  const oneStarted = performance.now()
  const one = await playMany(baseUrl, key, games[0]!, customers, PLAYS, CONCURRENCY)
  const oneSeconds = (performance.now() - oneStarted) / 1000
  const oneSorted = [...one].sort((a, b) => a - b)
  log(`one game: ${formatInt(PLAYS / oneSeconds)} plays/s`)

  const manyStarted = performance.now()
  const many = await Promise.all(games.slice(1).map((game) => playMany(baseUrl, key, game, customers, PLAYS_PER_GAME, CONCURRENCY)))
  const manySeconds = (performance.now() - manyStarted) / 1000
  const manySorted = many.flat().sort((a, b) => a - b)
  log(`${GAMES} games: ${formatInt((PLAYS_PER_GAME * GAMES) / manySeconds)} plays/s`)

  const problems = service.problems()
  await service.stop()
  const figures = {
    database: database.description,
    cpus: cpus().length,
    one_game: { plays: PLAYS, per_second: Math.round(PLAYS / oneSeconds), p50_ms: percentile(oneSorted, 50), p99_ms: percentile(oneSorted, 99) },
    many_games: {
      games: GAMES,
      plays: PLAYS_PER_GAME * GAMES,
      per_second: Math.round((PLAYS_PER_GAME * GAMES) / manySeconds),
      p50_ms: percentile(manySorted, 50),
      p99_ms: percentile(manySorted, 99)
    },
    problems: problems.count
  }
  writeSummary(figures)
  console.log(`\nGame draws over HTTP, recorded (${database.description}, ${cpus().length} CPUs, ${CONCURRENCY} in flight per game)\n`)
  console.log("| Plays (`POST /v1/games/{id}/play`) | plays/s | p50 | p99 |")
  console.log("| --- | ---: | ---: | ---: |")
  console.log(`| one game (${formatInt(PLAYS)} plays) | ${formatInt(figures.one_game.per_second)} | ${formatMs(figures.one_game.p50_ms)} | ${formatMs(figures.one_game.p99_ms)} |`)
  console.log(
    `| ${GAMES} games at once (${formatInt(PLAYS_PER_GAME * GAMES)} plays) | ${formatInt(figures.many_games.per_second)} | ` +
      `${formatMs(figures.many_games.p50_ms)} | ${formatMs(figures.many_games.p99_ms)} |`
  )
  if (problems.count > 0) log(`the service logged ${problems.count} problems, first: ${problems.first.join(" | ")}`)
})
