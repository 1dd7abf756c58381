/**
 * Outbox consumers: each subscribed consumer gets every event of its types that commits, and none that
 * rolls back; a pass applies them oldest first per key, takes the applied ones off its queue, and keeps
 * a failed event (and the later events of its key) for the next pass while other keys go on. Retention
 * keeps an event while a consumer still has it queued. The process's poll wakes the consumers with
 * events pending that no notice announced.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Queue } from "effect"
import { subscribeOutboxConsumer } from "../../migrations/0010_outbox_consumers.ts"
import type { StoreId } from "../../domain/Ids.ts"
import { makeOutboxPass, Outbox, OutboxPolls, OutboxQueues, type OutboxEvent } from "../../src/platform/Outbox.ts"
import { Retention } from "../../src/system/Retention.ts"
import { testAppLayer } from "../support/TestApp.ts"

const DAY_MS = 24 * 60 * 60 * 1000
const storeA = "store_outbox_a" as StoreId
const storeB = "store_outbox_b" as StoreId

const queued = (consumer: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: string }>`SELECT count(*) AS n FROM outbox_pending WHERE consumer = ${consumer}`).pipe(
      Effect.map((rows) => Number(rows[0]!.n)),
      Effect.orDie
    )

describe("outbox consumers", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("queue", (it) => {
    it.effect("queues committed events of the subscribed types only, and applies each once in order per key", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        yield* subscribeOutboxConsumer("test-order", ["test.alpha", "test.beta"])

        yield* outbox.emit({ storeId: storeA, livemode: false, type: "test.alpha", object: { n: 1 } })
        yield* outbox.emit({ storeId: storeB, livemode: false, type: "test.beta", object: { n: 2 } })
        yield* outbox.emit({ storeId: storeA, livemode: false, type: "test.gamma", object: { n: 3 } })
        // An event whose transaction rolls back is never queued.
        yield* sql.withTransaction(Effect.zipRight(
          outbox.emit({ storeId: storeA, livemode: false, type: "test.alpha", object: { n: 4 } }),
          Effect.fail("rolled back")
        )).pipe(Effect.ignore)
        yield* outbox.emit({ storeId: storeA, livemode: true, type: "test.beta", object: { n: 5 } })
        expect(yield* queued("test-order")).toBe(3)

        const seen: Array<{ store: string; n: unknown; livemode: boolean }> = []
        const pass = yield* makeOutboxPass("test-order", {
          types: ["test.alpha", "test.beta"],
          apply: (event: OutboxEvent) =>
            Effect.sync(() => seen.push({ store: event.storeId, n: (event.object as { n: number }).n, livemode: event.livemode }))
        })
        expect(yield* pass).toBe(3)
        expect(seen.filter((s) => s.store === storeA)).toEqual([
          { store: storeA, n: 1, livemode: false },
          { store: storeA, n: 5, livemode: true }
        ])
        expect(seen.filter((s) => s.store === storeB)).toEqual([{ store: storeB, n: 2, livemode: false }])
        // Applied events are off the queue: a second pass reads nothing.
        expect(yield* pass).toBe(0)
        expect(yield* queued("test-order")).toBe(0)
      }).pipe(Effect.provide(OutboxQueues.Default)))

    it.effect("keeps a failed event and the later ones of its key for the next pass; other keys go on", () =>
      Effect.gen(function*() {
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        yield* subscribeOutboxConsumer("test-failure", ["test.failing"])
        for (const [store, n] of [[storeA, 1], [storeA, 2], [storeB, 3]] as const) {
          yield* outbox.emit({ storeId: store, livemode: false, type: "test.failing", object: { n } })
        }
        let failFirst = true
        const applied: Array<number> = []
        const pass = yield* makeOutboxPass("test-failure", {
          types: ["test.failing"],
          apply: (event: OutboxEvent) => {
            const n = (event.object as { n: number }).n
            if (n === 1 && failFirst) {
              failFirst = false
              return Effect.fail("temporarily broken")
            }
            return Effect.sync(() => applied.push(n))
          }
        })
        yield* pass
        // Store A's first event failed, so its second waited; store B's went through.
        expect(applied).toEqual([3])
        expect(yield* queued("test-failure")).toBe(2)
        yield* pass
        expect(applied).toEqual([3, 1, 2])
        expect(yield* queued("test-failure")).toBe(0)
      }).pipe(Effect.provide(OutboxQueues.Default)))

    it.effect("two consumers of one type each get the event", () =>
      Effect.gen(function*() {
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        yield* subscribeOutboxConsumer("test-first", ["test.shared"])
        yield* subscribeOutboxConsumer("test-second", ["test.shared"])
        yield* outbox.emit({ storeId: storeA, livemode: false, type: "test.shared", object: {} })
        expect(yield* queued("test-first")).toBe(1)
        expect(yield* queued("test-second")).toBe(1)
        const first = yield* makeOutboxPass("test-first", { types: ["test.shared"], apply: () => Effect.void })
        expect(yield* first).toBe(1)
        expect(yield* queued("test-first")).toBe(0)
        expect(yield* queued("test-second")).toBe(1)
      }).pipe(Effect.provide(OutboxQueues.Default)))

    it.effect("consumers' passes at once, read and cleared together, each get their own events of their types up to their batch", () =>
      Effect.gen(function*() {
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        yield* subscribeOutboxConsumer("test-together-a", ["test.one", "test.two"])
        yield* subscribeOutboxConsumer("test-together-b", ["test.two"])
        // Subscribed to both, handling one: its other events stay queued, unread.
        yield* subscribeOutboxConsumer("test-together-c", ["test.one", "test.two"])
        for (const [n, type] of [[1, "test.one"], [2, "test.two"], [3, "test.one"], [4, "test.two"], [5, "test.one"], [6, "test.two"]] as const) {
          yield* outbox.emit({ storeId: storeA, livemode: false, type, object: { n } })
        }
        const seen: Record<string, Array<number>> = { a: [], b: [], c: [] }
        const passOf = (name: "a" | "b" | "c", types: Array<string>, batch: number) =>
          makeOutboxPass(`test-together-${name}`, {
            types,
            batch,
            apply: (event: OutboxEvent) => Effect.sync(() => seen[name]!.push((event.object as { n: number }).n))
          })
        const passes = [
          yield* passOf("a", ["test.one", "test.two"], 4),
          yield* passOf("b", ["test.two"], 10),
          yield* passOf("c", ["test.one"], 1)
        ]
        expect(yield* Effect.all(passes, { concurrency: "unbounded" })).toEqual([4, 3, 1])
        expect(seen).toEqual({ a: [1, 2, 3, 4], b: [2, 4, 6], c: [1] })
        expect([yield* queued("test-together-a"), yield* queued("test-together-b"), yield* queued("test-together-c")]).toEqual([2, 0, 5])
        expect(yield* Effect.all(passes, { concurrency: "unbounded" })).toEqual([2, 0, 1])
        expect(seen).toEqual({ a: [1, 2, 3, 4, 5, 6], b: [2, 4, 6], c: [1, 3] })
        expect([yield* queued("test-together-a"), yield* queued("test-together-b"), yield* queued("test-together-c")]).toEqual([0, 0, 4])
      }).pipe(Effect.provide(OutboxQueues.Default)))

    it.effect("passes of one consumer at once each read its events once", () =>
      Effect.gen(function*() {
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        yield* subscribeOutboxConsumer("test-twice", ["test.twice"])
        for (const n of [1, 2]) yield* outbox.emit({ storeId: storeA, livemode: false, type: "test.twice", object: { n } })
        const seen: Array<Array<number>> = [[], [], []]
        const passOf = (index: number) =>
          makeOutboxPass("test-twice", {
            types: ["test.twice"],
            apply: (event: OutboxEvent) => Effect.sync(() => seen[index]!.push((event.object as { n: number }).n))
          })
        // The first read goes at once; the two that come while it is in flight go together.
        const passes = [yield* passOf(0), yield* passOf(1), yield* passOf(2)]
        expect(yield* Effect.all(passes, { concurrency: "unbounded" })).toEqual([2, 2, 2])
        expect(seen).toEqual([[1, 2], [1, 2], [1, 2]])
        expect(yield* queued("test-twice")).toBe(0)
      }).pipe(Effect.provide(OutboxQueues.Default)))

    it.effect("retention keeps an event a consumer still has queued", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        yield* subscribeOutboxConsumer("test-retention", ["test.kept"])
        const kept = yield* outbox.emit({ storeId: storeA, livemode: false, type: "test.kept", object: {} })
        const gone = yield* outbox.emit({ storeId: storeA, livemode: false, type: "test.unsubscribed", object: {} })
        yield* sql`UPDATE outbox SET dispatched_at = now() WHERE event_id IN (${kept}, ${gone})`
        const retention = yield* Effect.provide(Retention, Retention.Default)
        yield* retention.purge(new Date(Date.now() + 31 * DAY_MS))
        const left = yield* sql<{ event_id: string }>`SELECT event_id FROM outbox WHERE event_id IN (${kept}, ${gone})`
        expect(left.map((row) => row.event_id)).toEqual([kept])
      }))

    it.effect("the process's poll wakes a registered consumer with events pending, and only that one", () =>
      Effect.gen(function*() {
        const outbox = yield* Effect.provide(Outbox, Outbox.Default)
        const polls = yield* OutboxPolls
        yield* subscribeOutboxConsumer("test-polled", ["test.polled"])
        yield* subscribeOutboxConsumer("test-idle", ["test.idle"])
        const polled = yield* Queue.sliding<void>(1)
        const idle = yield* Queue.sliding<void>(1)
        const gone = yield* Queue.sliding<void>(1)
        yield* polls.register("test-polled", polled)
        yield* polls.register("test-idle", idle)
        // A consumer whose registration ended (its singleton moved to another runner) is not woken here.
        yield* Effect.scoped(polls.register("test-polled-elsewhere", gone))
        yield* subscribeOutboxConsumer("test-polled-elsewhere", ["test.polled"])
        // No notice reaches these queues: only the poll can wake them.
        yield* outbox.emit({ storeId: storeA, livemode: false, type: "test.polled", object: {} })
        yield* Queue.take(polled).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "not woken" }))
        // Still pending (nothing applied it), so the next poll wakes it again: a failed event is retried.
        yield* Queue.take(polled).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "not woken again" }))
        expect(yield* Queue.size(idle)).toBe(0)
        expect(yield* Queue.size(gone)).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(OutboxPolls.Default)), 20_000)
  })
})
