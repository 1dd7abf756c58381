/**
 * The database: PostgreSQL at DATABASE_URL, or, when it is unset, the embedded database — a PostgreSQL
 * server this process runs itself, with its data under DATA_DIR (runtime/EmbeddedPostgres.ts). Either way
 * the same `PgClient` (node-postgres) talks to a real PostgreSQL, so one SQL dialect, one driver and one
 * set of guarantees serve both.
 */
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { Context, Deferred, Effect, Layer, Option, Redacted } from "effect"
import { resolve } from "node:path"
import pg from "pg"
import { runAfterCommit } from "../src/platform/AfterCommit.ts"
import { ChangeFeed, makeChangeFeed } from "../src/platform/ChangeFeed.ts"
import { AppConfig } from "../src/platform/Config.ts"
import { lockDataDirectory } from "./DataDirectoryLock.ts"
import { executeStatementsDirectly } from "./DirectStatements.ts"
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

const CANCEL_STATEMENT = /^SELECT pg_cancel_backend\((\d+)\)$/

/**
 * How long a statement whose fiber was interrupted may go on by itself before it is cancelled. A request's
 * statements take a few milliseconds: cancelling one costs more than letting it end (a statement on
 * another connection, then the cancelled connection closed and a new one opened for the next request);
 * a long report is still stopped a tenth of a second after its caller went away.
 */
export const CANCEL_GRACE_MILLIS = 100

/**
 * A pool whose connections are closed rather than reused once a statement of theirs has been cancelled.
 * `@effect/sql-pg` cancels an interrupted statement (a client that went away mid-request) with
 * `SELECT pg_cancel_backend(pid)` on another connection, then returns the connection to the pool; the
 * backend takes that signal asynchronously and can take it after the connection's next statement has
 * started, which is cancelled instead ("canceling statement due to user request": seen on the mail
 * sender's claim when a load generator dropped its connections). Here the connection is released with an
 * error, which makes the pool close it, so no later statement can meet the signal.
 *
 * And the signal is sent only to a statement still running `cancelGraceMillis` after it was asked for:
 * one that ends sooner keeps its connection, healthy, in the pool. Without that grace every client
 * dropping its connections mid-request (a load balancer, a load generator at the end of its run) cost the
 * pool the connections in use, and the next requests waited for new ones (up to a second at 64
 * connections: README, "Benchmarks").
 */
export const cancelSafePool = (config: pg.PoolConfig, cancelGraceMillis = CANCEL_GRACE_MILLIS): pg.Pool => {
  const pool = new pg.Pool(config)
  // An idle connection the server closes (restart, failover, a database dropped) emits an error on the
  // pool; without a listener that would crash the process. The pool drops the connection and opens a new
  // one. The pool's `end` does not wait for its connections to close, so this can come after it too.
  pool.on("error", () => {})
  const byProcessId = new Map<number, pg.PoolClient>()
  const processIdOf = (client: pg.PoolClient) => (client as { readonly processID?: number }).processID
  // node-postgres's own accessor of the statement in progress on a connection (`activeQuery` is its
  // deprecated public name).
  const statementOf = (client: pg.PoolClient) => (client as { _getActiveQuery?: () => unknown })._getActiveQuery?.() ?? null
  pool.on("acquire", (client) => {
    const processId = processIdOf(client)
    if (processId !== undefined) byProcessId.set(processId, client)
  })
  pool.on("remove", (client) => {
    const processId = processIdOf(client)
    if (processId !== undefined && byProcessId.get(processId) === client) byProcessId.delete(processId)
  })
  // How an interrupted statement's end is heard: its connection drains, or (a pooled one) the pool gets it
  // back, which comes first and can hand it to the next statement before it would drain.
  const onStatementEnd = new Map<pg.PoolClient, () => void>()
  pool.on("release", (_error, client) => onStatementEnd.get(client)?.())
  const query = pool.query.bind(pool) as (...args: Array<unknown>) => unknown
  const cancel = (client: pg.PoolClient, text: string, done: () => void) => {
    // `release` is the pool's for this checkout (set again at the next one).
    const release = client.release
    client.release = (error?: Error | boolean) => release.call(client, error || new Error("its statement was cancelled"))
    query(text, done)
  }
  pool.query = ((...args: Array<unknown>) => {
    const match = typeof args[0] === "string" ? CANCEL_STATEMENT.exec(args[0]) : null
    const client = match === null ? undefined : byProcessId.get(Number(match[1]))
    const done = args[1]
    if (client === undefined || typeof done !== "function") return query(...args)
    const statement = statementOf(client)
    if (statement === null) return done()
    // Whichever comes first, the statement's end or the grace's, disarms the other.
    const stopListening = () => {
      client.off("drain", ended)
      onStatementEnd.delete(client)
    }
    const ended = () => {
      stopListening()
      clearTimeout(timer)
      done()
    }
    const timer = setTimeout(() => {
      stopListening()
      if (pool.ending || statementOf(client) !== statement) return done()
      cancel(client, args[0] as string, done as () => void)
    }, cancelGraceMillis)
    client.once("drain", ended)
    onStatementEnd.set(client, ended)
  }) as typeof pool.query
  return pool
}

const clientLayer = (url: Redacted.Redacted<string>, applicationName: string, poolSize: number) =>
  pgClientLayer(url, applicationName, poolSize).pipe(
    Layer.tap((context) =>
      Effect.sync(() => {
        const sql = Context.get(context, SqlClient.SqlClient)
        // Statements without a span or a scope of their own while no one receives spans (runtime/DirectStatements.ts).
        executeStatementsDirectly(sql)
        // Transactions that run what they were given to do once committed (src/platform/AfterCommit.ts).
        runAfterCommit(sql)
      })
    )
  )

const pgClientLayer = (url: Redacted.Redacted<string>, applicationName: string, poolSize: number) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.sync(() =>
        cancelSafePool({
          connectionString: Redacted.value(url),
          max: poolSize,
          connectionTimeoutMillis: 10_000,
          idleTimeoutMillis: 30_000,
          application_name: applicationName
        })
      ),
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
interface ListenSubscriber {
  readonly emit: (payload: string) => void
  readonly fail: (error: Error) => void
}

interface ListenConnection {
  readonly client: pg.Client
  readonly channels: Map<string, Set<ListenSubscriber>>
  /** The statements issued so far, chained: the next one starts when the last has finished. */
  chain: Promise<unknown>
  readonly broken: (error: Error) => void
}

const asError = (cause: unknown) => cause instanceof Error ? cause : new Error(String(cause))

/**
 * The process's LISTEN connection, shared by every channel, its statements issued one after another.
 * `@effect/sql-pg`'s own `listen` issues the LISTENs of all channels at once on one connection, which
 * node-postgres deprecates (a DeprecationWarning at every start) and pg 9 will refuse, and it ignores
 * that connection's failure. Here a failed or closed connection fails every stream on it, so the change
 * feed listens again and tells its subscribers to re-read (src/platform/ChangeFeed.ts). Once the scope
 * closes (before the database stops), listening ends quietly: a stream then never emits, rather than
 * failing over and over against a database that is going away.
 */
const makeListener = (url: Redacted.Redacted<string>, applicationName: string) =>
  Effect.gen(function*() {
    let current: ListenConnection | undefined
    let closed = false

    const open = (): ListenConnection => {
      const client = new pg.Client({ connectionString: Redacted.value(url), application_name: applicationName, connectionTimeoutMillis: 10_000 })
      const connection: ListenConnection = {
        client,
        channels: new Map(),
        chain: client.connect(),
        broken: (error) => {
          if (current === connection) current = undefined
          client.removeAllListeners("end")
          for (const subscribers of connection.channels.values()) for (const subscriber of subscribers) subscriber.fail(error)
          connection.channels.clear()
          client.end().catch(() => undefined)
        }
      }
      client.on("error", (error) => connection.broken(error))
      client.on("end", () => connection.broken(new Error("the LISTEN connection closed")))
      client.on("notification", (message) => {
        if (message.payload === undefined) return
        for (const subscriber of connection.channels.get(message.channel) ?? []) subscriber.emit(message.payload)
      })
      return connection
    }

    const statement = (connection: ListenConnection, text: string): Promise<unknown> => {
      const next = connection.chain.then(() => connection.client.query(text))
      connection.chain = next.catch(() => undefined)
      return next
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        closed = true
        const connection = current
        current = undefined
        if (connection === undefined) return
        connection.client.removeAllListeners()
        connection.client.on("error", () => undefined)
        await connection.client.end().catch(() => undefined)
      })
    )

    return (channel: string, onPayload: (payload: string) => void): Effect.Effect<never, Error> =>
      Effect.suspend(() =>
        closed ? Effect.never : Effect.scoped(Effect.gen(function*() {
          const lost = yield* Deferred.make<never, Error>()
          yield* Effect.acquireRelease(
            Effect.tryPromise({
              try: async () => {
                const connection = current ??= open()
                const subscriber: ListenSubscriber = {
                  emit: onPayload,
                  fail: (error) => void Deferred.unsafeDone(lost, Effect.fail(error))
                }
                let subscribers = connection.channels.get(channel)
                const first = subscribers === undefined
                if (subscribers === undefined) connection.channels.set(channel, subscribers = new Set())
                subscribers.add(subscriber)
                if (first) {
                  await statement(connection, `LISTEN ${connection.client.escapeIdentifier(channel)}`).catch((error) => {
                    connection.broken(asError(error))
                    throw error
                  })
                }
                return { connection, subscriber }
              },
              catch: asError
            }),
            ({ connection, subscriber }) =>
              Effect.promise(async () => {
                const subscribers = connection.channels.get(channel)
                if (subscribers === undefined || !subscribers.delete(subscriber) || subscribers.size > 0) return
                connection.channels.delete(channel)
                if (current === connection) await statement(connection, `UNLISTEN ${connection.client.escapeIdentifier(channel)}`).catch(() => undefined)
              })
          )
          return yield* Deferred.await(lost)
        }))
      )
  })

export const DatabaseLive: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | ChangeFeed,
  unknown,
  AppConfig
> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const url = yield* databaseUrl
    const applicationName = yield* DatabaseApplicationName
    // Acquired after the database, so closed before it stops.
    const listen = yield* makeListener(url, applicationName)
    const { databasePoolSize } = yield* AppConfig
    return makeChangeFeed({ listen }).pipe(Layer.provideMerge(clientLayer(url, applicationName, databasePoolSize)))
  })
)
