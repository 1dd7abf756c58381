/**
 * The reads other areas make of customers. The customers area owns the table; these are the narrow reads the
 * others need where CustomersService cannot serve them: inside their own transactions (a play of a game, a
 * receipt's mail), or within their own statements, where customers are read with rows of their own in one
 * snapshot — a report's figures per customer, a segment's rules over each customer's metrics, a play shown with
 * its player's link. For those the customers area exports the relation of its rows, and the other area's
 * statement joins it; the database pulls the relation into the enclosing query, so the plan is the one a join
 * of the table would have. Each read takes the SQL client in scope, so it runs in the caller's transaction, and
 * is named for what it answers; every read dies on SQL failures: they are the infrastructure's, not the caller's.
 *
 * The loyalty wallet (`points_balance`, `lifetime_points`) and the referral code are columns of the customer
 * row that the loyalty and referrals areas write and read in their own statements; the sums of points here
 * only read the wallet, for the reports of areas that have no wallet of their own.
 */
import { type SqlClient, type Statement } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { CustomerId, OrganizationId, StoreId } from "../../domain/Ids.ts"
import { joinableStores } from "../stores/Reads.ts"
import { spanWhenExported } from "../platform/Traced.ts"

type Sql = SqlClient.SqlClient

/** The customers with their names (`id`, `name`), for a report that names the customers it ranks. */
export const customerNames = (sql: Sql): Statement.Fragment => sql`SELECT id, name FROM customers`

/**
 * The store's customers of a mode that are not erased (`id`), with whether they agreed to marketing
 * (`reachable`), for a report of how many of them a campaign could reach.
 */
export const marketingReachOfStore = (sql: Sql, scope: { readonly storeId: string; readonly livemode: boolean }): Statement.Fragment =>
  sql`
    SELECT id, prefers_marketing AS reachable FROM customers
    WHERE store_id = ${scope.storeId} AND livemode = ${scope.livemode} AND erased_at IS NULL`

/**
 * The store's customers of a mode that are not erased (with `customerId`, only that one), with what a segment's
 * rules test of their own row: `id`, `store_id`, `created_at`, `points_balance`, `lifetime_points` and
 * `prefers_marketing`.
 */
export const segmentableCustomersOfStore = (
  sql: Sql,
  scope: { readonly storeId: string; readonly livemode: boolean; readonly customerId?: string }
): Statement.Fragment =>
  sql`
    SELECT id, store_id, created_at, points_balance, lifetime_points, prefers_marketing FROM customers
    WHERE store_id = ${scope.storeId} AND livemode = ${scope.livemode} AND erased_at IS NULL
      AND ${scope.customerId === undefined ? sql`true` : sql`id = ${scope.customerId}`}`

/**
 * The customers with the version of their public links (`id`, `public_link_version`), for a statement that
 * shows another area's rows with a link of their customer's (a game card).
 */
export const customerLinkVersions = (sql: Sql): Statement.Fragment => sql`SELECT id, public_link_version FROM customers`

/** What another area checks of a customer before acting for it: its store and mode, its erasure, its links' version. */
export const CustomerStanding = Schema.Struct({
  id: CustomerId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  erased_at: Schema.NullOr(Schema.DateFromSelf),
  public_link_version: Schema.Number
})
export type CustomerStanding = typeof CustomerStanding.Type

/** The customer's standing (none when there is no such customer). */
export const standingOfCustomer = (sql: Sql, customerId: string) =>
  SqlSchema.findOne({
    Request: Schema.String,
    Result: CustomerStanding,
    execute: (id) => sql`SELECT id, store_id, livemode, erased_at, public_link_version FROM customers WHERE id = ${id}`
  })(customerId).pipe(Effect.orDie, spanWhenExported("CustomerReads.standingOfCustomer"))

/** What a mail to a customer needs of it: where to write, whether it may be written to, its language. */
export interface MailRecipient {
  readonly email: string | null
  readonly prefers_email: boolean
  readonly erased_at: Date | null
  readonly metadata: unknown
}

/** The customer of the store as a mail's recipient, read as it is now (none when the store has no such customer). */
export const mailRecipientOfStore = (sql: Sql, storeId: string, customerId: string) =>
  Effect.map(
    sql<MailRecipient>`
      SELECT email, prefers_email, erased_at, metadata FROM customers
      WHERE id = ${customerId} AND store_id = ${storeId}`,
    (rows) => Option.fromNullable(rows[0])
  ).pipe(Effect.orDie, spanWhenExported("CustomerReads.mailRecipientOfStore"))

/** The points the store's customers of a mode hold, and how many of them hold some. */
export const pointsHeldInStore = (sql: Sql, scope: { readonly storeId: string; readonly livemode: boolean }) =>
  SqlSchema.single({
    Request: Schema.Struct({ storeId: Schema.String, livemode: Schema.Boolean }),
    Result: Schema.Struct({ points: Schema.BigInt, customers: Schema.Number }),
    execute: ({ livemode, storeId }) =>
      sql`
        SELECT COALESCE(sum(points_balance), 0)::text AS points, (count(*) FILTER (WHERE points_balance > 0))::int AS customers
        FROM customers WHERE store_id = ${storeId} AND livemode = ${livemode}`
  })(scope).pipe(Effect.orDie, spanWhenExported("CustomerReads.pointsHeldInStore"))

/** The points the customers of a mode of all the organization's stores hold. */
export const pointsHeldInOrganization = (sql: Sql, scope: { readonly organizationId: OrganizationId; readonly livemode: boolean }) =>
  SqlSchema.single({
    Request: Schema.Struct({ organizationId: OrganizationId, livemode: Schema.Boolean }),
    Result: Schema.Struct({ liability_points: Schema.Number }),
    execute: ({ livemode, organizationId }) =>
      sql`
        SELECT COALESCE(sum(c.points_balance), 0)::int AS liability_points
        FROM customers c JOIN (${joinableStores(sql)}) s ON s.id = c.store_id
        WHERE s.organization_id = ${organizationId} AND c.livemode = ${livemode}`
  })(scope).pipe(Effect.map((row) => row.liability_points), Effect.orDie, spanWhenExported("CustomerReads.pointsHeldInOrganization"))
