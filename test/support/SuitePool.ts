/**
 * A PgClient on the suite's own database (TestDatabase: PostgreSQL, or the embedded server it starts)
 * through the service's cancel-safe pool (runtime/Database.ts) of `max` connections, for the tests of the
 * database client itself.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { cancelSafePool } from "../../runtime/Database.ts"
import { serveEmbeddedDatabase } from "../../runtime/EmbeddedPostgres.ts"
import { TestDatabase } from "./TestDatabase.ts"

/** The address of the suite's database (the embedded server started for the scope when there is no URL). */
export const suiteDatabaseUrl = Effect.gen(function*() {
  const database = yield* TestDatabase
  return Option.isSome(database.url) ? database.url.value : yield* serveEmbeddedDatabase(database.dataDir)
})

/** `cancelGraceMillis`: the pool's grace before an interrupted statement is cancelled (the service's by default). */
export const suitePoolClient = (max: number, cancelGraceMillis?: number) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const url = yield* suiteDatabaseUrl
    return PgClient.layerFromPool({
      acquire: Effect.acquireRelease(
        Effect.sync(() => cancelSafePool({ connectionString: Redacted.value(url), max }, cancelGraceMillis)),
        (pool) => Effect.promise(() => pool.end())
      )
    })
  })).pipe(Layer.provide(TestDatabase.layer))
