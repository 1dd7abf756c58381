/**
 * SQL of stores and branches. Provider credentials are stored twice: sealed in full (`credentials`,
 * opened only for the payments engine) and as a masked summary (`credentials_summary`), so showing a
 * store never needs the master key.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { type Role, Roles } from "../../domain/Access.ts"
import { roleAllows } from "../access/Policy.ts"
import { keysetAfter, newestFirst, type PagePosition } from "../platform/Pagination.ts"

export const BrandingColumn = Schema.Struct({
  display_name: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  primary_color: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  accent_color: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  logo_url: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})
export type BrandingColumn = typeof BrandingColumn.Type

export const CredentialsSummaryColumn = Schema.Struct({
  bakong_account_id: Schema.String,
  merchant_name: Schema.String,
  merchant_city: Schema.String,
  acquiring_bank: Schema.String
})
export type CredentialsSummaryColumn = typeof CredentialsSummaryColumn.Type

export const StoreRow = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  name: Schema.String,
  branding: BrandingColumn,
  credentials_summary: Schema.NullOr(CredentialsSummaryColumn),
  live_mode: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type StoreRow = typeof StoreRow.Type

export const BranchRow = Schema.Struct({
  id: Schema.String,
  store_id: Schema.String,
  name: Schema.String,
  address: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  has_history: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type BranchRow = typeof BranchRow.Type

// Every column but the sealed credentials, which only `findSealedCredentials` reads.
const STORE_COLUMNS = [
  "id",
  "organization_id",
  "name",
  "branding",
  "credentials_summary",
  "live_mode",
  "created_at",
  "updated_at"
]

const decodeRows = <A, I>(schema: Schema.Schema<A, I>) => (rows: ReadonlyArray<unknown>) =>
  Schema.decodeUnknown(Schema.Array(schema))(rows)

const first = <A>(rows: ReadonlyArray<A>): Option.Option<A> => Option.fromNullable(rows[0])

// The roles that may see stores, from the one policy, so the list shows what the routes allow.
const rolesThatReadStores: ReadonlyArray<Role> = Roles.filter((role) => roleAllows(role, "store.read"))

export class StoresRepo extends Effect.Service<StoresRepo>()("stores/StoresRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const stores = decodeRows(StoreRow)
    const branches = decodeRows(BranchRow)
    const storeColumns = sql.literal(STORE_COLUMNS.join(", "))
    const qualifiedStoreColumns = sql.literal(STORE_COLUMNS.map((column) => `s.${column}`).join(", "))


    const insertStore = (input: { readonly id: string; readonly organizationId: string; readonly name: string }) =>
      sql`
        INSERT INTO stores (id, organization_id, name)
        VALUES (${input.id}, ${input.organizationId}, ${input.name})
        RETURNING ${storeColumns}`.pipe(Effect.flatMap(stores), Effect.map((rows) => rows[0]!), Effect.orDie)

    const findStore = (id: string) =>
      sql`SELECT ${storeColumns} FROM stores WHERE id = ${id}`.pipe(Effect.flatMap(stores), Effect.map(first), Effect.orDie)

    const storeListColumns = { createdAt: "s.created_at", id: "s.id" }

    /** One page of the stores of every organization the user may see stores of, newest first. */
    const storesOfUser = (userId: string, limit: number, position: PagePosition | undefined) =>
      sql`
        SELECT ${qualifiedStoreColumns}
        FROM stores s
        JOIN memberships m ON m.organization_id = s.organization_id AND m.user_id = ${userId}
        WHERE m.role IN ${sql.in(rolesThatReadStores)} AND ${keysetAfter(sql, position, storeListColumns)}
        ORDER BY ${newestFirst(sql, storeListColumns)}
        LIMIT ${limit + 1}`.pipe(Effect.flatMap(stores), Effect.orDie)

    const updateBranding = (id: string, branding: BrandingColumn) =>
      sql`
        UPDATE stores SET branding = ${JSON.stringify(branding)}::jsonb, updated_at = now()
        WHERE id = ${id}
        RETURNING ${storeColumns}`.pipe(Effect.flatMap(stores), Effect.map(first), Effect.orDie)

    const updateCredentials = (id: string, sealed: string, summary: CredentialsSummaryColumn) =>
      sql`
        UPDATE stores
        SET credentials = ${sealed}, credentials_summary = ${JSON.stringify(summary)}::jsonb, updated_at = now()
        WHERE id = ${id}
        RETURNING ${storeColumns}`.pipe(Effect.flatMap(stores), Effect.map(first), Effect.orDie)

    /** The sealed credentials of a store; None when the store has none (or does not exist). */
    const findSealedCredentials = (id: string) =>
      sql<{ credentials: string | null }>`SELECT credentials FROM stores WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.flatMap(first(rows), (row) => Option.fromNullable(row.credentials))),
        Effect.orDie
      )

    /**
     * Sets the live-mode flag. Switching on also re-checks, in the same statement, that credentials are
     * set, so the flag can never be on without them; None when that check (or the store) fails.
     */
    const setLiveMode = (id: string, liveMode: boolean) =>
      sql`
        UPDATE stores
        SET live_mode = ${liveMode},
            updated_at = CASE WHEN live_mode = ${liveMode} THEN updated_at ELSE now() END
        WHERE id = ${id} ${liveMode ? sql`AND credentials IS NOT NULL` : sql``}
        RETURNING ${storeColumns}`.pipe(Effect.flatMap(stores), Effect.map(first), Effect.orDie)

    // -------------------------------------------------------------------------------------------
    // Branches
    // -------------------------------------------------------------------------------------------

    const insertBranch = (input: {
      readonly id: string
      readonly storeId: string
      readonly name: string
      readonly address: string | null
      readonly phone: string | null
    }) =>
      sql`
        INSERT INTO branches (id, store_id, name, address, phone)
        VALUES (${input.id}, ${input.storeId}, ${input.name}, ${input.address}, ${input.phone})
        RETURNING *`.pipe(Effect.flatMap(branches), Effect.map((rows) => rows[0]!), Effect.orDie)

    const findBranch = (id: string) =>
      sql`SELECT * FROM branches WHERE id = ${id}`.pipe(Effect.flatMap(branches), Effect.map(first), Effect.orDie)

    /** One page of a store's branches, newest first. */
    const branchesOfStore = (storeId: string, limit: number, position: PagePosition | undefined) =>
      sql`
        SELECT * FROM branches
        WHERE store_id = ${storeId} AND ${keysetAfter(sql, position)}
        ORDER BY ${newestFirst(sql)}
        LIMIT ${limit + 1}`.pipe(Effect.flatMap(branches), Effect.orDie)

    const updateBranch = (id: string, changes: {
      readonly name?: string | undefined
      readonly address?: string | null | undefined
      readonly phone?: string | null | undefined
      readonly active?: boolean | undefined
    }) => {
      // Only the fields sent change; `undefined` means "not sent", `null` means "clear".
      const assignments = [
        changes.name === undefined ? undefined : sql`name = ${changes.name}`,
        changes.address === undefined ? undefined : sql`address = ${changes.address}`,
        changes.phone === undefined ? undefined : sql`phone = ${changes.phone}`,
        changes.active === undefined ? undefined : sql`active = ${changes.active}`
      ].filter((assignment) => assignment !== undefined)
      if (assignments.length === 0) return findBranch(id)
      return sql`
        UPDATE branches SET ${sql.csv([...assignments, sql`updated_at = now()`])}
        WHERE id = ${id}
        RETURNING *`.pipe(Effect.flatMap(branches), Effect.map(first), Effect.orDie)
    }

    /** Deletes the branch unless it has history; false when it has (or no longer exists). */
    const deleteBranchWithoutHistory = (id: string) =>
      sql`DELETE FROM branches WHERE id = ${id} AND NOT has_history RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      )

    const deactivateBranch = (id: string) =>
      sql`
        UPDATE branches SET active = false, updated_at = CASE WHEN active THEN now() ELSE updated_at END
        WHERE id = ${id}
        RETURNING *`.pipe(Effect.flatMap(branches), Effect.map(first), Effect.orDie)

    /**
     * Marks the branch as referred to, and holds it (FOR KEY SHARE) until the transaction ends; false when
     * the branch is gone. A delete racing with this either committed first (false here) or waits and then
     * finds the mark, and deactivates the branch instead.
     */
    const markBranchHasHistory = (id: string) =>
      Effect.gen(function*() {
        yield* sql`UPDATE branches SET has_history = true WHERE id = ${id} AND NOT has_history`
        const held = yield* sql`SELECT 1 FROM branches WHERE id = ${id} FOR KEY SHARE`
        return held.length === 1
      }).pipe(Effect.orDie)

    return {
      insertStore,
      findStore,
      storesOfUser,
      updateBranding,
      updateCredentials,
      findSealedCredentials,
      setLiveMode,
      insertBranch,
      findBranch,
      branchesOfStore,
      updateBranch,
      deleteBranchWithoutHistory,
      deactivateBranch,
      markBranchHasHistory
    } as const
  })
}) {}
