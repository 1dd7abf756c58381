/**
 * Every bench in sequence (`npm run bench`): payments (bench/run.ts), webhook deliveries
 * (bench/webhooks.ts), live status streams (bench/sse.ts), customer search (bench/customers.ts), loyalty earning (bench/loyalty.ts),
 * redemptions on one wallet (bench/redemptions.ts), plays of games (bench/games-persisted.ts), referral conversions
 * (bench/referrals.ts),
 * the merchant console (bench/console.ts), each as a
 * process of its own so that none
 * inherits another's memory or load; then one markdown table of all their figures, with the machine.
 *
 * Each bench's own output is passed through as it comes, its summary table included. The figures come
 * from the JSON a bench writes to BENCH_SUMMARY_FILE (payments, SSE, customers, loyalty, redemptions, games, referrals) or from its output lines (webhooks,
 * a standalone script). Each bench keeps its own settings (BENCH_DURATION, BENCH_EVENTS, BENCH_SSE_STREAMS,
 * …); BENCH_ONLY=payments,webhooks,sse,customers,loyalty,redemptions,games,referrals,console picks some. The webhooks bench takes its PostgreSQL from
 * TEST_DATABASE_URL, set here to BENCH_POSTGRES_URL when only that is given. A bench that fails is
 * reported as such and the others still run; the exit code is then 1.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

interface Bench {
  readonly name: "requests" | "payments" | "webhooks" | "sse" | "customers" | "loyalty" | "redemptions" | "games" | "referrals" | "console"
  readonly script: string
}

const BENCHES: ReadonlyArray<Bench> = [
  { name: "requests", script: "bench/requests.ts" },
  { name: "payments", script: "bench/run.ts" },
  { name: "webhooks", script: "bench/webhooks.ts" },
  { name: "sse", script: "bench/sse.ts" },
  { name: "customers", script: "bench/customers.ts" },
  { name: "loyalty", script: "bench/loyalty.ts" },
  { name: "redemptions", script: "bench/redemptions.ts" },
  { name: "games", script: "bench/games-persisted.ts" },
  { name: "referrals", script: "bench/referrals.ts" },
  { name: "console", script: "bench/console.ts" }
]

const log = (line: string) => console.log(`[bench:all] ${line}`)
const formatInt = (n: number) => Math.round(n).toLocaleString("en-US")
const formatMs = (ms: number) => `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`

interface Outcome {
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
  readonly seconds: number
  readonly output: string
  readonly summary: any
}

let running: ReturnType<typeof spawn> | undefined
let interrupted: NodeJS.Signals | undefined
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted !== undefined) return
    interrupted = signal
    log(`${signal}: stopping the running bench (it cleans up after itself)`)
    // The bench leads a process group of its own, so that a Ctrl-C reaches it once, from here.
    if (running?.pid !== undefined) process.kill(running.pid, signal)
  })
}

/** Runs one bench, passing its output through and keeping a copy. */
const runOne = (bench: Bench, summaryFile: string): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, BENCH_SUMMARY_FILE: summaryFile }
    if (bench.name === "webhooks" && env["TEST_DATABASE_URL"] === undefined && env["BENCH_POSTGRES_URL"] !== undefined) {
      env["TEST_DATABASE_URL"] = env["BENCH_POSTGRES_URL"]
    }
    const started = performance.now()
    const child = spawn(join(ROOT, "node_modules/.bin/tsx"), [bench.script], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    running = child
    const output: Array<string> = []
    child.stdout!.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk)
      output.push(chunk.toString("utf8"))
    })
    child.stderr!.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk)
    })
    child.once("error", reject)
    child.once("close", (exitCode, signal) => {
      running = undefined
      let summary: unknown
      try {
        summary = JSON.parse(readFileSync(summaryFile, "utf8"))
      } catch {
        summary = undefined
      }
      resolve({ exitCode, signal, seconds: (performance.now() - started) / 1000, output: output.join(""), summary })
    })
  })

interface WebhookFigures {
  readonly database: string | undefined
  readonly scenarios: ReadonlyArray<{ events: number; endpoints: number; seconds: number; perSecond: number }>
  readonly stream: { rate: number; endpoints: number; p50: string; p99: string } | undefined
}

/**
 * The webhooks bench's figures, from its lines "webhooks: 2000 events to 8 endpoints: 1.23 s, 1626 deliveries/s …"
 * and "webhooks: stream of 2000 events at 200/s (…) to 8 endpoints: commit to first attempt p50 7.1 ms, p99 65 ms …".
 */
const webhookFigures = (output: string): WebhookFigures => {
  const scenarios = [...output.matchAll(/^webhooks: (\d+) events to (\d+) endpoints?: ([\d.]+) s, (\d+) deliveries\/s/gm)]
    .map((m) => ({ events: Number(m[1]), endpoints: Number(m[2]), seconds: Number(m[3]), perSecond: Number(m[4]) }))
  const stream = /^webhooks: stream of \d+ events at (\d+)\/s .*? to (\d+) endpoints?: commit to first attempt p50 ([\d.]+ ms), p99 ([\d.]+ ms)/m
    .exec(output)
  return {
    database: /^webhooks: database (\S+?),/m.exec(output)?.[1],
    scenarios,
    stream: stream === null ? undefined : { rate: Number(stream[1]), endpoints: Number(stream[2]), p50: stream[3]!, p99: stream[4]! }
  }
}

const main = async () => {
  const only = process.env["BENCH_ONLY"]?.split(",").map((name) => name.trim()).filter((name) => name !== "")
  const unknown = only?.filter((name) => !BENCHES.some((bench) => bench.name === name)) ?? []
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown bench ${unknown.join(", ")} (requests, payments, webhooks, sse, customers, loyalty, redemptions, games, referrals, console)`)
  const selected = BENCHES.filter((bench) => only === undefined || only.length === 0 || only.includes(bench.name))

  const cores = cpus().length
  const cpuModel = cpus()[0]?.model.trim() ?? "unknown CPU"
  const machine = `${cores} cores (${cpuModel}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`
  log(`machine: ${machine}; load average (1 min) ${loadavg()[0]!.toFixed(2)}`)
  log(`benches: ${selected.map((bench) => bench.name).join(", ")}`)

  const loadBefore = loadavg()[0]!
  const dir = mkdtempSync(join(tmpdir(), "merchant-bench-all-"))
  const outcomes = new Map<Bench["name"], Outcome>()
  try {
    for (const bench of selected) {
      if (interrupted !== undefined) break
      console.log("")
      log(`── ${bench.name} (${bench.script}) ──`)
      const outcome = await runOne(bench, join(dir, `${bench.name}.json`))
      outcomes.set(bench.name, outcome)
      const status = outcome.exitCode === 0 ? "done" : `FAILED (${outcome.signal ?? `exit ${outcome.exitCode}`})`
      log(`── ${bench.name}: ${status} in ${outcome.seconds.toFixed(0)} s ──`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }

  // One table of every figure.
  const rows: Array<[bench: string, figure: string, value: string]> = []
  // Each performance target against its figure from this run (the reference measured in the same run).
  const targets: Array<[path: string, figure: string, target: string]> = []
  const failed = (name: Bench["name"]) => {
    const outcome = outcomes.get(name)
    return outcome === undefined ? "not run" : outcome.exitCode === 0 ? undefined : "failed"
  }
  for (const bench of selected) {
    const problem = failed(bench.name)
    const outcome = outcomes.get(bench.name)
    if (bench.name === "requests" && outcome?.summary !== undefined) {
      const r = outcome.summary
      const load = (l: { requestsPerSecond: number; p50: number; p99: number }) =>
        `${formatInt(l.requestsPerSecond)} req/s, p50 ${formatMs(l.p50)}, p99 ${formatMs(l.p99)}`
      const percent = (share: number) => `${(share * 100).toFixed(0)} %`
      rows.push(["requests", "database", r.database])
      rows.push(["requests", `GET /health (${r.connections} connections × ${r.seconds} s)`, load(r.health)])
      rows.push(["requests", "GET /health of the minimal HttpApi server (constant answer), same run", load(r.floorHealth)])
      rows.push(["requests", "GET /v1/payments?limit=1 with an API key", load(r.list)])
      if (r.peerList !== null) rows.push(["requests", "the same list from the plain node:http + pg peer, same run", load(r.peerList)])
      if (r.create !== null) rows.push(["requests", "POST /v1/payments with an API key", load(r.create)])
      if (r.peerCreate !== null) rows.push(["requests", "the same creation by the plain node:http + pg peer, same run", load(r.peerCreate)])
      rows.push(["requests", "cold start to /ready, data directory exists: bench database / embedded default", `${formatMs(r.coldStartMs)} / ${formatMs(r.embeddedColdStartMs)}`])
      targets.push(["GET /health against the minimal HttpApi server", `${percent(r.healthShareOfFloor)} (median of ${r.rounds ?? 1} rounds)`, "≥ 80 %"])
      targets.push([
        "GET /v1/payments?limit=1 against the plain peer",
        r.listShareOfPeer === null ? "no peer (embedded database)" : `${percent(r.listShareOfPeer)} (median of ${r.rounds ?? 1} rounds)`,
        "≥ 40 %"
      ])
      targets.push([
        "POST /v1/payments against the plain peer",
        r.createShareOfPeer === null
          ? "no peer (embedded database)"
          : `${percent(r.createShareOfPeer)}, p99 ${r.createP99OverPeer.toFixed(1)} × the peer's (medians of ${r.rounds ?? 1} rounds)`,
        "≥ 40 %, p99 ≤ 2 × the peer's"
      ])
      targets.push(["cold `npm start` to /ready (embedded default)", formatMs(r.embeddedColdStartMs), "≤ 3 s"])
    } else if (bench.name === "payments" && outcome?.summary !== undefined) {
      const p = outcome.summary
      rows.push(["payments", "database", p.database])
      rows.push(["payments", `POST /v1/payments (${p.connections} connections × ${p.seconds} s)`, `${formatInt(p.paymentsPerSecond)} req/s`])
      rows.push(["payments", "latency p50 / p99", `${formatMs(p.p50Ms)} / ${formatMs(p.p99Ms)}`])
      rows.push(["payments", "errors / non-2xx", `${p.errors} / ${p.non2xx}`])
      rows.push(["payments", "database ceiling (single-row INSERT)", `${formatInt(p.ceilingInsertsPerSecond)} inserts/s`])
      rows.push(["payments", "share of the ceiling", `${(p.shareOfCeiling * 100).toFixed(1)} %`])
    } else if (bench.name === "webhooks" && outcome !== undefined && webhookFigures(outcome.output).scenarios.length > 0) {
      const w = webhookFigures(outcome.output)
      if (w.database !== undefined) rows.push(["webhooks", "database", w.database])
      for (const s of w.scenarios) {
        rows.push([
          "webhooks",
          `deliveries to a local receiver, ${formatInt(s.events)} events over ${s.endpoints} endpoint${s.endpoints === 1 ? "" : "s"}`,
          `${formatInt(s.perSecond)} deliveries/s (${s.seconds.toFixed(2)} s)`
        ])
        if (s.endpoints === 8) targets.push(["webhook deliveries across 8 endpoints", `${formatInt(s.perSecond)}/s`, "≥ 1,000/s"])
      }
      if (w.stream !== undefined) {
        rows.push([
          "webhooks",
          `commit to first attempt, ${formatInt(w.stream.rate)} events/s over ${w.stream.endpoints} endpoints`,
          `p50 ${w.stream.p50}, p99 ${w.stream.p99}`
        ])
        targets.push(["webhook first attempt after the event's commit (p99)", w.stream.p99, "≤ 1 s"])
      }
    } else if (bench.name === "sse" && outcome?.summary !== undefined) {
      const s = outcome.summary
      rows.push(["sse", "database", s.database])
      const failures = Object.entries(s.openFailures as Record<string, number>).map(([reason, n]) => `${reason} ×${n}`)
      rows.push([
        "sse",
        `streams held by one process (over ${s.payments} payments)`,
        `${formatInt(s.streamsHeld)} of ${formatInt(s.streamsRequested)}${failures.length > 0 ? ` (not opened: ${failures.join(", ")})` : ""}`
      ])
      rows.push(["sse", "time to open them", `${s.openSeconds.toFixed(1)} s (first frame p50 ${formatMs(s.openP50Ms)}, p99 ${formatMs(s.openP99Ms)})`])
      rows.push(["sse", "service RSS before → with the streams", `${formatInt(s.rssBeforeKiB / 1024)} → ${formatInt(s.rssAfterKiB / 1024)} MiB`])
      rows.push([
        "sse",
        `memory growth per stream after ${s.holdSeconds} s (${s.earlyReadingSeconds} s in)`,
        `${s.growthPerStreamKiB.toFixed(1)} KiB (${((s.rssEarlyKiB - s.rssBeforeKiB) / s.streamsHeld).toFixed(1)} KiB)`
      ])
      targets.push(["memory per held SSE stream, over the idle process", `${s.growthPerStreamKiB.toFixed(1)} KiB`, "≤ 20 KiB"])
      rows.push([
        "sse",
        `service while holding them ${s.holdSeconds} s: CPU, GET /health p50 / max`,
        `${s.holdCpuPercent.toFixed(0)} % of a core, ${formatMs(s.healthP50Ms)} / ${formatMs(s.healthMaxMs)}`
      ])
      rows.push(["sse", "database connections of the service (idle / holding / most seen)", `${s.dbConnectionsIdle ?? "n/a"} / ${s.dbConnectionsHeld ?? "n/a"} / ${s.dbConnectionsMax ?? "n/a"}`])
      rows.push(["sse", `\`paid\` frame to all ${s.fanOutStreams} streams of one payment`, `${formatMs(s.paidAllMs)} (${s.paidCount}/${s.fanOutStreams})`])
      rows.push(["sse", "those streams ended", `${formatMs(s.endedAllMs)} (${s.endedCount}/${s.fanOutStreams})`])
      rows.push(["sse", "other streams still open after it; frames of another payment", `${formatInt(s.othersStillOpen)}; ${s.foreignFrames}`])
      if (s.serviceProblems > 0) rows.push(["sse", "warnings, errors or 5xx the service logged", String(s.serviceProblems)])
    } else if (bench.name === "customers" && outcome?.summary !== undefined) {
      const c = outcome.summary
      rows.push(["customers", "database", c.database])
      for (const kind of c.kinds as ReadonlyArray<{ name: string; p50: number; p99: number }>) {
        rows.push(["customers", `console search on ${formatInt(c.customers)} customers: ${kind.name}, p50 / p99`, `${formatMs(kind.p50)} / ${formatMs(kind.p99)}`])
      }
      rows.push([
        "customers",
        `searches mixed, ${c.mixed.connections} connections × ${c.mixed.seconds} s`,
        `${formatInt(c.mixed.requestsPerSecond)} searches/s, p50 ${formatMs(c.mixed.p50)}, p99 ${formatMs(c.mixed.p99)}`
      ])
      rows.push([
        "customers",
        `no search, ${c.unsearched.connections} connections × ${c.unsearched.seconds} s`,
        `${formatInt(c.unsearched.requestsPerSecond)} pages/s, p50 ${formatMs(c.unsearched.p50)}, p99 ${formatMs(c.unsearched.p99)}`
      ])
    } else if (bench.name === "loyalty" && outcome?.summary !== undefined) {
      const l = outcome.summary
      rows.push(["loyalty", "database", l.database])
      rows.push([
        "loyalty",
        `earning: backlog of ${formatInt(l.events)} paid-payment events over ${formatInt(l.wallets)} wallets`,
        `${formatInt(l.eventsPerSecond)} events/s`
      ])
      rows.push(["loyalty", `earning at ${formatInt(l.steadyRate)} events/s: commit → earn entry, p50 / p99`, `${formatMs(l.steadyP50)} / ${formatMs(l.steadyP99)}`])
      rows.push([
        "loyalty",
        `payments created at the maximum for ${l.keepUpSeconds} s, each paid: earn backlog at the last one`,
        `${formatInt(l.keepUpBacklogAtLast)} events (${formatInt(l.keepUpCreatedPerSecond)} created/s)`
      ])
      targets.push([
        `earn backlog empty after ${l.keepUpSeconds} s of creation at its maximum (${formatInt(l.keepUpCreatedPerSecond)}/s)`,
        `${l.keepUpDrainSeconds.toFixed(1)} s after the last payment`,
        "≤ 10 s"
      ])
    } else if (bench.name === "redemptions" && outcome?.summary !== undefined) {
      const r = outcome.summary
      rows.push(["redemptions", "database", r.database])
      rows.push([
        "redemptions",
        `one wallet, ${formatInt(r.redemptions)} redemptions, ${r.concurrency} in flight`,
        `${formatInt(r.perSecond)}/s, p50 ${formatMs(r.p50)}, p99 ${formatMs(r.p99)}`
      ])
      targets.push(["redemptions on one wallet", `${formatInt(r.perSecond)}/s`, "≥ 200/s"])
    } else if (bench.name === "games" && outcome?.summary !== undefined) {
      const g = outcome.summary
      rows.push(["games", "database", g.database])
      rows.push([
        "games",
        `plays on one game, ${formatInt(g.one_game.plays)} plays, p50 / p99`,
        `${formatInt(g.one_game.per_second)}/s, ${formatMs(g.one_game.p50_ms)} / ${formatMs(g.one_game.p99_ms)}`
      ])
      rows.push([
        "games",
        `plays on ${g.many_games.games} games at once, ${formatInt(g.many_games.plays)} plays, p50 / p99`,
        `${formatInt(g.many_games.per_second)}/s, ${formatMs(g.many_games.p50_ms)} / ${formatMs(g.many_games.p99_ms)}`
      ])
      targets.push(["plays on one game", `${formatInt(g.one_game.per_second)}/s`, "≥ 300/s"])
    } else if (bench.name === "referrals" && outcome?.summary !== undefined) {
      const r = outcome.summary
      rows.push(["referrals", "database", r.database])
      rows.push([
        "referrals",
        `conversions from a backlog of ${formatInt(r.referees)} first payments (conversion, commission, both wallets)`,
        `${formatInt(r.eventsPerSecond)}/s`
      ])
      targets.push(["referral conversions", `${formatInt(r.eventsPerSecond)}/s`, "≥ 100/s"])
    }
    if (bench.name === "console" && outcome?.summary !== undefined) {
      const c = outcome.summary
      rows.push(["console", "database", c.database])
      rows.push(["console", `initial JavaScript, gzipped (entry and its ${c.initialFiles - 1} static chunks)`, `${c.initialKB.toFixed(0)} KB`])
      rows.push(["console", `first rendered payments page, cold cache, Chromium (${c.loads} loads): median / slowest`, `${formatMs(c.firstPageMedianMs)} / ${formatMs(c.firstPageMaxMs)}`])
      rows.push(["console", `REST creation → row in an open console (${c.live} payments): p50 / p99`, `${formatMs(c.liveP50Ms)} / ${formatMs(c.liveP99Ms)}`])
      targets.push(["console initial JavaScript, gzipped", `${c.initialKB.toFixed(0)} KB`, "≤ 250 KB"])
      targets.push(["console first rendered payments page, cold cache (median)", formatMs(c.firstPageMedianMs), "≤ 1 s"])
      targets.push(["console: REST creation → row (p99)", formatMs(c.liveP99Ms), "≤ 1 s"])
    }
    if (problem !== undefined) rows.push([bench.name, "result", problem])
  }

  const date = new Date().toISOString().slice(0, 10)
  console.log("")
  console.log(`Benchmarks (\`npm run bench\`, ${date}) — ${machine}`)
  console.log("")
  console.log("| bench | figure | value |")
  console.log("|---|---|---:|")
  console.log(`| machine | cores | ${cores} (${cpuModel}) |`)
  console.log(`| machine | memory, node | ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version} |`)
  console.log(`| machine | load average (1 min) before → after | ${loadBefore.toFixed(2)} → ${loadavg()[0]!.toFixed(2)} |`)
  for (const [bench, figure, value] of rows) console.log(`| ${bench} | ${figure} | ${value} |`)
  console.log("")
  if (targets.length > 0) {
    console.log("| path | this run | target |")
    console.log("|---|---:|---:|")
    for (const [path, figure, target] of targets) console.log(`| ${path} | ${figure} | ${target} |`)
    console.log("")
  }

  if (interrupted !== undefined) process.exitCode = 130
  else if (selected.some((bench) => failed(bench.name) !== undefined)) process.exitCode = 1
}

main().catch((error: unknown) => {
  console.error(`[bench:all] failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  process.exitCode = 1
})
