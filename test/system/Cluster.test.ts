/**
 * The cluster wiring on a real database: messages to one entity are processed one at a time, and a
 * persisted message sent twice with the same primary key is applied and answered once.
 */
import { Entity, SingleRunner } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { describe, expect, layer } from "@effect/vitest"
import { ClusterSchema } from "@effect/cluster"
import { Effect, Layer, Schema } from "effect"
import { DatabaseLive } from "../../runtime/Database.ts"
import { testConfigLayer } from "../support/TestConfig.ts"
import { TestDatabase } from "../support/TestDatabase.ts"

/** Applications of each key, across entity instances, to tell a replay from a second application. */
const applied = new Map<string, number>()

const Counter = Entity.make("TestCounter", [
  Rpc.make("Add", {
    payload: { key: Schema.String, amount: Schema.Number },
    success: Schema.Number,
    primaryKey: (payload) => payload.key
  }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Get", { success: Schema.Number })
])

const CounterLive = Counter.toLayer(Effect.gen(function*() {
  let total = 0
  return Counter.of({
    Add: ({ payload }) =>
      Effect.gen(function*() {
        // A read-modify-write with a pause in the middle loses updates unless messages are serialized.
        const before = total
        yield* Effect.sleep("2 millis")
        total = before + payload.amount
        applied.set(payload.key, (applied.get(payload.key) ?? 0) + 1)
        return total
      }),
    Get: () => Effect.succeed(total)
  })
}))

const ClusterTestLive = CounterLive.pipe(
  Layer.provideMerge(SingleRunner.layer({ runnerStorage: "sql" })),
  Layer.provide(DatabaseLive),
  Layer.provide(testConfigLayer()),
  Layer.provide(TestDatabase.layer)
)

describe("cluster", () => {
  layer(ClusterTestLive, { timeout: 120_000, excludeTestServices: true })("single runner on SQL storage", (it) => {
    it.effect("serializes concurrent messages to one entity", () =>
      Effect.gen(function*() {
        const counter = yield* Counter.client
        yield* Effect.forEach(
          Array.from({ length: 25 }, (_, i) => i),
          (i) => counter("serial-1").Add({ key: `serial-1-${i}`, amount: 1 }),
          { concurrency: "unbounded", discard: true }
        )
        expect(yield* counter("serial-1").Get()).toBe(25)
        // Another entity id has its own state.
        expect(yield* counter("serial-2").Get()).toBe(0)
      }))

    it.effect("answers a persisted message sent twice with one primary key once", () =>
      Effect.gen(function*() {
        const counter = yield* Counter.client
        const first = yield* counter("dedupe").Add({ key: "dedupe-once", amount: 5 })
        const second = yield* counter("dedupe").Add({ key: "dedupe-once", amount: 5 })
        expect(first).toBe(5)
        expect(second).toBe(5)
        expect(applied.get("dedupe-once")).toBe(1)
        expect(yield* counter("dedupe").Get()).toBe(5)
        // A different key is a new message.
        expect(yield* counter("dedupe").Add({ key: "dedupe-twice", amount: 5 })).toBe(10)
      }))
  })
})
