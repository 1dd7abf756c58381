/**
 * src/platform/NotifiedCache.ts: requests that miss the same key together share one lookup (an expired
 * API key under load was otherwise looked up, and its use recorded under the same row's lock, once per
 * request in flight), without answering anyone with what a notice has since replaced, and without one
 * request's failure or departure deciding for the others beyond the lookup they share. In process, with
 * a change feed the test feeds by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option, Queue, Stream } from "effect"
import type { ChangeFeed, ChangeNotice } from "../../src/platform/ChangeFeed.ts"
import { makeNotifiedCache } from "../../src/platform/NotifiedCache.ts"

class LookupFailed {
  readonly _tag = "LookupFailed"
}

/** A cache over a lookup that waits for the test to release each call, and the feed's notices. */
const gatedCache = Effect.gen(function*() {
  const notices = yield* Queue.unbounded<ChangeNotice>()
  const feed = {
    subscribe: () => Effect.succeed(Stream.fromQueue(notices)),
    follow: () => Effect.void,
    announce: () => Effect.void,
    announceAll: () => Effect.void
  } as ChangeFeed["Type"]
  /** One gate per lookup call, in call order: completed with what that lookup answers. */
  const gates: Array<Deferred.Deferred<Option.Option<string>, LookupFailed>> = []
  const cache = yield* makeNotifiedCache({
    feed,
    channel: "test",
    isNamedBy: (payload, key: string) => payload === key,
    lookup: (_key: string) =>
      Effect.flatMap(Deferred.make<Option.Option<string>, LookupFailed>(), (gate) => {
        gates.push(gate)
        return Deferred.await(gate)
      }),
    timeToLiveMillis: 10_000,
    capacity: 100
  })
  /** Lets every forked request run until it waits. */
  const settle = Effect.repeatN(Effect.yieldNow(), 20)
  const notify = (payload: string) => Effect.zipRight(Queue.offer(notices, { _tag: "Notice", payload }), settle)
  return { cache, gates, settle, notify }
})

describe("a notified cache", () => {
  it.scoped("shares one lookup among the requests that miss a key together, then answers from the cache", () =>
    Effect.gen(function*() {
      const { cache, gates, settle } = yield* gatedCache
      const requests = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.fork(cache.get("key")))
      yield* settle
      expect(gates).toHaveLength(1)
      yield* Deferred.succeed(gates[0]!, Option.some("value"))
      for (const request of requests) expect(yield* Fiber.join(request)).toEqual(Option.some("value"))
      expect(yield* cache.get("key")).toEqual(Option.some("value"))
      expect(gates).toHaveLength(1)
    }))

  it.scoped("does not let a request that comes after a notice join a lookup that started before it", () =>
    Effect.gen(function*() {
      const { cache, gates, notify, settle } = yield* gatedCache
      const before = yield* Effect.fork(cache.get("key"))
      yield* settle
      yield* notify("key")
      const after = yield* Effect.fork(cache.get("key"))
      yield* settle
      expect(gates).toHaveLength(2)
      yield* Deferred.succeed(gates[0]!, Option.some("old"))
      yield* Deferred.succeed(gates[1]!, Option.some("new"))
      expect(yield* Fiber.join(before)).toEqual(Option.some("old"))
      expect(yield* Fiber.join(after)).toEqual(Option.some("new"))
      // What the lookup from before the notice read was not kept; the later one's was.
      expect(yield* cache.get("key")).toEqual(Option.some("new"))
      expect(gates).toHaveLength(2)
    }))

  it.scoped("fails every request that shared a failed lookup, and looks up again at the next", () =>
    Effect.gen(function*() {
      const { cache, gates, settle } = yield* gatedCache
      const requests = yield* Effect.forEach(Array.from({ length: 3 }), () => Effect.fork(cache.get("key")))
      yield* settle
      yield* Deferred.fail(gates[0]!, new LookupFailed())
      for (const request of requests) {
        const exit = yield* Fiber.await(request)
        expect(Exit.isFailure(exit) && Exit.causeOption(exit).pipe(Option.map((cause) => cause._tag))).toEqual(Option.some("Fail"))
      }
      const again = yield* Effect.fork(cache.get("key"))
      yield* settle
      expect(gates).toHaveLength(2)
      yield* Deferred.succeed(gates[1]!, Option.some("value"))
      expect(yield* Fiber.join(again)).toEqual(Option.some("value"))
    }))

  it.scoped("answers the requests that joined a lookup even when the one that started it went away", () =>
    Effect.gen(function*() {
      const { cache, gates, settle } = yield* gatedCache
      const first = yield* Effect.fork(cache.get("key"))
      yield* settle
      const second = yield* Effect.fork(cache.get("key"))
      yield* settle
      const interrupted = yield* Effect.fork(Fiber.interrupt(first))
      yield* settle
      yield* Deferred.succeed(gates[0]!, Option.some("value"))
      yield* Fiber.join(interrupted)
      expect(yield* Fiber.join(second)).toEqual(Option.some("value"))
      expect(gates).toHaveLength(1)
      expect(yield* cache.get("key")).toEqual(Option.some("value"))
    }))

  it.scoped("does not keep an absent key, and drops a kept one on its notice", () =>
    Effect.gen(function*() {
      const { cache, gates, notify, settle } = yield* gatedCache
      const absent = yield* Effect.fork(cache.get("key"))
      yield* settle
      yield* Deferred.succeed(gates[0]!, Option.none())
      expect(yield* Fiber.join(absent)).toEqual(Option.none())
      const present = yield* Effect.fork(cache.get("key"))
      yield* settle
      expect(gates).toHaveLength(2)
      yield* Deferred.succeed(gates[1]!, Option.some("value"))
      expect(yield* Fiber.join(present)).toEqual(Option.some("value"))
      yield* notify("key")
      const afterNotice = yield* Effect.fork(cache.get("key"))
      yield* settle
      expect(gates).toHaveLength(3)
      yield* Deferred.succeed(gates[2]!, Option.some("changed"))
      expect(yield* Fiber.join(afterNotice)).toEqual(Option.some("changed"))
    }))
})
