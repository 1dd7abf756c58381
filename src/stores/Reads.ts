/**
 * The reads other areas make of stores. The stores area owns the table; these are the narrow reads the others
 * need where StoresService cannot serve them: from below it (the access check, which StoresService itself
 * depends on), inside their own transactions (a revenue share's room, a receipt's mail), or within their own
 * statements, where a store's organization is read with rows of their own in one snapshot (`joinableStores`).
 * Each takes the SQL client in scope, so it runs in the caller's transaction, and is named for what it
 * answers; every read dies on SQL failures: they are the infrastructure's, not the caller's.
 */
import { type SqlClient, type Statement } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { OrganizationId, StoreId } from "../../domain/Ids.ts"
import { spanWhenExported } from "../platform/Traced.ts"

type Sql = SqlClient.SqlClient

/**
 * The stores as another area's statement joins them: `id`, `organization_id`, `name`, `live_mode` and
 * `created_at`, never the sealed credentials. For a statement that must read stores with rows of its own at
 * once (an API key with its store's organization, an organization's payments by store); the database pulls the
 * relation into the enclosing query, so the plan is the one a join of the table would have.
 */
export const joinableStores = (sql: Sql): Statement.Fragment =>
  sql`SELECT id, organization_id, name, live_mode, created_at FROM stores`

/** The organization the store belongs to (none when there is no such store). */
export const organizationOfStore = (sql: Sql, storeId: StoreId) =>
  SqlSchema.findOne({
    Request: StoreId,
    Result: Schema.Struct({ organization_id: OrganizationId }),
    execute: (id) => sql`SELECT organization_id FROM stores WHERE id = ${id}`
  })(storeId).pipe(
    Effect.map(Option.map((row) => row.organization_id)),
    Effect.orDie,
    spanWhenExported("StoreReads.organizationOfStore")
  )

/** The store's name (none when there is no such store). */
export const nameOfStore = (sql: Sql, storeId: string) =>
  SqlSchema.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ name: Schema.String }),
    execute: (id) => sql`SELECT name FROM stores WHERE id = ${id}`
  })(storeId).pipe(Effect.map(Option.map((row) => row.name)), Effect.orDie, spanWhenExported("StoreReads.nameOfStore"))

/** The store's name and organization (none when there is no such store). */
export const nameAndOrganizationOfStore = (sql: Sql, storeId: StoreId) =>
  SqlSchema.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ name: Schema.String, organization_id: OrganizationId }),
    execute: (id) => sql`SELECT name, organization_id FROM stores WHERE id = ${id}`
  })(storeId).pipe(Effect.orDie, spanWhenExported("StoreReads.nameAndOrganizationOfStore"))

/** Whether the store is in live mode (none when there is no such store). */
export const liveModeOfStore = (sql: Sql, storeId: StoreId) =>
  Effect.map(
    sql<{ live_mode: boolean }>`SELECT live_mode FROM stores WHERE id = ${storeId}`,
    (rows) => Option.fromNullable(rows[0]?.live_mode)
  ).pipe(Effect.orDie, spanWhenExported("StoreReads.liveModeOfStore"))

/** The name and colour a customer's mail from the store is signed with: its display name (else its name). */
export const mailSenderOfStore = (sql: Sql, storeId: string) =>
  Effect.map(
    sql<{ name: string; color: string | null }>`
      SELECT coalesce(branding->>'display_name', name) AS name, branding->>'primary_color' AS color FROM stores
      WHERE id = ${storeId}`,
    (rows) => Option.fromNullable(rows[0])
  ).pipe(Effect.orDie, spanWhenExported("StoreReads.mailSenderOfStore"))

/** How many stores the organization holds. */
export const storeCountOfOrganization = (sql: Sql, organizationId: OrganizationId) =>
  Effect.map(
    sql<{ n: number }>`SELECT count(*)::int AS n FROM stores WHERE organization_id = ${organizationId}`,
    (rows) => rows[0]?.n ?? 0
  ).pipe(Effect.orDie, spanWhenExported("StoreReads.storeCountOfOrganization"))

/**
 * Holds the store's row until the transaction ends: a change whose rule spans the store's rows of another
 * area (its revenue shares, which must not sum past 100 %) takes it first, so two such changes run one at a time.
 */
export const lockStoreRow = (sql: Sql, storeId: StoreId) =>
  sql`SELECT id FROM stores WHERE id = ${storeId} FOR UPDATE`.pipe(
    Effect.asVoid,
    Effect.orDie,
    spanWhenExported("StoreReads.lockStoreRow")
  )
