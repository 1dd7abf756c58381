/**
 * Idempotency keys of the merchant API (API.md "Payments"): the same key with the same request answers
 * the original response (same status) and does nothing again; the same key with another request is
 * 409 `idempotency_conflict`. Keys are scoped to a store and mode.
 *
 * The first request with a key claims it (a row with no response yet); concurrent requests with that key
 * wait for the answer and replay it. A request that dies without answering leaves its claim behind; after
 * a lease, the next request with the key takes it over, so a crashed attempt can be retried.
 * Client errors (4xx) are remembered like successes; a defect leaves the key for the next request to take over at once.
 *
 * Nothing here knows HTTP: `once` answers an `IdempotentOutcome`, and each caller turns a replay into
 * what it speaks — the REST handlers into the stored response (src/platform/IdempotentResponse.ts), the
 * console RPC into the value or the error again (`outcomeValue`).
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "./SqlSchema.ts"
import { Cause, Clock, Data, Duration, Effect, Exit, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "./Config.ts"
import { sha256Hex } from "./Crypto.ts"
import {
  type ApiError,
  ErrorEnvelope,
  errorStatus,
  fromErrorEnvelope,
  IdempotencyConflict,
  toErrorEnvelope
} from "../../domain/Errors.ts"
import { StoreId } from "../../domain/Ids.ts"
import { addMillis, currentDate } from "./Time.ts"
import { traced } from "./Traced.ts"

export interface IdempotencyScope {
  readonly storeId: StoreId
  readonly livemode: boolean
  readonly key: string
}

/** The scope of an `Idempotency-Key` sent to a store and mode (an API key's); none when no key was sent. */
export const scopeOf = (
  owner: { readonly storeId: StoreId; readonly livemode: boolean },
  key: string | undefined
): IdempotencyScope | undefined => key === undefined ? undefined : { storeId: owner.storeId, livemode: owner.livemode, key }

/** How long a concurrent request waits for the owner's answer before it is told to retry. */
export const WAIT_FOR_OWNER = Duration.seconds(15)
const POLL_INTERVAL = Duration.millis(25)
/** Keys are kept at least 24 hours (API.md); the purge removes them a little later. */
export const IDEMPOTENCY_RETENTION = Duration.hours(25)

/**
 * What an idempotent call came to: `Fresh`, the operation ran now and this is its value; `Replayed`, an
 * earlier request with the key answered, and this is the status and (encoded) body it answered with.
 */
export type IdempotentOutcome<A> = Data.TaggedEnum<{
  readonly Fresh: { readonly value: A }
  readonly Replayed: { readonly status: number; readonly body: unknown }
}>
interface IdempotentOutcomeDefinition extends Data.TaggedEnum.WithGenerics<1> {
  readonly taggedEnum: IdempotentOutcome<this["A"]>
}
export const IdempotentOutcome = Data.taggedEnum<IdempotentOutcomeDefinition>()

/**
 * A stable digest of a request: the operation's name (`payments.create`, `payments.refund`) and what was
 * asked, with object keys in a canonical order. Named by operation, not by route, so the REST route and
 * the console RPC that do the same thing share keys.
 */
const requestFingerprint = (operation: string, request: unknown): string =>
  sha256Hex(JSON.stringify([operation, canonical(request)]))

/**
 * What a request asks for, as `once` compares it between two requests with the same key: the operation
 * and its input. Fingerprinted only when the request has a key: most requests have none, and hashing a
 * canonical copy of the input cost a creation about 12 µs for nothing.
 */
export interface IdempotentRequest {
  readonly operation: string
  readonly input: unknown
}

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])])
    )
  }
  return value
}

/**
 * The outcome as a value, for callers that answer values (the console RPC): a fresh value as it is, a
 * replayed answer decoded back with `schema`, a replayed client error failed with again.
 */
export const outcomeValue = <A, I>(schema: Schema.Schema<A, I>) => (outcome: IdempotentOutcome<A>): Effect.Effect<A, ApiError> => {
  if (outcome._tag === "Fresh") return Effect.succeed(outcome.value)
  if (outcome.status < 400) return Effect.orDie(Schema.decodeUnknown(schema)(outcome.body))
  return Effect.flatMap(Effect.orDie(Schema.decodeUnknown(ErrorEnvelope)(outcome.body)), (envelope) => {
    const error = fromErrorEnvelope(envelope)
    return error === undefined ? Effect.dieMessage(`Unknown remembered error: ${envelope.error.code}`) : Effect.fail(error)
  })
}

/** A key's row: the scope's three columns. */
const Scope = Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean, key: Schema.String })
/** The scope, and the time of the request that asks (the lease is measured from it). */
const ScopeRequest = Schema.Struct({ ...Scope.fields, now: Schema.DateFromSelf })
const RequestTokenRow = Schema.Struct({ request_token: Schema.String })

const StoredRow = Schema.Struct({
  fingerprint: Schema.String,
  status_code: Schema.NullOr(Schema.Number),
  response: Schema.NullOr(Schema.Unknown),
  abandoned: Schema.Boolean
})

type Claim =
  | { readonly _tag: "Owned"; readonly token: string }
  | { readonly _tag: "Answered"; readonly outcome: IdempotentOutcome<never> }

export class Idempotency extends Effect.Service<Idempotency>()("platform/Idempotency", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // How long a claimed key waits for its owner before it counts as abandoned (IDEMPOTENCY_LEASE_SECONDS).
    const leaseMillis = (yield* AppConfig).idempotencyLeaseSeconds * 1000

    const ofScope = ({ key, livemode, storeId }: typeof Scope.Encoded) =>
      sql`store_id = ${storeId} AND livemode = ${livemode} AND key = ${key}`

    // Times in these statements are the service's Clock, passed in, not the database's now(): the lease is
    // a rule of this module and is tested under TestClock. Nodes keep NTP time, and the lease (30 s by default)
    // dwarfs any skew between them.
    const tryClaim = traced("Idempotency.tryClaim")(
      SqlSchema.findOne({
        Request: Schema.Struct({ ...ScopeRequest.fields, fingerprint: Schema.String, requestToken: Schema.String }),
        Result: RequestTokenRow,
        execute: ({ fingerprint, key, livemode, now, requestToken, storeId }) =>
          sql`
            INSERT INTO idempotency_keys (store_id, livemode, key, fingerprint, request_token, created_at, locked_at)
            VALUES (${storeId}, ${livemode}, ${key}, ${fingerprint}, ${requestToken}, ${now}, ${now})
            ON CONFLICT DO NOTHING
            RETURNING request_token`
      }),
      Effect.map(Option.map((row: typeof RequestTokenRow.Type) => row.request_token)),
      Effect.orDie
    )

    const read = traced("Idempotency.read")(
      SqlSchema.findOne({
        Request: ScopeRequest,
        Result: StoredRow,
        execute: ({ now, ...scope }) =>
          sql`
            SELECT fingerprint, status_code, response,
              (response IS NULL AND locked_at < ${addMillis(now, -leaseMillis)}) AS abandoned
            FROM idempotency_keys
            WHERE ${ofScope(scope)}`
      }),
      Effect.orDie
    )

    const takeOver = traced("Idempotency.takeOver")(
      SqlSchema.findOne({
        Request: ScopeRequest,
        Result: RequestTokenRow,
        execute: ({ now, ...scope }) =>
          sql`
            UPDATE idempotency_keys SET locked_at = ${now}
            WHERE ${ofScope(scope)}
              AND response IS NULL AND locked_at < ${addMillis(now, -leaseMillis)}
            RETURNING request_token`
      }),
      Effect.map(Option.map((row: typeof RequestTokenRow.Type) => row.request_token)),
      Effect.orDie
    )

    const conflict = (message: string) => new IdempotencyConflict({ message, param: "Idempotency-Key" })

    const claim = (scope: IdempotencyScope, fingerprint: string): Effect.Effect<Claim, IdempotencyConflict> =>
      Effect.gen(function*() {
        const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(WAIT_FOR_OWNER)
        while (true) {
          const now = yield* currentDate
          const claimed = yield* tryClaim({ ...scope, now, fingerprint, requestToken: randomUUID() })
          if (Option.isSome(claimed)) return { _tag: "Owned", token: claimed.value } as const
          const stored = yield* read({ ...scope, now })
          if (Option.isNone(stored)) continue // purged between the insert and the read: claim again
          if (stored.value.fingerprint !== fingerprint) {
            return yield* conflict("This Idempotency-Key was already used with a different request")
          }
          if (stored.value.status_code !== null) {
            const outcome = IdempotentOutcome.Replayed({ status: stored.value.status_code, body: stored.value.response })
            return { _tag: "Answered", outcome } as const
          }
          if (stored.value.abandoned) {
            const taken = yield* takeOver({ ...scope, now })
            if (Option.isSome(taken)) return { _tag: "Owned", token: taken.value } as const
          }
          if (now.getTime() > deadline) {
            return yield* conflict("A request with this Idempotency-Key is still in progress; retry shortly")
          }
          yield* Effect.sleep(POLL_INTERVAL)
        }
      })

    const remember = traced("Idempotency.remember")(
      SqlSchema.void({
        Request: Schema.Struct({ ...Scope.fields, status: Schema.Number, body: Schema.Unknown }),
        execute: ({ body, status, ...scope }) =>
          sql`
            UPDATE idempotency_keys SET status_code = ${status}, response = ${JSON.stringify(body)}::json
            WHERE ${ofScope(scope)}`
      }),
      Effect.orDie
    )

    /**
     * After a defect the key is left claimed but abandoned at once: the next request with it takes it
     * over with the same request token, so work the failed attempt handed on (a persisted refund message)
     * is continued, never started a second time.
     */
    const abandon = traced("Idempotency.abandon")(
      SqlSchema.void({
        Request: Scope,
        execute: (scope) =>
          sql`
            UPDATE idempotency_keys SET locked_at = '-infinity'
            WHERE ${ofScope(scope)}
              AND response IS NULL`
      }),
      Effect.orDie
    )

    /**
     * Runs `operation` once per key (`scope`; without one, every call runs it): its answer (encoded with
     * `encode`, at `successStatus`) or its client error is remembered, and every later request with the
     * same key and the same `request` (by its fingerprint) is answered `Replayed` with it instead.
     * `operation` gets the request token: the same for a retry that takes over an abandoned attempt, so
     * work it hands on (an entity message) can be keyed by it and happen once.
     */
    const once = <A, E extends ApiError, R>(
      scope: IdempotencyScope | undefined,
      request: IdempotentRequest,
      successStatus: number,
      encode: (value: A) => unknown,
      operation: (requestToken: string) => Effect.Effect<A, E, R>
    ): Effect.Effect<IdempotentOutcome<A>, E | IdempotencyConflict, R> =>
      Effect.gen(function*() {
        if (scope === undefined) return IdempotentOutcome.Fresh({ value: yield* operation(randomUUID()) })
        const claimed = yield* claim(scope, requestFingerprint(request.operation, request.input))
        if (claimed._tag === "Answered") return claimed.outcome
        const value = yield* operation(claimed.token).pipe(
          Effect.tap((value) => remember({ ...scope, status: successStatus, body: encode(value) })),
          Effect.tapError((error) => remember({ ...scope, status: errorStatus(error), body: toErrorEnvelope(error) })),
          Effect.onExit((exit) =>
            Exit.isFailure(exit) && Option.isNone(Cause.failureOption(exit.cause)) ? abandon(scope) : Effect.void
          ),
          // A claimed key must end answered or abandoned, even if the caller goes away meanwhile.
          Effect.uninterruptible
        )
        return IdempotentOutcome.Fresh({ value })
      })

    /**
     * Replaces every remembered answer of a store and mode whose body is the object `objectId` with
     * `body`, the object as it is now. Erasure uses it: replaying the request that created a customer must
     * not answer the personal data erased since. Runs in the caller's transaction, if any.
     */
    const rewriteAnswers = traced("Idempotency.rewriteAnswers")(
      SqlSchema.void({
        Request: Schema.Struct({ storeId: Schema.String, livemode: Schema.Boolean, objectId: Schema.String, body: Schema.Unknown }),
        execute: ({ body, livemode, objectId, storeId }) =>
          sql`
            UPDATE idempotency_keys SET response = ${JSON.stringify(body)}::json
            WHERE store_id = ${storeId} AND livemode = ${livemode} AND status_code < 400
              AND response->>'id' = ${objectId}`
      }),
      Effect.orDie
    )

    const deleteCreatedBefore = SqlSchema.void({
      Request: Schema.DateFromSelf,
      execute: (cutoff) => sql`DELETE FROM idempotency_keys WHERE created_at < ${cutoff}`
    })
    /** Forgets keys past their retention; run on a schedule. */
    const purgeExpired = Effect.gen(function*() {
      const cutoff = addMillis(yield* currentDate, -Duration.toMillis(IDEMPOTENCY_RETENTION))
      yield* deleteCreatedBefore(cutoff).pipe(Effect.orDie)
    }).pipe(Effect.withSpan("Idempotency.purgeExpired"))

    return { once, rewriteAnswers, purgeExpired } as const
  })
}) {}
