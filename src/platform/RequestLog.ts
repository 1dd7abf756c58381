/**
 * What a request's access-log line says beyond method, path, status and duration: who made the request.
 * The HTTP layer opens one record per request around everything that handles it; authentication fills
 * in the actor once the credential is known, so the one line written when the answer leaves names it
 * (`actor=usr_…` for a user session, `actor=key_…` for an API key). An erasure, a refund or a key
 * rotation can then be traced to whoever asked for it from the log alone.
 */
import { randomUUID } from "node:crypto"
import { Cause, Effect, type Fiber, FiberRef, HashMap, HashSet, LogLevel } from "effect"

export interface RequestLogRecord {
  actor?: string
}

// A mutable record shared by reference: fibers the handler forks inherit the same record, so what they
// fill in is seen by the HTTP layer when it writes the line.
const currentRecord = FiberRef.unsafeMake<RequestLogRecord | undefined>(undefined)

/**
 * Makes `record` the access-log record of the request the current fiber serves, and annotates every line
 * the fiber (and whatever it forks) logs with the request's id, for the rest of the fiber. Nothing is
 * undone after: the HTTP server runs each request in a fiber of its own that ends with the request, and
 * undoing the two changes (`Effect.locally`, `Effect.annotateLogs`: an acquire-use-release each) was a
 * tenth of what `GET /health` cost.
 */
export const beginRequestLog = (record: RequestLogRecord, requestId: string): Effect.Effect<void> =>
  Effect.zipRight(
    FiberRef.set(currentRecord, record),
    FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("request_id", requestId))
  )

/** Names the actor of the current request in its access-log line; outside a request it does nothing. */
export const recordActor = (actor: string): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(currentRecord), (record) =>
    Effect.sync(() => {
      if (record !== undefined) record.actor = actor
    }))

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/

/** The request's id: the client's `x-request-id` when it is a sane one, a fresh one otherwise. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID()

/** What a request's access-log line says. */
export interface AccessLine {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly started: number
  readonly record: RequestLogRecord
}

/**
 * The one access-log line of a request, written when its answer leaves: an info line with the request's
 * own fields added to the annotations in effect (the request id), handed to the loggers in effect as
 * `Effect.logInfo` hands it. Written here in one step rather than as `logInfo` inside `annotateLogs`,
 * whose fiber-ref changes and their undoing made the line a fifth of what `GET /health` cost. This writes it
 * from inside a step of the request's fiber (a `withFiberRuntime`), synchronously.
 */
export const unsafeLogAccess = (fiber: Fiber.RuntimeFiber<unknown, unknown>, line: AccessLine): void => {
  if (LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)) return
  const loggers = fiber.getFiberRef(FiberRef.currentLoggers)
  if (HashSet.size(loggers) === 0) return
  const durationMs = Math.round((performance.now() - line.started) * 10) / 10
  let annotations = HashMap.set(fiber.getFiberRef(FiberRef.currentLogAnnotations), "status", line.status as unknown)
  annotations = HashMap.set(annotations, "duration_ms", durationMs)
  if (line.record.actor !== undefined) annotations = HashMap.set(annotations, "actor", line.record.actor)
  const options = {
    fiberId: fiber.id(),
    logLevel: LogLevel.Info,
    message: [`${line.method} ${line.path} ${line.status} ${durationMs}ms`],
    cause: Cause.empty,
    context: fiber.getFiberRefs(),
    spans: fiber.getFiberRef(FiberRef.currentLogSpan),
    annotations,
    date: new Date()
  }
  for (const logger of loggers) logger.log(options)
}

/** Writes the line as an effect of the request's fiber. */
export const logAccess = (line: AccessLine): Effect.Effect<void> =>
  Effect.withFiberRuntime<void>((fiber) => {
    unsafeLogAccess(fiber, line)
    return Effect.void
  })
