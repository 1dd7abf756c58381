/**
 * Entry point of the all-in-one process (`npm start`): embedded database unless DATABASE_URL is set,
 * a single runner, HTTP on PORT. SIGINT/SIGTERM interrupt the program, which closes the server
 * (in-flight requests finish), then the cluster, then the database.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Logger } from "effect"
import { program } from "./App.ts"
import { ConfigurationError } from "./Config.ts"

const reportStartupFailure = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.squash(cause)
  if (failure instanceof ConfigurationError) return Console.error(failure.message)
  if (Cause.isInterruptedOnly(cause)) return Effect.void
  return Effect.logError("the service stopped on an error", cause)
}

// One line per event (logfmt), so logs stay grep-able and each request is one line.
NodeRuntime.runMain(
  program.pipe(Effect.tapErrorCause(reportStartupFailure), Effect.provide(Logger.logFmt)),
  { disableErrorReporting: true, disablePrettyLogger: true }
)
