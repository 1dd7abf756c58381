/**
 * runtime/DirectStatements.ts: while no tracer exports spans, statements run straight on their connection
 * (no "sql.execute" span, no scope of their own), with the same rows, errors, transactions and
 * cancellation as the library's own path; with an exporter, or a statement transformer, the library's path
 * runs and its spans are made. On PostgreSQL and on the embedded default alike.
 */
import { SqlClient, Statement } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { executeStatementsDirectly } from "../../runtime/DirectStatements.ts"
import { exportingSpans } from "../../src/platform/Traced.ts"
import { suitePoolClient } from "../support/SuitePool.ts"
import { spanNames } from "../support/Spans.ts"

const client = suitePoolClient(4).pipe(
  Layer.tap((context) => Effect.sync(() => executeStatementsDirectly(Context.get(context, SqlClient.SqlClient))))
)

describe("statements while no span is exported", () => {
  layer(client, { timeout: 120_000, excludeTestServices: true })("on a PgClient", (it) => {
    it.effect("run directly: the same rows, and no statement span", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        expect(executeStatementsDirectly(sql)).toBe(true)
        const { names, result } = yield* spanNames(sql<{ readonly n: number; readonly s: string }>`SELECT 1 + ${1}::int AS n, ${"a"}::text AS s`)
        expect(result).toEqual([{ n: 2, s: "a" }])
        expect(names).not.toContain("sql.execute")
      }))

    it.effect("run through the library, with its span, while spans are exported", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { names, result } = yield* Effect.scoped(Effect.zipRight(exportingSpans, spanNames(sql<{ readonly n: number }>`SELECT 41 + 1 AS n`)))
        expect(result).toEqual([{ n: 42 }])
        expect(names).toContain("sql.execute")
      }))

    it.effect("run through the library while a statement transformer is set", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        let transformed = 0
        const { names } = yield* spanNames(sql`SELECT 1`).pipe(
          Statement.withTransformer((statement) => {
            transformed++
            return Effect.succeed(statement)
          })
        )
        expect(transformed).toBe(1)
        expect(names).toContain("sql.execute")
      }))

    it.effect("fail as the library fails: a SqlError, not a defect", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // A defect would not be flipped: the test would fail with it.
        const error = yield* Effect.flip(sql`SELECT * FROM no_such_table`)
        expect(error).toBeInstanceOf(SqlError)
      }))

    it.effect("run on the transaction's connection inside a transaction, and roll back with it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE IF NOT EXISTS direct_statements (id int PRIMARY KEY)`
        const inside = yield* sql.withTransaction(Effect.gen(function*() {
          const first = yield* sql<{ readonly pid: number; readonly xid: string }>`SELECT pg_backend_pid() AS pid, txid_current()::text AS xid`
          yield* sql`INSERT INTO direct_statements (id) VALUES (1)`
          const second = yield* sql<{ readonly pid: number; readonly xid: string }>`SELECT pg_backend_pid() AS pid, txid_current()::text AS xid`
          return { first: first[0]!, second: second[0]! }
        }))
        expect(inside.second).toEqual(inside.first)
        const rolledBack = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO direct_statements (id) VALUES (2)`
          return yield* Effect.fail("undo" as const)
        })).pipe(Effect.flip)
        expect(rolledBack).toBe("undo")
        const ids = yield* sql<{ readonly id: number }>`SELECT id FROM direct_statements ORDER BY id`
        expect(ids).toEqual([{ id: 1 }])
      }))

    it.effect("are cancelled when interrupted, and the pool goes on", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const started = Date.now()
        const interrupted = yield* sql`SELECT pg_sleep(10)`.pipe(Effect.timeoutOption("300 millis"))
        expect(Option.isNone(interrupted)).toBe(true)
        // The backend takes the cancel asynchronously: the sleep ends soon after, not after its 10 s.
        const sleeping = sql<{ readonly count: number }>`
          SELECT count(*)::int AS count FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(10)' AND state = 'active'`
        let busy = (yield* sleeping)[0]!.count
        for (let attempt = 0; busy > 0 && attempt < 40; attempt++) {
          yield* Effect.sleep("50 millis")
          busy = (yield* sleeping)[0]!.count
        }
        expect(busy).toBe(0)
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(yield* sql<{ readonly n: number }>`SELECT 1 AS n`).toEqual([{ n: 1 }])
      }))
  })
})
