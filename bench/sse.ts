/**
 * Live status streams (`npm run bench:sse`): how many concurrent `GET /checkout/:id/events` streams one
 * service process holds, what each costs it in memory, and that a change still reaches every stream of
 * its payment under that load.
 *
 * 1. A database and the service as a child process, as bench/run.ts has them (bench/support.ts): a fresh
 *    PostgreSQL database, or the embedded database when none answers (said so).
 * 2. BENCH_SSE_PAYMENTS (100) pending test payments with `expires_in` 3600.
 * 3. A warm-up: one stream per payment opened and closed, so that code loading, the JIT and the database
 *    listener are not counted as the streams' memory. Then the service's RSS (VmRSS of the process that
 *    runs the program, tsx's child), and BENCH_SSE_STREAMS (10,000) streams opened from this process,
 *    stream i on payment i mod BENCH_SSE_PAYMENTS, BENCH_SSE_BATCH (500) at a time. They are raw sockets
 *    writing an HTTP/1.1 GET and decoding the chunked SSE body themselves, which keeps this process light;
 *    a stream counts as open when its `retry:` frame arrives. They are held BENCH_SSE_HOLD seconds (60,
 *    four ping periods) while the service's CPU is read and `GET /health` timed; the RSS is read one ping
 *    period in and at the end: the growth per stream (see EARLY_READING_SECONDS), with the service's
 *    JavaScript heap read from its `GET /metrics` at the start and the end. The service's database connections (pg_stat_activity) are sampled throughout.
 * 4. Fan-out: the first payment simulated `scanned`, then `paid`; timed from the `paid` request until
 *    every stream of that payment has the `paid` frame, and until each of them has ended. The other
 *    streams must still be open and have seen no frame of another payment.
 * 5. Everything closed, the service stopped, the database dropped; a markdown table (and the figures as
 *    JSON to BENCH_SUMMARY_FILE, for bench/all.ts).
 */
import * as Sse from "@effect/experimental/Sse"
import { randomBytes } from "node:crypto"
import { connect, type Socket } from "node:net"
import { cpus, loadavg } from "node:os"
import { setTimeout as sleep } from "node:timers/promises"
import pg from "pg"
import {
  type BenchDatabase,
  cpuMillis,
  formatInt,
  formatMs,
  log,
  makeApiKey,
  onCleanUp,
  openDatabase,
  percentile,
  positiveNumber,
  postJson,
  residentKiB,
  runBench,
  setLogPrefix,
  startService,
  writeSummary
} from "./support.ts"

setLogPrefix("bench:sse")

const PAYMENTS = Math.round(positiveNumber("BENCH_SSE_PAYMENTS", 100))
const STREAMS = Math.round(positiveNumber("BENCH_SSE_STREAMS", 10_000))
const BATCH = Math.round(positiveNumber("BENCH_SSE_BATCH", 500))
const HOLD_SECONDS = positiveNumber("BENCH_SSE_HOLD", 60)
/**
 * RSS is read twice while the streams are held: one ping period in, and at the end of the hold; streams
 * are held for minutes in real use, so the later figure is the one the target is about, the early one is
 * printed beside it. Both include the garbage of opening the streams: opened 500 at a time, each opening's
 * objects outlive the young generation and go to the old one, which a quiet process (streams held, little
 * else) may not collect within the hold. The service's JavaScript heap (`GET /metrics`) is read beside the
 * RSS to show it. Measured once with a forced full collection (2026-11-28, afternoon), the streams' own
 * objects were 9.4 KiB of heap per stream; opening the same 10,000 streams 25 at a time instead of 500
 * left 14 KiB of RSS per stream instead of 22.
 */
const EARLY_READING_SECONDS = Math.min(15, HOLD_SECONDS)
/** Lets the bench read the service's `GET /metrics` (its JavaScript heap beside the RSS). */
const METRICS_TOKEN = randomBytes(24).toString("hex")

/** The service's JavaScript heap, in use and in all, in bytes (`GET /metrics`, src/platform/ProcessMetrics.ts). */
const heapOf = async (baseUrl: string): Promise<{ readonly used: number; readonly total: number }> => {
  const response = await fetch(new URL("/metrics", baseUrl), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`)
  const text = await response.text()
  const sample = (name: string) => {
    const match = new RegExp(`^${name} (\\S+)$`, "m").exec(text)
    if (match === null) throw new Error(`GET /metrics has no ${name}`)
    return Number(match[1])
  }
  return { used: sample("nodejs_heap_size_used_bytes"), total: sample("nodejs_heap_size_total_bytes") }
}

const OPEN_TIMEOUT_MS = positiveNumber("BENCH_SSE_OPEN_TIMEOUT", 30) * 1000
const FAN_OUT_TIMEOUT_MS = 60_000

// ---------------------------------------------------------------------------------------------
// One SSE stream over a raw socket
// ---------------------------------------------------------------------------------------------

type StreamState = "connecting" | "open" | "ended" | "failed"

/**
 * An SSE client that holds little: the socket, the undecoded rest of the last packet, and what the bench
 * asks about — when it opened, the last status it saw, when `paid` came, when the body ended.
 */
class SseStream {
  state: StreamState = "connecting"
  readonly startedAt = performance.now()
  openedAt = 0
  paidAt = 0
  endedAt = 0
  lastStatus = ""
  frames = 0
  /** A frame for a payment other than this stream's: the server's filtering failed. */
  foreignFrames = 0
  failure = ""
  private headersDone = false
  private chunked = false
  /** Bytes of the current chunk still to come (chunked), or -1 while reading a chunk-size line. */
  private chunkLeft = -1
  private raw = ""
  private readonly parser = Sse.makeParser((event) => this.onEvent(event))
  private readonly socket: Socket
  private readonly settled: Array<() => void> = []

  constructor(host: string, port: number, readonly paymentId: string) {
    this.socket = connect({ host, port })
    this.socket.setEncoding("latin1")
    this.socket.setNoDelay(true)
    this.socket.on("connect", () => {
      this.socket.write(
        `GET /checkout/${paymentId}/events HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: text/event-stream\r\n\r\n`
      )
    })
    this.socket.on("data", (data: string) => this.receive(data))
    this.socket.on("error", (error: NodeJS.ErrnoException) => this.fail(error.code ?? error.message))
    this.socket.on("close", () => {
      if (this.state !== "connecting" && this.state !== "open") return
      // Without chunked encoding the body ends with the connection.
      if (this.headersDone && !this.chunked && this.state === "open") {
        this.end()
      } else {
        this.fail("closed by the server")
      }
    })
  }

  /** Resolves when the stream opened, failed or ended. */
  opened(): Promise<void> {
    return this.state === "connecting" ? new Promise((resolve) => this.settled.push(resolve)) : Promise.resolve()
  }

  close() {
    this.socket.destroy()
  }

  private settle() {
    for (const resolve of this.settled.splice(0)) resolve()
  }

  private fail(reason: string) {
    if (this.state === "ended" || this.state === "failed") return
    this.state = "failed"
    this.failure = reason
    this.socket.destroy()
    this.settle()
  }

  private receive(data: string) {
    this.raw += data
    if (!this.headersDone) {
      const end = this.raw.indexOf("\r\n\r\n")
      if (end === -1) return
      const head = this.raw.slice(0, end)
      this.raw = this.raw.slice(end + 4)
      this.headersDone = true
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]
      if (status !== "200") return this.fail(`HTTP ${status ?? "?"}`)
      this.chunked = /\r\ntransfer-encoding:\s*chunked/i.test(head)
    }
    if (!this.chunked) {
      this.parser.feed(this.raw)
      this.raw = ""
    } else {
      for (;;) {
        if (this.chunkLeft === -1) {
          const end = this.raw.indexOf("\r\n")
          if (end === -1) break
          const size = parseInt(this.raw.slice(0, end), 16)
          this.raw = this.raw.slice(end + 2)
          if (size === 0) return this.end()
          this.chunkLeft = size
        }
        if (this.chunkLeft > 0) {
          const take = Math.min(this.chunkLeft, this.raw.length)
          this.parser.feed(this.raw.slice(0, take))
          this.raw = this.raw.slice(take)
          this.chunkLeft -= take
          if (this.chunkLeft > 0) break
        }
        // The chunk is read; its trailing CRLF follows.
        if (this.raw.length < 2) break
        this.raw = this.raw.slice(2)
        this.chunkLeft = -1
      }
    }
  }

  /** The `retry:` frame (or a first event) opens the stream; each event is a status change. */
  private onEvent(event: Sse.AnyEvent) {
    if (this.state === "connecting") {
      this.state = "open"
      this.openedAt = performance.now()
      this.settle()
    }
    if (event._tag !== "Event") return
    const change = JSON.parse(event.data) as { id: string; status: string }
    this.frames++
    if (change.id !== this.paymentId) this.foreignFrames++
    this.lastStatus = change.status
    if (change.status === "paid" && this.paidAt === 0) this.paidAt = performance.now()
  }

  private end() {
    if (this.state === "connecting") this.failure = "ended by the server before its first frame"
    this.state = "ended"
    this.endedAt = performance.now()
    this.socket.destroy()
    this.settle()
  }
}

// ---------------------------------------------------------------------------------------------
// Measurements
// ---------------------------------------------------------------------------------------------

const MIB = 1024

/**
 * Round trips of `GET /health`, one after another, for `seconds`: how the service answers meanwhile.
 * A request that fails counts in `failed`.
 */
const healthLatencies = async (baseUrl: string, seconds: number) => {
  const latencies: Array<number> = []
  let failed = 0
  const deadline = performance.now() + seconds * 1000
  while (performance.now() < deadline) {
    const at = performance.now()
    try {
      const response = await fetch(new URL("/health", baseUrl))
      await response.arrayBuffer()
      if (response.ok) latencies.push(performance.now() - at)
      else failed++
    } catch {
      failed++
    }
    await sleep(250)
  }
  return { latencies: latencies.sort((a, b) => a - b), failed }
}

/** The service's database connections, sampled from a connection of the bench's own (not counted). */
const connectionSampler = async (database: BenchDatabase) => {
  if (database.url === undefined || database.name === undefined) return undefined
  const client = new pg.Client({ connectionString: database.url, connectionTimeoutMillis: 3_000 })
  await client.connect()
  let max = 0
  let running: Promise<number> | undefined
  const sample = async () => {
    running ??= client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [database.name]
    ).then((result) => {
      running = undefined
      const n = result.rows[0]!.n
      max = Math.max(max, n)
      return n
    })
    return running
  }
  const timer = setInterval(() => void sample().catch(() => undefined), 250)
  const stop = async () => {
    clearInterval(timer)
    await running?.catch(() => undefined)
    await client.end().catch(() => undefined)
  }
  onCleanUp(stop)
  return { sample, max: () => max, stop }
}

interface OpenResult {
  readonly streams: ReadonlyArray<SseStream>
  readonly seconds: number
  readonly failures: Map<string, number>
}

/** Opens `count` streams, `batch` at a time, each batch waiting for all of its streams to open or fail. */
const openStreams = async (
  baseUrl: string,
  paymentIds: ReadonlyArray<string>,
  count: number,
  batch: number,
  progress: boolean
): Promise<OpenResult> => {
  const { hostname, port } = new URL(baseUrl)
  const streams: Array<SseStream> = []
  const failures = new Map<string, number>()
  const started = performance.now()
  let lastReport = started
  while (streams.length < count) {
    const size = Math.min(batch, count - streams.length)
    const opening = Array.from({ length: size }, (_, i) =>
      new SseStream(hostname, Number(port), paymentIds[(streams.length + i) % paymentIds.length]!))
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, OPEN_TIMEOUT_MS)
    })
    await Promise.race([Promise.all(opening.map((stream) => stream.opened())), timeout])
    clearTimeout(timer)
    streams.push(...opening)
    const batchFailures = new Map<string, number>()
    for (const stream of opening) {
      if (stream.state === "connecting") stream.failure = `not open within ${OPEN_TIMEOUT_MS} ms`
      if (stream.state !== "open") {
        batchFailures.set(stream.failure, (batchFailures.get(stream.failure) ?? 0) + 1)
        failures.set(stream.failure, (failures.get(stream.failure) ?? 0) + 1)
      }
    }
    if (batchFailures.size > 0) {
      const failed = [...batchFailures.values()].reduce((a, b) => a + b, 0)
      log(`  ${failed} of a batch of ${size} did not open: ${[...batchFailures].map(([k, v]) => `${k} ×${v}`).join(", ")}`)
      if (batchFailures.has("EMFILE") || batchFailures.has("EADDRNOTAVAIL")) {
        // The last batch is closed, to leave descriptors for the measurements that follow.
        for (const stream of opening) {
          if (stream.state === "open") {
            stream.close()
            stream.state = "failed"
            stream.failure = "closed by the bench: out of descriptors"
            failures.set(stream.failure, (failures.get(stream.failure) ?? 0) + 1)
          }
        }
        log(
          `  out of file descriptors (ulimit -n) or local ports: stopping at ` +
            `${formatInt(streams.length - opening.length)} streams, the last batch closed (lower BENCH_SSE_STREAMS)`
        )
        break
      }
    }
    if (progress && (performance.now() - lastReport > 5_000 || streams.length === count)) {
      lastReport = performance.now()
      const open = streams.filter((stream) => stream.state === "open").length
      log(`  ${formatInt(open)} open after ${((lastReport - started) / 1000).toFixed(1)} s`)
    }
  }
  return { streams, seconds: (performance.now() - started) / 1000, failures }
}

const waitUntil = async (condition: () => boolean, timeoutMs: number) => {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() > deadline) return false
    await sleep(2)
  }
  return true
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

const main = async () => {
  const cores = cpus().length
  log(`machine: ${cores} cores (${cpus()[0]?.model.trim() ?? "unknown CPU"}), node ${process.version}`)
  log(`load: ${formatInt(STREAMS)} streams over ${formatInt(PAYMENTS)} payments, ${BATCH} opened at a time`)
  log(`machine load average (1 min) before: ${loadavg()[0]!.toFixed(2)}`)

  const database = await openDatabase()
  log(`database: ${database.description}`)
  if (database.url === undefined) {
    log(
      "  the embedded database runs inside the service process: its RSS includes the database's, which comes and " +
        "goes on its own, so the growth per stream is unreliable; and there are no database connections to count"
    )
  }
  // Every stream comes from this one address: lift the per-address cap above what the bench opens.
  const service = await startService(database, {
    env: { SSE_MAX_STREAMS_PER_ADDRESS: String(STREAMS + PAYMENTS), METRICS_TOKEN }
  })
  log(`service listening on ${service.baseUrl}`)
  const paymentBody = { amount: "12.50", currency: "USD", expires_in: 3600 }
  const secret = await makeApiKey(service.baseUrl, paymentBody)
  const pid = service.programPid()
  log(`service program: pid ${pid}`)

  const paymentIds: Array<string> = []
  for (let i = 0; i < PAYMENTS; i++) {
    paymentIds.push((await postJson(service.baseUrl, "/v1/payments", { ...paymentBody, reference_id: `sse-${i}` }, secret)).id)
  }
  log(`created ${PAYMENTS} pending payments (expires_in 3600)`)

  const connections = await connectionSampler(database)
  const connectionsIdle = await connections?.sample()

  // Warm-up: one stream per payment, then closed.
  const warm = await openStreams(service.baseUrl, paymentIds, PAYMENTS, BATCH, false)
  const warmOpen = warm.streams.filter((stream) => stream.state === "open").length
  if (warmOpen !== PAYMENTS) throw new Error(`warm-up: only ${warmOpen} of ${PAYMENTS} streams opened`)
  for (const stream of warm.streams) stream.close()
  await sleep(1_000)

  const rssBefore = residentKiB(pid)
  const heapBefore = await heapOf(service.baseUrl)
  const benchRssBefore = process.memoryUsage().rss / 1024
  log(`service RSS before: ${formatInt(rssBefore / MIB)} MiB; database connections: ${connectionsIdle ?? "n/a"}`)

  log(`opening ${formatInt(STREAMS)} streams`)
  const benchCpuAt = process.cpuUsage()
  const opened = await openStreams(service.baseUrl, paymentIds, STREAMS, BATCH, true)
  const benchCpu = process.cpuUsage(benchCpuAt)
  const all = opened.streams
  onCleanUp(async () => {
    for (const stream of all) stream.close()
  })
  const open = all.filter((stream) => stream.state === "open")
  const openLatencies = open.map((stream) => stream.openedAt - stream.startedAt).sort((a, b) => a - b)
  log(
    `  ${formatInt(open.length)} of ${formatInt(all.length)} attempted open in ${opened.seconds.toFixed(1)} s ` +
      `(${formatInt(open.length / opened.seconds)} streams/s; time to first frame p50 ${formatMs(percentile(openLatencies, 50))}, ` +
      `p99 ${formatMs(percentile(openLatencies, 99))})`
  )
  if (open.length === 0) throw new Error("no stream opened")

  // Holding them for a while (a ping period by default): the service's CPU, and how it answers meanwhile.
  log(`holding them for ${HOLD_SECONDS} s`)
  const cpuAt = cpuMillis(pid)
  const holdAt = performance.now()
  const early = await healthLatencies(service.baseUrl, EARLY_READING_SECONDS)
  const rssEarly = residentKiB(pid)
  const rest = HOLD_SECONDS > EARLY_READING_SECONDS
    ? await healthLatencies(service.baseUrl, HOLD_SECONDS - EARLY_READING_SECONDS)
    : { latencies: [], failed: 0 }
  const health = [...early.latencies, ...rest.latencies].sort((a, b) => a - b)
  const healthFailed = early.failed + rest.failed
  const holdCpuPercent = ((cpuMillis(pid) - cpuAt) / (performance.now() - holdAt)) * 100
  const rssAfter = residentKiB(pid)
  const heapAfter = await heapOf(service.baseUrl)
  const connectionsHeld = await connections?.sample()
  const stillOpen = all.filter((stream) => stream.state === "open").length
  const growthPerStream = (rssAfter - rssBefore) / open.length
  const benchRssAfter = process.memoryUsage().rss / 1024
  log(
    `service RSS with ${formatInt(stillOpen)} streams held: ${formatInt(rssAfter / MIB)} MiB ` +
      `(+${formatInt((rssAfter - rssBefore) / MIB)} MiB, ${growthPerStream.toFixed(1)} KiB per stream; ` +
      `${EARLY_READING_SECONDS} s in: +${formatInt((rssEarly - rssBefore) / MIB)} MiB, ` +
      `${((rssEarly - rssBefore) / open.length).toFixed(1)} KiB per stream); ` +
      `database connections: ${connectionsHeld ?? "n/a"} (max seen so far ${connections?.max() ?? "n/a"})`
  )
  // Heap figures are in bytes, the RSS in KiB.
  const heapUsedGrowthKiB = (heapAfter.used - heapBefore.used) / 1024
  const heapSizeGrowthKiB = (heapAfter.total - heapBefore.total) / 1024
  const heapUsedPerStream = heapUsedGrowthKiB / open.length
  const heapSizePerStream = heapSizeGrowthKiB / open.length
  log(
    `  the JavaScript heap meanwhile: in use +${formatInt(heapUsedGrowthKiB / MIB)} MiB ` +
      `(${heapUsedPerStream.toFixed(1)} KiB per stream, the streams' objects with the garbage of opening them that no ` +
      `collection has reclaimed yet), its size +${formatInt(heapSizeGrowthKiB / MIB)} MiB ` +
      `(${heapSizePerStream.toFixed(1)} KiB per stream)`
  )
  log(
    `  service CPU while holding them: ${holdCpuPercent.toFixed(0)} % of a core; GET /health meanwhile ` +
      `p50 ${formatMs(percentile(health, 50))}, max ${formatMs(health.at(-1) ?? Number.NaN)} ` +
      `(${health.length} requests${healthFailed > 0 ? `, ${healthFailed} FAILED` : ""})`
  )
  log(
    `bench process RSS: ${formatInt(benchRssBefore / MIB)} → ${formatInt(benchRssAfter / MIB)} MiB; ` +
      `its CPU while opening: ${((benchCpu.user + benchCpu.system) / 1e6).toFixed(1)} s in ${opened.seconds.toFixed(1)} s`
  )

  // Fan-out: one payment scanned, then paid, under the whole load.
  const target = paymentIds[0]!
  const watchers = open.filter((stream) => stream.paymentId === target)
  const others = open.filter((stream) => stream.paymentId !== target)
  log(`fan-out: ${target} (${watchers.length} streams) scanned, then paid`)
  const scannedAt = performance.now()
  await postJson(service.baseUrl, `/v1/payments/${target}/simulate`, { status: "scanned" }, secret)
  const scannedAnswerMs = performance.now() - scannedAt
  const allScanned = await waitUntil(() => watchers.every((stream) => stream.lastStatus === "scanned"), FAN_OUT_TIMEOUT_MS)
  const scannedMs = performance.now() - scannedAt
  log(
    `  scanned: the simulate request answered in ${formatMs(scannedAnswerMs)}; ` +
      `${allScanned ? "every stream had the frame" : "NOT every stream had the frame"} ${formatMs(scannedMs)} after the request`
  )

  const paidAt = performance.now()
  await postJson(service.baseUrl, `/v1/payments/${target}/simulate`, { status: "paid" }, secret)
  const paidAnswerMs = performance.now() - paidAt
  const allPaid = await waitUntil(() => watchers.every((stream) => stream.paidAt > 0), FAN_OUT_TIMEOUT_MS)
  const allEnded = await waitUntil(() => watchers.every((stream) => stream.state === "ended"), FAN_OUT_TIMEOUT_MS)
  const paidLatencies = watchers.filter((s) => s.paidAt > 0).map((s) => s.paidAt - paidAt).sort((a, b) => a - b)
  const endLatencies = watchers.filter((s) => s.endedAt > 0).map((s) => s.endedAt - paidAt).sort((a, b) => a - b)
  const paidAllMs = paidLatencies.at(-1) ?? Number.NaN
  const endedAllMs = endLatencies.at(-1) ?? Number.NaN
  const paidCount = paidLatencies.length
  const endedCount = watchers.filter((stream) => stream.state === "ended").length
  const othersOpen = others.filter((stream) => stream.state === "open").length
  const foreign = all.reduce((sum, stream) => sum + stream.foreignFrames, 0)
  log(
    `  paid: the simulate request answered in ${formatMs(paidAnswerMs)}; ${paidCount} of ${watchers.length} streams had ` +
      `the frame, the first ${formatMs(paidLatencies[0] ?? Number.NaN)}, the last ${formatMs(paidAllMs)} after the request; ` +
      `${endedCount} of ${watchers.length} ended, the last ${formatMs(endedAllMs)} after`
  )
  log(`  the other ${formatInt(others.length)} streams: ${formatInt(othersOpen)} still open; frames of another payment: ${foreign}`)
  const connectionsMax = connections?.max()
  log(`database connections of the service: ${connectionsIdle ?? "n/a"} idle, ${connectionsHeld ?? "n/a"} holding the streams, ${connectionsMax ?? "n/a"} at most`)

  // Closing: does the memory come back?
  for (const stream of all) stream.close()
  await sleep(3_000)
  const rssClosed = residentKiB(pid)
  log(`service RSS 3 s after closing every stream: ${formatInt(rssClosed / MIB)} MiB`)
  await connections?.stop()
  const problems = service.problems()
  if (problems.count > 0) {
    log(`the service logged ${problems.count} warnings, errors or 5xx answers; the first:\n${problems.first.join("\n")}`)
  }
  log(`machine load average (1 min) after: ${loadavg()[0]!.toFixed(2)}`)

  const fanOutOk = allScanned && allPaid && allEnded && othersOpen === others.length && foreign === 0
  if (open.length < STREAMS) log(`TARGET NOT REACHED: ${formatInt(open.length)} of ${formatInt(STREAMS)} streams opened`)
  const date = new Date().toISOString().slice(0, 10)
  console.log("")
  console.log(`Live status streams (\`npm run bench:sse\`, ${date})`)
  console.log("")
  console.log("| machine | database | streams held | time to open | RSS before → after | per stream | DB connections | `paid` to all of one payment's streams | ended |")
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|")
  console.log(
    `| ${cores} cores, node ${process.version} | ${database.description} | ${formatInt(stillOpen)} of ${formatInt(STREAMS)} ` +
      `over ${PAYMENTS} payments | ${opened.seconds.toFixed(1)} s | ${formatInt(rssBefore / MIB)} → ${formatInt(rssAfter / MIB)} MiB ` +
      `| ${growthPerStream.toFixed(1)} KiB | ${connectionsMax ?? "n/a"} | ${formatMs(paidAllMs)} (${paidCount}/${watchers.length}) ` +
      `| ${formatMs(endedAllMs)} (${endedCount}/${watchers.length}) |`
  )
  console.log("")
  writeSummary({
    database: database.description,
    payments: PAYMENTS,
    streamsRequested: STREAMS,
    streamsOpened: open.length,
    streamsHeld: stillOpen,
    openFailures: Object.fromEntries(opened.failures),
    openSeconds: opened.seconds,
    openP50Ms: percentile(openLatencies, 50),
    openP99Ms: percentile(openLatencies, 99),
    rssBeforeKiB: rssBefore,
    rssAfterKiB: rssAfter,
    rssEarlyKiB: rssEarly,
    earlyReadingSeconds: EARLY_READING_SECONDS,
    rssClosedKiB: rssClosed,
    growthPerStreamKiB: growthPerStream,
    heapUsedPerStreamKiB: heapUsedPerStream,
    heapSizePerStreamKiB: heapSizePerStream,
    benchRssKiB: benchRssAfter,
    holdSeconds: HOLD_SECONDS,
    holdCpuPercent,
    healthP50Ms: percentile(health, 50),
    healthMaxMs: health.at(-1) ?? null,
    serviceProblems: problems.count,
    dbConnectionsIdle: connectionsIdle ?? null,
    dbConnectionsHeld: connectionsHeld ?? null,
    dbConnectionsMax: connectionsMax ?? null,
    fanOutStreams: watchers.length,
    scannedAllMs: allScanned ? scannedMs : null,
    paidAllMs,
    paidCount,
    endedAllMs,
    endedCount,
    othersStillOpen: othersOpen,
    foreignFrames: foreign,
    fanOutOk
  })
  if (!fanOutOk) throw new Error("the fan-out check failed (see above)")
}

runBench(main)
