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
import { Array as Arr, Cause, Effect, FiberId, Inspectable, Logger, LogSpan, type Scope } from "effect"
import { withRequestIds } from "../src/platform/RequestLog.ts"

const TEXT_ONLY = /^[^\s"=]*$/
const UNSAFE_IN_LABEL = /[\s="]/g

const valueOf = (text: string): string => TEXT_ONLY.test(text) ? text : JSON.stringify(text)
const labelOf = (label: string): string => label.replace(UNSAFE_IN_LABEL, "_")

/**
 * Effect's `Logger.logfmtLogger`, line for line (`test/runtime/Logging.test.ts` compares them on generated
 * entries), without its per-line closures and detours: a request's access line took 11 µs to format with
 * it, a twentieth of what `GET /health` costs, and every request writes one.
 */
export const logfmtLogger: Logger.Logger<unknown, string> = Logger.make(
  ({ annotations, cause, date, fiberId, logLevel, message, spans }) => {
    let out = `timestamp=${date.toISOString()} level=${logLevel.label} fiber=${
      fiberId._tag === "Runtime" ? `#${fiberId.id}` : valueOf(FiberId.threadName(fiberId))
    }`
    const messages = Arr.ensure(message)
    for (let i = 0; i < messages.length; i++) out += ` message=${valueOf(Inspectable.toStringUnknown(messages[i], 0))}`
    if (!Cause.isEmptyType(cause)) out += ` cause=${valueOf(Cause.pretty(cause, { renderErrorCause: true }))}`
    if (spans._tag === "Cons") {
      const render = LogSpan.render(date.getTime())
      for (const span of spans) out += ` ${render(span)}`
    }
    for (const [label, value] of annotations) out += ` ${labelOf(label)}=${valueOf(Inspectable.toStringUnknown(value, 0))}`
    return out
  }
)

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

/**
 * logfmt lines to standard output, batched per event-loop turn, each line logged while a request was
 * handled with the request's id; replaces Effect's default logger.
 */
export const LoggingLive = Logger.replaceScoped(
  Logger.defaultLogger,
  Effect.map(turnBatchedLogger(logfmtLogger, (text) => process.stdout.write(text)), withRequestIds)
)
