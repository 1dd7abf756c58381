/**
 * Request overhead and start-up (`npm run bench:requests`; `npm run bench` runs it with the others):
 *
 * 1. The service as a child process on a fresh database (bench/support.ts), a user, a store and a test
 *    API key; beside it, on the same machine, its two references (bench/references.ts): the framework's
 *    floor (a minimal HttpApi server answering a constant `GET /health`) and the plain peer (node:http and
 *    node-postgres doing the service's database work for the list and creation, on the same database).
 * 2. Under autocannon, BENCH_CONNECTIONS (64) connections for BENCH_DURATION seconds (10) each, after a
 *    warm-up of every target, each path of the service and then its reference, in turn BENCH_ROUNDS (3)
 *    times, each ratio the median of the rounds':
 *    `GET /health` against the floor's, `GET /v1/payments?limit=1` (the API key) against the peer's, and
 *    `POST /v1/payments` against the peer's; each path's rate as a share of its reference's, and creation's
 *    p99 as a multiple of the peer's, all measured in the same run on the same machine.
 * 3. Cold start as `npm start` runs it (the bundle, scripts/start.mjs): the service stopped and started
 *    again on the same data directory (migrations done, the code not yet loaded), timed from the spawn
 *    to the first `/ready` 200. Once on the bench's database,
 *    and once on the embedded default (`npm start` with no DATABASE_URL), whose server starts too.
 *
 * With no PostgreSQL answering (the embedded database), the peer has no database to share and its rows are
 * left out. The figures go to BENCH_SUMMARY_FILE for bench/all.ts.
 */
import autocannon from "autocannon"
import { randomBytes } from "node:crypto"
import { startHttpApiFloor, startPlainPeer } from "./references.ts"
import {
  formatInt,
  formatMs,
  log,
  makeApiKey,
  openDatabase,
  positiveNumber,
  runBench,
  setLogPrefix,
  startService,
  tempDir,
  writeSummary,
  type BenchDatabase
} from "./support.ts"

setLogPrefix("bench:requests")

const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 10)
const CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 64))
const WARMUP_SECONDS = positiveNumber("BENCH_WARMUP", 3, true)
const ROUNDS = Math.round(positiveNumber("BENCH_ROUNDS", 3))
const PAYMENT_BODY = JSON.stringify({ amount: "12.50", currency: "USD" })

interface Load {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
}

interface Target {
  readonly url: string
  readonly token?: string
  /** POST this JSON body instead of a GET. */
  readonly body?: string
}

const load = async (target: Target, seconds: number): Promise<Load> => {
  const result = await autocannon({
    url: target.url,
    connections: CONNECTIONS,
    duration: seconds,
    ...(target.body === undefined ? {} : { method: "POST" as const, body: target.body }),
    headers: {
      ...(target.token === undefined ? {} : { authorization: `Bearer ${target.token}` }),
      ...(target.body === undefined ? {} : { "content-type": "application/json" })
    }
  })
  return {
    requestsPerSecond: result["2xx"] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors
  }
}

const describeLoad = (label: string, figures: Load) =>
  log(`  ${label}: ${formatInt(figures.requestsPerSecond)} req/s, p50 ${formatMs(figures.p50)}, p99 ${formatMs(figures.p99)}, non-2xx ${figures.non2xx}, errors ${figures.errors}`)

/** Spawn → first `/ready` 200 of a service on an existing data directory, in milliseconds. */
const coldStart = async (database: BenchDatabase, env: Record<string, string>): Promise<number> => {
  const first = await startService(database, { env })
  await waitReady(first.baseUrl)
  await first.stop()
  const spawned = performance.now()
  const second = await startService(database, { env })
  await waitReady(second.baseUrl)
  const elapsed = performance.now() - spawned
  await second.stop()
  return elapsed
}

const waitReady = async (baseUrl: string) => {
  for (;;) {
    const status = await fetch(new URL("/ready", baseUrl)).then((response) => response.status, () => 0)
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** One round of a path: the service's load, then its reference's, right after. */
interface Round {
  readonly service: Load
  readonly reference: Load
  /** The service's rate as a share of the reference's. */
  readonly share: number
  /** The service's p99 as a multiple of the reference's. */
  readonly p99Ratio: number
}

/** A path of the service beside its reference over BENCH_ROUNDS rounds, and the medians of their ratios. */
interface Pair extends Round {
  readonly rounds: ReadonlyArray<Round>
}

const percent = (share: number) => `${(share * 100).toFixed(0)} %`

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/**
 * The service and its reference loaded in turn, BENCH_ROUNDS times (S R S R S R): this machine's speed
 * changes from one minute to the next (the same build's `/health` ratio read 67 % and then 97 % in
 * consecutive runs of one pair), and a slow spell then falls on one side of a single pair. Each ratio is
 * the median of the rounds'; the loads answered are the round's whose share is the median.
 */
const measurePair = async (label: string, referenceLabel: string, service: Target, reference: Target): Promise<Pair> => {
  const rounds: Array<Round> = []
  for (let round = 1; round <= ROUNDS; round++) {
    const serviceFigures = await load(service, DURATION_SECONDS)
    describeLoad(`${label} (service, round ${round})`, serviceFigures)
    const referenceFigures = await load(reference, DURATION_SECONDS)
    describeLoad(`${label} (${referenceLabel}, round ${round})`, referenceFigures)
    rounds.push({
      service: serviceFigures,
      reference: referenceFigures,
      share: serviceFigures.requestsPerSecond / referenceFigures.requestsPerSecond,
      p99Ratio: serviceFigures.p99 / referenceFigures.p99
    })
  }
  const share = median(rounds.map((round) => round.share))
  const p99Ratio = median(rounds.map((round) => round.p99Ratio))
  const middle = rounds.find((round) => round.share === share)!
  const each = (values: ReadonlyArray<string>) => rounds.length > 1 ? ` (rounds: ${values.join(", ")})` : ""
  log(
    `  ${label}: ${percent(share)} of the ${referenceLabel}'s rate${each(rounds.map((round) => percent(round.share)))}, ` +
      `p99 ${p99Ratio.toFixed(1)} × its p99${each(rounds.map((round) => `${round.p99Ratio.toFixed(1)} ×`))}`
  )
  return { service: middle.service, reference: middle.reference, share, p99Ratio, rounds }
}

/** The keys of a JSON value, nested, with each leaf's type: what two answers must share to be the same shape. */
const shapeOf = (value: unknown, at = ""): Array<string> =>
  value !== null && typeof value === "object"
    ? Object.entries(value).flatMap(([key, inner]) =>
      // A map of the caller's own keys (metadata) has no fixed keys.
      key === "metadata" ? [`${at}.${key}:object`] : shapeOf(inner, `${at}.${Array.isArray(value) ? "[]" : key}`))
    : [`${at}:${value === null ? "null" : typeof value}`]

/**
 * The peer must answer what the service answers, or the comparison is not a comparison: one request of each
 * path to both, the status and the JSON shape compared (a setup error, before any measuring, if not).
 */
const checkSameAnswers = async (service: Target, peer: Target) => {
  const ask = async (target: Target) => {
    const response = await fetch(target.url, {
      method: target.body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${target.token}`, ...(target.body === undefined ? {} : { "content-type": "application/json" }) },
      ...(target.body === undefined ? {} : { body: target.body })
    })
    return { status: response.status, shape: [...new Set(shapeOf(await response.json()))].sort().join(" ") }
  }
  const [ours, theirs] = [await ask(service), await ask(peer)]
  if (ours.status !== theirs.status || ours.shape !== theirs.shape) {
    throw new Error(`the plain peer answers ${peer.url} unlike the service:\n  service ${ours.status} ${ours.shape}\n  peer    ${theirs.status} ${theirs.shape}`)
  }
}

runBench(async () => {
  const database = await openDatabase()
  log(`database: ${database.description}`)
  const service = await startService(database)
  const secret = await makeApiKey(service.baseUrl, JSON.parse(PAYMENT_BODY))
  const floor = await startHttpApiFloor()
  const peer = database.url === undefined ? undefined : await startPlainPeer(database.url)
  if (peer === undefined) log("the embedded database: no plain peer (it needs the service's database), so no list or creation reference")
  const on = (baseUrl: string, path: string, body?: string): Target => ({
    url: new URL(path, baseUrl).toString(),
    ...(body === undefined ? {} : { body })
  })
  const withKey = (target: Target): Target => ({ ...target, token: secret })
  const targets = {
    health: on(service.baseUrl, "/health"),
    floorHealth: on(floor.baseUrl, "/health"),
    list: withKey(on(service.baseUrl, "/v1/payments?limit=1")),
    create: withKey(on(service.baseUrl, "/v1/payments", PAYMENT_BODY)),
    peerList: peer === undefined ? undefined : withKey(on(peer.baseUrl, "/v1/payments?limit=1")),
    peerCreate: peer === undefined ? undefined : withKey(on(peer.baseUrl, "/v1/payments", PAYMENT_BODY))
  }
  if (targets.peerList !== undefined && targets.peerCreate !== undefined) {
    await checkSameAnswers(targets.list, targets.peerList)
    await checkSameAnswers(targets.create, targets.peerCreate)
  }
  if (WARMUP_SECONDS > 0) {
    log(`warm-up: ${WARMUP_SECONDS} s each`)
    for (const target of Object.values(targets)) if (target !== undefined) await load(target, WARMUP_SECONDS)
  }
  log(`${CONNECTIONS} connections × ${DURATION_SECONDS} s each; each path of the service, then its reference, ${ROUNDS} times`)
  const health = await measurePair("GET /health", "minimal HttpApi server", targets.health, targets.floorHealth)
  let list: Pair | undefined
  let create: Pair | undefined
  let listFigures: Load
  if (targets.peerList !== undefined && targets.peerCreate !== undefined) {
    list = await measurePair("GET /v1/payments?limit=1 (API key)", "plain peer", targets.list, targets.peerList)
    listFigures = list.service
    create = await measurePair("POST /v1/payments (API key)", "plain peer", targets.create, targets.peerCreate)
  } else {
    listFigures = await load(targets.list, DURATION_SECONDS)
    describeLoad("GET /v1/payments?limit=1 (API key)", listFigures)
  }
  const healthFigures = health.service
  const listShare = listFigures.requestsPerSecond / healthFigures.requestsPerSecond
  log(`  the list reaches ${(listShare * 100).toFixed(0)} % of /health`)
  const problems = service.problems()
  if (problems.count > 0) log(`the service logged ${problems.count} warnings, errors or 5xx; the first:\n${problems.first.join("\n")}`)
  await service.stop()
  await floor.stop()
  await peer?.stop()

  const sameKey = () => ({ DATA_DIR: tempDir("merchant-bench-start-"), MASTER_KEY: randomBytes(32).toString("base64") })
  const coldStartMs = await coldStart(database, sameKey())
  log(`cold start to /ready (${database.description}, data directory exists): ${formatMs(coldStartMs)}`)
  const embeddedColdStartMs = await coldStart({ url: undefined, name: undefined, description: "embedded PostgreSQL" }, sameKey())
  log(`cold start to /ready (embedded default, data directory exists): ${formatMs(embeddedColdStartMs)}`)

  writeSummary({
    database: database.description,
    connections: CONNECTIONS,
    seconds: DURATION_SECONDS,
    rounds: ROUNDS,
    health: healthFigures,
    list: listFigures,
    listShareOfHealth: listShare,
    // Each path beside its reference (null without a peer: the embedded database).
    floorHealth: health.reference,
    healthShareOfFloor: health.share,
    peerList: list?.reference ?? null,
    listShareOfPeer: list?.share ?? null,
    create: create?.service ?? null,
    peerCreate: create?.reference ?? null,
    createShareOfPeer: create?.share ?? null,
    createP99OverPeer: create?.p99Ratio ?? null,
    coldStartMs,
    embeddedColdStartMs
  })
})
