/**
 * runtime/Database.ts `cancelSafePool`: a statement cancelled by `@effect/sql-pg` (its fiber interrupted,
 * as when a client goes away mid-request) leaves its connection closed, not handed to the next statement,
 * which could otherwise meet the cancel signal the backend takes late; one that ends by itself within the
 * grace is not cancelled and its connection stays in the pool. On PostgreSQL and on the embedded
 * default alike. And a connection the server closes while idle is dropped without an uncaught error: the
 * pool emits the error, and an error event without a listener throws (seen when a suite's database was
 * dropped just after its pool's `end`, which does not wait for the connections to close).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { cancelSafePool } from "../../runtime/Database.ts"
import { suiteDatabaseUrl, suitePoolClient } from "../support/SuitePool.ts"
import { TestDatabase } from "../support/TestDatabase.ts"

/** The backend process of the connection the pool hands out next. */
const currentBackend = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly pid: number }>`SELECT pg_backend_pid() AS pid`.pipe(Effect.map((rows) => rows[0]!.pid)))

/** Whether the backend `pid` still has its connection. */
const isOpen = (pid: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity WHERE pid = ${pid}`.pipe(Effect.map((rows) => rows.length === 1)))

/** The suite's database with a pool of two connections: one for the statement, one for its cancel. */
const twoConnections = suitePoolClient(2)

describe("a cancelled statement's connection", () => {
  layer(twoConnections, { timeout: 120_000, excludeTestServices: true })("in a cancel-safe pool", (it) => {
    it.effect("is closed, and the next statements run on another one", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // The pool hands out its most recently returned connection first: the one just used.
        const first = yield* currentBackend
        const interrupted = yield* sql`SELECT pg_sleep(5)`.pipe(Effect.timeoutOption("300 millis"))
        expect(Option.isNone(interrupted)).toBe(true)
        const next = yield* currentBackend
        expect(next).not.toBe(first)
        expect(yield* isOpen(first)).toBe(false)
        // The pool goes on as usual.
        for (let i = 0; i < 5; i++) expect(yield* currentBackend).toBe(next)
      }))
  })
})

/**
 * The same with a grace longer than any statement here takes, so that which connection comes next does not
 * depend on how busy the machine is.
 */
const twoConnectionsWithLongGrace = suitePoolClient(2, 5_000)

describe("an interrupted statement that ends within the grace", () => {
  layer(twoConnectionsWithLongGrace, { timeout: 120_000, excludeTestServices: true })("in a cancel-safe pool", (it) => {
    it.effect("is not cancelled, and its connection is reused", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const first = yield* currentBackend
        // Interrupted after 5 ms; the interruption waits for the statement, which ends by itself.
        const interrupted = yield* sql`SELECT pg_sleep(0.05)`.pipe(Effect.timeoutOption("5 millis"))
        expect(Option.isNone(interrupted)).toBe(true)
        expect(yield* currentBackend).toBe(first)
        expect(yield* isOpen(first)).toBe(true)
      }))
  })
})

/** One connection, so that the statement waiting for it gets it as soon as the interrupted one ends. */
const oneConnectionWithLongGrace = suitePoolClient(1, 5_000)

describe("an interrupted statement whose connection goes straight to the next", () => {
  layer(oneConnectionWithLongGrace, { timeout: 120_000, excludeTestServices: true })("in a cancel-safe pool", (it) => {
    it.effect("lets its fiber end when the statement does, not when the next statement lets the connection drain", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const finished: Array<string> = []
        const interrupted = yield* sql`SELECT pg_sleep(0.05)`.pipe(
          Effect.timeoutOption("5 millis"),
          Effect.zipLeft(Effect.sync(() => finished.push("interrupted"))),
          Effect.fork
        )
        // The interrupted statement has the connection by then (it is idle: the pool hands it out at once).
        yield* Effect.sleep("2 millis")
        // Waits for the only connection, and holds it for 300 ms once the interrupted statement has ended.
        const next = yield* sql`SELECT pg_sleep(0.3)`.pipe(
          Effect.zipLeft(Effect.sync(() => finished.push("next"))),
          Effect.fork
        )
        expect(Option.isNone(yield* Fiber.join(interrupted))).toBe(true)
        yield* Fiber.join(next)
        expect(finished).toEqual(["interrupted", "next"])
      }))
  })
})

const backendOf = async (pool: pg.Pool) => (await pool.query<{ readonly pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid

/** Ends the backend `pid` from a connection of its own, as an administrator or a failover would. */
const terminate = async (url: string, pid: number) => {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query("SELECT pg_terminate_backend($1)", [pid])
  } finally {
    await admin.end()
  }
}

const uncaughtDuring = async (run: () => Promise<void>) => {
  const uncaught: Array<unknown> = []
  const record = (error: unknown) => void uncaught.push(error)
  // vitest's own listener stays: were the error uncaught, the run would report it as well.
  process.on("uncaughtException", record)
  try {
    await run()
  } finally {
    process.off("uncaughtException", record)
  }
  return uncaught
}

/** The suite database's address, for pools made by the test itself. */
class SuiteUrl extends Context.Tag("test/SuiteUrl")<SuiteUrl, string>() {}
const suiteUrl = Layer.scoped(SuiteUrl, Effect.map(suiteDatabaseUrl, Redacted.value)).pipe(Layer.provide(TestDatabase.layer))

describe("a connection the server closes", () => {
  layer(suiteUrl, { timeout: 120_000, excludeTestServices: true })("in a cancel-safe pool", (it) => {
    it.scoped("is dropped while idle, and the pool opens another", () =>
      Effect.gen(function*() {
        const url = yield* SuiteUrl
        const uncaught = yield* Effect.promise(() =>
          uncaughtDuring(async () => {
            const pool = cancelSafePool({ connectionString: url, max: 1 })
            try {
              const first = await backendOf(pool)
              const removed = new Promise<void>((resolve) => pool.once("remove", () => resolve()))
              await terminate(url, first)
              await removed
              expect(await backendOf(pool)).not.toBe(first)
            } finally {
              await pool.end()
            }
          })
        )
        expect(uncaught).toEqual([])
      }))
  })
})
