/**
 * The database: PostgreSQL at DATABASE_URL, or, when it is unset, the embedded database — PGlite with
 * its data under DATA_DIR, served on a loopback port inside this process by pglite-socket. Either way
 * the same `PgClient` (node-postgres) talks to it, so one SQL dialect and one driver serve both.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { mkdirSync } from "node:fs"
import { resolve } from "node:path"
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

const clientLayer = (url: Redacted.Redacted<string>, embedded: boolean) =>
  PgClient.layer({
    url,
    // The embedded backend runs one query at a time; a small pool avoids queueing in the socket server.
    maxConnections: embedded ? 8 : 20,
    connectTimeout: Duration.seconds(10),
    idleTimeout: Duration.seconds(30),
    applicationName: "merchant-platform"
  })

/** The SQL client for the configured database; the embedded server lives as long as the layer. */
export const DatabaseLive: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown, AppConfig> = Layer
  .unwrapScoped(
    Effect.gen(function*() {
      const config = yield* AppConfig
      if (Option.isSome(config.databaseUrl)) {
        return clientLayer(config.databaseUrl.value, false)
      }
      const url = yield* serveEmbeddedDatabase(config.dataDir)
      yield* Effect.logInfo("using the embedded database").pipe(Effect.annotateLogs("data_dir", resolve(config.dataDir)))
      return clientLayer(url, true)
    })
  )
