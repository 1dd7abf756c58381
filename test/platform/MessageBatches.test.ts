/**
 * Messages to one entity sent together (src/platform/MessageBatches.ts): a burst goes as few messages,
 * each job gets its own answer in order, keys do not wait for each other, a failed message answers its
 * own jobs only, and closing the scope interrupts what waits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Array as Arr, Deferred, Effect, Either, Exit, Fiber, Scope } from "effect"
import { makeMessageBatches } from "../../src/platform/MessageBatches.ts"

/** A fake entity: records each message it gets and holds it until the gate opens. */
const makeEntity = Effect.gen(function*() {
  const gate = yield* Deferred.make<void>()
  const messages: Array<{ readonly key: string; readonly jobs: ReadonlyArray<number> }> = []
  const send = (key: string, jobs: Arr.NonEmptyReadonlyArray<number>) =>
    Effect.gen(function*() {
      messages.push({ key, jobs })
      yield* Deferred.await(gate)
      if (jobs.includes(13)) return yield* Effect.dieMessage("the entity failed this message")
      return jobs.map((job) => (job % 5 === 4 ? Either.left(`refused ${job}`) : Either.right(job * 10)))
    })
  return { gate, messages, send }
})

/** Waits until the fake entity has `count` messages. */
const messagesReach = (messages: ReadonlyArray<unknown>, count: number) =>
  Effect.gen(function*() {
    while (messages.length < count) yield* Effect.sleep("1 millis")
  }).pipe(Effect.timeout("2 seconds"))

describe("MessageBatches", () => {
  it.scoped("a burst goes as two messages at once, then one with the rest; each job gets its own answer in order", () =>
    Effect.gen(function*() {
      const entity = yield* makeEntity
      const submit = yield* makeMessageBatches(entity.send)
      const callers = yield* Effect.forEach(Arr.range(0, 9), (job) => Effect.fork(Effect.either(submit("game_a", job))))
      yield* messagesReach(entity.messages, 2)
      // Two messages in flight (the first job, then the second); the other eight wait for one to come back.
      expect(entity.messages).toEqual([{ key: "game_a", jobs: [0] }, { key: "game_a", jobs: [1] }])
      yield* Deferred.succeed(entity.gate, undefined)
      const answers = yield* Fiber.joinAll(callers)
      expect(entity.messages).toEqual([
        { key: "game_a", jobs: [0] },
        { key: "game_a", jobs: [1] },
        { key: "game_a", jobs: [2, 3, 4, 5, 6, 7, 8, 9] }
      ])
      expect(answers).toEqual(
        Arr.range(0, 9).map((job) => (job % 5 === 4 ? Either.left(`refused ${job}`) : Either.right(job * 10)))
      )
    }))

  it.scoped("no more jobs go in one message than its bound", () =>
    Effect.gen(function*() {
      const entity = yield* makeEntity
      const submit = yield* makeMessageBatches(entity.send, { maxBatch: 3, maxInFlight: 1 })
      const callers = yield* Effect.forEach(Arr.range(0, 7), (job) => Effect.fork(Effect.either(submit("game_a", job))))
      yield* messagesReach(entity.messages, 1)
      yield* Deferred.succeed(entity.gate, undefined)
      yield* Fiber.joinAll(callers)
      expect(entity.messages.map((message) => message.jobs)).toEqual([[0], [1, 2, 3], [4, 5, 6], [7]])
    }))

  it.scoped("one key's messages in flight do not hold another key's jobs", () =>
    Effect.gen(function*() {
      const entity = yield* makeEntity
      const submit = yield* makeMessageBatches(entity.send, { maxInFlight: 1 })
      const first = yield* Effect.fork(submit("game_a", 1))
      yield* messagesReach(entity.messages, 1)
      const other = yield* Effect.fork(submit("game_b", 2))
      yield* messagesReach(entity.messages, 2)
      expect(entity.messages).toEqual([{ key: "game_a", jobs: [1] }, { key: "game_b", jobs: [2] }])
      yield* Deferred.succeed(entity.gate, undefined)
      expect(yield* Fiber.join(first)).toBe(10)
      expect(yield* Fiber.join(other)).toBe(20)
    }))

  it.scoped("a message that fails answers its own jobs with the failure; the key's next jobs still go", () =>
    Effect.gen(function*() {
      const entity = yield* makeEntity
      const submit = yield* makeMessageBatches(entity.send, { maxInFlight: 1 })
      const failing = yield* Effect.fork(Effect.exit(submit("game_a", 13)))
      yield* messagesReach(entity.messages, 1)
      const after = yield* Effect.fork(submit("game_a", 3))
      yield* Deferred.succeed(entity.gate, undefined)
      const failed = yield* Fiber.join(failing)
      expect(Exit.isFailure(failed) && Exit.isInterrupted(failed)).toBe(false)
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* Fiber.join(after)).toBe(30)
      expect(entity.messages.map((message) => message.jobs)).toEqual([[13], [3]])
    }))

  it.effect("closing the scope interrupts the jobs in flight and those waiting, and refuses new ones", () =>
    Effect.gen(function*() {
      const entity = yield* makeEntity
      const scope = yield* Scope.make()
      const submit = yield* Scope.extend(makeMessageBatches(entity.send, { maxInFlight: 1 }), scope)
      const inFlight = yield* Effect.fork(Effect.exit(submit("game_a", 1)))
      yield* messagesReach(entity.messages, 1)
      const waiting = yield* Effect.fork(Effect.exit(submit("game_a", 2)))
      yield* Effect.yieldNow()
      yield* Scope.close(scope, Exit.void)
      expect(Exit.isInterrupted(yield* Fiber.join(inFlight))).toBe(true)
      expect(Exit.isInterrupted(yield* Fiber.join(waiting))).toBe(true)
      expect(Exit.isInterrupted(yield* Effect.exit(submit("game_a", 3)))).toBe(true)
      expect(entity.messages.map((message) => message.jobs)).toEqual([[1]])
    }))
})
