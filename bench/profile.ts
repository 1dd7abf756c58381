/**
 * Where a request's CPU time goes (`npm run bench:profile`): the service runs with V8's CPU profiler
 * (`--cpu-prof`) while autocannon loads one path, and the profile is summarised as the functions with the
 * most self time and the share of time per package (effect, @effect/platform, pg, node internals, ours).
 *
 * PROFILE_PATH picks the load: `list` (GET /v1/payments?limit=1 with an API key, the default), `create`
 * (POST /v1/payments) or `health` (GET /health). BENCH_DURATION (10 s) and BENCH_CONNECTIONS (64) as in
 * the other benches; PROFILE_SOURCE=1 profiles the sources rather than the bundle. The bundle's frames are
 * read back through its source maps (the `.map` beside each file of `dist/`, with `@jridgewell/trace-mapping`, as
 * scripts/stacks.mjs reads stacks), so the summary names the package and source line of each function —
 * `effect/src/internal/fiberRuntime.ts:1361`, not a line of a chunk of the bundle — and the bundle's share
 * is split between effect, @effect/*, pg and our own code as it is when the sources run. The raw
 * `.cpuprofile` is kept (its path is printed) for a flame graph in Chrome's DevTools or speedscope.
 */
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping"
import autocannon from "autocannon"
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { log, makeApiKey, openDatabase, positiveNumber, runBench, startService, setLogPrefix } from "./support.ts"

setLogPrefix("bench:profile")

const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 10)
const CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 64))
const PATH = process.env["PROFILE_PATH"] ?? "list"
const PAYMENT_BODY = { amount: "12.50", currency: "USD" }

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface CpuProfile {
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

/** Each bundle file's source map, read once (null: the file has none). */
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
 * Where a frame's code was written: for the bundle (a file under dist/), the source file and line its
 * source map gives (the profile's line and column are 0-based, the map's lines 1-based); otherwise the
 * frame's own script and line.
 */
const sourceOf = (frame: ProfileNode["callFrame"]): { readonly url: string; readonly line: number } => {
  const map = frame.url.startsWith("file://") && frame.url.includes("/dist/") ? sourceMapOf(frame.url) : null
  if (map !== null) {
    const found = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber })
    if (found.source !== null && found.line !== null) return { url: found.source, line: found.line }
  }
  return { url: frame.url, line: frame.lineNumber + 1 }
}

const summarise = (profile: CpuProfile) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMicros = new Map<number, number>()
  profile.samples.forEach((id, index) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)))
  const total = [...selfMicros.values()].reduce((sum, micros) => sum + micros, 0)
  const byFunction = new Map<string, number>()
  const byPackage = new Map<string, number>()
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id)!.callFrame
    const name = frame.functionName === "" ? "(anonymous)" : frame.functionName
    const source = sourceOf(frame)
    const where = source.url === "" ? "" : ` ${source.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(src|runtime|domain)\//, "$1/")}:${source.line}`
    byFunction.set(`${name}${where}`, (byFunction.get(`${name}${where}`) ?? 0) + micros)
    const pkg = ["(idle)", "(program)", "(garbage collector)"].includes(name) ? name : packageOf(source.url)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros)
  }
  const share = (micros: number) => `${(100 * micros / total).toFixed(1)} %`
  log("self time per package:")
  for (const [pkg, micros] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15)) log(`  ${share(micros).padStart(7)}  ${pkg}`)
  log("functions with the most self time:")
  for (const [fn, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30)) log(`  ${share(micros).padStart(7)}  ${fn}`)
}

runBench(async () => {
  const database = await openDatabase()
  // Kept after the run, for a flame graph.
  const profileDir = mkdtempSync(join(tmpdir(), "merchant-profile-"))
  // PROFILE_SOURCE=1 runs the TypeScript sources (through tsx) instead of the bundle, whose functions
  // then compile as tsx transforms them rather than as npm start runs them.
  const service = await startService(database, {
    nodeOptions: ["--cpu-prof", `--cpu-prof-dir=${profileDir}`],
    fromSource: process.env["PROFILE_SOURCE"] === "1"
  })
  const secret = await makeApiKey(service.baseUrl, PAYMENT_BODY)
  const target = PATH === "create"
    ? { url: "/v1/payments", method: "POST" as const, body: JSON.stringify(PAYMENT_BODY) }
    : PATH === "health"
    ? { url: "/health", method: "GET" as const, body: undefined }
    : { url: "/v1/payments?limit=1", method: "GET" as const, body: undefined }
  log(`loading ${target.method} ${target.url} with ${CONNECTIONS} connections for ${DURATION_SECONDS} s`)
  const result = await autocannon({
    url: new URL(target.url, service.baseUrl).toString(),
    method: target.method,
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    ...(target.body === undefined ? {} : { body: target.body }),
    connections: CONNECTIONS,
    duration: DURATION_SECONDS
  })
  log(`${Math.round(result["2xx"] / result.duration)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`)
  await service.stop()
  // Every node process of the service wrote a profile; the program's is the one with the most samples.
  const profiles = readdirSync(profileDir).filter((name) => name.endsWith(".cpuprofile")).map((name) => join(profileDir, name))
  const largest = profiles.sort((a, b) => statSync(b).size - statSync(a).size)[0]
  if (largest === undefined) throw new Error(`no CPU profile was written to ${profileDir}`)
  log(`profile: ${largest}`)
  // The profile's times over this count are per request (a profile's own tools show totals).
  log(`requests answered while profiling: ${result["2xx"]}`)
  summarise(JSON.parse(readFileSync(largest, "utf8")) as CpuProfile)
})
