/**
 * Rate limits kept in PostgreSQL (`rate_limits`), so a limit holds across API nodes and survives a
 * restart: one row per counter (`{rule}:{subject}`), counted by one atomic upsert per hit, in fixed
 * windows that start with a counter's first hit. Rows past their window and block are deleted by the
 * retention purge (src/system/Retention.ts), with `purgeExpiredCounters` below.
 *
 * Two ways of counting:
 * - `admit` counts every request and refuses those past the limit (429 `rate_limited`, with the seconds
 *   until the window ends, or the rule's block ends, as `retryAfterSeconds`);
 * - `blockedFor` / `countFailure` / `forget` count only failures (sign-in): the check comes first, a
 *   failure is counted afterwards, and reaching the limit blocks the counter for the rule's block.
 */
import { HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "./SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { RateLimited } from "../../domain/Errors.ts"
import { AppConfig } from "./Config.ts"
import { hashToken } from "./Crypto.ts"
import { addMillis, currentDate } from "./Time.ts"
import { traced } from "./Traced.ts"

export interface RateLimitRule {
  /** Names the counter (the first part of its key); one name per rule. */
  readonly name: string
  /** Hits (or failures) a subject may have in one window. */
  readonly limit: number
  readonly windowSeconds: number
  /**
   * For failures (`countFailure`): how long a subject that reached the limit is refused, from the failure
   * that reached it; omitted, one window. `admit` refuses until the window ends.
   */
  readonly blockSeconds?: number
}

/** One counter to take a hit on: a rule and whom it counts (an address, a customer, a hashed e-mail…). */
export type RateLimitHit = readonly [rule: RateLimitRule, subject: string]

/** The client's address as the socket saw it: what per-address limits count. */
export const clientAddress: Effect.Effect<string, never, HttpServerRequest.HttpServerRequest> = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.getOrElse(request.remoteAddress, () => "unknown")
)

/**
 * The subject of an e-mail address: the same for every spelling of its case, and hashed, so the table
 * holds no address in clear (of people who may not even have an account).
 */
export const emailSubject = (email: string): string => hashToken(email.trim().toLowerCase())

const keyOf = (rule: RateLimitRule, subject: string) => `${rule.name}:${subject}`

/** Whole seconds from `now` to `until`, at least 1 (a `Retry-After` of 0 would invite an immediate retry). */
const secondsUntil = (until: Date, now: Date) => Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000))

const tooMany = (seconds: number) =>
  new RateLimited({ message: `Too many requests; try again in ${seconds} seconds`, retryAfterSeconds: seconds })

export class RateLimiter extends Effect.Service<RateLimiter>()("platform/RateLimiter", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { rateLimits } = yield* AppConfig

    const Counter = Schema.Struct({
      hits: Schema.Number,
      window_started: Schema.DateFromSelf,
      blocked_until: Schema.NullOr(Schema.DateFromSelf)
    })

    // A window is over once it started at or before `windowStart` (now minus the window's length); the hit
    // then opens a new one. The row is kept at least until the window that this hit counts in has ended.
    const count = SqlSchema.single({
      Request: Schema.Struct({
        key: Schema.String,
        now: Schema.DateFromSelf,
        windowStart: Schema.DateFromSelf,
        windowEnd: Schema.DateFromSelf
      }),
      Result: Counter,
      execute: ({ key, now, windowEnd, windowStart }) =>
        sql`
          INSERT INTO rate_limits AS r (key, hits, window_started, expires_at)
          VALUES (${key}, 1, ${now}, ${windowEnd})
          ON CONFLICT (key) DO UPDATE SET
            hits = CASE WHEN r.window_started <= ${windowStart} THEN 1 ELSE r.hits + 1 END,
            window_started = CASE WHEN r.window_started <= ${windowStart} THEN ${now} ELSE r.window_started END,
            expires_at = GREATEST(r.expires_at, ${windowEnd})
          RETURNING hits, window_started, blocked_until`
    })

    // The count starts afresh under the block, so the failures that caused it do not block again after it.
    const block = SqlSchema.void({
      Request: Schema.Struct({ key: Schema.String, until: Schema.DateFromSelf, now: Schema.DateFromSelf }),
      execute: ({ key, now, until }) =>
        sql`
          UPDATE rate_limits SET blocked_until = ${until}, hits = 0, window_started = ${now},
            expires_at = GREATEST(expires_at, ${until})
          WHERE key = ${key}`
    })

    const hitAt = (rule: RateLimitRule, subject: string, now: Date) =>
      count({
        key: keyOf(rule, subject),
        now,
        windowStart: addMillis(now, -rule.windowSeconds * 1000),
        windowEnd: addMillis(now, rule.windowSeconds * 1000)
      }).pipe(Effect.orDie)

    /** Counts one hit on the counter; fails when it is blocked or the hit passes the limit. */
    const take = (rule: RateLimitRule, subject: string, now: Date) =>
      Effect.gen(function*() {
        const counter = yield* hitAt(rule, subject, now)
        if (counter.blocked_until !== null && counter.blocked_until > now) {
          return yield* tooMany(secondsUntil(counter.blocked_until, now))
        }
        if (counter.hits <= rule.limit) return
        return yield* tooMany(secondsUntil(addMillis(counter.window_started, rule.windowSeconds * 1000), now))
      })

    /**
     * Counts one request against each counter in turn and refuses it (429) at the first one past its
     * limit; later counters are not counted then. List the client's address first: one address past its
     * limit then cannot use up a subject's limit (a payment link's, say) for everyone else.
     */
    const admit = traced("RateLimiter.admit")(function*(hits: ReadonlyArray<RateLimitHit>) {
      const now = yield* currentDate
      for (const [rule, subject] of hits) yield* take(rule, subject, now)
    })

    const findBlocks = SqlSchema.findAll({
      Request: Schema.Struct({ keys: Schema.Array(Schema.String), now: Schema.DateFromSelf }),
      Result: Schema.Struct({ blocked_until: Schema.DateFromSelf }),
      execute: ({ keys, now }) =>
        sql`SELECT blocked_until FROM rate_limits WHERE key IN ${sql.in(keys)} AND blocked_until > ${now}`
    })

    /** The seconds until the last of the counters' blocks ends; None when none of them is blocked. */
    const blockedFor = traced("RateLimiter.blockedFor")(function*(hits: ReadonlyArray<RateLimitHit>) {
      const now = yield* currentDate
      const blocks = yield* findBlocks({ keys: hits.map(([rule, subject]) => keyOf(rule, subject)), now }).pipe(
        Effect.orDie
      )
      if (blocks.length === 0) return Option.none<number>()
      return Option.some(Math.max(...blocks.map((row) => secondsUntil(row.blocked_until, now))))
    })

    /**
     * Counts one failure on each counter; one that reaches its limit is blocked for the rule's block (one
     * window when it names none) and starts counting afresh afterwards.
     */
    const countFailure = traced("RateLimiter.countFailure")(function*(hits: ReadonlyArray<RateLimitHit>) {
      const now = yield* currentDate
      yield* Effect.forEach(hits, ([rule, subject]) =>
        Effect.gen(function*() {
          const counter = yield* hitAt(rule, subject, now)
          if (counter.hits < rule.limit) return
          const until = addMillis(now, (rule.blockSeconds ?? rule.windowSeconds) * 1000)
          yield* block({ key: keyOf(rule, subject), until, now }).pipe(Effect.orDie)
        }), { discard: true })
    })

    const deleteCounters = SqlSchema.void({
      Request: Schema.Array(Schema.String),
      execute: (keys) => sql`DELETE FROM rate_limits WHERE key IN ${sql.in(keys)}`
    })

    /** Drops the counters (their hits and blocks), as if they had never counted. */
    const forget = traced("RateLimiter.forget")((hits: ReadonlyArray<RateLimitHit>) =>
      deleteCounters(hits.map(([rule, subject]) => keyOf(rule, subject))).pipe(Effect.orDie)
    )

    /**
     * Admits a request of a public route: one hit for its client's address under `perAddress`, then one for
     * each subject it names (a customer, a link, a code…).
     */
    const admitClient = (perAddress: RateLimitRule, subjects: ReadonlyArray<RateLimitHit>) =>
      Effect.flatMap(clientAddress, (address) => admit([[perAddress, address], ...subjects]))

    const pageViewsPerAddress: RateLimitRule = {
      name: "page-view:address",
      limit: rateLimits.publicPageViewsPerAddressPerMinute,
      windowSeconds: 60
    }

    /**
     * Admits a read of a public page (checkout, receipt, payment link, wallet, hosted game or card): one hit for
     * the client's address, shared by all of them, so a script walking ids or tokens meets a 429 long before
     * it learns anything, while a shopper never does.
     */
    const admitPageView = admitClient(pageViewsPerAddress, [])

    return { admit, admitClient, admitPageView, blockedFor, countFailure, forget } as const
  })
}) {}

/**
 * Deletes up to `limit` counters past their `expires_at` (the end of their last window and block) at `now`,
 * answering the key of each: a hit after it would start a new window anyway, so they decide nothing.
 */
export const purgeExpiredCounters = (sql: SqlClient.SqlClient, now: Date, limit: number) =>
  sql`
    DELETE FROM rate_limits WHERE key IN (
      SELECT key FROM rate_limits WHERE expires_at <= ${now} LIMIT ${limit}
    )
    RETURNING key`
