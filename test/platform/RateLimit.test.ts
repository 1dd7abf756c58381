/**
 * The rate-limit kit against PostgreSQL: one limit shared by two API nodes (each its own connection
 * pool) and kept across a restart; fixed windows and the Retry-After they give, under TestClock; failure
 * counting with its block; and the retention purge of counters that decide nothing any more.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, TestClock } from "effect"
import { runningEmbeddedDatabaseUrl } from "../../runtime/EmbeddedPostgres.ts"
import { RateLimiter, type RateLimitRule } from "../../src/platform/RateLimit.ts"
import { Retention } from "../../src/system/Retention.ts"
import { FUTURE_START } from "../support/Services.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"
import { withTestClockAt } from "../support/TestTime.ts"

let rules = 0
/** A rule of its own for each use, so tests never share a counter. */
const newRule = (limit: number, windowSeconds: number, blockSeconds?: number): RateLimitRule => ({
  name: `test-${++rules}-${Date.now().toString(36)}`,
  limit,
  windowSeconds,
  ...(blockSeconds === undefined ? {} : { blockSeconds })
})

/**
 * A rate limiter as one API node has it: its own pool of connections to the suite's database, for as
 * long as the scope lasts.
 */
const nodeLimiter = Effect.gen(function*() {
  const app = yield* TestApp
  // On the embedded database the suite's service started the server, which writes its address beside its data.
  const url = Option.getOrElse(app.database.url, () => Redacted.make(runningEmbeddedDatabaseUrl(app.database.dataDir)))
  const context = yield* Layer.build(RateLimiter.Default.pipe(Layer.provide(PgClient.layer({ url, maxConnections: 2 }))))
  return Context.get(context, RateLimiter)
})

const outcome = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.match(effect, { onFailure: (error) => error, onSuccess: () => "admitted" as const })

describe("rate limits", () => {
  layer(testAppLayer(), { timeout: 60_000, excludeTestServices: true })("in PostgreSQL", (it) => {
    it.effect("one limit holds across two API nodes, and after both restart", () =>
      Effect.gen(function*() {
        const rule = newRule(4, 60)
        const hit = [[rule, "203.0.113.7"]] as const
        yield* Effect.scoped(Effect.gen(function*() {
          const nodeA = yield* nodeLimiter
          const nodeB = yield* nodeLimiter
          // Four hits spread over the two nodes are the limit; the fifth is refused on either.
          for (const node of [nodeA, nodeB, nodeA, nodeB]) expect(yield* outcome(node.admit(hit))).toBe("admitted")
          const refusedA = yield* outcome(nodeA.admit(hit))
          const refusedB = yield* outcome(nodeB.admit(hit))
          for (const refused of [refusedA, refusedB]) {
            expect(refused).toMatchObject({ _tag: "RateLimited" })
            if (refused === "admitted") return
            expect(refused.retryAfterSeconds).toBeGreaterThan(0)
            expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60)
          }
          // Another subject under the same rule has its own count.
          expect(yield* outcome(nodeB.admit([[rule, "203.0.113.8"]]))).toBe("admitted")
        }))
        // Both nodes are gone; a node started afterwards still refuses.
        const restarted = yield* Effect.scoped(Effect.flatMap(nodeLimiter, (node) => outcome(node.admit(hit))))
        expect(restarted).toMatchObject({ _tag: "RateLimited" })
      }))

    it.effect("a window refuses past its limit until it ends, with the seconds left as Retry-After", () =>
      withTestClockAt(FUTURE_START)(Effect.scoped(Effect.gen(function*() {
        const limiter = yield* nodeLimiter
        const rule = newRule(2, 60)
        const hit = [[rule, "subject"]] as const
        expect(yield* outcome(limiter.admit(hit))).toBe("admitted")
        yield* TestClock.adjust("20 seconds")
        expect(yield* outcome(limiter.admit(hit))).toBe("admitted")
        expect(yield* outcome(limiter.admit(hit))).toMatchObject({ _tag: "RateLimited", retryAfterSeconds: 40 })
        yield* TestClock.adjust("39 seconds")
        expect(yield* outcome(limiter.admit(hit))).toMatchObject({ _tag: "RateLimited", retryAfterSeconds: 1 })
        // The window began with the first hit: a minute after it, a new one begins.
        yield* TestClock.adjust("1 second")
        expect(yield* outcome(limiter.admit(hit))).toBe("admitted")
        expect(yield* outcome(limiter.admit(hit))).toBe("admitted")
        expect(yield* outcome(limiter.admit(hit))).toMatchObject({ _tag: "RateLimited", retryAfterSeconds: 60 })
      }))))

    it.effect("a request refused by the address's limit does not count against its subject", () =>
      withTestClockAt(FUTURE_START)(Effect.scoped(Effect.gen(function*() {
        const limiter = yield* nodeLimiter
        const perAddress = newRule(1, 60)
        const perSubject = newRule(2, 60)
        expect(yield* outcome(limiter.admit([[perAddress, "a"], [perSubject, "link"]]))).toBe("admitted")
        for (let i = 0; i < 5; i++) {
          expect(yield* outcome(limiter.admit([[perAddress, "a"], [perSubject, "link"]]))).toMatchObject({ _tag: "RateLimited" })
        }
        // The refused address used one of the subject's two hits, not six.
        expect(yield* outcome(limiter.admit([[perAddress, "b"], [perSubject, "link"]]))).toBe("admitted")
        expect(yield* outcome(limiter.admit([[perAddress, "c"], [perSubject, "link"]]))).toMatchObject({ _tag: "RateLimited" })
      }))))

    it.effect("failures block a counter for the rule's block once they reach the limit; forgetting clears it", () =>
      withTestClockAt(FUTURE_START)(Effect.scoped(Effect.gen(function*() {
        const limiter = yield* nodeLimiter
        const rule = newRule(3, 15 * 60, 10 * 60)
        const hit = [[rule, "guessed"]] as const
        yield* limiter.countFailure(hit)
        yield* limiter.countFailure(hit)
        expect(yield* limiter.blockedFor(hit)).toEqual(Option.none())
        yield* limiter.countFailure(hit)
        expect(yield* limiter.blockedFor(hit)).toEqual(Option.some(600))
        yield* TestClock.adjust("599 seconds")
        expect(yield* limiter.blockedFor(hit)).toEqual(Option.some(1))
        yield* TestClock.adjust("1 second")
        expect(yield* limiter.blockedFor(hit)).toEqual(Option.none())
        // The count started afresh under the block: one failure more does not block again.
        yield* limiter.countFailure(hit)
        expect(yield* limiter.blockedFor(hit)).toEqual(Option.none())

        yield* limiter.countFailure(hit)
        yield* limiter.countFailure(hit)
        expect(Option.isSome(yield* limiter.blockedFor(hit))).toBe(true)
        yield* limiter.forget(hit)
        expect(yield* limiter.blockedFor(hit)).toEqual(Option.none())
      }))))

    it.effect("the retention purge deletes counters once their window and block are over", () =>
      withTestClockAt(FUTURE_START)(Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const limiter = yield* nodeLimiter
        const retention = yield* Effect.provide(Retention, Retention.Default)
        const windowed = newRule(1, 60)
        const blocking = newRule(1, 60, 3600)
        yield* limiter.admit([[windowed, "x"]])
        yield* limiter.countFailure([[blocking, "y"]])
        const kept = Effect.map(
          sql<{ key: string }>`
            SELECT key FROM rate_limits WHERE key IN (${windowed.name + ":x"}, ${blocking.name + ":y"}) ORDER BY key`,
          (rows) => rows.map((row) => row.key.split(":")[0])
        )

        yield* retention.purge(new Date(FUTURE_START + 59_000))
        expect(yield* kept).toEqual([windowed.name, blocking.name].sort())
        // A minute on, the window's counter decides nothing; the block's still does.
        yield* retention.purge(new Date(FUTURE_START + 60_000))
        expect(yield* kept).toEqual([blocking.name])
        yield* retention.purge(new Date(FUTURE_START + 3_600_000))
        expect(yield* kept).toEqual([])
      }))))
  })
})
