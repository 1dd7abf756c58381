/**
 * Statements executed straight on their connection while no one receives spans.
 *
 * `@effect/sql` runs every statement (its `commit`: what `yield* sql\`…\`` and every SqlSchema query run)
 * inside a span of its own — made even when the tracer is disabled: a no-op span, the clock read for it,
 * a hook on its exit — through a check for a statement transformer, and in a scope of its own
 * (`Effect.scoped`: a scope made, provided to the fiber — a copy of its context, undone after — and
 * closed) in which the connection is acquired. With PgClient that scope never holds anything: outside a
 * transaction the acquirer hands out the pool itself (the pool's `connect` and release happen inside the
 * statement's own asynchronous step, cancellation included), and inside one it hands out the
 * transaction's connection, which the transaction's own scope holds. Measured on the request paths, that
 * wrapping was ~40 µs of CPU per statement: ~7 % of a payment list and of a payment's creation.
 *
 * So while no tracer exports spans (src/platform/Traced.ts) and no transformer is set, a statement's
 * `commit` compiles it and executes it on the connection its acquirer names, exactly as the library does
 * inside its span and scope. When spans are exported, or a transformer is in effect, the library's own
 * `commit` runs: the spans and their attributes are the ones it always made.
 *
 * It replaces `commit` on the prototype of the client's statements (one class, shared by every client of
 * the process) once, when the client is built; the statement's shape is checked first, and a shape this
 * does not know (a different version of the library) is left alone. test/runtime/DirectStatements.test.ts
 * shows the direct path is the one taken, that results, errors, transactions and cancellation are the
 * same, and that an exporter gets the library's spans.
 */
import { type SqlClient, Statement } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { Effect, Option } from "effect"
import { spansExported } from "../src/platform/Traced.ts"

/** What `commit` reads of a statement: the library's own fields and methods. */
interface StatementInternals {
  readonly acquirer: Effect.Effect<Connection>
  readonly transformRows: Parameters<Connection["execute"]>[2]
  compile(): readonly [sql: string, params: ReadonlyArray<unknown>]
  commit(): Effect.Effect<ReadonlyArray<unknown>, unknown>
}

const directPrototypes = new WeakSet<object>()

const isStatementWeKnow = (statement: object): statement is StatementInternals =>
  Effect.isEffect((statement as Partial<StatementInternals>).acquirer) &&
  typeof (statement as Partial<StatementInternals>).compile === "function" &&
  typeof (statement as Partial<StatementInternals>).commit === "function"

/**
 * Makes the statements of `sql` (and of every client sharing their class) execute directly while no
 * span is exported. Idempotent. Returns whether the statements are of the shape this knows.
 */
export const executeStatementsDirectly = (sql: SqlClient.SqlClient): boolean => {
  const sample: object = sql`SELECT 1`
  if (!isStatementWeKnow(sample)) return false
  const prototype = Object.getPrototypeOf(sample) as StatementInternals
  if (directPrototypes.has(prototype)) return true
  const libraryCommit = prototype.commit
  const direct = function(this: StatementInternals) {
    const [text, params] = this.compile()
    return Effect.flatMap(this.acquirer, (connection) => connection.execute(text, params, this.transformRows))
  }
  ;(prototype as { commit: StatementInternals["commit"] }).commit = function(this: StatementInternals) {
    if (spansExported()) return libraryCommit.call(this)
    return Effect.withFiberRuntime((fiber) =>
      Option.isSome(fiber.getFiberRef(Statement.currentTransformer)) ? libraryCommit.call(this) : direct.call(this)
    )
  }
  directPrototypes.add(prototype)
  return true
}
