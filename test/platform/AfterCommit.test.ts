/**
 * Work held for the enclosing transaction's commit (src/platform/AfterCommit.ts) and the change feed's
 * announcements that use it (src/platform/ChangeFeed.ts), on the service's own client (runtime/Database.ts)
 * against the suite's database: run after the outermost commit, never after a rollback, a savepoint
 * rolled back drops only its own, an interrupted transaction drops everything; a notice reaches the
 * subscribers of its channel only once its transaction has committed, and many notices arrive whole and
 * in order.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Stream } from "effect"
import { DatabaseLive } from "../../runtime/Database.ts"
import { afterCommit } from "../../src/platform/AfterCommit.ts"
import { ChangeFeed } from "../../src/platform/ChangeFeed.ts"
import { testConfigLayer } from "../support/TestConfig.ts"
import { TestDatabase } from "../support/TestDatabase.ts"

const AfterCommitTestLive = DatabaseLive.pipe(Layer.provide(testConfigLayer()), Layer.provide(TestDatabase.layer))

class Boom {
  readonly _tag = "Boom"
}

let channels = 0

/**
 * A new channel, listened to for the rest of the test: what arrives on it after the listener is known to
 * listen (a notice sent outside any transaction has come back; those are left out), and its `announce`.
 */
const listening = Effect.gen(function*() {
  const feed = yield* ChangeFeed
  const channel = `after_commit_test_${++channels}`
  const received: Array<string> = []
  let ready = false
  const notices = yield* feed.subscribe(channel)
  yield* notices.pipe(
    Stream.runForEach((notice) =>
      Effect.sync(() => {
        if (notice._tag !== "Notice") return
        if (notice.payload === "ready") ready = true
        else if (ready) received.push(notice.payload)
      })
    ),
    Effect.forkScoped
  )
  yield* waitFor(() => ready, feed.announce(channel, "ready"))
  return {
    received,
    announce: (payload: string) => feed.announce(channel, payload),
    announceAll: (payloads: ReadonlyArray<string>) => feed.announceAll(channel, payloads)
  } as const
})

describe("after commit", () => {
  layer(AfterCommitTestLive, { timeout: 60_000, excludeTestServices: true })("on the service's client", (it) => {
    it.effect("outside a transaction the work runs at once", () =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<void>()
        yield* afterCommit(Deferred.succeed(done, undefined))
        expect(yield* Deferred.isDone(done)).toBe(true)
      }))

    it.effect("inside one it waits for the commit, and runs once the transaction has returned", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const done = yield* Deferred.make<void>()
        const seenInside = yield* sql.withTransaction(Effect.gen(function*() {
          yield* afterCommit(Deferred.succeed(done, undefined))
          yield* sql`SELECT 1`
          return yield* Deferred.isDone(done)
        }))
        expect(seenInside).toBe(false)
        expect(yield* Deferred.isDone(done)).toBe(true)
      }))

    it.effect("a transaction that fails, dies or is interrupted runs none of it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const ran: Array<string> = []
        const failed = yield* Effect.exit(sql.withTransaction(Effect.zipRight(
          afterCommit(Effect.sync(() => ran.push("failed"))),
          Effect.fail(new Boom())
        )))
        expect(Exit.isFailure(failed)).toBe(true)
        const died = yield* Effect.exit(sql.withTransaction(Effect.zipRight(
          afterCommit(Effect.sync(() => ran.push("died"))),
          Effect.dieMessage("defect")
        )))
        expect(Exit.isFailure(died)).toBe(true)
        const started = yield* Deferred.make<void>()
        const interrupted = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
          yield* afterCommit(Effect.sync(() => ran.push("interrupted")))
          yield* Deferred.succeed(started, undefined)
          return yield* Effect.never
        })))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(interrupted)
        expect(ran).toEqual([])
      }))

    it.effect("nested: a savepoint rolled back drops its own, the rest waits for the outermost commit", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const ran: Array<string> = []
        const record = (name: string) => afterCommit(Effect.sync(() => ran.push(name)))
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* record("outer")
          yield* sql.withTransaction(record("inner committed"))
          yield* Effect.ignore(sql.withTransaction(Effect.zipRight(record("inner rolled back"), Effect.fail(new Boom()))))
          // The savepoint's commit is not the transaction's: nothing has run yet.
          expect(ran).toEqual([])
          yield* record("outer after")
        }))
        expect(ran).toEqual(["outer", "inner committed", "outer after"])
      }))

    it.scoped("a notice reaches its channel's subscribers only once its transaction commits", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { announce, received } = yield* listening

        yield* Effect.ignore(sql.withTransaction(Effect.zipRight(announce("rolled back"), Effect.fail(new Boom()))))
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* announce("committed")
          // Long enough for a notice sent now to have come back.
          yield* Effect.sleep(Duration.millis(300))
          expect(received).not.toContain("committed")
        }))
        yield* announce("after")
        yield* waitFor(() => received.includes("after"))
        expect(received).toEqual(["committed", "after"])
      }))

    it.scoped("many notices at once arrive, all of them and in the order announced", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { announce, announceAll, received } = yield* listening
        const payloads = Array.from({ length: 2_500 }, (_, index) => `notice ${index}`)
        // One at a time, then the rest together from one transaction.
        yield* Effect.forEach(payloads.slice(0, 1_000), (payload) => announce(payload), { discard: true })
        yield* sql.withTransaction(announceAll(payloads.slice(1_000)))
        yield* waitFor(() => received.length >= payloads.length)
        expect(received).toEqual(payloads)
      }))
  })
})

/** Runs `nudge` (if any) and checks `done` every 20 ms until it holds; the test's timeout bounds it. */
const waitFor = (done: () => boolean, nudge: Effect.Effect<void> = Effect.void): Effect.Effect<void> =>
  Effect.suspend(() => done() ? Effect.void : Effect.zipRight(Effect.zipRight(nudge, Effect.sleep(Duration.millis(20))), waitFor(done, nudge)))

