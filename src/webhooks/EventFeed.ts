/**
 * A store's events as they are written (domain/console/Developer.ts `EventFeed`), the stream `khqr
 * listen` forwards to a developer's machine. It reads the outbox (through src/platform/OutboxReads.ts), where every event is written in the
 * transaction of its change, woken by the notice each write sends as it commits and by a short poll
 * for events written without one.
 *
 * Outbox positions come from a sequence, so an event may commit after one with a greater position:
 * the feed re-reads from a floor that trails the newest position it sent until the events above it are
 * old enough that no earlier transaction can still be open, and skips the events it sent already.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Duration, Effect, Option, Schedule, Schema, Stream } from "effect"
import { EventFeedSynced, EventOccurred } from "../../domain/console/Developer.ts"
import { NotFound } from "../../domain/Errors.ts"
import { EventId, StoreId } from "../../domain/Ids.ts"
import { WebhookEvent } from "../../domain/Webhooks.ts"
import { AccessService } from "../access/Service.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { OUTBOX_CHANNEL, outboxNotice } from "../platform/Outbox.ts"
import { newestStoreEvent, positionOfStoreEvent, storeEventsAbove } from "../platform/OutboxReads.ts"
import { traced } from "../platform/Traced.ts"

/** How long one subscription lasts; the client subscribes again with `after`, which authorizes afresh. */
export const EVENT_FEED_LIFETIME = Duration.minutes(15)
/** How often the outbox is read when no commit notice came. */
const EVENT_FEED_POLL = Duration.seconds(2)
/** An event older than this cannot be overtaken any more by one of a transaction still open. */
const SETTLE_MILLIS = 60_000
const READ_BATCH = 200

const FeedRow = Schema.Struct({
  position: Schema.NumberFromString,
  event_id: EventId,
  payload: Schema.parseJson(WebhookEvent),
  created_at: Schema.DateFromSelf
})
type FeedRow = typeof FeedRow.Type

export class EventFeedService extends Effect.Service<EventFeedService>()("webhooks/EventFeedService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* AccessService
    const changes = yield* ChangeFeed

    const eventsAbove = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean, floor: Schema.Number }),
      Result: FeedRow,
      execute: (input) => storeEventsAbove(sql, { ...input, limit: READ_BATCH })
    })
    const newest = SqlSchema.findOne({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean }),
      Result: Schema.Struct({ position: Schema.NumberFromString, event_id: EventId }),
      execute: (input) => newestStoreEvent(sql, input)
    })
    const positionOf = SqlSchema.findOne({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean, eventId: EventId }),
      Result: Schema.Struct({ position: Schema.NumberFromString }),
      execute: (input) => positionOfStoreEvent(sql, input)
    })

    const feed = traced("EventFeed.feed")(function*(input: {
      readonly store_id: StoreId
      readonly livemode: boolean
      readonly after?: EventId | undefined
    }) {
      yield* access.currentUser
      yield* access.store(input.store_id, "webhook.manage")
      const scope = { storeId: input.store_id, livemode: input.livemode }
      const latest = yield* newest(scope).pipe(Effect.orDie)
      let floor = Option.match(latest, { onNone: () => 0, onSome: (row) => row.position })
      if (input.after !== undefined) {
        const after = yield* positionOf({ ...scope, eventId: input.after }).pipe(Effect.orDie)
        if (Option.isNone(after)) {
          return yield* new NotFound({ message: `No such event of this store and mode: ${input.after}`, param: "after" })
        }
        floor = after.value.position
      }
      const sent = new Map<number, string>()

      /** The events above the floor not sent yet; the floor moves up past the settled ones. */
      const unsent = Effect.gen(function*() {
        const rows: ReadonlyArray<FeedRow> = yield* eventsAbove({ ...scope, floor }).pipe(Effect.orDie)
        const fresh = rows.filter((row) => !sent.has(row.position))
        for (const row of fresh) sent.set(row.position, row.event_id)
        const settledBefore = Date.now() - SETTLE_MILLIS
        for (const row of rows) {
          if (row.created_at.getTime() >= settledBefore) break
          floor = row.position
          sent.delete(row.position)
        }
        return fresh.map((row) => new EventOccurred({ event: row.payload }))
      })

      const frames = Stream.unwrapScoped(Effect.gen(function*() {
        const notices = yield* changes.subscribe(OUTBOX_CHANNEL)
        const wake = Stream.merge(
          Stream.filter(notices, (notice) => notice._tag === "Resync" || outboxNotice.storeOf(notice.payload) === input.store_id),
          Stream.fromSchedule(Schedule.spaced(EVENT_FEED_POLL))
        )
        return Stream.concat(
          Stream.make(new EventFeedSynced({ last_event_id: Option.getOrNull(Option.map(latest, (row) => row.event_id)) })),
          Stream.concat(
            Stream.fromIterableEffect(unsent),
            Stream.flatMap(wake, () => Stream.fromIterableEffect(unsent), { concurrency: 1 })
          )
        )
      }))
      return Stream.interruptWhen(frames, Effect.sleep(EVENT_FEED_LIFETIME))
    })

    return { feed } as const
  }),
  dependencies: [AccessService.Default]
}) {}
