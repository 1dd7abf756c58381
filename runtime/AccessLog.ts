/**
 * Every request's id, access-log line and metric, kept by the Node server itself around whatever answers
 * the request (the Effect handler, or a route the server answers directly: runtime/StatusStreams.ts).
 *
 * When a request arrives the server gives it an id (echoing a sane `x-request-id`), sets the response's
 * `x-request-id` header, finds its route once and opens its access-log record; when the response is over
 * (Node's `close`: sent in full, or the client gone first) it writes the one access line — through the
 * loggers in effect when the server was built, so a test's collecting logger sees it as the process's
 * own does — and counts the request in the metrics. Done inside the request's fiber, the same work took
 * about a third of what `GET /health` cost (fiber-local changes, a snapshot of the fiber's refs for the
 * loggers, a step after the answer, a response copied to add a header); here it is plain code at the
 * edges of the request.
 */
import { Cause, Effect, FiberRef, HashMap, HashSet, List, Logger, LogLevel } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { unsafeRecordHttpRequest } from "../src/platform/Metrics.ts"
import { openRequestLogRecord, type RequestLogRecord, requestIdOf } from "../src/platform/RequestLog.ts"

/** What the server knows of a request from its arrival, for the code that answers it. */
export interface TrackedRequest<Route> {
  readonly id: string
  readonly path: string
  /** The query string, without its `?`. */
  readonly query: string
  /** The route its method and path select among the known ones; none for an unknown path or method. */
  readonly route: Route | undefined
  readonly record: RequestLogRecord
}

/** A request's URL as its path and its query string (without the `?`). */
export const partsOf = (url: string): { readonly path: string; readonly query: string } => {
  const question = url.indexOf("?")
  return question === -1 ? { path: url, query: "" } : { path: url.slice(0, question), query: url.slice(question + 1) }
}

/** The status an access line gives a request whose client went away before its response was sent. */
const CLIENT_CLOSED_REQUEST = 499

/** The route label of a request no route matched: its path would make a series per probe of a scanner. */
const UNMATCHED_ROUTE = "unmatched"

/**
 * The tracker of the requests of one server: `track(request, response)` as each request arrives, before
 * anything answers it; `trackedOf(request)` for what it found. Routes are found by `findRoute` and
 * labelled in the metrics by `patternOf`.
 */
export const makeRequestTracker = <Route>(options: {
  readonly findRoute: (method: string, path: string) => Route | undefined
  readonly patternOf: (route: Route) => string
}) =>
  Effect.gen(function*() {
    // Effect's tracer logger adds a line to the span it runs in; the server writes the line outside any.
    const loggers = HashSet.remove(yield* FiberRef.get(FiberRef.currentLoggers), Logger.tracerLogger)
    const logs = HashSet.size(loggers) > 0 &&
      !LogLevel.greaterThan(yield* FiberRef.get(FiberRef.currentMinimumLogLevel), LogLevel.Info)
    // The log annotations in effect where the server is built (none as the service stands), which a request's
    // fiber inherited when it wrote the line.
    const baseAnnotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
    const context = yield* Effect.getFiberRefs
    const fiberId = yield* Effect.fiberId
    const trackedRequests = new WeakMap<IncomingMessage, TrackedRequest<Route>>()

    const writeLine = (method: string, tracked: TrackedRequest<Route>, status: number, durationMs: number) => {
      let annotations = HashMap.set(baseAnnotations, "request_id", tracked.id as unknown)
      annotations = HashMap.set(annotations, "status", status)
      annotations = HashMap.set(annotations, "duration_ms", durationMs)
      if (tracked.record.actor !== undefined) annotations = HashMap.set(annotations, "actor", tracked.record.actor)
      const entry = {
        fiberId,
        logLevel: LogLevel.Info,
        message: [`${method} ${tracked.path} ${status} ${durationMs}ms`],
        cause: Cause.empty,
        context,
        spans: List.empty(),
        annotations,
        date: new Date()
      }
      for (const logger of loggers) logger.log(entry)
    }

    const track = (request: IncomingMessage, response: ServerResponse): TrackedRequest<Route> => {
      const started = performance.now()
      const id = requestIdOf(request.headers["x-request-id"])
      const method = request.method ?? "GET"
      const { path, query } = partsOf(request.url ?? "/")
      const route = options.findRoute(method, path)
      const tracked: TrackedRequest<Route> = { id, path, query, route, record: openRequestLogRecord(request, id) }
      trackedRequests.set(request, tracked)
      response.setHeader("x-request-id", id)
      // `close` comes once per response: after it was sent in full, or when the connection ended first.
      response.once("close", () => {
        const status = response.writableFinished ? response.statusCode : CLIENT_CLOSED_REQUEST
        const elapsedMs = performance.now() - started
        unsafeRecordHttpRequest({
          method,
          route: tracked.record.route ?? (route === undefined ? UNMATCHED_ROUTE : options.patternOf(route)),
          status,
          durationSeconds: elapsedMs / 1000
        })
        if (logs) writeLine(method, tracked, status, Math.round(elapsedMs * 10) / 10)
      })
      return tracked
    }

    return {
      track,
      trackedOf: (request: unknown): TrackedRequest<Route> | undefined =>
        typeof request === "object" && request !== null ? trackedRequests.get(request as IncomingMessage) : undefined
    }
  })

export type RequestTracker<Route> = Effect.Effect.Success<ReturnType<typeof makeRequestTracker<Route>>>
