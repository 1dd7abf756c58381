/**
 * The reads other areas make of revenue shares. The revenue-shares area owns the table; the journal splits each
 * paid payment by the store's active shares as it posts the payment's entry, inside the payment's transaction,
 * so it reads them here rather than through RevenueSharesService (which sits above the journal, whose units it
 * checks percents in). Each read takes the SQL client in scope, so it runs in the caller's transaction, and dies
 * on SQL failures: they are the infrastructure's, not the caller's.
 */
import { type SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { StoreId } from "../../domain/Ids.ts"
import { spanWhenExported } from "../platform/Traced.ts"

/** The percents (as decimal text) of the store's active shares, oldest first. */
export const activeSharePercentsOfStore = (sql: SqlClient.SqlClient, storeId: StoreId) =>
  SqlSchema.findAll({
    Request: StoreId,
    Result: Schema.Struct({ percent: Schema.String }),
    execute: (id) =>
      sql`SELECT percent::text AS percent FROM revenue_shares WHERE store_id = ${id} AND active ORDER BY created_at, id`
  })(storeId).pipe(
    Effect.map((rows) => rows.map((row) => row.percent)),
    Effect.orDie,
    spanWhenExported("RevenueShareReads.activeSharePercentsOfStore")
  )
