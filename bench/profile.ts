/**
 * Where a request's CPU time goes (`npm run bench:profile`): the service runs with V8's CPU profiler
 * (`--cpu-prof`) while autocannon loads one path, and the profile is summarised as the functions with the
 * most self time and the time per package (effect, @effect/platform, pg, node internals, ours), each as a
 * share and in µs a request. Then the path's reference (bench/references.ts: the minimal HttpApi server
 * for `/health`, the plain peer for the list and creation) is profiled under the same load, and the
 * summary ends with what the service spends beyond it, function by function — the difference that says
 * where to look (it found the WeakMaps and the slow response heads of runtime/AccessLog.ts).
 *
 * PROFILE_PATH picks the load: `list` (GET /v1/payments?limit=1 with an API key, the default), `create`
 * (POST /v1/payments) or `health` (GET /health). BENCH_DURATION (10 s) and BENCH_CONNECTIONS (64) as in
 * the other benches, after a warm-up of BENCH_WARMUP seconds (3); only the samples taken while the
 * measured load ran are counted, so start-up and warm-up are left out of the figures a request.
 * PROFILE_REFERENCE=0 leaves the reference out; with the embedded database only `/health` has one.
 * PROFILE_SOURCE=1 profiles the sources rather than the bundle. The bundles' frames are read back through
 * their source maps (the `.map` beside each bundle, with `@jridgewell/trace-mapping`, as
 * scripts/stacks.mjs reads stacks), so the summary names the package and source line of each function —
 * `effect/src/internal/fiberRuntime.ts:1361`, not a line of a chunk of the bundle. The raw `.cpuprofile`
 * files are kept (their paths are printed) for a flame graph in Chrome's DevTools or speedscope.
 */
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping"
import autocannon from "autocannon"
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startHttpApiFloor, startPlainPeer } from "./references.ts"
import { log, makeApiKey, openDatabase, positiveNumber, runBench, startService, setLogPrefix } from "./support.ts"

setLogPrefix("bench:profile")

const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 10)
const WARMUP_SECONDS = positiveNumber("BENCH_WARMUP", 3, true)
const CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 64))
const PATH = process.env["PROFILE_PATH"] ?? "list"
const PAYMENT_BODY = { amount: "12.50", currency: "USD" }

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface CpuProfile {
  /** When profiling began, in µs of the monotonic clock (that of `process.hrtime`). */
  readonly startTime: number
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** The package a script URL belongs to: `effect`, `@effect/platform`, `pg`, `node:…`, or `ours`. */
const packageOf = (url: string): string => {
  if (url === "") return "(native / GC / idle)"
  if (url.startsWith("node:")) return "node internals"
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (match !== null) return match[1]!
  return "ours"
}

/** Each script's source map, read once (null: it has none beside it). */
const sourceMaps = new Map<string, TraceMap | null>()
const sourceMapOf = (url: string): TraceMap | null => {
  let map = sourceMaps.get(url)
  if (map === undefined) {
    try {
      map = new TraceMap(readFileSync(`${fileURLToPath(url)}.map`, "utf8"), `${url}.map`)
    } catch {
      map = null
    }
    sourceMaps.set(url, map)
  }
  return map
}

/**
 * Where a frame's code was written: for a bundle with its source map beside it (the service's under dist/,
 * a reference's in its temporary directory), the source file and line the map gives (the profile's line
 * and column are 0-based, the map's lines 1-based); otherwise the frame's own script and line.
 */
const sourceOf = (frame: ProfileNode["callFrame"]): { readonly url: string; readonly line: number } => {
  const map = frame.url.startsWith("file://") ? sourceMapOf(frame.url) : null
  if (map !== null) {
    const found = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber })
    if (found.source !== null && found.line !== null) return { url: found.source, line: found.line }
  }
  return { url: frame.url, line: frame.lineNumber + 1 }
}

/** The monotonic clock in µs, as the profile's own times. */
const nowMicros = () => Number(process.hrtime.bigint() / 1000n)

/** A measured load: when it ran (µs of the monotonic clock) and how many requests it answered. */
interface Measured {
  readonly fromMicros: number
  readonly toMicros: number
  readonly requests: number
}

/** Self time per function and per package of the samples taken while `measured` ran, in µs a request. */
const selfTimes = (profile: CpuProfile, measured: Measured) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMicros = new Map<number, number>()
  let clock = profile.startTime
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0
    clock += delta
    if (clock >= measured.fromMicros && clock <= measured.toMicros) selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta)
  })
  const byFunction = new Map<string, number>()
  const byPackage = new Map<string, number>()
  let busy = 0
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id)!.callFrame
    const name = frame.functionName === "" ? "(anonymous)" : frame.functionName
    const perRequest = micros / measured.requests
    if (name !== "(idle)") busy += perRequest
    const source = sourceOf(frame)
    const where = source.url === "" ? "" : ` ${source.url.replace(/^.*node_modules\//, "").replace(/^(?:file:\/\/.*?\/|(?:\.\.\/)+)(src|runtime|domain|bench)\//, "$1/")}:${source.line}`
    byFunction.set(`${name}${where}`, (byFunction.get(`${name}${where}`) ?? 0) + perRequest)
    const pkg = ["(idle)", "(program)", "(garbage collector)"].includes(name) ? name : packageOf(source.url)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + perRequest)
  }
  return { byFunction, byPackage, busy }
}

type SelfTimes = ReturnType<typeof selfTimes>

const micros = (value: number) => `${value.toFixed(1)} µs`.padStart(9)

const summarise = (times: SelfTimes) => {
  const share = (value: number) => `${(100 * value / times.busy).toFixed(1)} %`.padStart(7)
  log(`busy ${times.busy.toFixed(0)} µs a request (idle left out); self time per package:`)
  for (const [pkg, value] of [...times.byPackage].filter(([pkg]) => pkg !== "(idle)").sort((a, b) => b[1] - a[1]).slice(0, 15)) {
    log(`  ${share(value)} ${micros(value)}  ${pkg}`)
  }
  log("functions with the most self time:")
  for (const [fn, value] of [...times.byFunction].filter(([fn]) => fn !== "(idle)").sort((a, b) => b[1] - a[1]).slice(0, 30)) {
    log(`  ${share(value)} ${micros(value)}  ${fn}`)
  }
}

/** What the service spends a request beyond its reference: by package, and the functions it spends most more in. */
const summariseBeyond = (service: SelfTimes, reference: SelfTimes, referenceName: string) => {
  log(`beyond ${referenceName}: ${(service.busy - reference.busy).toFixed(0)} µs a request (service ${service.busy.toFixed(0)}, reference ${reference.busy.toFixed(0)}); by package, service − reference:`)
  const difference = (left: Map<string, number>, right: Map<string, number>) =>
    [...new Set([...left.keys(), ...right.keys()])]
      .filter((key) => key !== "(idle)")
      .map((key) => [key, (left.get(key) ?? 0) - (right.get(key) ?? 0)] as const)
      .sort((a, b) => b[1] - a[1])
  for (const [pkg, value] of difference(service.byPackage, reference.byPackage).slice(0, 12)) log(`  ${micros(value)}  ${pkg}`)
  log("functions the service spends most more in (µs a request, service − reference):")
  for (const [fn, value] of difference(service.byFunction, reference.byFunction).slice(0, 30)) log(`  ${micros(value)}  ${fn}`)
}

/** The largest `.cpuprofile` in `dir`: every node process writes one, and the program's has the most samples. */
const largestProfileIn = (dir: string): string => {
  const profiles = readdirSync(dir).filter((name) => name.endsWith(".cpuprofile")).map((name) => join(dir, name))
  const largest = profiles.sort((a, b) => statSync(b).size - statSync(a).size)[0]
  if (largest === undefined) throw new Error(`no CPU profile was written to ${dir}`)
  return largest
}

interface Target {
  readonly url: string
  readonly method: "GET" | "POST"
  readonly body: string | undefined
}

/** Warms `baseUrl` up with the load, then measures it: when the measured load ran and what it answered. */
const loadOf = async (baseUrl: string, target: Target, secret: string): Promise<Measured> => {
  const run = (seconds: number) =>
    autocannon({
      url: new URL(target.url, baseUrl).toString(),
      method: target.method,
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      ...(target.body === undefined ? {} : { body: target.body }),
      connections: CONNECTIONS,
      duration: seconds
    })
  if (WARMUP_SECONDS > 0) await run(WARMUP_SECONDS)
  const fromMicros = nowMicros()
  const result = await run(DURATION_SECONDS)
  const toMicros = nowMicros()
  log(`${Math.round(result["2xx"] / result.duration)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`)
  if (result["2xx"] === 0) throw new Error(`no request to ${target.method} ${target.url} was answered with a 2xx`)
  return { fromMicros, toMicros, requests: result["2xx"] }
}

runBench(async () => {
  const database = await openDatabase()
  const target: Target = PATH === "create"
    ? { url: "/v1/payments", method: "POST", body: JSON.stringify(PAYMENT_BODY) }
    : PATH === "health"
    ? { url: "/health", method: "GET", body: undefined }
    : { url: "/v1/payments?limit=1", method: "GET", body: undefined }

  // Kept after the run, for a flame graph.
  const serviceDir = mkdtempSync(join(tmpdir(), "merchant-profile-"))
  // PROFILE_SOURCE=1 runs the TypeScript sources (through tsx) instead of the bundle, whose functions
  // then compile as tsx transforms them rather than as npm start runs them.
  const service = await startService(database, {
    nodeOptions: ["--cpu-prof", `--cpu-prof-dir=${serviceDir}`],
    fromSource: process.env["PROFILE_SOURCE"] === "1"
  })
  const secret = await makeApiKey(service.baseUrl, PAYMENT_BODY)
  log(`the service: ${target.method} ${target.url} with ${CONNECTIONS} connections for ${DURATION_SECONDS} s`)
  const serviceLoad = await loadOf(service.baseUrl, target, secret)
  await service.stop()
  const serviceProfile = largestProfileIn(serviceDir)
  log(`profile: ${serviceProfile} (${serviceLoad.requests} requests while measured)`)
  const serviceTimes = selfTimes(JSON.parse(readFileSync(serviceProfile, "utf8")) as CpuProfile, serviceLoad)
  summarise(serviceTimes)

  if (process.env["PROFILE_REFERENCE"] === "0") return
  const referenceName = PATH === "health" ? "the minimal HttpApi server" : "the plain peer"
  if (PATH !== "health" && database.url === undefined) return log("no reference: the plain peer needs PostgreSQL")
  const referenceDir = mkdtempSync(join(tmpdir(), "merchant-profile-reference-"))
  const profiling = ["--cpu-prof", `--cpu-prof-dir=${referenceDir}`]
  const reference = PATH === "health" ? await startHttpApiFloor(profiling) : await startPlainPeer(database.url!, profiling)
  log(`${referenceName}: the same load`)
  const referenceLoad = await loadOf(reference.baseUrl, target, secret)
  await reference.stop()
  const referenceProfile = largestProfileIn(referenceDir)
  log(`profile: ${referenceProfile} (${referenceLoad.requests} requests while measured)`)
  summariseBeyond(serviceTimes, selfTimes(JSON.parse(readFileSync(referenceProfile, "utf8")) as CpuProfile, referenceLoad), referenceName)
})
