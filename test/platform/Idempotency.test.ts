/**
 * The time rules of idempotency keys under TestClock: how long a request waits for the owner of its key,
 * when an unanswered claim counts as abandoned and is taken over, and when a key is forgotten. The clock
 * moves; nothing sleeps. Against a fresh database, without the HTTP server (TestClock cannot reach into it).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Schema, TestClock } from "effect"
import { IdempotencyConflict, InvalidRequest } from "../../domain/Errors.ts"
import { StoreId } from "../../domain/Ids.ts"
import { DatabaseLive } from "../../runtime/Database.ts"
import { MigrationsLive } from "../../runtime/Migrations.ts"
import {
  Idempotency,
  IDEMPOTENCY_RETENTION,
  type IdempotentOutcome,
  outcomeValue,
  WAIT_FOR_OWNER
} from "../../src/platform/Idempotency.ts"
import { testConfigLayer } from "../support/TestConfig.ts"
import { TestDatabase } from "../support/TestDatabase.ts"
import { advanceWhileRunning, withTestClockAt } from "../support/TestTime.ts"

/** Not the default 30 s: the take-over test shows the configured lease is the one applied. */
const LEASE_SECONDS = 20

const IdempotencyTestLive = Idempotency.Default.pipe(
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(DatabaseLive),
  Layer.provide(testConfigLayer({ idempotencyLeaseSeconds: LEASE_SECONDS })),
  Layer.provide(TestDatabase.layer)
)

const START = Date.parse("2026-03-01T09:00:00Z")
let keys = 0
const newScope = () => ({ storeId: StoreId.make("str_idempotency"), livemode: false, key: `key-${++keys}` })
const request = { operation: "test.operation", input: { amount: "1.00" } }
const Answer = Schema.Struct({ answer: Schema.String })

/** Keeps `scope` claimed and unanswered until `release` is completed, as a request still at work does. */
const holdClaim = (idempotency: Idempotency, scope: ReturnType<typeof newScope>) =>
  Effect.gen(function*() {
    const release = yield* Deferred.make<void>()
    const token = yield* Deferred.make<string>()
    const owner = yield* Effect.forkDaemon(
      idempotency.once(scope, request, 201, (value: { answer: string }) => value, (requestToken) =>
        Effect.zipRight(Deferred.succeed(token, requestToken), Effect.as(Deferred.await(release), { answer: "owner" })))
    )
    return { owner, release, token: yield* Deferred.await(token) }
  })

describe("idempotency keys over time", () => {
  layer(IdempotencyTestLive, { timeout: 120_000, excludeTestServices: true })("with TestClock", (it) => {
    const withTestClock = withTestClockAt(START)

    it.effect("a request waits WAIT_FOR_OWNER for the key's owner, then is told to retry", () =>
      withTestClock(Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const scope = newScope()
        const held = yield* holdClaim(idempotency, scope)
        const waiting = yield* Effect.fork(
          idempotency.once(scope, request, 201, (value: { answer: string }) => value, () => Effect.succeed({ answer: "second" }))
        )
        // Just short of the wait it is still waiting…
        yield* advanceWhileRunning(waiting, Duration.subtract(WAIT_FOR_OWNER, Duration.seconds(1)), "1 second")
        expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
        // …and past it, it gives up with 409, without running its own operation.
        yield* advanceWhileRunning(waiting, "3 seconds", "1 second")
        const exit = yield* Fiber.await(waiting)
        expect(exit).toStrictEqual(Exit.fail(expect.any(IdempotencyConflict)))
        if (Exit.isFailure(exit)) expect(String(exit.cause)).toMatch(/still in progress/)
        yield* Deferred.succeed(held.release, undefined)
        yield* Fiber.join(held.owner)
      })))

    it.effect("a waiting request replays the owner's answer once it comes", () =>
      withTestClock(Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const scope = newScope()
        const held = yield* holdClaim(idempotency, scope)
        const waiting = yield* Effect.fork(
          idempotency.once(scope, request, 201, (value: { answer: string }) => value, () => Effect.succeed({ answer: "second" }))
        )
        yield* advanceWhileRunning(waiting, "2 seconds", "1 second")
        yield* Deferred.succeed(held.release, undefined)
        yield* advanceWhileRunning(waiting, "2 seconds", "100 millis")
        const outcome: IdempotentOutcome<{ answer: string }> = yield* Fiber.join(waiting)
        expect(outcome).toMatchObject({ _tag: "Replayed", status: 201, body: { answer: "owner" } })
        expect(yield* outcomeValue(Answer)(outcome)).toStrictEqual({ answer: "owner" })
      })))

    it.effect("a claim unanswered for IDEMPOTENCY_LEASE_SECONDS is taken over, with the same request token", () =>
      withTestClock(Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const scope = newScope()
        const held = yield* holdClaim(idempotency, scope)
        const run = (label: string) =>
          idempotency.once(scope, request, 201, (value: { answer: string; token: string }) => value, (token) =>
            Effect.succeed({ answer: label, token }))
        // Within the lease, the owner is presumed alive: a retry waits and is told to retry.
        const early = yield* Effect.fork(run("early"))
        yield* advanceWhileRunning(early, Duration.sum(WAIT_FOR_OWNER, Duration.seconds(1)), "1 second")
        expect(Exit.isFailure(yield* Fiber.await(early))).toBe(true)
        // Past it, the next request takes the claim over and continues with the owner's request token.
        yield* TestClock.setTime(START + LEASE_SECONDS * 1000 + 1_000)
        const late = yield* run("late")
        expect(late).toStrictEqual({ _tag: "Fresh", value: { answer: "late", token: held.token } })
        yield* Deferred.succeed(held.release, undefined)
        yield* Fiber.join(held.owner)
      })))

    it.effect("a remembered client error is replayed as that error, and keys are kept for IDEMPOTENCY_RETENTION", () =>
      withTestClock(Effect.gen(function*() {
        const idempotency = yield* Idempotency
        const scope = newScope()
        const refused = new InvalidRequest({ message: "amount must be greater than zero", param: "amount" })
        let runs = 0
        const run = idempotency.once(scope, request, 201, (value: { answer: string }) => value, () =>
          Effect.suspend(() => (runs++ === 0 ? Effect.fail(refused) : Effect.succeed({ answer: "ran again" }))))

        expect(yield* Effect.flip(run)).toStrictEqual(refused)
        const replay = yield* run
        expect(replay).toMatchObject({ _tag: "Replayed", status: 400 })
        expect(yield* Effect.flip(outcomeValue(Answer)(replay))).toStrictEqual(refused)

        // A day on, the key is still remembered…
        yield* TestClock.adjust("24 hours")
        yield* idempotency.purgeExpired
        expect((yield* run)._tag).toBe("Replayed")
        // …and once its retention is over it is forgotten: the same key runs the operation again.
        yield* TestClock.adjust(Duration.subtract(IDEMPOTENCY_RETENTION, Duration.hours(23)))
        yield* idempotency.purgeExpired
        expect(yield* run).toStrictEqual({ _tag: "Fresh", value: { answer: "ran again" } })
        expect(runs).toBe(2)
      })))
  })
})
