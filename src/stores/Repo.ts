/**
 * SQL of stores and branches. Provider credentials are stored twice: sealed in full (`credentials`,
 * opened only for the payments engine) and as a masked summary (`credentials_summary`), so showing a
 * store never needs the master key.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { type Role, Roles } from "../../domain/Access.ts"
import { BranchId, OrganizationId, StoreId, UserId } from "../../domain/Ids.ts"
import { roleAllows } from "../access/Policy.ts"
import { joinableMemberships } from "../accounts/Memberships.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { traced } from "../platform/Traced.ts"

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
  id: StoreId,
  organization_id: OrganizationId,
  name: Schema.String,
  branding: BrandingColumn,
  credentials_summary: Schema.NullOr(CredentialsSummaryColumn),
  live_mode: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type StoreRow = typeof StoreRow.Type

export const BranchRow = Schema.Struct({
  id: BranchId,
  store_id: StoreId,
  name: Schema.String,
  address: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  has_history: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type BranchRow = typeof BranchRow.Type

// Every column but the sealed credentials, which only `findPaymentSettings` reads.
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

// The roles that may see stores, from the one policy, so the list shows what the routes allow.
const rolesThatReadStores: ReadonlyArray<Role> = Roles.filter((role) => roleAllows(role, "store.read"))

/**
 * The notification channel of changes to a store's payment settings (credentials, live mode), sent in
 * the changing statement; the payload is the store's id (src/stores/PaymentSettings.ts).
 */
export const STORE_PAYMENT_SETTINGS = "store_payment_settings"

export class StoresRepo extends Effect.Service<StoresRepo>()("stores/StoresRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storeColumns = sql.literal(STORE_COLUMNS.join(", "))
    const qualifiedStoreColumns = sql.literal(STORE_COLUMNS.map((column) => `s.${column}`).join(", "))

    const insertStore = traced("StoresRepo.insertStore")(
      SqlSchema.single({
        Request: Schema.Struct({ id: StoreId, organizationId: OrganizationId, name: Schema.String }),
        Result: StoreRow,
        execute: (input) =>
          sql`
            INSERT INTO stores (id, organization_id, name)
            VALUES (${input.id}, ${input.organizationId}, ${input.name})
            RETURNING ${storeColumns}`
      }),
      Effect.orDie
    )

    const findStore = traced("StoresRepo.findStore")(
      SqlSchema.findOne({
        Request: StoreId,
        Result: StoreRow,
        execute: (id) => sql`SELECT ${storeColumns} FROM stores WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const storeListColumns = { createdAt: "s.created_at", id: "s.id" }

    const readableStoresOfUser = SqlSchema.findAll({
      Request: Schema.Struct({ userId: UserId, ...PageRequest.fields }),
      Result: StoreRow,
      execute: ({ limit, position, userId }) =>
        sql`
          SELECT ${qualifiedStoreColumns}
          FROM stores s
          JOIN (${joinableMemberships(sql)}) m ON m.organization_id = s.organization_id AND m.user_id = ${userId}
          WHERE m.role IN ${sql.in(rolesThatReadStores)} AND ${keysetAfter(sql, position, storeListColumns)}
          ORDER BY ${newestFirst(sql, storeListColumns)}
          LIMIT ${limit + 1}`
    })
    /** One page of the stores of every organization the user may see stores of, newest first. */
    const storesOfUser = traced("StoresRepo.storesOfUser")(
      (userId: UserId, limit: number, position: PagePosition | undefined) =>
        readableStoresOfUser({ userId, limit, position }).pipe(Effect.orDie)
    )

    // The JSON columns are written from the type side of their schemas: nothing to encode, only to check.
    const writeBranding = SqlSchema.findOne({
      Request: Schema.Struct({ id: StoreId, branding: Schema.typeSchema(BrandingColumn) }),
      Result: StoreRow,
      execute: ({ branding, id }) =>
        sql`
          UPDATE stores SET branding = ${JSON.stringify(branding)}::jsonb, updated_at = now()
          WHERE id = ${id}
          RETURNING ${storeColumns}`
    })
    const updateBranding = traced("StoresRepo.updateBranding")((id: StoreId, branding: BrandingColumn) =>
      writeBranding({ id, branding }).pipe(Effect.orDie)
    )

    const writeCredentials = SqlSchema.findOne({
      Request: Schema.Struct({
        id: StoreId,
        sealed: Schema.String,
        summary: Schema.typeSchema(CredentialsSummaryColumn)
      }),
      Result: StoreRow,
      execute: ({ id, sealed, summary }) =>
        sql`
          WITH updated AS (
            UPDATE stores
            SET credentials = ${sealed}, credentials_summary = ${JSON.stringify(summary)}::jsonb, updated_at = now()
            WHERE id = ${id}
            RETURNING ${storeColumns}
          )
          SELECT updated.*, pg_notify(${STORE_PAYMENT_SETTINGS}, updated.id)::text AS notified FROM updated`
    })
    const updateCredentials = traced("StoresRepo.updateCredentials")(
      (id: StoreId, sealed: string, summary: CredentialsSummaryColumn) =>
        writeCredentials({ id, sealed, summary }).pipe(Effect.orDie)
    )

    /** What the payments engine needs of a store: its sealed credentials (null until set) and live mode. */
    const findPaymentSettings = traced("StoresRepo.findPaymentSettings")(
      SqlSchema.findOne({
        Request: StoreId,
        Result: Schema.Struct({ credentials: Schema.NullOr(Schema.String), live_mode: Schema.Boolean }),
        execute: (id) => sql`SELECT credentials, live_mode FROM stores WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const writeLiveMode = SqlSchema.findOne({
      Request: Schema.Struct({ id: StoreId, liveMode: Schema.Boolean }),
      Result: StoreRow,
      execute: ({ id, liveMode }) =>
        sql`
          WITH updated AS (
            UPDATE stores
            SET live_mode = ${liveMode},
                updated_at = CASE WHEN live_mode = ${liveMode} THEN updated_at ELSE now() END
            WHERE id = ${id} ${liveMode ? sql`AND credentials IS NOT NULL` : sql``}
            RETURNING ${storeColumns}
          )
          SELECT updated.*, pg_notify(${STORE_PAYMENT_SETTINGS}, updated.id)::text AS notified FROM updated`
    })
    /**
     * Sets the live-mode flag. Switching on also re-checks, in the same statement, that credentials are
     * set, so the flag can never be on without them; None when that check (or the store) fails.
     */
    const setLiveMode = traced("StoresRepo.setLiveMode")((id: StoreId, liveMode: boolean) =>
      writeLiveMode({ id, liveMode }).pipe(Effect.orDie)
    )

    // -------------------------------------------------------------------------------------------
    // Branches
    // -------------------------------------------------------------------------------------------

    const insertBranch = traced("StoresRepo.insertBranch")(
      SqlSchema.single({
        Request: Schema.Struct({
          id: BranchId,
          storeId: StoreId,
          name: Schema.String,
          address: Schema.NullOr(Schema.String),
          phone: Schema.NullOr(Schema.String)
        }),
        Result: BranchRow,
        execute: (input) =>
          sql`
            INSERT INTO branches (id, store_id, name, address, phone)
            VALUES (${input.id}, ${input.storeId}, ${input.name}, ${input.address}, ${input.phone})
            RETURNING *`
      }),
      Effect.orDie
    )

    const findBranch = traced("StoresRepo.findBranch")(
      SqlSchema.findOne({
        Request: BranchId,
        Result: BranchRow,
        execute: (id) => sql`SELECT * FROM branches WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const branchesPage = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, ...PageRequest.fields }),
      Result: BranchRow,
      execute: ({ limit, position, storeId }) =>
        sql`
          SELECT * FROM branches
          WHERE store_id = ${storeId} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })
    /** One page of a store's branches, newest first. */
    const branchesOfStore = traced("StoresRepo.branchesOfStore")(
      (storeId: StoreId, limit: number, position: PagePosition | undefined) =>
        branchesPage({ storeId, limit, position }).pipe(Effect.orDie)
    )

    const writeBranchChanges = SqlSchema.findOne({
      Request: Schema.Struct({
        id: BranchId,
        name: Schema.optional(Schema.String),
        address: Schema.optional(Schema.NullOr(Schema.String)),
        phone: Schema.optional(Schema.NullOr(Schema.String)),
        active: Schema.optional(Schema.Boolean)
      }),
      Result: BranchRow,
      execute: ({ id, ...changes }) => {
        // Only the fields sent change; `undefined` means "not sent", `null` means "clear".
        const assignments = [
          changes.name === undefined ? undefined : sql`name = ${changes.name}`,
          changes.address === undefined ? undefined : sql`address = ${changes.address}`,
          changes.phone === undefined ? undefined : sql`phone = ${changes.phone}`,
          changes.active === undefined ? undefined : sql`active = ${changes.active}`
        ].filter((assignment) => assignment !== undefined)
        // Nothing sent: the branch as it is, without touching `updated_at`.
        if (assignments.length === 0) return sql`SELECT * FROM branches WHERE id = ${id}`
        return sql`
          UPDATE branches SET ${sql.csv([...assignments, sql`updated_at = now()`])}
          WHERE id = ${id}
          RETURNING *`
      }
    })
    const updateBranch = traced("StoresRepo.updateBranch")((id: BranchId, changes: {
      readonly name?: string | undefined
      readonly address?: string | null | undefined
      readonly phone?: string | null | undefined
      readonly active?: boolean | undefined
    }) => writeBranchChanges({ id, ...changes }).pipe(Effect.orDie))

    const deleteUnusedBranch = SqlSchema.findOne({
      Request: BranchId,
      Result: Schema.Struct({ id: BranchId }),
      execute: (id) => sql`DELETE FROM branches WHERE id = ${id} AND NOT has_history RETURNING id`
    })
    /** Deletes the branch unless it has history; false when it has (or no longer exists). */
    const deleteBranchWithoutHistory = traced("StoresRepo.deleteBranchWithoutHistory")((id: BranchId) =>
      deleteUnusedBranch(id).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    const deactivateBranch = traced("StoresRepo.deactivateBranch")(
      SqlSchema.findOne({
        Request: BranchId,
        Result: BranchRow,
        execute: (id) =>
          sql`
            UPDATE branches SET active = false, updated_at = CASE WHEN active THEN now() ELSE updated_at END
            WHERE id = ${id}
            RETURNING *`
      }),
      Effect.orDie
    )

    const holdBranch = SqlSchema.findOne({
      Request: BranchId,
      // Only whether the row is still there matters.
      Result: Schema.Unknown,
      execute: (id) => sql`SELECT 1 FROM branches WHERE id = ${id} FOR KEY SHARE`
    })
    /**
     * Marks the branch as referred to, and holds it (FOR KEY SHARE) until the transaction ends; false when
     * the branch is gone. A delete racing with this either committed first (false here) or waits and then
     * finds the mark, and deactivates the branch instead.
     */
    const markBranchHasHistory = traced("StoresRepo.markBranchHasHistory")(function*(id: BranchId) {
      yield* sql`UPDATE branches SET has_history = true WHERE id = ${id} AND NOT has_history`
      return Option.isSome(yield* holdBranch(id))
    }, Effect.orDie)

    return {
      insertStore,
      findStore,
      storesOfUser,
      updateBranding,
      updateCredentials,
      findPaymentSettings,
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
