/**
 * The reads plan limits make: an organization's plan and what it holds. Every method dies on SQL failures:
 * they are the infrastructure's, not the caller's. Subscriptions are written by billing; this area only
 * reads which plan an organization is on.
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
