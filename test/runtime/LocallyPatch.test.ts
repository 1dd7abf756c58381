/**
 * patches/effect+3.22.4.patch: `FiberRef`'s `locally` — what every `provideService`, `provideContext`,
 * `mapInputContext`, `Scope.extend` and `Effect.locally` runs — without `acquireUseRelease` (a
 * `provideService` in 11 operations instead of 25), with the same meaning: the value holds inside, and the value from before
 * is back afterwards however the inside ends (success, failure, defect, interruption), before anything
 * outside runs, a finalizer outside included. Set back by restoring the fiber's refs from before when the
 * inside changed no other ref (one copy of them instead of two); a ref the inside set is kept.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, FiberRef, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"

/** How many operations the fiber runtime evaluates while running `effect` (a supervisor sees each one). */
const operationsOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    let count = 0
    class Counting extends Supervisor.AbstractSupervisor<void> {
      value = Effect.void
      override onEffect() {
        count++
      }
    }
    yield* effect.pipe(
      Effect.supervised(new Counting()),
      Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)),
      Effect.exit
    )
    return count
  })

class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}

describe("locally (the patched FiberRef.locally)", () => {
  it.effect("is the patched one: a provideService takes about half the operations acquireUseRelease made it take", () =>
    Effect.gen(function*() {
      const bare = yield* operationsOf(Effect.void)
      const provided = yield* operationsOf(Effect.provideService(Effect.void, Greeting, "hello"))
      // On effect 3.22.4 the provide (reading the context, adding the service, locally) takes 25 operations
      // unpatched and 11 patched.
      expect(provided - bare).toBeLessThanOrEqual(14)
    }))

  it.effect("holds the value inside and restores the one from before after a success", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake("outer")
      const inside = yield* Effect.locally(FiberRef.get(ref), ref, "inner")
      expect(inside).toBe("inner")
      expect(yield* FiberRef.get(ref)).toBe("outer")
    }))

  it.effect("restores the value from before even when the inside set another", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake("outer")
      yield* Effect.locally(FiberRef.set(ref, "changed inside"), ref, "inner")
      expect(yield* FiberRef.get(ref)).toBe("outer")
    }))

  it.effect("restores after a failure and after a defect, and passes them on unchanged", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake("outer")
      const failed = yield* Effect.exit(Effect.locally(Effect.fail("refused"), ref, "inner"))
      expect(failed).toStrictEqual(Exit.fail("refused"))
      expect(yield* FiberRef.get(ref)).toBe("outer")
      const died = yield* Effect.exit(Effect.locally(Effect.die("broken"), ref, "inner"))
      expect(died).toStrictEqual(Exit.die("broken"))
      expect(yield* FiberRef.get(ref)).toBe("outer")
      const caught = yield* Effect.locally(Effect.fail("refused"), ref, "inner").pipe(
        Effect.catchAll(() => FiberRef.get(ref))
      )
      expect(caught).toBe("outer")
    }))

  it.effect("keeps what the inside set on another ref, and sets this one back", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake("outer")
      const other = FiberRef.unsafeMake("before")
      yield* Effect.locally(FiberRef.set(other, "set inside"), ref, "inner")
      expect(yield* FiberRef.get(ref)).toBe("outer")
      expect(yield* FiberRef.get(other)).toBe("set inside")
      const failed = yield* Effect.exit(Effect.locally(Effect.zipRight(FiberRef.set(other, "set before failing"), Effect.fail("no")), ref, "inner"))
      expect(failed).toStrictEqual(Exit.fail("no"))
      expect(yield* FiberRef.get(ref)).toBe("outer")
      expect(yield* FiberRef.get(other)).toBe("set before failing")
    }))

  it.effect("keeps what a fiber joined inside brought back, and sets this one back", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake("outer")
      const other = FiberRef.unsafeMake("before")
      yield* Effect.locally(Effect.flatMap(Effect.fork(FiberRef.set(other, "set by a child")), Fiber.join), ref, "inner")
      expect(yield* FiberRef.get(ref)).toBe("outer")
      expect(yield* FiberRef.get(other)).toBe("set by a child")
    }))

  it.effect("is the patched one: when the inside changed nothing, the fiber's refs from before are back as they were", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake("outer")
      // The runtime's own field: `getFiberRefs()` would first record the runtime flags in a new copy.
      const refsOf = Effect.withFiberRuntime<unknown>((fiber) => Effect.succeed((fiber as unknown as { readonly _fiberRefs: unknown })._fiberRefs))
      const before = yield* refsOf
      yield* Effect.locally(Effect.void, ref, "inner")
      expect(yield* refsOf).toBe(before)
    }))

  it.effect("nests: each level gets its own value back", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake(0)
      const seen = yield* Effect.locally(
        Effect.zip(Effect.locally(FiberRef.get(ref), ref, 2), FiberRef.get(ref)),
        ref,
        1
      )
      expect(seen).toStrictEqual([2, 1])
      expect(yield* FiberRef.get(ref)).toBe(0)
    }))

  it.effect("restores before a finalizer outside runs when the inside is interrupted", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake("outer")
      const started = yield* Deferred.make<void>()
      const seenByFinalizer = yield* Deferred.make<string>()
      const fiber = yield* Effect.locally(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never), ref, "inner").pipe(
        Effect.onInterrupt(() => Effect.flatMap(FiberRef.get(ref), (value) => Deferred.succeed(seenByFinalizer, value))),
        Effect.fork
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(yield* Deferred.await(seenByFinalizer)).toBe("outer")
    }))

  it.effect("keeps an uninterruptible region uninterruptible, and an interruptible one interruptible", () =>
    Effect.gen(function*() {
      const ref = FiberRef.unsafeMake("outer")
      const inUninterruptible = yield* Effect.uninterruptible(
        Effect.locally(Effect.checkInterruptible(Effect.succeed), ref, "inner")
      )
      expect(inUninterruptible).toBe(false)
      const inInterruptible = yield* Effect.locally(Effect.checkInterruptible(Effect.succeed), ref, "inner")
      expect(inInterruptible).toBe(true)
    }))

  it.effect("a provided service is there inside only", () =>
    Effect.gen(function*() {
      const inside = yield* Effect.provideService(Greeting, Greeting, "hello")
      expect(inside).toBe("hello")
      expect(yield* Effect.serviceOption(Greeting)).toStrictEqual(expect.objectContaining({ _tag: "None" }))
    }))
})
