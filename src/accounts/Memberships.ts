/**
 * The reads other areas make of memberships (who is in which organization, with which role). The accounts area
 * owns the table and alone inserts and changes its rows; these are the narrow reads the others need where
 * AccountsService cannot serve them: from below it (the access check, which every service depends on), within
 * their own statements (a user's stores, read with the memberships that let the user see them), or in the
 * transaction of a change that tells the organization's owners of it. Each takes the SQL client in scope, so it
 * runs in the caller's transaction, and is named for what it answers; every read dies on SQL failures: they are
 * the infrastructure's, not the caller's.
 */
import { type SqlClient, type Statement } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { RoleSchema } from "../../domain/Access.ts"
import { OrganizationId, UserId } from "../../domain/Ids.ts"
import { spanWhenExported } from "../platform/Traced.ts"

type Sql = SqlClient.SqlClient

/**
 * The memberships as another area's statement joins them: `organization_id`, `user_id` and `role`. For a
 * statement that must read them with rows of its own at once (the access check's store and role, the stores a
 * user may see); the database pulls the relation into the enclosing query, so the plan is the one a join of
 * the table would have.
 */
export const joinableMemberships = (sql: Sql): Statement.Fragment =>
  sql`SELECT organization_id, user_id, role FROM memberships`

/** The user's role in the organization (none when the user is not a member). */
export const roleInOrganization = (sql: Sql, organizationId: OrganizationId, userId: UserId) =>
  SqlSchema.findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, userId: UserId }),
    Result: Schema.Struct({ role: RoleSchema }),
    execute: (input) =>
      sql`SELECT role FROM memberships WHERE organization_id = ${input.organizationId} AND user_id = ${input.userId}`
  })({ organizationId, userId }).pipe(
    Effect.map(Option.map((row) => row.role)),
    Effect.orDie,
    spanWhenExported("Memberships.roleInOrganization")
  )

/** The organization the user joined first (ties by id); none when the user is in none. */
export const firstOrganizationOfUser = (sql: Sql, userId: UserId) =>
  SqlSchema.findOne({
    Request: UserId,
    Result: Schema.Struct({ organization_id: OrganizationId }),
    execute: (id) =>
      sql`
        SELECT organization_id FROM memberships
        WHERE user_id = ${id}
        ORDER BY created_at, organization_id
        LIMIT 1`
  })(userId).pipe(
    Effect.map(Option.map((row) => row.organization_id)),
    Effect.orDie,
    spanWhenExported("Memberships.firstOrganizationOfUser")
  )

/** How many members the organization has. */
export const memberCountOfOrganization = (sql: Sql, organizationId: OrganizationId) =>
  Effect.map(
    sql<{ n: number }>`SELECT count(*)::int AS n FROM memberships WHERE organization_id = ${organizationId}`,
    (rows) => rows[0]?.n ?? 0
  ).pipe(Effect.orDie, spanWhenExported("Memberships.memberCountOfOrganization"))

/** The e-mail addresses of the organization's owners. */
export const ownerEmailsOfOrganization = (sql: Sql, organizationId: OrganizationId) =>
  Effect.map(
    sql<{ email: string }>`
      SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.organization_id = ${organizationId} AND m.role = 'owner'`,
    (rows) => rows.map((row) => row.email)
  ).pipe(Effect.orDie, spanWhenExported("Memberships.ownerEmailsOfOrganization"))

/** How many users are an owner or an admin of some organization without MFA on. */
export const ownersAndAdminsWithoutMfa = (sql: Sql) =>
  Effect.map(
    sql<{ n: number }>`
      SELECT count(DISTINCT u.id)::int AS n FROM users u JOIN memberships m ON m.user_id = u.id
      WHERE m.role IN ('owner', 'admin') AND NOT u.mfa_enabled`,
    (rows) => rows[0]?.n ?? 0
  ).pipe(Effect.orDie, spanWhenExported("Memberships.ownersAndAdminsWithoutMfa"))
