/**
 * What a request's access-log line says beyond method, path, status and duration: who made the request.
 * The HTTP server opens one record per request when it arrives (runtime/AccessLog.ts) and writes the line
 * from it when the response is over; authentication fills in the actor once the credential is known, so
 * the line names it (`actor=usr_…` for a user session, `actor=key_…` for an API key). An erasure, a
 * refund or a key rotation can then be traced to whoever asked for it from the log alone.
 */
import { HttpServerRequest } from "@effect/platform"
import { type Context, Effect, FiberRef, FiberRefs, HashMap, Logger } from "effect"
import { randomUUID } from "node:crypto"

export interface RequestLogRecord {
  /** The request's id (runtime/AccessLog.ts gives it on arrival). */
  readonly id: string
  actor?: string
  /** The route pattern the router matched, where the server's own lookup does not know it (pages, documents). */
  route?: string
}

/**
 * The platform's request object (Node's `IncomingMessage`) carries its record: the server opens it before
 * any Effect code runs (the server's request class declares the field: runtime/AccessLog.ts), and code
 * inside the request finds it through the request in its context, with no fiber-local state to set per
 * request. (Kept in a WeakMap by request, the record cost about 1.5 µs a request to store, and its
 * collector more to forget.)
 */
export interface WithRequestLogRecord {
  requestLogRecord?: RequestLogRecord | undefined
}

/** Opens the access-log record of the platform's request `source`, whose id is `id`. */
export const openRequestLogRecord = (source: WithRequestLogRecord, id: string): RequestLogRecord => {
  const record: RequestLogRecord = { id }
  source.requestLogRecord = record
  return record
}

/** The record of the request whose handling runs in `context` (fibers it forks share it), if any. */
const recordIn = (context: Context.Context<never>): RequestLogRecord | undefined => {
  const request = context.unsafeMap.get(HttpServerRequest.HttpServerRequest.key) as HttpServerRequest.HttpServerRequest | undefined
  const source = request?.source
  return typeof source === "object" && source !== null ? (source as WithRequestLogRecord).requestLogRecord : undefined
}

/** Names the actor of the current request in its access-log line; outside a request it does nothing. */
export const recordActor = (actor: string): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const record = recordIn(fiber.currentContext)
    if (record !== undefined) record.actor = actor
    return Effect.void
  })

/**
 * `logger`, given the id of the request a line was logged for as its `request_id` annotation: whatever a
 * request's fiber (or a fiber it forked) logs can be matched to the request's access line. The id is read
 * from the request in the fiber's context when a line is logged, so a request pays nothing for it unless
 * it logs; setting it as a log annotation on every request's fiber cost 3–4 % of `GET /health`.
 */
export const withRequestIds = <Message, Output>(logger: Logger.Logger<Message, Output>): Logger.Logger<Message, Output> =>
  Logger.mapInputOptions(logger, (options) => {
    if (HashMap.has(options.annotations, "request_id")) return options
    const record = recordIn(FiberRefs.getOrDefault(options.context, FiberRef.currentContext))
    return record === undefined ? options : { ...options, annotations: HashMap.set(options.annotations, "request_id", record.id as unknown) }
  })

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/

/** The request's id: the client's `x-request-id` when it is a sane one, a fresh one otherwise. */
export const requestIdOf = (incoming: string | ReadonlyArray<string> | undefined): string =>
  typeof incoming === "string" && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID()
