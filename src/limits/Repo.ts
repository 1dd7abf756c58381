/**
 * The reads plan limits make: an organization's plan and what it holds. Every method dies on SQL failures:
 * they are the infrastructure's, not the caller's.
 *
 * The tables are other areas', read here by key because this area sits below all of them: stores, accounts
 * and payments call it as they create, and billing (which writes subscriptions) sits above payments, so
 * none of their modules may be imported here. Each read is one column or one count:
 * - `subscriptions.plan_id`: which plan the organization is on (billing writes it; free without a row);
 * - the count of `stores` or `memberships` of the organization, taken in the creating transaction while the
 *   organization's row is locked, so it cannot change before the creation commits;
 * - the lock of the `organizations` row itself, which serializes two creations checked against one limit;
 * - `stores.organization_id` of the store a payment is created for.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { OrganizationId, StoreId } from "../../domain/Ids.ts"
import { FREE } from "./Plans.ts"

export class LimitsRepo extends Effect.Service<LimitsRepo>()("limits/LimitsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The id of the organization's plan (free when it never subscribed). */
    const planIdOf = (orgId: OrganizationId) =>
      Effect.map(
        sql<{ plan_id: string }>`SELECT plan_id FROM subscriptions WHERE organization_id = ${orgId}`,
        (rows) => rows[0]?.plan_id ?? FREE.id
      ).pipe(Effect.orDie)

    /** How many stores or members the organization has. */
    const holdings = (orgId: OrganizationId, kind: "stores" | "team_members") =>
      Effect.map(
        kind === "stores"
          ? sql<{ n: number }>`SELECT count(*)::int AS n FROM stores WHERE organization_id = ${orgId}`
          : sql<{ n: number }>`SELECT count(*)::int AS n FROM memberships WHERE organization_id = ${orgId}`,
        (rows) => rows[0]?.n ?? 0
      ).pipe(Effect.orDie)

    /**
     * Holds the organization's row until the transaction ends, so two creations checked against one limit
     * at the same moment are checked one after the other.
     */
    const lockOrganization = (orgId: OrganizationId) =>
      sql`SELECT id FROM organizations WHERE id = ${orgId} FOR UPDATE`.pipe(Effect.asVoid, Effect.orDie)

    const organizationOfStore = (storeId: StoreId) =>
      Effect.map(
        sql<{ organization_id: OrganizationId }>`SELECT organization_id FROM stores WHERE id = ${storeId}`,
        (rows) => Option.fromNullable(rows[0]?.organization_id)
      ).pipe(Effect.orDie)

    return {
      planIdOf,
      holdings,
      lockOrganization,
      organizationOfStore,
      inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    } as const
  })
}) {}
