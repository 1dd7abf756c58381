/**
 * The queries the operations routes make of the database as a whole (not of one area's rows).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"

export class SystemRepo extends Effect.Service<SystemRepo>()("system/SystemRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // The partial index on undispatched rows makes this a single index lookup however long the outbox is.
    const findOldestUndispatched = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ age_seconds: Schema.NumberFromString }),
      execute: () =>
        sql`
          SELECT extract(epoch FROM clock_timestamp() - created_at)::text AS age_seconds
          FROM outbox WHERE dispatched_at IS NULL ORDER BY position LIMIT 1`
    })

    /** How long the oldest outbox event not yet dispatched has waited, in seconds; 0 when none waits. */
    const outboxLagSeconds = Effect.fn("SystemRepo.outboxLagSeconds")(function*() {
      const oldest = yield* findOldestUndispatched(undefined).pipe(Effect.orDie)
      return Option.match(oldest, { onNone: () => 0, onSome: (row) => Math.max(0, row.age_seconds) })
    })

    return { outboxLagSeconds } as const
  })
}) {}
