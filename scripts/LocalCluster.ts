/**
 * Processes of a local multi-process cluster — runners (`runtime/runner.ts`) and API nodes
 * (`runtime/api.ts`) — started as children on loopback: used by `npm run cluster`, by the multi-process
 * tests (test/e2e) and by the runners bench.
 *
 * Each child runs its entry as `npm run start:runner` / `start:api` / `start` does (scripts/start.mjs: the
 * bundle in dist/, in that one process, built beforehand with `buildIfStale`) and leads its own process
 * group, so a signal reaches exactly it, and Ctrl-C in a terminal reaches only the parent, which then stops
 * its children in order.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { startCommand } from "./build.mjs"

export const ROOT = fileURLToPath(new URL("..", import.meta.url))

/** Variables the service reads: a child gets only the values it is given, never the caller's. */
export const SERVICE_VARIABLES = [
  "PORT", "HOST", "DATABASE_URL", "DATA_DIR", "MASTER_KEY", "PUBLIC_BASE_URL", "WEBHOOK_ALLOW_PRIVATE_NETWORKS",
  "PLATFORM_ADMIN_EMAILS", "PAYMENT_DEFAULT_EXPIRY_SECONDS", "REFUND_MFA_THRESHOLD", "NODE_ENV", "SHUTDOWN_GRACE_SECONDS",
  "RUNNER_HOST", "RUNNER_PORT", "RUNNER_LISTEN_HOST", "RUNNER_HEALTH_PORT", "CLUSTER_SHARDS",
  "CLUSTER_HEALTH_CHECK_SECONDS", "CLUSTER_REFRESH_SECONDS", "CLUSTER_LOCK_EXPIRATION_SECONDS", "SMTP_URL", "MAIL_FROM",
  "DATABASE_POOL_SIZE"
]

/** The caller's environment without the service's variables, plus `variables`. */
export const childEnvironment = (variables: Record<string, string | undefined>, keep: ReadonlyArray<string> = []) => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (!SERVICE_VARIABLES.includes(name) || keep.includes(name))) env[name] = value
  }
  for (const [name, value] of Object.entries(variables)) if (value !== undefined) env[name] = value
  return env
}

/** A free loopback TCP port (free when asked; another process may take it before it is used). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** A shard runner, an API node, or the all-in-one process (for comparisons). */
export type Role = "runner" | "api" | "main"

export interface ProcessExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ClusterProcess {
  readonly name: string
  readonly role: Role
  readonly child: ChildProcess
  /** RUNNER_PORT of a runner, PORT of an API node. */
  readonly port: number
  /** The last lines it wrote (stdout and stderr), for diagnostics. */
  readonly tail: Array<string>
  /**
   * Resolves with the line in which it says it is up ("runner ready on", "listening on http://HOST:PORT"); rejects
   * if it exits first.
   */
  readonly ready: Promise<string>
  readonly exited: Promise<ProcessExit>
  readonly isRunning: () => boolean
  /** Signals the process (its whole group); a no-op once it has exited. */
  readonly signal: (signal: NodeJS.Signals) => void
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  readonly stop: (graceMs?: number) => Promise<ProcessExit>
}

export interface StartOptions {
  readonly name: string
  readonly role: Role
  /** The port the role listens on: RUNNER_PORT or PORT. */
  readonly port: number
  readonly env: Record<string, string>
  /** Every line the process writes, as it comes. */
  readonly onLine?: (line: string) => void
  readonly tailLines?: number
  readonly readyTimeoutMs?: number
}

const READY_LINE: Record<Role, RegExp> = {
  runner: /runner ready on /,
  api: /listening on http:\/\//,
  main: /listening on http:\/\//
}

const ENTRY: Record<Role, string> = { runner: "runtime/runner.ts", api: "runtime/api.ts", main: "runtime/main.ts" }

export const startProcess = (options: StartOptions): ClusterProcess => {
  const [command, args] = startCommand(ENTRY[options.role])
  const child = spawn(command, args, {
    cwd: ROOT,
    env: options.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const tail: Array<string> = []
  const tailLines = options.tailLines ?? 200
  let exit: ProcessExit | undefined
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once("exit", (code, signal) => {
      exit = { code, signal }
      resolve(exit)
    })
  })
  const isRunning = () => exit === undefined && child.exitCode === null && child.signalCode === null

  const ready = new Promise<string>((resolve, reject) => {
    let isReady = false
    const timer = setTimeout(() => {
      if (!isReady) reject(new Error(`${options.name} did not become ready within ${options.readyTimeoutMs ?? 90_000} ms:\n${tail.join("\n")}`))
    }, options.readyTimeoutMs ?? 90_000)
    timer.unref()
    // The service logs a line per request: keep reading whatever it writes, or a full pipe would stall it.
    let partial = { stdout: "", stderr: "" }
    const onData = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      const text = partial[stream] + chunk.toString("utf8")
      const lines = text.split("\n")
      partial = { ...partial, [stream]: lines.pop() ?? "" }
      for (const line of lines) {
        if (line.length === 0) continue
        tail.push(line)
        if (tail.length > tailLines) tail.shift()
        options.onLine?.(line)
        if (!isReady && READY_LINE[options.role].test(line)) {
          isReady = true
          clearTimeout(timer)
          resolve(line)
        }
      }
    }
    child.stdout!.on("data", onData("stdout"))
    child.stderr!.on("data", onData("stderr"))
    void exited.then((how) => {
      clearTimeout(timer)
      if (!isReady) reject(new Error(`${options.name} exited (${how.code ?? how.signal}) before it was ready:\n${tail.join("\n")}`))
    })
  })
  // Nobody may be waiting on it when it rejects (a process stopped early); that is not an unhandled error.
  ready.catch(() => undefined)

  const signal = (name: NodeJS.Signals) => {
    if (child.pid === undefined || !isRunning()) return
    try {
      process.kill(-child.pid, name)
    } catch {
      // already gone
    }
  }

  const stop = async (graceMs = 15_000) => {
    if (!isRunning()) return exited
    signal("SIGTERM")
    const timer = setTimeout(() => signal("SIGKILL"), graceMs)
    const how = await exited
    clearTimeout(timer)
    return how
  }

  return { name: options.name, role: options.role, child, port: options.port, tail, ready, exited, isRunning, signal, stop }
}
