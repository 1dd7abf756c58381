/**
 * Runs the migrations at start-up, before the server accepts requests. Two processes starting at once
 * on one database serialize on a transaction-scoped advisory lock, so the second finds the work done.
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { migrations } from "../migrations/index.ts"

const MIGRATION_LOCK_ID = 727_001

const runMigrator = Migrator.make({})

export const runMigrations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const applied = yield* sql.withTransaction(
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`
      // Created here, under the lock: the migrator's own probe for the table would abort this transaction.
      yield* sql`
        CREATE TABLE IF NOT EXISTS schema_migrations (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
      return yield* runMigrator({ loader: migrations, table: "schema_migrations" })
    })
  )
  if (applied.length > 0) {
    yield* Effect.logInfo(`applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
  }
}).pipe(Effect.withSpan("runtime.migrations"))

/** A layer that completes once the schema is current; everything that touches tables depends on it. */
export const MigrationsLive = Layer.effectDiscard(runMigrations)
