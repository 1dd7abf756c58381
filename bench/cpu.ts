/**
 * CPU time per request at a fixed rate (`npm run bench:cpu`), the service beside its references.
 *
 * `bench:requests` loads each path to saturation, where the figures follow whatever else the machine runs
 * (its ratios moved by ten points between runs minutes apart). Here each path is offered at one fixed rate
 * (BENCH_RATE, 600 requests a second, over 16 connections), well under every server's maximum, and the
 * figure is the CPU time the answering process used (user and system, /proc) divided by the requests it
 * answered: what one request costs, nearly independent of the machine's other load. Rounds of
 * BENCH_DURATION seconds (8) alternate the service and the path's reference (BENCH_ROUNDS, 3, after a
 * warm-up of each), and the median of each is printed with the service's as a multiple of the reference's:
 * `GET /health` against the minimal HttpApi server, the list and creation against the plain peer
 * (bench/references.ts). The service's figure includes its background work (pollers: about 22 ms of CPU a
 * second while idle, 37 µs a request at 600/s), which the references do not have.
 *
 * With the embedded database (no PostgreSQL answering) the peer has no database to share, and only
 * `/health` is measured.
 */
import autocannon from "autocannon"
import { startHttpApiFloor, startPlainPeer } from "./references.ts"
import { cpuMillis, formatInt, log, makeApiKey, openDatabase, percentile, positiveNumber, runBench, setLogPrefix, startService } from "./support.ts"

setLogPrefix("bench:cpu")

const RATE = Math.round(positiveNumber("BENCH_RATE", 600))
const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 8)
const ROUNDS = Math.round(positiveNumber("BENCH_ROUNDS", 3))
const WARMUP_SECONDS = positiveNumber("BENCH_WARMUP", 3, true)
const CONNECTIONS = 16
const PAYMENT_BODY = JSON.stringify({ amount: "12.50", currency: "USD" })

interface Server {
  readonly name: string
  readonly baseUrl: string
  readonly pid: number
}

interface Path {
  readonly label: string
  readonly path: string
  readonly body?: string
}

/** CPU microseconds per answered request of `server` while `path` is offered at RATE for `seconds`. */
const cpuPerRequest = async (server: Server, path: Path, token: string, seconds: number) => {
  const before = cpuMillis(server.pid)
  const result = await autocannon({
    url: `${server.baseUrl}${path.path}`,
    method: path.body === undefined ? "GET" : "POST",
    connections: CONNECTIONS,
    overallRate: RATE,
    duration: seconds,
    headers: {
      authorization: `Bearer ${token}`,
      ...(path.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(path.body === undefined ? {} : { body: path.body })
  })
  const used = cpuMillis(server.pid) - before
  const answered = result["2xx"]
  if (answered === 0 || result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${server.name} ${path.label}: ${answered} answered, ${result.non2xx} non-2xx, ${result.errors} errors`)
  }
  return { micros: (1000 * used) / answered, p50: result.latency.p50, p99: result.latency.p99 }
}

const median = (values: ReadonlyArray<number>) => percentile([...values].sort((a, b) => a - b), 50)

const compare = async (path: Path, service: Server, reference: Server, token: string) => {
  if (WARMUP_SECONDS > 0) {
    await cpuPerRequest(service, path, token, WARMUP_SECONDS)
    await cpuPerRequest(reference, path, token, WARMUP_SECONDS)
  }
  const figures = { service: [] as Array<number>, reference: [] as Array<number> }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [side, server] of [["service", service], ["reference", reference]] as const) {
      const measured = await cpuPerRequest(server, path, token, DURATION_SECONDS)
      figures[side].push(measured.micros)
      log(`  ${path.label}, round ${round}, ${server.name}: ${formatInt(measured.micros)} µs a request (p50 ${measured.p50} ms, p99 ${measured.p99} ms)`)
    }
  }
  const ofService = median(figures.service)
  const ofReference = median(figures.reference)
  log(`  ${path.label}: the service ${formatInt(ofService)} µs, ${reference.name} ${formatInt(ofReference)} µs a request (medians): ${(ofService / ofReference).toFixed(1)} ×`)
}

runBench(async () => {
  const database = await openDatabase()
  log(`database: ${database.description}`)
  const started = await startService(database)
  const service: Server = { name: "the service", baseUrl: started.baseUrl, pid: started.programPid() }
  const token = await makeApiKey(service.baseUrl, JSON.parse(PAYMENT_BODY))
  log(`${formatInt(RATE)} requests a second over ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_SECONDS} s each side`)

  const floor = await startHttpApiFloor()
  await compare({ label: "GET /health", path: "/health" }, service, { name: "the minimal HttpApi server", ...floor }, token)
  await floor.stop()

  if (database.url === undefined) {
    log("no peer on the embedded database: the list and creation are left out")
    return
  }
  const peer = await startPlainPeer(database.url)
  const plainPeer = { name: "the plain peer", ...peer }
  await compare({ label: "GET /v1/payments?limit=1", path: "/v1/payments?limit=1" }, service, plainPeer, token)
  await compare({ label: "POST /v1/payments", path: "/v1/payments", body: PAYMENT_BODY }, service, plainPeer, token)
})
