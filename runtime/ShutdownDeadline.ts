/**
 * Shutdown that ends. SIGTERM and SIGINT interrupt the program, which closes the server (in-flight
 * requests get SHUTDOWN_GRACE_SECONDS), then the cluster, then the database. Should anything in that
 * sequence hang — a request that never finishes, a pool waiting for a connection, a server that will not
 * stop — the process exits anyway, SHUTDOWN_GRACE_SECONDS + 4 s after the signal. The signal is logged
 * as it arrives ("shutting down (SIGTERM)…"); runtime/Launch.ts logs "stopped" once all is released. The embedded database
 * stops with it (its wrapper sees this process's pipe close: runtime/EmbeddedPostgres.ts).
 */
import { Effect, Layer, Runtime } from "effect"
import { AppConfig } from "../src/platform/Config.ts"

/** Beyond the grace period: time for the cluster and the database to stop once requests are done. */
const STOP_ALLOWANCE_MS = 4_000
const SIGNALS = ["SIGTERM", "SIGINT"] as const

export const ShutdownDeadlineLive = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const deadlineMs = config.shutdownGraceSeconds * 1000 + STOP_ALLOWANCE_MS
  const runtime = yield* Effect.runtime<never>()
  let armed = false
  const arm = (signal: NodeJS.Signals) => {
    if (armed) return
    armed = true
    // The first line of a shutdown, so an operator reading the log knows why what follows happens.
    Runtime.runFork(runtime)(Effect.logInfo(`shutting down (${signal})…`))
    // Unref'd: a shutdown that finishes in time exits on its own, without waiting for this timer.
    setTimeout(() => {
      process.stderr.write(
        `timestamp=${new Date().toISOString()} level=ERROR message="shutdown after ${signal} did not finish within ${deadlineMs} ms; exiting"\n`
      )
      process.exit(1)
    }, deadlineMs).unref()
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      for (const signal of SIGNALS) process.on(signal, arm)
    }),
    () => Effect.sync(() => {
      for (const signal of SIGNALS) process.off(signal, arm)
    })
  )
}))
