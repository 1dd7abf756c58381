/**
 * A local multi-process cluster on loopback (`npm run cluster -- --runners 3 --api 1`): N shard runners
 * and M API nodes on the PostgreSQL at DATABASE_URL (required: the embedded database serves one process).
 *
 * - runners on consecutive RUNNER_PORTs from --runner-port (default RUNNER_PORT or 34431), each with a
 *   `GET /health` on consecutive ports from --health-port when it is given;
 * - API nodes on consecutive HTTP ports from --port (default PORT or 3000);
 * - PUBLIC_BASE_URL, unless set, is the first API node's address, for every process (runners write
 *   checkout links into webhook events too);
 * - every other variable (MASTER_KEY, DATA_DIR, CLUSTER_*, …) is passed through as set. Without MASTER_KEY
 *   the processes share the key generated into DATA_DIR, which is right only on one machine.
 *
 * Each line a process writes is forwarded with its name in front. Ctrl-C or SIGTERM stops the API nodes,
 * then the runners (each hands its shards back on the way out); a second Ctrl-C kills them at once.
 */
import { parseArgs } from "node:util"
import { buildIfStale } from "./build.mjs"
import { type ClusterProcess, startProcess } from "./LocalCluster.ts"

const usage = `usage: npm run cluster -- [--runners N] [--api M] [--runner-port P] [--port P] [--health-port P]

  --runners N       shard runners to start (default 2)
  --api M           API nodes to start (default 1)
  --runner-port P   first runner's RUNNER_PORT; the others follow (default RUNNER_PORT or 34431)
  --port P          first API node's HTTP port; the others follow (default PORT or 3000)
  --health-port P   first runner's RUNNER_HEALTH_PORT; the others follow (default: no health servers)

DATABASE_URL is required.`

const fail = (message: string): never => {
  console.error(`cluster: ${message}`)
  process.exit(2)
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        runners: { type: "string", default: "2" },
        api: { type: "string", default: "1" },
        "runner-port": { type: "string" },
        port: { type: "string" },
        "health-port": { type: "string" },
        help: { type: "boolean", short: "h" }
      },
      strict: true
    })
  } catch (error) {
    return fail(`${error instanceof Error ? error.message : String(error)}\n${usage}`)
  }
})()

if (values.help) {
  console.log(usage)
  process.exit(0)
}

const count = (name: string, raw: string | undefined, min: number): number => {
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) fail(`--${name} must be a whole number of at least ${min}, got "${raw}"`)
  return value
}
const portOption = (name: string, raw: string | undefined, fallback: number | undefined): number | undefined => {
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1 || value > 65535) fail(`${name} must be a port number, got "${raw}"`)
  return value
}

const runners = count("runners", values.runners, 1)
const apis = count("api", values.api, 0)
const runnerPort = portOption("--runner-port", values["runner-port"] ?? process.env["RUNNER_PORT"], 34431)!
const httpPort = portOption("--port", values.port ?? process.env["PORT"], 3000)!
const healthPort = portOption("--health-port", values["health-port"], undefined)

const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined || databaseUrl.trim() === "") {
  fail("DATABASE_URL is required: runners and API nodes share one PostgreSQL (the embedded database serves one process)")
}

const publicBaseUrl = process.env["PUBLIC_BASE_URL"] ?? `http://localhost:${httpPort}`
const colors = process.stdout.isTTY ? [36, 33, 35, 32, 34, 31] : []
const paint = (index: number, text: string) =>
  colors.length === 0 ? text : `\u001b[${colors[index % colors.length]}m${text}\u001b[0m`

const processes: Array<ClusterProcess> = []
let stopping = false
const names = [...Array.from({ length: runners }, (_, i) => `runner-${i + 1}`), ...Array.from({ length: apis }, (_, i) => `api-${i + 1}`)]
const width = Math.max(...names.map((name) => name.length))

const start = (name: string, role: "runner" | "api", port: number, env: Record<string, string>) => {
  const label = paint(processes.length, name.padEnd(width))
  const child = startProcess({
    name,
    role,
    port,
    env: { ...process.env as Record<string, string>, PUBLIC_BASE_URL: publicBaseUrl, ...env },
    onLine: (line) => console.log(`${label} │ ${line}`)
  })
  processes.push(child)
  void child.exited.then((exit) => {
    console.log(`${label} │ ${stopping ? "stopped" : "exited"} (${exit.code ?? exit.signal})`)
    if (!stopping && processes.every((p) => !p.isRunning())) {
      console.log("cluster: every process has exited")
      process.exit(1)
    }
  })
  return child
}

const stopAll = async () => {
  stopping = true
  // API nodes first, so nothing new arrives; then the runners, which hand their shards back.
  await Promise.all(processes.filter((p) => p.role === "api").map((p) => p.stop()))
  await Promise.all(processes.filter((p) => p.role === "runner").map((p) => p.stop()))
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) {
      console.log("cluster: killing every process")
      for (const p of processes) p.signal("SIGKILL")
      return
    }
    console.log(`cluster: ${signal}: stopping (again to kill at once)`)
    void stopAll().then(() => process.exit(0))
  })
}

console.log(
  `cluster: ${runners} runner(s) on 127.0.0.1:${runnerPort}…${runnerPort + runners - 1}, ` +
    `${apis} API node(s) on http://127.0.0.1:${httpPort}…${httpPort + Math.max(apis, 1) - 1}, public URL ${publicBaseUrl}`
)

// Every process runs the bundle: built once here when a source changed, not by each process at once.
await buildIfStale()
const runnerProcesses = Array.from({ length: runners }, (_, i) =>
  start(`runner-${i + 1}`, "runner", runnerPort + i, {
    RUNNER_HOST: "127.0.0.1",
    RUNNER_PORT: String(runnerPort + i),
    ...(healthPort === undefined ? {} : { RUNNER_HEALTH_PORT: String(healthPort + i) })
  }))
try {
  await Promise.all(runnerProcesses.map((p) => p.ready))
} catch (error) {
  if (!stopping) {
    console.error(`cluster: a runner failed to start: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`)
    await stopAll()
    process.exit(1)
  }
}
const apiProcesses = Array.from({ length: apis }, (_, i) =>
  start(`api-${i + 1}`, "api", httpPort + i, { HOST: "127.0.0.1", PORT: String(httpPort + i) }))
try {
  await Promise.all(apiProcesses.map((p) => p.ready))
} catch (error) {
  if (!stopping) {
    console.error(`cluster: an API node failed to start: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`)
    await stopAll()
    process.exit(1)
  }
}
if (!stopping) {
  console.log(
    `cluster: up — API on ${apiProcesses.map((p) => `http://127.0.0.1:${p.port}`).join(", ") || "(none)"}; ` +
      `runners on ${runnerProcesses.map((p) => `127.0.0.1:${p.port}`).join(", ")}. Ctrl-C stops them all.`
  )
}
