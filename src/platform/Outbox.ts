/**
 * The outbox: events written in the same transaction as the change they announce, so an event exists
 * exactly when its change committed. Webhook delivery reads it (src/webhooks/Dispatcher.ts), and so do
 * the areas that act on events after the fact — each through its own queue of pending events
 * (migrations/0010_outbox_consumers.ts), filled by the database as the event commits.
 *
 * A consumer gets each event at least once: a crash between applying an event and deleting it from the
 * queue applies it again, so `apply` must be idempotent (a primary or unique key on what it writes).
 */
import { Singleton } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "./SqlSchema.ts"
import { Array as Arr, Deferred, Duration, Effect, Either, FiberRef, Queue, Schema, type Scope, Stream } from "effect"
import { EventId, StoreId } from "../../domain/Ids.ts"
import { ChangeFeed } from "./ChangeFeed.ts"
import { newId } from "./Ids.ts"
import { makeMessageBatches } from "./MessageBatches.ts"
import { currentDate } from "./Time.ts"
import { traced, spanWhenExported } from "./Traced.ts"

/**
 * The LISTEN/NOTIFY channel on which a new outbox event is announced once it commits (ChangeFeed
 * `announce`): its dispatchers and consumers start on it then rather than at their next poll (a notice
 * lost with a process that died after the commit leaves the event to that poll). The notice
 * says the event's store and type (`outboxNotice`), so a consumer wakes only for the types it handles:
 * a game's prize event does not send the payment consumers to read their empty queues.
 */
export const OUTBOX_CHANNEL = "outbox_events"

/** The payload of an outbox notice: `{store id} {event type}` (neither holds a space). */
export const outboxNotice = {
  of: (storeId: string, type: string): string => `${storeId} ${type}`,
  storeOf: (payload: string): string => {
    const space = payload.indexOf(" ")
    return space === -1 ? payload : payload.slice(0, space)
  },
  typeOf: (payload: string): string => {
    const space = payload.indexOf(" ")
    return space === -1 ? "" : payload.slice(space + 1)
  }
} as const

/** The envelope every event has, on the wire and in the outbox (API.md "Webhooks"). */
export const eventEnvelope = (event: {
  readonly id: EventId
  readonly type: string
  readonly livemode: boolean
  readonly at: Date
  readonly object: unknown
}) => ({
  id: event.id,
  object: "event",
  type: event.type,
  created_at: event.at.toISOString(),
  livemode: event.livemode,
  data: { object: event.object }
})

/** An event to write: its store, mode and type, its object in wire form, and when it happened. */
export interface OutboxEventInput {
  readonly storeId: StoreId
  readonly livemode: boolean
  readonly type: string
  readonly object: unknown
  readonly at: Date
}

export class Outbox extends Effect.Service<Outbox>()("platform/Outbox", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const changes = yield* ChangeFeed

    const insertMany = SqlSchema.void({
      Request: Schema.NonEmptyArray(Schema.Struct({
        event_id: EventId,
        store_id: StoreId,
        livemode: Schema.Boolean,
        type: Schema.String,
        payload: Schema.String
      })),
      execute: (rows) => sql`INSERT INTO outbox ${sql.insert(rows.map((row) => ({ ...row })))}`
    })

    /** Announces `events` on OUTBOX_CHANNEL once the transaction that wrote them commits. */
    const announce = (events: ReadonlyArray<{ readonly store_id: string; readonly type: string }>) =>
      changes.announceAll(OUTBOX_CHANNEL, events.map((event) => outboxNotice.of(event.store_id, event.type)))

    /** The outbox rows of `events`, each with a fresh id, in the order given; the payload is the envelope. */
    const rowsOf = (events: ReadonlyArray<OutboxEventInput>) =>
      events.map((event) => {
        const eventId = newId("evt")
        return {
          event_id: eventId,
          store_id: event.storeId,
          livemode: event.livemode,
          type: event.type,
          payload: eventEnvelope({ id: eventId, type: event.type, livemode: event.livemode, at: event.at, object: event.object })
        }
      })

    /**
     * Writes several events in one statement, in the order given (a batch of changes committed together,
     * such as one game's plays), inside the transaction of the changes. Answers their ids.
     */
    const emitMany = traced("Outbox.emitMany")(function*(events: ReadonlyArray<OutboxEventInput>) {
      const rows = rowsOf(events).map((row) => ({ ...row, payload: JSON.stringify(row.payload) }))
      if (Arr.isNonEmptyReadonlyArray(rows)) {
        yield* insertMany(rows).pipe(Effect.orDie)
        yield* announce(rows)
      }
      return rows.map((row) => row.event_id)
    })

    /**
     * For a change written in one statement without a transaction around it (a wallet's pass, in
     * src/loyalty/Repo.ts): `insert` is the body of a CTE that inserts the events, in the order given,
     * only when the CTE named `guard` has a row (the change itself matched); `announce` announces them,
     * to run once the statement has written them.
     */
    const writtenWith = (events: ReadonlyArray<OutboxEventInput>) => {
      const rows = rowsOf(events)
      const json = JSON.stringify(rows)
      return {
        insert: (guard: string) =>
          sql`
            INSERT INTO outbox (event_id, store_id, livemode, type, payload)
            SELECT e.event_id, e.store_id, e.livemode, e.type, e.payload
            FROM jsonb_populate_recordset(NULL::outbox, ${json}::jsonb) WITH ORDINALITY AS e
            WHERE EXISTS (SELECT 1 FROM ${sql(guard)})
            ORDER BY e.ordinality`,
        announce: announce(rows)
      }
    }

    /**
     * Writes the event `type` about `object` (already in its wire form) for the store. Call it inside the
     * transaction of the change it announces. Answers the event's id.
     */
    const emit = traced("Outbox.emit")(function*(event: {
      readonly storeId: StoreId
      readonly livemode: boolean
      readonly type: string
      readonly object: unknown
      readonly at?: Date
    }) {
      const [eventId] = yield* emitMany([{ ...event, at: event.at ?? (yield* currentDate) }])
      return eventId!
    })

    return { emit, emitMany, writtenWith } as const
  })
}) {}

// -------------------------------------------------------------------------------------------------
// Consumers
// -------------------------------------------------------------------------------------------------

/** An event as a consumer receives it. `payload` is the envelope (`payload.data.object` the object). */
export class OutboxEvent extends Schema.Class<OutboxEvent>("OutboxEvent")({
  position: Schema.NumberFromString,
  eventId: EventId,
  type: Schema.String,
  storeId: StoreId,
  livemode: Schema.Boolean,
  payload: Schema.Struct({ created_at: Schema.optional(Schema.String), data: Schema.Struct({ object: Schema.Unknown }) }),
  createdAt: Schema.DateFromSelf
}) {
  /** The event's object (a payment, a refund, a referral …), as it was when the event was written. */
  get object(): unknown {
    return this.payload.data.object
  }

  /**
   * When the change happened, as its envelope says (the service's clock, the same instant as the
   * change's own timestamps); the outbox row's time is its transaction's start, a little earlier.
   */
  get occurredAt(): Date {
    const stated = this.payload.created_at === undefined ? Number.NaN : Date.parse(this.payload.created_at)
    return Number.isNaN(stated) ? this.createdAt : new Date(stated)
  }
}

export interface OutboxConsumerOptions<R> {
  /** The event types the consumer handles (those it subscribed to in its migration). */
  readonly types: ReadonlyArray<string>
  /**
   * Applies one event. Must be idempotent: an event may come again after a crash. A failure leaves the
   * event (and the later events of its key) queued for the next pass.
   */
  readonly apply: (event: OutboxEvent) => Effect.Effect<void, unknown, R>
  /** Events of one key are applied one after another in outbox order; by default the store. */
  readonly keyOf?: (event: OutboxEvent) => string
  readonly batch?: number
  /** How many keys are worked on at once. */
  readonly concurrency?: number
}

const DEFAULT_BATCH = 500
const DEFAULT_CONCURRENCY = 32
/** How often the queues are looked at when no commit notice woke their consumer sooner. */
const POLL_INTERVAL = Duration.seconds(1)

/**
 * The fallback poll of the outbox consumers a process runs: once a second, one statement asks which of
 * them have events pending and wakes those. It finds what no notice announced — an event whose notice was
 * lost with a process that died after its commit, an event whose application failed and waits for its
 * retry — within the second, as each consumer's own poll did; but where each asked for its own queue
 * (nine of the ~14 statements a second of an idle service; a third of its idle CPU), they now share one.
 */
export class OutboxPolls extends Effect.Service<OutboxPolls>()("platform/OutboxPolls", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wakes = new Map<string, Queue.Queue<void>>()
    // The consumers' subscriptions are a handful of rows; each is probed on its queue's primary key.
    const withPending = (consumers: ReadonlyArray<string>) =>
      sql<{ readonly consumer: string }>`
        SELECT DISTINCT s.consumer FROM outbox_subscriptions s
        WHERE s.consumer IN ${sql.in(consumers)}
          AND EXISTS (SELECT 1 FROM outbox_pending q WHERE q.consumer = s.consumer)`
    const poll = Effect.suspend(() => {
      if (wakes.size === 0) return Effect.void
      return Effect.flatMap(withPending([...wakes.keys()]), (rows) =>
        Effect.forEach(rows, ({ consumer }) => {
          const wake = wakes.get(consumer)
          return wake === undefined ? Effect.void : Queue.offer(wake, undefined)
        }, { discard: true }))
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("outbox poll failed", cause)))
    yield* poll.pipe(Effect.delay(POLL_INTERVAL), Effect.forever, Effect.forkScoped)
    return {
      /** Wakes consumer `name` through `wake` when the poll finds events pending for it, while the scope lasts. */
      register: (name: string, wake: Queue.Queue<void>): Effect.Effect<void, never, Scope.Scope> =>
        Effect.acquireRelease(
          Effect.sync(() => {
            wakes.set(name, wake)
          }),
          () =>
            Effect.sync(() => {
              if (wakes.get(name) === wake) wakes.delete(name)
            })
        )
    }
  })
}) {}

/**
 * The consumer pass being applied: its events, and what it has read once for all of them (settings and a
 * store's rules that every event of the pass would otherwise read again: a risk threshold, a referral
 * program). Unset outside a pass.
 */
const currentPass = FiberRef.unsafeMake<
  { readonly events: ReadonlyArray<OutboxEvent>; readonly reads: Map<string, Deferred.Deferred<unknown, unknown>> } | undefined
>(undefined)

/**
 * The events of the consumer pass applying `event` (outside a pass, `event` alone): for a read made once
 * per pass about all of them (`oncePerPass`), such as which of their customers were referred.
 */
export const eventsOfPass = (event: OutboxEvent): Effect.Effect<ReadonlyArray<OutboxEvent>> =>
  Effect.map(FiberRef.get(currentPass), (pass) => pass?.events ?? [event])

/**
 * `read`, run once per consumer pass for `key` and shared by the pass's events (outside a pass, run each
 * time). The pass's events were all committed before it started, so what it reads once is as current for
 * each as a read of its own: a change made meanwhile is concurrent with every one of them.
 */
export const oncePerPass = <A, E, R>(key: string, read: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(currentPass), (pass) => {
    if (pass === undefined) return read
    const reads = pass.reads
    const earlier = reads.get(key) as Deferred.Deferred<A, E> | undefined
    if (earlier !== undefined) return Deferred.await(earlier)
    return Effect.flatMap(Deferred.make<A, E>(), (answer) => {
      reads.set(key, answer as Deferred.Deferred<unknown, unknown>)
      return read.pipe(
        Effect.onExit((exit) => Deferred.done(answer, exit)),
        Effect.onInterrupt(() => Deferred.interrupt(answer))
      )
    })
  })

/** What a consumer's pass asks of its queue: up to `limit` of its pending events of `types`, oldest first. */
interface QueueRead {
  readonly consumer: string
  readonly types: ReadonlyArray<string>
  readonly limit: number
}

/** Events a consumer has applied, to take off its queue. */
interface QueueCleared {
  readonly consumer: string
  readonly positions: ReadonlyArray<number>
}

/** A pending event as the shared read answers it: the event, and which of the asking consumers have it queued. */
const decodeQueued = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ ...OutboxEvent.fields, consumers: Schema.Array(Schema.String) }))
)

/**
 * The queues of the outbox consumers a process runs, read and cleared together. One outbox event has up to
 * eight consumers (a completed payment: analytics, risk, notifications, loyalty, promotions, referrals,
 * billing, receipts), woken by the same notice; each read its own queue with a statement of its own,
 * decoded the same event again, and took it off with another statement — 16 statements and eight decodes
 * for one event's row. Here the reads that come while one is in flight go together as one statement that
 * reads each event once, with the consumers that have it queued (each consumer's own types and limit),
 * and so do the clears; the first read of an idle process goes at once. A consumer still reads and clears
 * only its own queue, in the order of its passes, so what it applies and when is as before; a statement
 * that fails fails the passes that shared it, which read again at their next pass.
 */
export class OutboxQueues extends Effect.Service<OutboxQueues>()("platform/OutboxQueues", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Each consumer's pending positions by its primary key (consumer, position), up to its limit, of its
    // types; each event's row then read once for all of them.
    const readQueues = (reads: ReadonlyArray<QueueRead>) =>
      sql`
        SELECT o.position::text AS position, o.event_id AS "eventId", o.type, o.store_id AS "storeId",
               o.livemode, o.payload, o.created_at AS "createdAt", w.consumers
        FROM (
          SELECT p.position, array_agg(c.consumer) AS consumers
          FROM jsonb_to_recordset(${JSON.stringify(reads)}::jsonb) AS c(consumer text, types text[], "limit" int)
          CROSS JOIN LATERAL (
            SELECT q.position FROM outbox_pending q JOIN outbox e ON e.position = q.position
            WHERE q.consumer = c.consumer AND e.type = ANY (c.types)
            ORDER BY q.position
            LIMIT c."limit"
          ) p
          GROUP BY p.position
        ) w JOIN outbox o ON o.position = w.position
        ORDER BY o.position`.pipe(Effect.flatMap(decodeQueued))

    const clearQueues = (cleared: ReadonlyArray<QueueCleared>) =>
      sql`
        DELETE FROM outbox_pending q
        USING jsonb_to_recordset(${JSON.stringify(cleared)}::jsonb) AS c(consumer text, positions bigint[])
        WHERE q.consumer = c.consumer AND q.position = ANY (c.positions)`

    // One key: every read (and every clear) of the process goes in the same line, one statement in flight.
    const readTogether = yield* makeMessageBatches(
      (_line: "read", reads: Arr.NonEmptyReadonlyArray<QueueRead>) => {
        // Passes of one consumer that ask at once (its singleton runs one at a time; a test may run more)
        // share one read of its queue, and each gets the consumer's events once.
        const byConsumer = new Map(reads.map((read) => [read.consumer, read]))
        return readQueues([...byConsumer.values()]).pipe(
          Effect.map((rows) => {
            const eventsOf = new Map([...byConsumer.keys()].map((consumer) => [consumer, [] as Array<OutboxEvent>]))
            for (const { consumers, ...fields } of rows) {
              // Decoded above with the event's own schema: made without checking it again.
              const event = new OutboxEvent(fields, true)
              for (const consumer of consumers) eventsOf.get(consumer)?.push(event)
            }
            return reads.map((read) => Either.right(eventsOf.get(read.consumer)!))
          }),
          Effect.orDie
        )
      },
      { maxInFlight: 1 }
    )
    const clearTogether = yield* makeMessageBatches(
      (_line: "clear", cleared: Arr.NonEmptyReadonlyArray<QueueCleared>) =>
        clearQueues(cleared).pipe(Effect.as(cleared.map(() => Either.right(undefined))), Effect.orDie),
      { maxInFlight: 1 }
    )

    return {
      /** Up to `limit` of the consumer's pending events of `types`, oldest first. */
      pending: (read: QueueRead): Effect.Effect<ReadonlyArray<OutboxEvent>> => readTogether("read", read),
      /** Takes the events at `positions` off the consumer's queue. */
      clear: (cleared: QueueCleared): Effect.Effect<void> => clearTogether("clear", cleared)
    }
  })
}) {}

/**
 * One pass of consumer `name`: up to a batch of its pending events, applied and taken off its queue.
 * Answers how many were read (a full batch means more may be waiting).
 */
export const makeOutboxPass = <R>(name: string, options: OutboxConsumerOptions<R>) =>
  Effect.gen(function*() {
    const queues = yield* OutboxQueues
    const batch = options.batch ?? DEFAULT_BATCH
    const keyOf = options.keyOf ?? ((event: OutboxEvent) => event.storeId)
    const read: QueueRead = { consumer: name, types: [...options.types], limit: batch }

    const applyEvents = (events: ReadonlyArray<OutboxEvent>) => Effect.gen(function*() {
      const byKey = new Map<string, Array<OutboxEvent>>()
      for (const event of events) {
        const key = keyOf(event)
        const ofKey = byKey.get(key)
        if (ofKey) ofKey.push(event)
        else byKey.set(key, [event])
      }
      const applied: Array<number> = []
      // A key whose event fails keeps it and its later events for the next pass, in order; the other
      // keys' events go on, so one failing subject holds back no other.
      yield* Effect.forEach(
        byKey.values(),
        (ofKey) =>
          Effect.forEach(ofKey, (event) =>
            options.apply(event).pipe(
              Effect.tap(() => Effect.sync(() => applied.push(event.position))),
              spanWhenExported(`${name}.apply`, { attributes: { type: event.type, event: event.eventId } })
            ), { discard: true }).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning(`outbox consumer ${name}: event ${ofKey[0]!.eventId} failed`, cause))
            ),
        { concurrency: options.concurrency ?? DEFAULT_CONCURRENCY, discard: true }
      )
      if (applied.length > 0) yield* queues.clear({ consumer: name, positions: applied })
    })
    return Effect.gen(function*() {
      const events = yield* queues.pending(read)
      if (events.length === 0) return 0
      // Each pass shares its own events and reads (oncePerPass), and only its own.
      yield* Effect.locally(applyEvents(events), currentPass, { events, reads: new Map() })
      return events.length
    })
  })

export const OutboxConsumer = {
  /**
   * The consumer `name` as a cluster singleton: one runner of the cluster applies its events, woken by
   * the notice each outbox write announces once it commits, and by the process's poll (`OutboxPolls`)
   * for what a notice misses.
   */
  make: <R>(name: string, options: OutboxConsumerOptions<R>) =>
    Singleton.make(
      `outbox/${name}`,
      Effect.gen(function*() {
        const pass = yield* makeOutboxPass(name, options)
        const wake = yield* Queue.sliding<void>(1)
        yield* (yield* OutboxPolls).register(name, wake)
        const handled = new Set(options.types)
        const notices = Stream.filter(
          yield* (yield* ChangeFeed).subscribe(OUTBOX_CHANNEL),
          (notice) => notice._tag === "Resync" || handled.has(outboxNotice.typeOf(notice.payload))
        )
        yield* Stream.runForEach(notices, () => Queue.offer(wake, undefined)).pipe(Effect.forkScoped)
        while (true) {
          const read = yield* pass.pipe(
            Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`outbox consumer ${name}: pass failed`, cause), 0))
          )
          if (read < (options.batch ?? DEFAULT_BATCH)) yield* Queue.take(wake)
        }
      }).pipe(Effect.scoped)
    )
}
