/**
 * How every entry point runs its program: logfmt lines, SIGINT/SIGTERM interrupt the program (which
 * releases its layers in reverse: server, cluster, database), and a start-up failure in configuration is
 * one line naming the variable, not a stack trace.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect } from "effect"
import { ConfigurationError } from "../src/platform/Config.ts"
import { LoggingLive } from "./Logging.ts"

const reportStartupFailure = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.squash(cause)
  if (failure instanceof ConfigurationError) return Console.error(failure.message)
  if (Cause.isInterruptedOnly(cause)) return Effect.void
  return Effect.logError("the service stopped on an error", cause)
}

export const launch = (program: Effect.Effect<void, unknown>) =>
  // One line per event (logfmt), so logs stay grep-able and each request is one line.
  NodeRuntime.runMain(
    program.pipe(
      Effect.tapErrorCause(reportStartupFailure),
      // A signal interrupts the program; this is the last line, once its layers are released.
      Effect.onInterrupt(() => Effect.logInfo("stopped")),
      Effect.provide(LoggingLive)
    ),
    { disableErrorReporting: true, disablePrettyLogger: true }
  )
