/**
 * The reads other areas make of API keys. The apikeys area owns the table; the platform's security posture
 * counts the keys of every store, which no store's access check covers, so it reads that figure here. Each read
 * takes the SQL client in scope and dies on SQL failures: they are the infrastructure's, not the caller's.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { spanWhenExported } from "../platform/Traced.ts"

/** How many keys, of every store, are not revoked and were created before `cutoff`. */
export const activeKeysCreatedBefore = (sql: SqlClient.SqlClient, cutoff: Date) =>
  Effect.map(
    sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NULL AND created_at < ${cutoff}`,
    (rows) => rows[0]?.n ?? 0
  ).pipe(Effect.orDie, spanWhenExported("ApiKeyReads.activeKeysCreatedBefore"))
