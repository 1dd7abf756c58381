/**
 * What a request's access-log line says beyond method, path, status and duration: who made the request.
 * The HTTP server opens one record per request when it arrives (runtime/AccessLog.ts) and writes the line
 * from it when the response is over; authentication fills in the actor once the credential is known, so
 * the line names it (`actor=usr_…` for a user session, `actor=key_…` for an API key). An erasure, a
 * refund or a key rotation can then be traced to whoever asked for it from the log alone.
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect, FiberRef, HashMap } from "effect"
import { randomUUID } from "node:crypto"

export interface RequestLogRecord {
  actor?: string
  /** The route pattern the router matched, where the server's own lookup does not know it (pages, documents). */
  route?: string
}

/**
 * Each request's record, by the platform's request object (Node's `IncomingMessage`): the server opens it
 * before any Effect code runs, and code inside the request finds it through the request in its context,
 * with no fiber-local state to set per request.
 */
const recordsOfRequests = new WeakMap<object, RequestLogRecord>()

/** Opens the access-log record of the platform's request `source`. */
export const openRequestLogRecord = (source: object): RequestLogRecord => {
  const record: RequestLogRecord = {}
  recordsOfRequests.set(source, record)
  return record
}

/** The record of the request the current fiber serves (fibers it forks share it), if it serves one. */
const currentRecord = (fiber: { readonly currentContext: { readonly unsafeMap: Map<string, unknown> } }) => {
  const request = fiber.currentContext.unsafeMap.get(HttpServerRequest.HttpServerRequest.key) as
    | HttpServerRequest.HttpServerRequest
    | undefined
  const source = request?.source
  return typeof source === "object" && source !== null ? recordsOfRequests.get(source) : undefined
}

/** Names the actor of the current request in its access-log line; outside a request it does nothing. */
export const recordActor = (actor: string): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const record = currentRecord(fiber)
    if (record !== undefined) record.actor = actor
    return Effect.void
  })

/**
 * Annotates every line the current fiber (and whatever it forks) logs with the request's id, for the rest
 * of the fiber. Nothing is undone after: the HTTP server runs each request in a fiber of its own that ends
 * with the request, and undoing the change (`Effect.annotateLogs`: an acquire-use-release) was a tenth of
 * what `GET /health` cost.
 */
export const annotateRequestId = (requestId: string): Effect.Effect<void> =>
  FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("request_id", requestId))

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/

/** The request's id: the client's `x-request-id` when it is a sane one, a fresh one otherwise. */
export const requestIdOf = (incoming: string | ReadonlyArray<string> | undefined): string =>
  typeof incoming === "string" && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID()
