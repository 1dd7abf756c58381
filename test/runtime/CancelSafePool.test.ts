/**
 * runtime/Database.ts `cancelSafePool`: a statement cancelled by `@effect/sql-pg` (its fiber interrupted,
 * as when a client goes away mid-request) leaves its connection closed, not handed to the next statement,
 * which could otherwise meet the cancel signal the backend takes late. On PostgreSQL and on the embedded
 * default alike.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { suitePoolClient } from "../support/SuitePool.ts"

/** The suite's database with a pool of two connections: one for the statement, one for its cancel. */
const twoConnections = suitePoolClient(2)

describe("a cancelled statement's connection", () => {
  layer(twoConnections, { timeout: 120_000, excludeTestServices: true })("in a cancel-safe pool", (it) => {
    it.effect("is closed, and the next statements run on another one", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const backend = sql<{ readonly pid: number }>`SELECT pg_backend_pid() AS pid`.pipe(
          Effect.map((rows) => rows[0]!.pid)
        )
        // The pool hands out its most recently returned connection first: the one just used.
        const first = yield* backend
        const interrupted = yield* sql`SELECT pg_sleep(5)`.pipe(Effect.timeoutOption("300 millis"))
        expect(Option.isNone(interrupted)).toBe(true)
        const next = yield* backend
        expect(next).not.toBe(first)
        const open = yield* sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity WHERE pid = ${first}`
        expect(open).toHaveLength(0)
        // The pool goes on as usual.
        for (let i = 0; i < 5; i++) expect(yield* backend).toBe(next)
      }))
  })
})
