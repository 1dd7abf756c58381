/**
 * The reference servers the request benches measure the service against, in the same run under the same
 * load (bench/requests.ts): the framework's floor (bench/reference/HttpApiFloor.ts) and the hand-written
 * peer doing the service's database work (bench/reference/PlainPeer.ts). They are not part of the product.
 *
 * Each is bundled by esbuild as `npm start` bundles the service (scripts/build.mjs), so no TypeScript loader
 * runs under load, and started as a child process with the Node flags `npm start` gives the service, on a
 * free loopback port; stopped at clean-up.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { build } from "esbuild"
import { startNodeFlags } from "../scripts/build.mjs"
import { onCleanUp, ROOT, tempDir } from "./support.ts"

export interface Reference {
  readonly baseUrl: string
  /** The reference server's process (node itself runs the bundle), for its CPU time. */
  readonly pid: number
  readonly stop: () => Promise<void>
}

const LISTEN_TIMEOUT_MS = 60_000

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

const bundle = async (script: string): Promise<string> => {
  const outfile = join(tempDir("merchant-bench-reference-"), "server.mjs")
  await build({
    absWorkingDir: ROOT,
    entryPoints: [script],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["pg-native"],
    // Beside the bundle, for bench:profile to name its functions by source line; Node ignores it without
    // `--enable-source-maps`, which the references do not get (no more than the service).
    sourcemap: true,
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: "warning"
  })
  return outfile
}

/**
 * Bundles `script` (a path under the repository) and runs it until it logs `listening on <url>`;
 * `nodeOptions` go to node before the start flags (a profiler, say).
 */
export const startReference = async (
  script: string,
  env: Record<string, string> = {},
  nodeOptions: ReadonlyArray<string> = []
): Promise<Reference> => {
  const file = await bundle(script)
  const child = spawn(process.execPath, [...nodeOptions, ...startNodeFlags(), file], {
    cwd: ROOT,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const stop = async () => {
    if (!isRunning(child)) return
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    await exited
    clearTimeout(timer)
  }
  onCleanUp(stop)
  const tail: Array<string> = []
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} did not log "listening on" within ${LISTEN_TIMEOUT_MS} ms:\n${tail.join("\n")}`)),
      LISTEN_TIMEOUT_MS
    )
    let listening = false
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.length === 0) continue
        // Keep reading whatever it logs (a full pipe would stall it), and keep the last lines for an error.
        tail.push(line)
        if (tail.length > 40) tail.shift()
        const match = listening ? null : /listening on (http:\/\/\S+)/.exec(line)
        if (match !== null) {
          listening = true
          clearTimeout(timer)
          resolve(match[1]!)
        }
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      if (!listening) reject(new Error(`${script} exited (${code ?? signal}) before listening:\n${tail.join("\n")}`))
    })
  })
  return { baseUrl, pid: child.pid!, stop }
}

/** The framework's floor: one HttpApi group answering a constant `GET /health`. */
export const startHttpApiFloor = (nodeOptions: ReadonlyArray<string> = []) =>
  startReference("bench/reference/HttpApiFloor.ts", {}, nodeOptions)

/** The hand-written peer of the list and creation, on the service's database. */
export const startPlainPeer = (databaseUrl: string, nodeOptions: ReadonlyArray<string> = []) =>
  startReference("bench/reference/PlainPeer.ts", { DATABASE_URL: databaseUrl }, nodeOptions)
