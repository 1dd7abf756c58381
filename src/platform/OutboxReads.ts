/**
 * The reads and the purge other areas make of the outbox, whose one writer is the emitter in Outbox.ts: a
 * store's events as a developer's event feed follows them, the backlog as monitoring and metrics report it,
 * and retention's purge of dispatched events. Each takes the SQL client in scope, so it runs in the caller's
 * transaction, and is named for what it answers. The statements that a caller decodes with a schema of its own
 * (the feed's events, the purge's counted rows) are handed back as statements.
 */
import { type SqlClient } from "@effect/sql"
import * as SqlSchema from "./SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { spanWhenExported } from "./Traced.ts"

type Sql = SqlClient.SqlClient

interface StoreMode {
  readonly storeId: string
  readonly livemode: boolean
}

/** The store's events of a mode above position `floor`, oldest first, at most `limit` (position as text, payload as JSON text). */
export const storeEventsAbove = (sql: Sql, input: StoreMode & { readonly floor: number; readonly limit: number }) =>
  sql`
    SELECT position::text AS position, event_id, payload::text AS payload, created_at
    FROM outbox
    WHERE store_id = ${input.storeId} AND livemode = ${input.livemode} AND position > ${input.floor}
    ORDER BY position
    LIMIT ${input.limit}`

/** The store's newest event of a mode (position as text, event id), as a statement of at most one row. */
export const newestStoreEvent = (sql: Sql, input: StoreMode) =>
  sql`
    SELECT position::text AS position, event_id FROM outbox
    WHERE store_id = ${input.storeId} AND livemode = ${input.livemode}
    ORDER BY position DESC LIMIT 1`

/** The position (as text) of the store's event of a mode, as a statement of at most one row. */
export const positionOfStoreEvent = (sql: Sql, input: StoreMode & { readonly eventId: string }) =>
  sql`
    SELECT position::text AS position FROM outbox
    WHERE event_id = ${input.eventId} AND store_id = ${input.storeId} AND livemode = ${input.livemode}`

/** How many events wait for dispatch, and when the oldest of them was written (null when none waits). */
export const undispatchedBacklog = (sql: Sql) =>
  Effect.map(
    sql<{ pending: number; oldest: Date | null }>`
      SELECT
        (SELECT count(*)::int FROM outbox WHERE dispatched_at IS NULL) AS pending,
        (SELECT min(created_at) FROM outbox WHERE dispatched_at IS NULL) AS oldest`,
    (rows) => rows[0]!
  ).pipe(Effect.orDie, spanWhenExported("OutboxReads.undispatchedBacklog"))

/**
 * How long the oldest event not yet dispatched has waited, in seconds, by the database's clock; 0 when none
 * waits. The partial index on undispatched rows makes this a single index lookup however long the outbox is.
 */
export const oldestUndispatchedAgeSeconds = (sql: Sql) =>
  SqlSchema.findOne({
    Request: Schema.Void,
    Result: Schema.Struct({ age_seconds: Schema.NumberFromString }),
    execute: () =>
      sql`
        SELECT extract(epoch FROM clock_timestamp() - created_at)::text AS age_seconds
        FROM outbox WHERE dispatched_at IS NULL ORDER BY position LIMIT 1`
  })(undefined).pipe(
    Effect.map(Option.match({ onNone: () => 0, onSome: (row) => Math.max(0, row.age_seconds) })),
    Effect.orDie,
    spanWhenExported("OutboxReads.oldestUndispatchedAgeSeconds")
  )

/**
 * Deletes up to `limit` events dispatched before `before`, answering the position of each. An event stays until
 * each consumer it is queued for has applied it.
 */
export const purgeDispatchedEvents = (sql: Sql, before: Date, limit: number) =>
  sql`
    DELETE FROM outbox WHERE position IN (
      SELECT position FROM outbox WHERE dispatched_at IS NOT NULL AND dispatched_at < ${before}
        -- An event stays until each consumer it is queued for has applied it.
        AND NOT EXISTS (SELECT 1 FROM outbox_pending q WHERE q.position = outbox.position)
      LIMIT ${limit}
    )
    RETURNING position`
