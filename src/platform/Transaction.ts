/**
 * One transaction around a repo's statements. A database failure inside it is a defect (the logged 500
 * path: nothing a caller can correct), while the effect's own typed errors still roll it back and pass
 * through unchanged.
 */
import { SqlError } from "@effect/sql"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"

const isSqlError = (error: unknown): error is SqlError.SqlError => error instanceof SqlError.SqlError

export const transactionOf = (sql: SqlClient) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
  sql.withTransaction(effect).pipe(Effect.catchIf(isSqlError, Effect.die)) as Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>
