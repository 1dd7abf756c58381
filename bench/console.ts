/**
 * The merchant console (`npm run bench:console`): what the first screen costs and how live it is.
 *
 * 1. Initial JavaScript, gzipped: the console built as `npm run build` builds it (aside, in a temporary
 *    directory), its entry script and every chunk the entry imports statically (scripts/build.mjs
 *    initialScripts), each gzipped as served. Budget 250 KB. The largest contributors are listed from
 *    esbuild's metafile.
 * 2. The service as a child process (bench/support.ts: a fresh PostgreSQL database, or the embedded one),
 *    a user with a store, an API key and BENCH_CONSOLE_PAYMENTS (20) payments. Time to the first rendered
 *    payments page on a cold cache: Chromium, a new browser context each time (empty cache, the session
 *    cookie set by signing in through CONSOLE_SESSION_PATH), from `page.goto(/console/payments)` until the
 *    first payment row is drawn. BENCH_CONSOLE_LOADS (5) loads; budget 1 s.
 * 3. With the payments page open, BENCH_CONSOLE_LIVE (50) payments created one after another through
 *    `POST /v1/payments`: the delay from sending the request until the payment's row is in the page.
 *    Budget p99 ≤ 1 s.
 *
 * Needs /usr/bin/chromium (CHROMIUM). Writes the figures as JSON to BENCH_SUMMARY_FILE (bench/all.ts).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromium } from "playwright-core"
import { CONSOLE_SESSION_PATH } from "../domain/Console.ts"
import { buildConsole, initialScripts, initialScriptsGzipped } from "../scripts/build.mjs"
import {
  formatMs,
  log,
  onCleanUp,
  openDatabase,
  percentile,
  positiveNumber,
  postJson,
  runBench,
  setLogPrefix,
  startService,
  writeSummary
} from "./support.ts"

setLogPrefix("bench:console")

const CHROMIUM = process.env["CHROMIUM"] ?? "/usr/bin/chromium"
const PAYMENTS = Math.round(positiveNumber("BENCH_CONSOLE_PAYMENTS", 20))
const LOADS = Math.round(positiveNumber("BENCH_CONSOLE_LOADS", 5))
const LIVE = Math.round(positiveNumber("BENCH_CONSOLE_LIVE", 50))
const PASSWORD = "correct horse battery staple"

const INITIAL_JS_BUDGET_KB = 250
const FIRST_PAGE_BUDGET_MS = 1000
const LIVE_P99_BUDGET_MS = 1000

/** Minified bytes of the initial scripts per package or source folder, largest first. */
const contributors = (metafile: Awaited<ReturnType<typeof buildConsole>>) => {
  const bytes = new Map<string, number>()
  for (const path of initialScripts(metafile)) {
    for (const [input, { bytesInOutput }] of Object.entries(metafile.outputs[path]!.inputs)) {
      const owner = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? input.split("/").slice(0, input.startsWith("src/") ? 3 : 1).join("/")
      bytes.set(owner, (bytes.get(owner) ?? 0) + bytesInOutput)
    }
  }
  return [...bytes].sort((a, b) => b[1] - a[1])
}

const main = async () => {
  // 1. Initial JavaScript.
  const outDir = mkdtempSync(join(tmpdir(), "console-bench-build-"))
  onCleanUp(async () => rmSync(outDir, { recursive: true, force: true }))
  const metafile = await buildConsole(outDir)
  const initialKB = initialScriptsGzipped(metafile) / 1024
  const files = initialScripts(metafile).length
  log(`initial JavaScript: ${initialKB.toFixed(0)} KB gzipped in ${files} files (budget ${INITIAL_JS_BUDGET_KB} KB)`)
  for (const [owner, size] of contributors(metafile).slice(0, 12)) log(`  ${owner}: ${(size / 1024).toFixed(0)} KB minified`)

  // 2. The service, a merchant with payments.
  const database = await openDatabase()
  const service = await startService(database)
  log(`service at ${service.baseUrl} (${database.description})`)
  const email = `console-bench-${Date.now().toString(36)}@example.test`
  const session = await postJson(service.baseUrl, "/auth/register", { email, password: PASSWORD, organization_name: "Bench Coffee" })
  const store = await postJson(service.baseUrl, "/stores", { name: "Bench Cafe" }, session.access_token)
  const key = await postJson(service.baseUrl, "/api-keys", { store_id: store.id, mode: "test" }, session.access_token)
  for (let i = 0; i < PAYMENTS; i++) {
    await postJson(service.baseUrl, "/v1/payments", { amount: `${i + 1}.00`, currency: "USD", reference_id: `order-${i}` }, key.secret)
  }

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] })
  onCleanUp(() => browser.close())
  const signedInContext = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const response = await context.request.post(new URL(CONSOLE_SESSION_PATH, service.baseUrl).toString(), {
      data: { email, password: PASSWORD },
      headers: { origin: service.baseUrl }
    })
    if (!response.ok()) throw new Error(`console sign-in answered ${response.status()}`)
    return context
  }

  // Cold loads of the payments page.
  const loads: Array<number> = []
  for (let i = 0; i < LOADS; i++) {
    const context = await signedInContext()
    const page = await context.newPage()
    const started = performance.now()
    await page.goto(`${service.baseUrl}/console/payments`)
    await page.locator("tr[data-payment-id]").first().waitFor({ timeout: 30_000 })
    loads.push(performance.now() - started)
    await context.close()
  }
  loads.sort((a, b) => a - b)
  const firstPageMedian = percentile(loads, 50)
  log(`first rendered payments page, cold cache: median ${formatMs(firstPageMedian)}, slowest ${formatMs(loads[loads.length - 1]!)} over ${LOADS} loads (budget ${FIRST_PAGE_BUDGET_MS} ms)`)

  // 3. REST creation to the row in an open console.
  const context = await signedInContext()
  const page = await context.newPage()
  await page.goto(`${service.baseUrl}/console/payments`)
  await page.locator("tr[data-payment-id]").first().waitFor({ timeout: 30_000 })
  const delays: Array<number> = []
  for (let i = 0; i < LIVE; i++) {
    const started = performance.now()
    const payment = await postJson(service.baseUrl, "/v1/payments", { amount: "3.00", currency: "USD", reference_id: `live-${i}` }, key.secret)
    await page.locator(`tr[data-payment-id="${payment.id}"]`).waitFor({ timeout: 10_000 })
    delays.push(performance.now() - started)
  }
  await context.close()
  delays.sort((a, b) => a - b)
  const liveP50 = percentile(delays, 50)
  const liveP99 = percentile(delays, 99)
  log(`REST creation to its row in an open console: p50 ${formatMs(liveP50)}, p99 ${formatMs(liveP99)}, max ${formatMs(delays[delays.length - 1]!)} over ${LIVE} (budget p99 ${LIVE_P99_BUDGET_MS} ms)`)

  console.log("")
  console.log("| console figure | this run | budget |")
  console.log("|---|---:|---:|")
  console.log(`| initial JavaScript, gzipped (entry + static chunks, ${files} files) | ${initialKB.toFixed(0)} KB | ≤ ${INITIAL_JS_BUDGET_KB} KB |`)
  console.log(`| first rendered payments page, cold cache (median of ${LOADS}) | ${formatMs(firstPageMedian)} | ≤ ${FIRST_PAGE_BUDGET_MS} ms |`)
  console.log(`| REST creation → row in an open console (p99 of ${LIVE}) | ${formatMs(liveP99)} | ≤ ${LIVE_P99_BUDGET_MS} ms |`)
  writeSummary({
    database: database.description,
    initialKB,
    initialFiles: files,
    firstPageMedianMs: firstPageMedian,
    firstPageMaxMs: loads[loads.length - 1],
    loads: LOADS,
    liveP50Ms: liveP50,
    liveP99Ms: liveP99,
    live: LIVE
  })
}

runBench(main)
