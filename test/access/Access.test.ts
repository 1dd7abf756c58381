/**
 * The access console over HTTP: the matrix and the simulated check agree with the policy module and
 * with what the routes actually enforce.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { type AccessCheck, Permissions, Roles } from "../../domain/Access.ts"
import { StoreId } from "../../domain/Ids.ts"
import { accessMatrix, AttributePolicies, decide } from "../../src/access/Policy.ts"
import { addMember, createStore, type SignedUp, signUp } from "../support/Accounts.ts"
import { clientAs, expectFailure, wireJson } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

// Raw calls only for permissions outside the request schema.
const call = makeCall()

const organization = (app: TestAppShape) =>
  Effect.promise(async () => {
    const owner = await signUp(app)
    const store = await createStore(app, owner.token)
    const analyst = await addMember(app, owner.token, owner.organizationId, "analyst")
    return { owner, analyst, storeId: store.id }
  })

const orgPath = (owner: SignedUp) => ({ orgId: owner.organizationId })

const matrix = (app: TestAppShape, token: string, owner: SignedUp) =>
  Effect.flatMap(clientAs(app, token), (api) => api.access.matrix({ path: orgPath(owner), withResponse: true }))

const check = (app: TestAppShape, token: string, owner: SignedUp, payload: typeof AccessCheck.Type) =>
  Effect.flatMap(clientAs(app, token), (api) => api.access.check({ path: orgPath(owner), payload }))

describe("access console", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("shows every member the policy's matrix and attribute policies, with their role", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, analyst } = yield* organization(app)

        const [asOwner, ownerResponse] = yield* matrix(app, owner.token, owner)
        // The whole answer as sent, so that no field beyond these is there either.
        expect(yield* wireJson(ownerResponse)).toEqual({
          object: "access_matrix",
          organization_id: owner.organizationId,
          roles: [...Roles],
          permissions: JSON.parse(JSON.stringify(accessMatrix())),
          attribute_policies: JSON.parse(JSON.stringify(AttributePolicies)),
          your_role: "owner"
        })
        const storeUpdate = asOwner.permissions.find((row) => row.permission === "store.update")
        expect(storeUpdate?.roles).toMatchObject({ owner: true, analyst: false })

        const [asAnalyst] = yield* matrix(app, analyst.token, owner)
        expect(asAnalyst.your_role).toBe("analyst")
        expect(asAnalyst.permissions).toEqual(asOwner.permissions)
      }))

    it.effect("answers 404 to non-members and 401 without a credential", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner } = yield* organization(app)
        const stranger = yield* Effect.promise(() => signUp(app))
        yield* expectFailure(matrix(app, stranger.token, owner), "NotFound")
        yield* expectFailure(check(app, stranger.token, owner, { permission: "store.read" }), "NotFound")
        yield* expectFailure(matrix(app, "", owner), "Unauthorized")
      }))

    it.effect("decides as the policy does: an analyst is denied store.update, the owner allowed", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, analyst } = yield* organization(app)

        const [, deniedResponse] = yield* Effect.flatMap(clientAs(app, analyst.token), (api) =>
          api.access.check({ path: orgPath(owner), payload: { permission: "store.update" }, withResponse: true }))
        expect(yield* wireJson(deniedResponse)).toEqual({
          object: "access_decision",
          permission: "store.update",
          store_id: null,
          allowed: false,
          role: "analyst",
          reason: decide("analyst", "store.update").reason
        })
        const allowed = yield* check(app, owner.token, owner, { permission: "store.update" })
        expect(allowed).toMatchObject({ allowed: true, role: "owner", reason: decide("owner", "store.update").reason })

        // Every permission, for both roles, is what the policy module says.
        for (const permission of Permissions) {
          for (const [member, role] of [[owner, "owner"], [analyst, "analyst"]] as const) {
            const decision = yield* check(app, member.token, owner, { permission })
            expect(decision.allowed).toBe(decide(role, permission).allowed)
          }
        }
      }))

    it.effect("checks a store of the organization the same way the store routes enforce it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, analyst, storeId } = yield* organization(app)

        const checkStore = (token: string, permission: typeof AccessCheck.Type["permission"]) =>
          check(app, token, owner, { permission, store_id: storeId })
        expect(yield* checkStore(analyst.token, "api_key.manage")).toMatchObject({
          store_id: storeId,
          allowed: false,
          role: "analyst"
        })
        expect((yield* checkStore(analyst.token, "api_key.read")).allowed).toBe(true)
        expect((yield* checkStore(owner.token, "api_key.manage")).allowed).toBe(true)

        // …and the route agrees.
        const create = (token: string) =>
          Effect.flatMap(clientAs(app, token), (api) => api.apiKeys.create({ payload: { store_id: storeId, mode: "test" } }))
        yield* expectFailure(create(analyst.token), "Forbidden")
        yield* create(owner.token)
      }))

    it.effect("answers 404 for a store outside the organization, even one the caller owns elsewhere", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner } = yield* organization(app)
        const other = yield* organization(app)

        for (const store_id of [other.storeId, StoreId.make("str_doesnotexist")]) {
          yield* expectFailure(check(app, owner.token, owner, { permission: "store.read", store_id }), "NotFound", "store_id")
        }

        // A member of two organizations: a store of the second is still not in the first.
        yield* (yield* clientAs(app, other.owner.token)).members.add({
          path: orgPath(other.owner),
          payload: { email: owner.email, role: "admin" }
        })
        yield* expectFailure(
          check(app, owner.token, owner, { permission: "store.read", store_id: other.storeId }),
          "NotFound",
          "store_id"
        )
      }))

    it.effect("rejects an unknown permission with 400 on param permission", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner } = yield* organization(app)
        const path = `/dashboard/orgs/${owner.organizationId}/access/check`
        // Raw: none of these is a permission the request schema admits.
        for (const body of [{ permission: "store.destroy" }, {}, { permission: 7 }]) {
          const response = yield* call(app, "POST", path, { token: owner.token, body })
          expect(response.status).toBe(400)
          expect(response.body.error).toMatchObject({ code: "invalid_request", param: "permission" })
        }
        const unknown = yield* call(app, "POST", path, { token: owner.token, body: { permission: "store.destroy" } })
        expect(unknown.body.error.message).toContain("must be one of the permissions")
      }))
  })
})
