/**
 * What a request's access-log line says beyond method, path, status and duration: who made the request.
 * The HTTP layer opens one record per request around everything that handles it; authentication fills
 * in the actor once the credential is known, so the one line written when the answer leaves names it
 * (`actor=usr_…` for a user session, `actor=key_…` for an API key). An erasure, a refund or a key
 * rotation can then be traced to whoever asked for it from the log alone.
 */
import { Effect, FiberRef } from "effect"

export interface RequestLogRecord {
  actor?: string
}

// A mutable record shared by reference: fibers the handler forks inherit the same record, so what they
// fill in is seen by the HTTP layer when it writes the line.
const currentRecord = FiberRef.unsafeMake<RequestLogRecord | undefined>(undefined)

/** Runs `effect` (a request's handling) with `record` as its access-log record. */
export const withRequestLog = (record: RequestLogRecord) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.locally(effect, currentRecord, record)

/** Names the actor of the current request in its access-log line; outside a request it does nothing. */
export const recordActor = (actor: string): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(currentRecord), (record) =>
    Effect.sync(() => {
      if (record !== undefined) record.actor = actor
    }))

/** The access-log fields of a record, for `Effect.annotateLogs`. */
export const requestLogFields = (record: RequestLogRecord): Record<string, string> =>
  record.actor === undefined ? {} : { actor: record.actor }
