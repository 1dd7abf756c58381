#!/usr/bin/env node
/**
 * Smoke test of the real entry point on every supported runtime (`npm run test:smoke`).
 *
 * For Node as `npm start` runs it (the bundle in dist/, scripts/start.mjs), Node with tsx from source,
 * and Deno, it starts `runtime/main.ts` as a child process on a free loopback port with
 * a fresh DATA_DIR (so the embedded database), waits for the "listening on" log line and for /ready,
 * checks a few routes, then sends SIGTERM and expects a clean exit. One line per check, then a
 * summary line `N passed, M failed`; the exit code is 1 when anything failed.
 *
 * Plain Node ESM with built-ins only, so it runs before (and independently of) the TypeScript tooling.
 */
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startNodeFlags } from "../../scripts/build.mjs"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const LISTEN_TIMEOUT_MS = 60_000
const READY_TIMEOUT_MS = 30_000
const EXIT_TIMEOUT_MS = 15_000
const REQUEST_TIMEOUT_MS = 10_000

const RUNTIMES = [
  { name: "node (npm start: the bundle)", command: process.execPath, args: [...startNodeFlags(), "scripts/start.mjs", "runtime/main.ts"] },
  { name: "node (tsx, from source)", command: process.execPath, args: ["--import", "tsx", "runtime/main.ts"] },
  { name: "deno", command: join(ROOT, "node_modules/.bin/deno"), args: ["run", "--allow-all", "runtime/main.ts"], prepare: () => installDeno() }
]

/**
 * Deno is not installed by `npm install` (its binary alone is 92 MB): the smoke test installs the version
 * package.json's `config.deno_version` names, without saving it, the first time it needs it.
 */
function installDeno() {
  const binary = join(ROOT, "node_modules/.bin/deno")
  if (existsSync(binary)) return
  const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).config.deno_version
  console.log(`installing deno@${version} for this run (npm install --no-save; not part of npm install)`)
  execFileSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", `deno@${version}`], { cwd: ROOT, stdio: "inherit" })
}

/**
 * Variables of the service's configuration that must not leak in from the caller's shell: a stray
 * DATABASE_URL or NODE_ENV=production would test something other than a fresh embedded install.
 */
const CONFIG_VARIABLES = [
  "PORT", "HOST", "DATABASE_URL", "DATA_DIR", "MASTER_KEY", "PUBLIC_BASE_URL", "WEBHOOK_ALLOW_PRIVATE_NETWORKS",
  "PLATFORM_ADMIN_EMAILS", "PAYMENT_DEFAULT_EXPIRY_SECONDS", "REFUND_MFA_THRESHOLD", "NODE_ENV", "SHUTDOWN_GRACE_SECONDS"
]

let passed = 0
let failed = 0

const record = (ok, label, detail = "") => {
  if (ok) passed++
  else failed++
  console.log(`${ok ? "ok  " : "FAIL"} ${label}${detail ? ` — ${detail}` : ""}`)
}

/** Runs one check: passes unless `fn` throws; the returned string (if any) is printed as detail. */
const check = async (label, fn) => {
  const started = performance.now()
  try {
    const detail = await fn()
    record(true, label, [detail, seconds(started)].filter(Boolean).join(", "))
    return true
  } catch (error) {
    record(false, label, error instanceof Error ? error.message : String(error))
    return false
  }
}

const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(1)} s`
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Everything that must be undone however the script ends: child process groups and temp dirs. */
const children = new Set()
const tempDirs = new Set()

const cleanUp = () => {
  for (const child of children) killGroup(child, "SIGKILL")
  children.clear()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
}

/**
 * Each child leads its own process group (spawned detached): tsx runs the program in a grandchild
 * process, and killing only the tsx process would leave that grandchild holding the port and files.
 */
const killGroup = (child, signal) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // Already gone.
  }
}

process.on("exit", cleanUp)
for (const [signal, number] of [["SIGINT", 2], ["SIGTERM", 15]]) {
  process.on(signal, () => {
    cleanUp()
    process.exit(128 + number)
  })
}

const startService = (runtime, dataDir) => {
  const env = { ...process.env }
  for (const name of CONFIG_VARIABLES) delete env[name]
  Object.assign(env, { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, DENO_NO_UPDATE_CHECK: "1" })
  const child = spawn(runtime.command, runtime.args, { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] })
  children.add(child)

  const service = { child, output: "", stdout: "", exit: undefined }
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    service.stdout += chunk
    service.output += chunk
  })
  child.stderr.setEncoding("utf8").on("data", (chunk) => {
    service.output += chunk
  })
  service.exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      service.exit = { code, signal }
      children.delete(child)
      resolve(service.exit)
    })
    child.on("error", (error) => {
      service.output += `\n(spawn failed: ${error.message})\n`
      service.exit = { code: null, signal: null, error }
      children.delete(child)
      resolve(service.exit)
    })
  })
  return service
}

/** Resolves with the base URL from the `listening on http://…` line on stdout. */
const waitForListening = async (service) => {
  const deadline = Date.now() + LISTEN_TIMEOUT_MS
  for (;;) {
    const match = /listening on (http:\/\/[^\s"]+)/.exec(service.stdout)
    if (match) return match[1]
    if (service.exit) throw new Error(`exited before listening (${describeExit(service.exit)})`)
    if (Date.now() > deadline) throw new Error(`no "listening on" line within ${LISTEN_TIMEOUT_MS / 1000} s`)
    await sleep(100)
  }
}

const request = (baseUrl, path) => fetch(new URL(path, baseUrl), { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })

const waitForReady = async (baseUrl) => {
  const deadline = Date.now() + READY_TIMEOUT_MS
  let last = "no answer"
  for (;;) {
    try {
      const response = await request(baseUrl, "/ready")
      await response.body?.cancel()
      if (response.status === 200) return
      last = `status ${response.status}`
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    if (Date.now() > deadline) throw new Error(`/ready not 200 within ${READY_TIMEOUT_MS / 1000} s (last: ${last})`)
    await sleep(250)
  }
}

const getJson = async (baseUrl, path, expectedStatus) => {
  const response = await request(baseUrl, path)
  const text = await response.text()
  if (response.status !== expectedStatus) {
    throw new Error(`expected status ${expectedStatus}, got ${response.status}: ${text.slice(0, 200)}`)
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`body is not JSON: ${text.slice(0, 200)}`)
  }
}

const describeExit = ({ code, signal, error }) =>
  error ? `spawn error: ${error.message}` : signal ? `signal ${signal}` : `code ${code}`

const tail = (text, lines = 20) => text.trimEnd().split("\n").slice(-lines).map((line) => `    | ${line}`).join("\n")

const smoke = async (runtime) => {
  const label = (what) => `${runtime.name}: ${what}`
  const failuresBefore = failed
  const dataDir = mkdtempSync(join(tmpdir(), `smoke-${runtime.name}-`))
  tempDirs.add(dataDir)
  const service = startService(runtime, dataDir)
  try {
    let baseUrl
    const listening = await check(label("logs listening on http://…"), async () => {
      baseUrl = await waitForListening(service)
      return baseUrl
    })
    // Without an address nothing else can be checked; the failure above already counts.
    if (!listening) return

    await check(label("GET /ready becomes 200"), () => waitForReady(baseUrl))

    await check(label("GET /health is {status: ok}"), async () => {
      const body = await getJson(baseUrl, "/health", 200)
      if (body?.status !== "ok") throw new Error(`unexpected body ${JSON.stringify(body)}`)
    })

    await check(label("GET /openapi.json is OpenAPI 3.1.0"), async () => {
      const body = await getJson(baseUrl, "/openapi.json", 200)
      if (body?.openapi !== "3.1.0") throw new Error(`openapi is ${JSON.stringify(body?.openapi)}`)
    })

    await check(label("GET /no-such-route is 404 not_found"), async () => {
      const body = await getJson(baseUrl, "/no-such-route", 404)
      if (body?.error?.code !== "not_found") throw new Error(`unexpected body ${JSON.stringify(body)}`)
    })

    await check(label("SIGTERM exits with code 0"), async () => {
      sendSignal(service.child, "SIGTERM")
      const exit = await Promise.race([service.exited, sleep(EXIT_TIMEOUT_MS).then(() => undefined)])
      if (!exit) throw new Error(`still running ${EXIT_TIMEOUT_MS / 1000} s after SIGTERM`)
      if (exit.code !== 0) throw new Error(`exited with ${describeExit(exit)}`)
    })
  } finally {
    if (failed > failuresBefore) console.log(`    ${runtime.name} output (last lines):\n${tail(service.output)}`)
    killGroup(service.child, "SIGKILL")
    await Promise.race([service.exited, sleep(5_000)])
    rmSync(dataDir, { recursive: true, force: true })
    tempDirs.delete(dataDir)
  }
}

/** A signal to the runtime's own process only, as an orchestrator would send it (tsx relays it). */
const sendSignal = (child, signal) => {
  try {
    process.kill(child.pid, signal)
  } catch {
    // Already gone; the exit check reports it.
  }
}

try {
  for (const runtime of RUNTIMES) {
    if (runtime.prepare !== undefined && !(await check(`${runtime.name}: installed`, runtime.prepare))) continue
    await smoke(runtime)
  }
} catch (error) {
  record(false, "smoke run", error instanceof Error ? error.stack ?? error.message : String(error))
} finally {
  cleanUp()
}
console.log(`${passed} passed, ${failed} failed`)
// Explicit exit: fetch's keep-alive pool would otherwise hold the event loop open for a while.
process.exit(failed > 0 ? 1 : 0)
