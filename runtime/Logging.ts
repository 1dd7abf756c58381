/**
 * Log lines out of the process: logfmt, one line per event, written to standard output in batches.
 *
 * Node writes to a pipe or a file synchronously, one `writev` per `console.log`; under load the access
 * log alone then costs a tenth of the process's CPU. Lines logged in one turn of the event loop are
 * joined and written once, at the end of that turn (`setImmediate`), so a batch never waits on a timer
 * and a burst of requests costs one write. What is still buffered when the process exits — a normal
 * end, a `process.exit` from the shutdown deadline, an uncaught error — is written by the `exit` hook,
 * so no line is lost except to a `kill -9` that lands inside the turn that logged it.
 */
import { Effect, Logger, type Scope } from "effect"

/** A logger that renders with `format` and hands each turn's lines to `write` at once. */
export const turnBatchedLogger = <Message>(
  format: Logger.Logger<Message, string>,
  write: (text: string) => void
): Effect.Effect<Logger.Logger<Message, void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    let pending: Array<string> = []
    let scheduled = false
    const flush = () => {
      scheduled = false
      if (pending.length === 0) return
      const lines = pending
      pending = []
      write(`${lines.join("\n")}\n`)
    }
    process.on("exit", flush)
    yield* Effect.addFinalizer(() => Effect.sync(() => {
      process.off("exit", flush)
      flush()
    }))
    return Logger.make((options) => {
      pending.push(format.log(options))
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
  })

/** logfmt lines to standard output, batched per event-loop turn; replaces Effect's default logger. */
export const LoggingLive = Logger.replaceScoped(
  Logger.defaultLogger,
  turnBatchedLogger(Logger.logfmtLogger, (text) => process.stdout.write(text))
)
