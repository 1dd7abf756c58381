/**
 * Idempotency keys of the merchant API (API.md "Payments"): the same key with the same request answers
 * the original response (same status) and does nothing again; the same key with another request is
 * 409 `idempotency_conflict`. Keys are scoped to a store and mode.
 *
 * The first request with a key claims it (a row with no response yet); concurrent requests with that key
 * wait for the answer and replay it. A request that dies without answering leaves its claim behind; after
 * a lease, the next request with the key takes it over, so a crashed attempt can be retried.
 * Client errors (4xx) are remembered like successes; a defect leaves the key for the next request to take over at once.
 */
import { HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, Duration, Effect, Exit, Option, Schema } from "effect"
import { createHash, randomUUID } from "node:crypto"
import {
  type ApiError,
  ErrorEnvelope,
  errorStatus,
  fromErrorEnvelope,
  IdempotencyConflict,
  toErrorEnvelope
} from "../../domain/Errors.ts"

export interface IdempotencyScope {
  readonly storeId: string
  readonly livemode: boolean
  readonly key: string
}

/** How long a claimed key waits for its owner before it counts as abandoned. */
export const IDEMPOTENCY_LEASE = Duration.seconds(30)
/** How long a concurrent request waits for the owner's answer before it is told to retry. */
const WAIT_FOR_OWNER = Duration.seconds(15)
const POLL_INTERVAL = Duration.millis(25)
/** Keys are kept at least 24 hours (API.md); the purge removes them a little later. */
export const IDEMPOTENCY_RETENTION = Duration.hours(25)

/** A stable digest of the request: method, path and the body with its keys in a canonical order. */
export const requestFingerprint = (method: string, path: string, body: unknown): string =>
  createHash("sha256").update(JSON.stringify([method, path, canonical(body)])).digest("hex")

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])])
    )
  }
  return value
}

const StoredRow = Schema.Struct({
  fingerprint: Schema.String,
  status_code: Schema.NullOr(Schema.Number),
  response: Schema.NullOr(Schema.Unknown),
  abandoned: Schema.Boolean
})

type Claim =
  | { readonly _tag: "Owned"; readonly token: string }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: unknown }

export class Idempotency extends Effect.Service<Idempotency>()("platform/Idempotency", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const leaseSeconds = Duration.toSeconds(IDEMPOTENCY_LEASE)

    const tryClaim = (scope: IdempotencyScope, fingerprint: string) =>
      sql<{ request_token: string }>`
        INSERT INTO idempotency_keys (store_id, livemode, key, fingerprint, request_token)
        VALUES (${scope.storeId}, ${scope.livemode}, ${scope.key}, ${fingerprint}, ${randomUUID()})
        ON CONFLICT DO NOTHING
        RETURNING request_token`.pipe(Effect.map((rows) => Option.fromNullable(rows[0]?.request_token)), Effect.orDie)

    const read = (scope: IdempotencyScope) =>
      sql`
        SELECT fingerprint, status_code, response,
          (response IS NULL AND locked_at < now() - make_interval(secs => ${leaseSeconds})) AS abandoned
        FROM idempotency_keys
        WHERE store_id = ${scope.storeId} AND livemode = ${scope.livemode} AND key = ${scope.key}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(StoredRow))),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    const takeOver = (scope: IdempotencyScope) =>
      sql<{ request_token: string }>`
        UPDATE idempotency_keys SET locked_at = now()
        WHERE store_id = ${scope.storeId} AND livemode = ${scope.livemode} AND key = ${scope.key}
          AND response IS NULL AND locked_at < now() - make_interval(secs => ${leaseSeconds})
        RETURNING request_token`.pipe(Effect.map((rows) => Option.fromNullable(rows[0]?.request_token)), Effect.orDie)

    const conflict = (message: string) => new IdempotencyConflict({ message, param: "Idempotency-Key" })

    const claim = (scope: IdempotencyScope, fingerprint: string): Effect.Effect<Claim, IdempotencyConflict> =>
      Effect.gen(function*() {
        const deadline = Date.now() + Duration.toMillis(WAIT_FOR_OWNER)
        while (true) {
          const claimed = yield* tryClaim(scope, fingerprint)
          if (Option.isSome(claimed)) return { _tag: "Owned", token: claimed.value } as const
          const stored = yield* read(scope)
          if (Option.isNone(stored)) continue // purged between the insert and the read: claim again
          if (stored.value.fingerprint !== fingerprint) {
            return yield* conflict("This Idempotency-Key was already used with a different request")
          }
          if (stored.value.status_code !== null) {
            return { _tag: "Replay", status: stored.value.status_code, body: stored.value.response } as const
          }
          if (stored.value.abandoned) {
            const taken = yield* takeOver(scope)
            if (Option.isSome(taken)) return { _tag: "Owned", token: taken.value } as const
          }
          if (Date.now() > deadline) {
            return yield* conflict("A request with this Idempotency-Key is still in progress; retry shortly")
          }
          yield* Effect.sleep(POLL_INTERVAL)
        }
      })

    const remember = (scope: IdempotencyScope, status: number, body: unknown) =>
      sql`
        UPDATE idempotency_keys SET status_code = ${status}, response = ${JSON.stringify(body)}::json
        WHERE store_id = ${scope.storeId} AND livemode = ${scope.livemode} AND key = ${scope.key}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /**
     * After a defect the key is left claimed but abandoned at once: the next request with it takes it
     * over with the same request token, so work the failed attempt handed on (a persisted refund message)
     * is continued, never started a second time.
     */
    const abandon = (scope: IdempotencyScope) =>
      sql`
        UPDATE idempotency_keys SET locked_at = '-infinity'
        WHERE store_id = ${scope.storeId} AND livemode = ${scope.livemode} AND key = ${scope.key}
          AND response IS NULL`.pipe(Effect.asVoid, Effect.orDie)

    /**
     * Runs `operation` once per key: its answer (encoded with `encode`, at `successStatus`) or its client
     * error is remembered, and every later request with the same key gets the remembered answer instead.
     * `operation` gets the request token: the same for a retry that takes over an abandoned attempt, so
     * work it hands on (an entity message) can be keyed by it and happen once.
     */
    const once = <A, E extends ApiError, R>(
      scope: IdempotencyScope,
      fingerprint: string,
      successStatus: number,
      encode: (value: A) => unknown,
      operation: (requestToken: string) => Effect.Effect<A, E, R>
    ): Effect.Effect<
      { readonly _tag: "Fresh"; readonly value: A } | Extract<Claim, { readonly _tag: "Replay" }>,
      E | IdempotencyConflict,
      R
    > =>
      Effect.gen(function*() {
        const claimed = yield* claim(scope, fingerprint)
        if (claimed._tag === "Replay") return claimed
        const value = yield* operation(claimed.token).pipe(
          Effect.tap((value) => remember(scope, successStatus, encode(value))),
          Effect.tapError((error) => remember(scope, errorStatus(error), toErrorEnvelope(error))),
          Effect.onExit((exit) =>
            Exit.isFailure(exit) && Option.isNone(Cause.failureOption(exit.cause)) ? abandon(scope) : Effect.void
          ),
          // A claimed key must end answered or abandoned, even if the caller goes away meanwhile.
          Effect.uninterruptible
        )
        return { _tag: "Fresh", value } as const
      })

    /** `once` for HTTP handlers: a remembered answer is replayed as the raw response it was. */
    const run = <A, E extends ApiError, R>(
      scope: IdempotencyScope | undefined,
      fingerprint: string,
      successStatus: number,
      encode: (value: A) => unknown,
      operation: (requestToken: string) => Effect.Effect<A, E, R>
    ): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E | IdempotencyConflict, R> => {
      if (scope === undefined) return Effect.suspend(() => operation(randomUUID()))
      return Effect.map(once(scope, fingerprint, successStatus, encode, operation), (outcome) =>
        outcome._tag === "Fresh" ? outcome.value : HttpServerResponse.unsafeJson(outcome.body, {
          status: outcome.status,
          headers: { "idempotent-replayed": "true" }
        }))
    }

    /**
     * `once` for callers that want values (RPC handlers): a remembered answer is decoded back with
     * `schema`, a remembered client error is failed with again.
     */
    const runValue = <A, I, E extends ApiError, R>(
      scope: IdempotencyScope | undefined,
      fingerprint: string,
      successStatus: number,
      schema: Schema.Schema<A, I>,
      operation: (requestToken: string) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | ApiError, R> => {
      if (scope === undefined) return Effect.suspend(() => operation(randomUUID()))
      return Effect.flatMap(
        once(scope, fingerprint, successStatus, Schema.encodeSync(schema), operation),
        (outcome): Effect.Effect<A, ApiError> => {
          if (outcome._tag === "Fresh") return Effect.succeed(outcome.value)
          if (outcome.status < 400) return Effect.orDie(Schema.decodeUnknown(schema)(outcome.body))
          return Effect.flatMap(Effect.orDie(Schema.decodeUnknown(ErrorEnvelope)(outcome.body)), (envelope) => {
            const error = fromErrorEnvelope(envelope)
            return error === undefined ? Effect.dieMessage(`Unknown remembered error: ${envelope.error.code}`) : Effect.fail(error)
          })
        }
      )
    }

    /** Forgets keys past their retention; run on a schedule. */
    const purgeExpired = sql`
      DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => ${Duration.toSeconds(IDEMPOTENCY_RETENTION)})`
      .pipe(Effect.asVoid, Effect.orDie)

    return { run, runValue, purgeExpired } as const
  })
}) {}
