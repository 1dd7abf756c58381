/**
 * The database: PostgreSQL at DATABASE_URL, or, when it is unset, the embedded database — PGlite with
 * its data under DATA_DIR, served on a loopback port inside this process by pglite-socket. Either way
 * the same `PgClient` (node-postgres) talks to it, so one SQL dialect and one driver serve both.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { mkdirSync } from "node:fs"
import { resolve } from "node:path"
import pg from "pg"
import { ChangeFeed, makeChangeFeed } from "../src/platform/ChangeFeed.ts"
import { AppConfig } from "./Config.ts"

/** What the rest of the process may need to know about where its data lives. */
export interface DatabaseLocation {
  readonly embedded: boolean
  readonly url: Redacted.Redacted<string>
}

/**
 * Opens the embedded database under `directory` and serves it on an ephemeral loopback port.
 * PGlite is a single backend; the socket server multiplexes connections at the query level and keeps
 * a transaction on the connection that opened it, which is what the pool needs.
 */
export const serveEmbeddedDatabase = (directory: string) =>
  Effect.gen(function*() {
    const dataDirectory = resolve(directory, "pgdata")
    yield* Effect.sync(() => mkdirSync(dataDirectory, { recursive: true }))
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create({ dataDir: dataDirectory }),
        catch: (cause) => new EmbeddedDatabaseError({ message: `cannot open the embedded database in ${dataDirectory}`, cause })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const server = yield* Effect.acquireRelease(
      Effect.gen(function*() {
        const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 256 })
        yield* Effect.tryPromise({
          try: () => server.start(),
          catch: (cause) => new EmbeddedDatabaseError({ message: "cannot serve the embedded database", cause })
        })
        return server
      }),
      (server) => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    const address = server.getServerConn()
    return Redacted.make(`postgres://postgres:postgres@${address}/postgres?sslmode=disable`)
  })

export class EmbeddedDatabaseError extends Error {
  readonly _tag = "EmbeddedDatabaseError"
  constructor(options: { readonly message: string; readonly cause: unknown }) {
    super(options.message, { cause: options.cause })
  }
}

/**
 * The `application_name` of this process's connections, so `pg_stat_activity` (and the advisory locks
 * by which runners hold shards, in `pg_locks`) tell the processes of a cluster apart. Each shape sets
 * its own (runtime/App.ts).
 */
export class DatabaseApplicationName extends Context.Reference<DatabaseApplicationName>()(
  "runtime/DatabaseApplicationName",
  { defaultValue: () => "merchant-platform" }
) {}

/** Receives the notifications that reach pooled connections (see ChangeFeed: the embedded case). */
type NotificationSink = (channel: string, payload: string) => void

const clientLayer = (
  url: Redacted.Redacted<string>,
  embedded: boolean,
  applicationName: string,
  onNotification?: NotificationSink
) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool({
          connectionString: Redacted.value(url),
          // The embedded backend runs one query at a time; a small pool avoids queueing in the socket server.
          max: embedded ? 8 : 20,
          connectionTimeoutMillis: 10_000,
          idleTimeoutMillis: 30_000,
          application_name: applicationName
        })
        // An idle connection the server closes (restart, failover) emits an error on the pool; without a
        // listener that would crash the process. The pool drops the connection and opens a new one.
        pool.on("error", () => {})
        if (onNotification !== undefined) {
          pool.on("connect", (client) => {
            client.on("notification", (message) => {
              if (message.payload !== undefined) onNotification(message.channel, message.payload)
            })
          })
        }
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.ignore)
    )
  })

/**
 * The SQL client for the configured database, and the change feed fed by it; the embedded server lives
 * as long as the layer.
 */
export const DatabaseLive: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | ChangeFeed,
  unknown,
  AppConfig
> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const applicationName = yield* DatabaseApplicationName
    if (Option.isSome(config.databaseUrl)) {
      const feed = Layer.unwrapEffect(
        Effect.map(PgClient.PgClient, (client) => makeChangeFeed({ _tag: "Server", listen: client.listen }))
      )
      return feed.pipe(Layer.provideMerge(clientLayer(config.databaseUrl.value, false, applicationName)))
    }
    const url = yield* serveEmbeddedDatabase(config.dataDir)
    yield* Effect.logInfo("using the embedded database").pipe(Effect.annotateLogs("data_dir", resolve(config.dataDir)))
    // The feed exists before the pool, so the pool's connections can hand it what they receive.
    let forward: NotificationSink = () => {}
    const feed = Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) =>
      makeChangeFeed({
        _tag: "Embedded",
        startListening: (channel) => sql`LISTEN ${sql(channel)}`.pipe(Effect.asVoid, Effect.orDie)
      }))).pipe(
        Layer.tap((context) => Effect.sync(() => {
          forward = Context.get(context, ChangeFeed).publishLocal
        }))
      )
    return feed.pipe(Layer.provideMerge(clientLayer(url, true, applicationName, (channel, payload) => forward(channel, payload))))
  })
)
