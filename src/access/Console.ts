/**
 * The access console: what the policy grants, and a simulated decision for the calling user. Both read
 * `Policy.ts` and `AccessService`, the code the routes enforce, so the console cannot drift from them.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { AccessDecision, AccessMatrix, type Permission, Roles } from "../../domain/Access.ts"
import { NotFound } from "../../domain/Errors.ts"
import type { OrganizationId, StoreId } from "../../domain/Ids.ts"
import { organizationOfStore } from "../stores/Reads.ts"
import { accessMatrix, AttributePolicies, decide } from "./Policy.ts"
import { AccessService } from "./Service.ts"
import { traced } from "../platform/Traced.ts"

export class AccessConsoleService extends Effect.Service<AccessConsoleService>()("access/AccessConsoleService", {
  effect: Effect.gen(function*() {
    const access = yield* AccessService
    const sql = yield* SqlClient.SqlClient

    /** The signed-in user's role in the organization; for a non-member the organization does not exist. */
    const memberRole = (organizationId: OrganizationId) =>
      Effect.gen(function*() {
        const user = yield* access.currentUser
        const role = yield* access.roleIn(organizationId, user.userId)
        if (Option.isNone(role)) {
          return yield* new NotFound({ message: `No such organization: ${organizationId}`, param: "org_id" })
        }
        return role.value
      })

    const matrix = traced("AccessConsole.matrix")(function*(organizationId: OrganizationId) {
      const role = yield* memberRole(organizationId)
      return new AccessMatrix({
        object: "access_matrix",
        organization_id: organizationId,
        roles: [...Roles],
        permissions: accessMatrix(),
        attribute_policies: AttributePolicies.map(({ id, description }) => ({ id, description })),
        your_role: role
      })
    })

    const check = traced("AccessConsole.check")(function*(
      organizationId: OrganizationId,
      input: { readonly permission: Permission; readonly store_id?: StoreId | undefined }
    ) {
      const role = yield* memberRole(organizationId)
      const decision = decide(role, input.permission)
      if (input.store_id === undefined) {
        return new AccessDecision({
          object: "access_decision",
          permission: input.permission,
          store_id: null,
          allowed: decision.allowed,
          role,
          reason: decision.reason
        })
      }
      const storeId = input.store_id
      const storeNotFound = new NotFound({ message: `No such store in this organization: ${storeId}`, param: "store_id" })
      const owner = yield* organizationOfStore(sql, storeId)
      if (Option.isNone(owner) || owner.value !== organizationId) return yield* storeNotFound
      // The very check a store route makes; its answer is the decision, the policy's reason explains it.
      const outcome = yield* Effect.either(access.store(storeId, input.permission))
      if (Either.isLeft(outcome) && outcome.left._tag === "NotFound") return yield* storeNotFound
      return new AccessDecision({
        object: "access_decision",
        permission: input.permission,
        store_id: storeId,
        allowed: Either.isRight(outcome),
        role,
        reason: decision.reason
      })
    })

    return { matrix, check } as const
  }),
  dependencies: [AccessService.Default]
}) {}
