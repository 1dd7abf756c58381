/**
 * The one authorization layer every store- and organization-scoped route goes through: it resolves the
 * object, checks that the caller's organization owns it (another tenant's object is 404, as if it did
 * not exist), then that the caller's role allows the action (403).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { type ApiKeyPrincipal, CurrentPrincipal, type UserPrincipal } from "../../domain/Auth.ts"
import { Forbidden, NotFound } from "../../domain/Errors.ts"
import { OrganizationId, StoreId, UserId } from "../../domain/Ids.ts"
import { type Permission, type Role, RoleSchema } from "../../domain/Access.ts"
import { decide } from "./Policy.ts"

/** A store the caller may act on, with the caller's role in its organization. */
export interface StoreAccess {
  readonly storeId: StoreId
  readonly organizationId: OrganizationId
  /** The caller's role; API keys act with the Developer role's permissions on their one store. */
  readonly role: Role
  readonly principal: UserPrincipal | ApiKeyPrincipal
}

export interface OrganizationAccess {
  readonly organizationId: OrganizationId
  readonly role: Role
  readonly principal: UserPrincipal
}

export class AccessService extends Effect.Service<AccessService>()("access/AccessService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findStoreMembership = SqlSchema.findOne({
      Request: Schema.Struct({ storeId: StoreId, userId: UserId }),
      Result: Schema.Struct({ organization_id: OrganizationId, role: Schema.NullOr(RoleSchema) }),
      execute: ({ storeId, userId }) =>
        sql`
          SELECT s.organization_id, m.role
          FROM stores s
          LEFT JOIN memberships m ON m.organization_id = s.organization_id AND m.user_id = ${userId}
          WHERE s.id = ${storeId}`
    })

    const findRole = SqlSchema.findOne({
      Request: Schema.Struct({ organizationId: OrganizationId, userId: UserId }),
      Result: Schema.Struct({ role: RoleSchema }),
      execute: ({ organizationId, userId }) =>
        sql`SELECT role FROM memberships WHERE organization_id = ${organizationId} AND user_id = ${userId}`
    })

    /** The signed-in user; API keys are refused on console routes. */
    const currentUser = Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      if (principal._tag !== "User") {
        return yield* new Forbidden({ message: "This route needs a user session token, not an API key" })
      }
      return principal
    })

    /** The calling API key; user sessions are refused on the merchant API routes that act for one store and mode. */
    const currentApiKey = Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      if (principal._tag !== "ApiKey") {
        return yield* new Forbidden({ message: "This route needs an API key (sk_test_… or sk_live_…)" })
      }
      return principal
    })

    const requirePlatformAdmin = Effect.gen(function*() {
      const user = yield* currentUser
      if (!user.platformAdmin) {
        return yield* new Forbidden({ message: "Only platform administrators may use this route" })
      }
      return user
    })

    const storeNotFound = (storeId: string) => new NotFound({ message: `No such store: ${storeId}`, param: "store_id" })

    /** The store `storeId` if the caller may perform `permission` on it. */
    const store = Effect.fn("Access.store")(function*(storeId: StoreId, permission: Permission) {
      const principal = yield* CurrentPrincipal
      if (principal._tag === "ApiKey") {
        if (principal.storeId !== storeId) return yield* storeNotFound(storeId)
        const decision = decide("developer", permission)
        if (!decision.allowed) return yield* new Forbidden({ message: `An API key cannot do this (${permission})` })
        return { storeId, organizationId: principal.organizationId, role: "developer" as const, principal }
      }
      const found = yield* findStoreMembership({ storeId, userId: principal.userId }).pipe(Effect.orDie)
      if (Option.isNone(found) || found.value.role === null) return yield* storeNotFound(storeId)
      const role = found.value.role
      const decision = decide(role, permission)
      if (!decision.allowed) return yield* new Forbidden({ message: `Not allowed: ${decision.reason}` })
      return { storeId, organizationId: found.value.organization_id, role, principal } satisfies StoreAccess
    })

    /**
     * The resource `find` yields, if the caller may perform `permission` on the store `storeIdOf` names.
     * A missing resource and one of a store the caller cannot see both fail with the resource's own
     * `notFound`: the store's "not found" would name the store of an object the caller may not know
     * exists, and another tenant's object must look exactly like one that does not exist. A role that
     * lacks `permission` on a store the caller can see is still 403.
     */
    const owned = <A, E, R>(
      find: Effect.Effect<Option.Option<A>, E, R>,
      storeIdOf: (resource: A) => StoreId,
      permission: Permission,
      notFound: () => NotFound
    ): Effect.Effect<A, E | NotFound | Forbidden, R | CurrentPrincipal> =>
      Effect.gen(function*() {
        const found = yield* find
        if (Option.isNone(found)) return yield* notFound()
        yield* store(storeIdOf(found.value), permission).pipe(Effect.catchTag("NotFound", () => Effect.fail(notFound())))
        return found.value
      }).pipe(Effect.withSpan("Access.owned", { attributes: { permission } }))

    /** The organization `organizationId` if the signed-in user may perform `permission` in it. */
    const organization = Effect.fn("Access.organization")(function*(organizationId: OrganizationId, permission: Permission) {
      const user = yield* currentUser
      const found = yield* findRole({ organizationId, userId: user.userId }).pipe(Effect.orDie)
      if (Option.isNone(found)) {
        return yield* new NotFound({ message: `No such organization: ${organizationId}`, param: "org_id" })
      }
      const decision = decide(found.value.role, permission)
      if (!decision.allowed) return yield* new Forbidden({ message: `Not allowed: ${decision.reason}` })
      return { organizationId, role: found.value.role, principal: user } satisfies OrganizationAccess
    })

    const findFirstMembership = SqlSchema.findOne({
      Request: UserId,
      Result: Schema.Struct({ organization_id: OrganizationId }),
      execute: (userId) =>
        sql`
          SELECT organization_id FROM memberships
          WHERE user_id = ${userId}
          ORDER BY created_at, organization_id
          LIMIT 1`
    })
    const findFirstOrganization = (userId: UserId) =>
      findFirstMembership(userId).pipe(Effect.map(Option.map((row) => row.organization_id)), Effect.orDie)

    /**
     * For routes that take an optional `organization_id`: that organization, or the one the user joined
     * first, if the user may perform `permission` in it. Errors name `organization_id`.
     */
    const organizationOrFirst = Effect.fn("Access.organizationOrFirst")(function*(
      organizationId: OrganizationId | undefined,
      permission: Permission
    ) {
      const user = yield* currentUser
      const chosen = organizationId ?? Option.getOrUndefined(yield* findFirstOrganization(user.userId))
      if (chosen === undefined) {
        return yield* new NotFound({ message: "You are not a member of any organization", param: "organization_id" })
      }
      return yield* organization(chosen, permission).pipe(
        Effect.catchTag("NotFound", () =>
          Effect.fail(new NotFound({ message: `No such organization: ${chosen}`, param: "organization_id" })))
      )
    })

    /** The caller's role in an organization, without deciding anything (for the access check route). */
    const roleIn = Effect.fn("Access.roleIn")(function*(organizationId: OrganizationId, userId: UserId) {
      return Option.map(yield* findRole({ organizationId, userId }).pipe(Effect.orDie), (row) => row.role)
    })

    return {
      currentUser,
      currentApiKey,
      requirePlatformAdmin,
      store,
      owned,
      organization,
      organizationOrFirst,
      roleIn
    } as const
  })
}) {}
