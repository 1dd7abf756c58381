/**
 * The database: PostgreSQL at DATABASE_URL, or, when it is unset, the embedded database — a PostgreSQL
 * server this process runs itself, with its data under DATA_DIR (runtime/EmbeddedPostgres.ts). Either way
 * the same `PgClient` (node-postgres) talks to a real PostgreSQL, so one SQL dialect, one driver and one
 * set of guarantees serve both.
 */
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Redacted, Stream } from "effect"
import { resolve } from "node:path"
import pg from "pg"
import { ChangeFeed, makeChangeFeed } from "../src/platform/ChangeFeed.ts"
import { AppConfig } from "../src/platform/Config.ts"
import { lockDataDirectory } from "./DataDirectoryLock.ts"
import { serveEmbeddedDatabase } from "./EmbeddedPostgres.ts"

export { EmbeddedDatabaseError } from "./EmbeddedPostgres.ts"

/**
 * The `application_name` of this process's connections, so `pg_stat_activity` (and the advisory locks
 * by which runners hold shards, in `pg_locks`) tell the processes of a cluster apart. Each shape sets
 * its own (runtime/App.ts).
 */
export class DatabaseApplicationName extends Context.Reference<DatabaseApplicationName>()(
  "runtime/DatabaseApplicationName",
  { defaultValue: () => "merchant-platform" }
) {}

const clientLayer = (url: Redacted.Redacted<string>, applicationName: string) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool({
          connectionString: Redacted.value(url),
          max: 20,
          connectionTimeoutMillis: 10_000,
          idleTimeoutMillis: 30_000,
          application_name: applicationName
        })
        // An idle connection the server closes (restart, failover) emits an error on the pool; without a
        // listener that would crash the process. The pool drops the connection and opens a new one.
        pool.on("error", () => {})
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.ignore)
    )
  })

/** Where the data is: DATABASE_URL, or the embedded server under DATA_DIR (started, locked, for the scope). */
const databaseUrl = Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl)) return config.databaseUrl.value
  yield* lockDataDirectory(config.dataDir)
  const url = yield* serveEmbeddedDatabase(config.dataDir)
  yield* Effect.logInfo("using the embedded database").pipe(Effect.annotateLogs("data_dir", resolve(config.dataDir)))
  return url
})

/**
 * The SQL client for the configured database, and the change feed fed by it; the embedded server lives
 * as long as the layer.
 */
/**
 * LISTEN on `channel` over a connection of its own, whose statements never overlap. The driver's own
 * `listen` shares one connection between channels and issues their LISTENs at once, which node-postgres
 * deprecates (a DeprecationWarning at every start) and pg 9 will refuse; it also ignores that
 * connection's failure. Here a failed or closed connection fails the stream, so the change feed listens
 * again and tells its subscribers to re-read (src/platform/ChangeFeed.ts).
 */
const listenOn = (url: Redacted.Redacted<string>, applicationName: string) => (channel: string): Stream.Stream<string, Error> =>
  Stream.asyncPush<string, Error>((emit) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new pg.Client({
            connectionString: Redacted.value(url),
            application_name: applicationName,
            connectionTimeoutMillis: 10_000
          })
          client.on("error", (error) => void emit.fail(error))
          client.on("end", () => void emit.fail(new Error(`the connection listening on ${channel} closed`)))
          client.on("notification", (message) => {
            if (message.channel === channel && message.payload !== undefined) void emit.single(message.payload)
          })
          try {
            await client.connect()
            await client.query(`LISTEN ${client.escapeIdentifier(channel)}`)
          } catch (error) {
            client.removeAllListeners("end")
            await client.end().catch(() => undefined)
            throw error
          }
          return client
        },
        catch: (cause) => cause instanceof Error ? cause : new Error(String(cause))
      }),
      (client) =>
        Effect.promise(() => {
          client.removeAllListeners("end")
          return client.end().catch(() => undefined)
        })
    )
  )

export const DatabaseLive: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | ChangeFeed,
  unknown,
  AppConfig
> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const url = yield* databaseUrl
    const applicationName = yield* DatabaseApplicationName
    const feed = makeChangeFeed({ listen: listenOn(url, applicationName) })
    return Layer.merge(feed, clientLayer(url, applicationName))
  })
)
