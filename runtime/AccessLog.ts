/**
 * Every request's id, access-log line and metric, kept by the Node server itself around whatever answers
 * the request (the Effect handler, or a route the server answers directly: runtime/StatusStreams.ts).
 *
 * When a request arrives the server gives it an id (echoing a sane `x-request-id`), gives the response its
 * `x-request-id` header and the server's own (`ServerResponseWithIds`), finds its route once and opens its
 * access-log record; when the response is over (Node's `close`: sent in full, or the client gone first)
 * it writes the one access line — through the loggers in effect when the server was built, so a test's
 * collecting logger sees it as the process's own does — and counts the request in the metrics. Done
 * inside the request's fiber, the same work took about a third of what `GET /health` cost (fiber-local
 * changes, a snapshot of the fiber's refs for the loggers, a step after the answer, a response copied to
 * add a header); here it is plain code at the edges of the request.
 */
import { Cause, Effect, FiberRef, HashMap, HashSet, List, Logger, LogLevel } from "effect"
import { IncomingMessage, type OutgoingHttpHeaders, ServerResponse } from "node:http"
import { unsafeRecordHttpRequest } from "../src/platform/Metrics.ts"
import { openRequestLogRecord, type RequestLogRecord, requestIdOf, type WithRequestLogRecord } from "../src/platform/RequestLog.ts"

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

/**
 * Node's request, of the server's own class (`requestClasses`): it carries what the server found of it on
 * arrival and its access-log record in fields of its own. Kept in WeakMaps by request, each cost about
 * 1.5 µs a request to store, and the collector more to forget.
 */
export class ServerRequest extends IncomingMessage implements WithRequestLogRecord {
  tracked: TrackedRequest<unknown> | undefined = undefined
  requestLogRecord: RequestLogRecord | undefined = undefined
}

/**
 * Node's response, of the server's own class (`requestClasses`): the headers every response carries (the
 * request's id and the tracker's `responseHeaders`) are added where its head is written, whoever writes
 * it. Set with `setHeader` as the request arrived, they made Node write every head the slow way (each of
 * the answer's own headers set one by one, then all of them copied again): about 5 µs of a `GET /health`
 * that costs 190. Deno's `node:http` makes its own responses whatever class it is given (denoland/deno
 * issue 28768); the tracker then sets the headers with `setHeader` as before.
 */
export class ServerResponseWithIds extends ServerResponse<ServerRequest> {
  leadingHeaders: Readonly<Record<string, string>> | undefined = undefined

  override writeHead(statusCode: number, reasonOrHeaders?: unknown, maybeHeaders?: unknown): this {
    const leading = this.leadingHeaders
    if (leading === undefined || this.headersSent) return super.writeHead(statusCode, reasonOrHeaders as string, maybeHeaders as OutgoingHttpHeaders)
    const hasReason = typeof reasonOrHeaders === "string"
    const given = hasReason ? maybeHeaders : reasonOrHeaders
    if (typeof given === "object" && given !== null && !Array.isArray(given)) {
      // The answer's own headers win, as they did over headers set before them.
      const headers = { ...leading, ...(given as OutgoingHttpHeaders) }
      return hasReason ? super.writeHead(statusCode, reasonOrHeaders, headers) : super.writeHead(statusCode, headers)
    }
    // No headers, or raw ones (an array): Node merges whatever was set before.
    for (const name in leading) if (!this.hasHeader(name)) this.setHeader(name, leading[name]!)
    return super.writeHead(statusCode, reasonOrHeaders as string, maybeHeaders as OutgoingHttpHeaders)
  }
}

/** The request and response classes of a server whose requests are tracked (`http.createServer`'s options). */
export const requestClasses = { IncomingMessage: ServerRequest, ServerResponse: ServerResponseWithIds } as const

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
 * labelled in the metrics by `patternOf`; every response carries `responseHeaders` beside the request's id.
 */
export const makeRequestTracker = <Route>(options: {
  readonly findRoute: (method: string, path: string) => Route | undefined
  readonly patternOf: (route: Route) => string
  readonly responseHeaders: Readonly<Record<string, string>>
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
      const tracked: TrackedRequest<Route> = { id, path, query, route, record: openRequestLogRecord(request as ServerRequest, id) }
      ;(request as ServerRequest).tracked = tracked
      const leadingHeaders = { ...options.responseHeaders, "x-request-id": id }
      if (response instanceof ServerResponseWithIds) response.leadingHeaders = leadingHeaders
      else for (const name in leadingHeaders) response.setHeader(name, leadingHeaders[name as keyof typeof leadingHeaders]!)
      // `close` comes once per response (so `on`, without `once`'s wrapper): after it was sent in full, or
      // when the connection ended first.
      response.on("close", () => {
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
        typeof request === "object" && request !== null ? (request as ServerRequest).tracked as TrackedRequest<Route> | undefined : undefined
    }
  })

export type RequestTracker<Route> = Effect.Effect.Success<ReturnType<typeof makeRequestTracker<Route>>>
