/**
 * The one authorization layer every store- and organization-scoped route goes through: it resolves the
 * object, checks that the caller's organization owns it (another tenant's object is 404, as if it did
 * not exist), then that the caller's role allows the action (403).
 *
 * Design: access the compiler enforces. A check that is only a call at the top of a service method is
 * a check a new method can forget and still compile. So the check leaves a proof in the effect's
 * requirements instead:
 *
 * - A service reads and writes a store's (or its organization's) data through `storeData(repo)`: every
 *   operation of that view requires `StoreAuthorized` in its context (`touchesStoreData` marks a statement
 *   a service runs itself). A method that uses one without a check has the requirement left in its type,
 *   and nothing a handler or a runtime holds can satisfy it: the handler layer, the console RPC layer and
 *   the app fail to compile.
 * - Only this module can make a `StoreAuthorized` (its brand is a symbol no other module can name) and it
 *   makes one only where the check passed: `withStore`, `withOwned`, `withApiKey`, `withOrganization`,
 *   `withOrganizationOwned` and `withPlatformAdmin` run the check, then the rest of the method with the
 *   proof provided, so the public method's signature keeps no trace of it. `store`, `owned` and
 *   `organization` still answer a decision alone (the access check route, a second check inside one).
 * - Work no caller asks for (entities, outbox consumers, jobs) acts through `AccessService.asSystem(reason)`,
 *   and pages opened by a public link or token (which the method checks itself) through
 *   `AccessService.forPublicLink(reason)`: named, greppable grants, never a silent bypass.
 *
 * The proof says that a check ran for this request; which store's rows a query touches is still decided by
 * the ids the method passes, taken from what the check returned.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Context, Effect, Option, Schema } from "effect"
import { type ApiKeyPrincipal, CurrentPrincipal, type UserPrincipal } from "../../domain/Auth.ts"
import { Forbidden, NotFound } from "../../domain/Errors.ts"
import { OrganizationId, StoreId, UserId } from "../../domain/Ids.ts"
import { type Permission, type Role, RoleSchema } from "../../domain/Access.ts"
import { firstOrganizationOfUser, joinableMemberships, roleInOrganization } from "../accounts/Memberships.ts"
import { joinableStores } from "../stores/Reads.ts"
import { decide } from "./Policy.ts"
import { traced, spanWhenExported } from "../platform/Traced.ts"

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

declare const StoreAuthorizedBrand: unique symbol

/**
 * Proof, in an effect's requirements, that access to a store's data was decided: a caller passed a check
 * (`Caller`, `ApiKey`, `Organization`, `PlatformAdmin`), or the work is granted by name (`System`, `PublicLink`).
 */
export interface StoreAuthorized {
  readonly [StoreAuthorizedBrand]: "StoreAuthorized"
  readonly basis:
    | { readonly _tag: "Caller"; readonly storeId: StoreId; readonly permission: Permission }
    | { readonly _tag: "ApiKey"; readonly storeId: StoreId; readonly livemode: boolean }
    | { readonly _tag: "Organization"; readonly organizationId: OrganizationId }
    | { readonly _tag: "PlatformAdmin"; readonly userId: UserId }
    | { readonly _tag: "System"; readonly reason: string }
    | { readonly _tag: "PublicLink"; readonly reason: string }
}

/** Not exported: providing it needs a proof, and only this module can make one. */
const StoreAuthorizedTag = Context.GenericTag<StoreAuthorized>("access/StoreAuthorized")

const grant = (basis: StoreAuthorized["basis"]): StoreAuthorized => ({ basis }) as unknown as StoreAuthorized

const authorizedBy = (basis: StoreAuthorized["basis"]) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, StoreAuthorizedTag, grant(basis))

/** A service's operations, each requiring `StoreAuthorized` (see `storeData`). */
export type StoreData<S> = {
  readonly [K in keyof S]: S[K] extends (...args: infer Args) => Effect.Effect<infer A, infer E, infer R>
    ? (...args: Args) => Effect.Effect<A, E, R | StoreAuthorized>
    : S[K] extends Effect.Effect<infer A, infer E, infer R> ? Effect.Effect<A, E, R | StoreAuthorized>
    : S[K]
}

const requireProof = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | StoreAuthorized> =>
  Effect.zipRight(StoreAuthorizedTag, effect)

/** One operation on a store's data that is not a repo's (a statement a service runs itself): it requires the proof. */
export const touchesStoreData = requireProof

/**
 * The view of a repo (or any service) through which a service touches a store's data: every operation
 * requires `StoreAuthorized`, in its type and when it runs. `passThrough` names what needs no proof, each
 * named where it is passed: generic combinators (`inTransaction`), whose content is guarded already, and a
 * query the caller's own memberships scope.
 */
export const storeData = <S extends object, K extends keyof S = never>(
  service: S,
  ...passThrough: ReadonlyArray<K>
): StoreData<Omit<S, K>> & Pick<S, K> =>
  new Proxy(service, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (passThrough.includes(key as K)) return value
      if (Effect.isEffect(value)) return requireProof(value)
      if (typeof value !== "function") return value
      return (...args: Array<unknown>) => {
        const result = value.apply(target, args)
        return Effect.isEffect(result) ? requireProof(result) : result
      }
    }
  }) as unknown as StoreData<Omit<S, K>> & Pick<S, K>

export class AccessService extends Effect.Service<AccessService>()("access/AccessService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findStoreMembership = SqlSchema.findOne({
      Request: Schema.Struct({ storeId: StoreId, userId: UserId }),
      Result: Schema.Struct({ organization_id: OrganizationId, role: Schema.NullOr(RoleSchema) }),
      // One statement over both tables: the check of every store route costs one round trip.
      execute: ({ storeId, userId }) =>
        sql`
          SELECT s.organization_id, m.role
          FROM (${joinableStores(sql)}) s
          LEFT JOIN (${joinableMemberships(sql)}) m ON m.organization_id = s.organization_id AND m.user_id = ${userId}
          WHERE s.id = ${storeId}`
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
    const store = traced("Access.store")(function*(storeId: StoreId, permission: Permission) {
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
    ): Effect.Effect<A, E | NotFound | Forbidden, Exclude<R, StoreAuthorized> | CurrentPrincipal> =>
      Effect.gen(function*() {
        // Looking the resource up is part of the check: what it finds is answered only once it passed.
        const found = yield* authorizedBy({ _tag: "System", reason: `looking up a resource to check ${permission}` })(find)
        if (Option.isNone(found)) return yield* notFound()
        yield* store(storeIdOf(found.value), permission).pipe(Effect.catchTag("NotFound", () => Effect.fail(notFound())))
        return found.value
      }).pipe(spanWhenExported("Access.owned", { attributes: { permission } }))

    /** Runs `use` with proof of access if the caller may perform `permission` on the store `storeId`. */
    const withStore = <A, E, R>(
      storeId: StoreId,
      permission: Permission,
      use: (granted: StoreAccess) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | NotFound | Forbidden, Exclude<R, StoreAuthorized> | CurrentPrincipal> =>
      Effect.flatMap(
        store(storeId, permission),
        (granted) => authorizedBy({ _tag: "Caller", storeId: granted.storeId, permission })(use(granted))
      )

    /** `owned`, then `use` with proof of access to the resource's store. */
    const withOwned = <A, E, R, B, E2, R2>(
      find: Effect.Effect<Option.Option<A>, E, R>,
      storeIdOf: (resource: A) => StoreId,
      permission: Permission,
      notFound: () => NotFound,
      use: (resource: A) => Effect.Effect<B, E2, R2>
    ): Effect.Effect<B, E | E2 | NotFound | Forbidden, Exclude<R | R2, StoreAuthorized> | CurrentPrincipal> =>
      Effect.flatMap(
        owned(find, storeIdOf, permission, notFound),
        (resource) => authorizedBy({ _tag: "Caller", storeId: storeIdOf(resource), permission })(use(resource))
      )

    /**
     * Runs `use` with proof of access to the calling API key's own store (a user session is refused):
     * the key is the merchant's backend, allowed every route of its store and mode, which `use` keeps to.
     */
    const withApiKey = <A, E, R>(
      use: (key: ApiKeyPrincipal) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | Forbidden, Exclude<R, StoreAuthorized> | CurrentPrincipal> =>
      Effect.flatMap(
        currentApiKey,
        (key) => authorizedBy({ _tag: "ApiKey", storeId: key.storeId, livemode: key.livemode })(use(key))
      )

    /** Runs `use` with proof of access to every store's data, if the signed-in user is a platform administrator. */
    const withPlatformAdmin = <A, E, R>(
      use: (admin: UserPrincipal) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | Forbidden, Exclude<R, StoreAuthorized> | CurrentPrincipal> =>
      Effect.flatMap(
        requirePlatformAdmin,
        (admin) => authorizedBy({ _tag: "PlatformAdmin", userId: admin.userId })(use(admin))
      )

    /** Runs `use` with proof of access to the stores of an organization the signed-in user may `permission` in. */
    const withOrganization = <A, E, R>(
      checked: Effect.Effect<OrganizationAccess, NotFound | Forbidden, CurrentPrincipal>,
      use: (granted: OrganizationAccess) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | NotFound | Forbidden, Exclude<R, StoreAuthorized> | CurrentPrincipal> =>
      Effect.flatMap(
        checked,
        (granted) => authorizedBy({ _tag: "Organization", organizationId: granted.organizationId })(use(granted))
      )

    /**
     * `withOwned` for a resource of an organization: `use` runs with proof of access to the organization's
     * data if the signed-in user may `permission` in the organization `organizationIdOf` names; a missing
     * resource and one of another organization both fail with the resource's own `notFound`.
     */
    const withOrganizationOwned = <A, E, R, B, E2, R2>(
      find: Effect.Effect<Option.Option<A>, E, R>,
      organizationIdOf: (resource: A) => OrganizationId,
      permission: Permission,
      notFound: () => NotFound,
      use: (resource: A, granted: OrganizationAccess) => Effect.Effect<B, E2, R2>
    ): Effect.Effect<B, E | E2 | NotFound | Forbidden, Exclude<R | R2, StoreAuthorized> | CurrentPrincipal> =>
      Effect.gen(function*() {
        const found = yield* authorizedBy({ _tag: "System", reason: `looking up a resource to check ${permission}` })(find)
        if (Option.isNone(found)) return yield* notFound()
        const granted = yield* organization(organizationIdOf(found.value), permission).pipe(
          Effect.catchTag("NotFound", () => Effect.fail(notFound()))
        )
        return yield* authorizedBy({ _tag: "Organization", organizationId: granted.organizationId })(use(found.value, granted))
      })

    /** The organization `organizationId` if the signed-in user may perform `permission` in it. */
    const organization = traced("Access.organization")(function*(organizationId: OrganizationId, permission: Permission) {
      const user = yield* currentUser
      const role = yield* roleInOrganization(sql, organizationId, user.userId)
      if (Option.isNone(role)) {
        return yield* new NotFound({ message: `No such organization: ${organizationId}`, param: "org_id" })
      }
      const decision = decide(role.value, permission)
      if (!decision.allowed) return yield* new Forbidden({ message: `Not allowed: ${decision.reason}` })
      return { organizationId, role: role.value, principal: user } satisfies OrganizationAccess
    })

    /**
     * For routes that take an optional `organization_id`: that organization, or the one the user joined
     * first, if the user may perform `permission` in it. Errors name `organization_id`.
     */
    const organizationOrFirst = traced("Access.organizationOrFirst")(function*(
      organizationId: OrganizationId | undefined,
      permission: Permission
    ) {
      const user = yield* currentUser
      const chosen = organizationId ?? Option.getOrUndefined(yield* firstOrganizationOfUser(sql, user.userId))
      if (chosen === undefined) {
        return yield* new NotFound({ message: "You are not a member of any organization", param: "organization_id" })
      }
      return yield* organization(chosen, permission).pipe(
        Effect.catchTag("NotFound", () =>
          Effect.fail(new NotFound({ message: `No such organization: ${chosen}`, param: "organization_id" })))
      )
    })

    /** The caller's role in an organization, without deciding anything (for the access check route). */
    const roleIn = traced("Access.roleIn")(function*(organizationId: OrganizationId, userId: UserId) {
      return yield* roleInOrganization(sql, organizationId, userId)
    })

    return {
      currentUser,
      currentApiKey,
      requirePlatformAdmin,
      store,
      owned,
      withStore,
      withOwned,
      withApiKey,
      withOrganization,
      withPlatformAdmin,
      withOrganizationOwned,
      organization,
      organizationOrFirst,
      roleIn
    } as const
  })
}) {
  /**
   * Proof for work no caller asks for (an entity, an outbox consumer, a job, a page reached by a public
   * link or token), named by `reason` so that each such grant reads as one in review.
   */
  static readonly asSystem = (reason: string) => authorizedBy({ _tag: "System", reason })

  /**
   * Proof for a page or route anyone holding a public link may open (hosted checkout, a customer's wallet
   * or game card): the method checks the link's token or slug itself, and `reason` says which.
   */
  static readonly forPublicLink = (reason: string) => authorizedBy({ _tag: "PublicLink", reason })
}
