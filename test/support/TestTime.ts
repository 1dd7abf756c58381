/**
 * Time rules under TestClock: the test clock is provided to one test at a time (the suite's layer keeps
 * the real clock, so the service's own background work is not frozen), and a test moves it on instead
 * of sleeping.
 */
import { Chunk, Duration, Effect, Fiber, Option, TestClock, TestContext, TestServices } from "effect"

/** Runs `effect` with the test clock, starting at `start` (epoch milliseconds). */
export const withTestClockAt = (start: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(start), effect), TestContext.TestContext)

/** Real milliseconds, for waiting on a forked fiber that is talking to the database. */
export const pause = TestServices.provideLive(Effect.sleep("2 millis"))

/**
 * Moves the test clock on by `total` in steps of `step`, each once `fiber` is asleep again (it may talk
 * to the database between sleeps) or done; stops early when it is done.
 */
export const advanceWhileRunning = (
  fiber: Fiber.Fiber<unknown, unknown>,
  total: Duration.DurationInput,
  step: Duration.DurationInput
) =>
  Effect.gen(function*() {
    const end = (yield* TestClock.currentTimeMillis) + Duration.toMillis(total)
    while ((yield* TestClock.currentTimeMillis) < end) {
      while (Chunk.isEmpty(yield* TestClock.sleeps()) && Option.isNone(yield* Fiber.poll(fiber))) yield* pause
      if (Option.isSome(yield* Fiber.poll(fiber))) return
      yield* TestClock.adjust(step)
    }
  })
