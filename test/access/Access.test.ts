/**
 * The access console over HTTP: the matrix and the simulated check agree with the policy module and
 * with what the routes actually enforce.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Permissions, Roles } from "../../domain/Access.ts"
import { accessMatrix, AttributePolicies, decide } from "../../src/access/Policy.ts"
import { addMember, createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

const organization = (app: TestAppShape) =>
  Effect.promise(async () => {
    const owner = await signUp(app)
    const store = await createStore(app, owner.token)
    const analyst = await addMember(app, owner.token, owner.organizationId, "analyst")
    return { owner, analyst, storeId: store.id }
  })

describe("access console", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("shows every member the policy's matrix and attribute policies, with their role", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, analyst } = yield* organization(app)
        const path = `/dashboard/orgs/${owner.organizationId}/access/matrix`

        const asOwner = yield* call(app, "GET", path, { token: owner.token })
        expect(asOwner.status).toBe(200)
        expect(asOwner.body).toEqual({
          object: "access_matrix",
          organization_id: owner.organizationId,
          roles: [...Roles],
          permissions: JSON.parse(JSON.stringify(accessMatrix())),
          attribute_policies: JSON.parse(JSON.stringify(AttributePolicies)),
          your_role: "owner"
        })
        const storeUpdate = asOwner.body.permissions.find((row: any) => row.permission === "store.update")
        expect(storeUpdate.roles).toMatchObject({ owner: true, analyst: false })

        const asAnalyst = yield* call(app, "GET", path, { token: analyst.token })
        expect(asAnalyst.status).toBe(200)
        expect(asAnalyst.body.your_role).toBe("analyst")
        expect(asAnalyst.body.permissions).toEqual(asOwner.body.permissions)
      }))

    it.effect("answers 404 to non-members and 401 without a credential", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner } = yield* organization(app)
        const stranger = yield* Effect.promise(() => signUp(app))
        const matrix = yield* call(app, "GET", `/dashboard/orgs/${owner.organizationId}/access/matrix`, { token: stranger.token })
        expect(matrix.status).toBe(404)
        expect(matrix.body.error.code).toBe("not_found")
        const check = yield* call(app, "POST", `/dashboard/orgs/${owner.organizationId}/access/check`, {
          token: stranger.token,
          body: { permission: "store.read" }
        })
        expect(check.status).toBe(404)
        expect((yield* call(app, "GET", `/dashboard/orgs/${owner.organizationId}/access/matrix`)).status).toBe(401)
      }))

    it.effect("decides as the policy does: an analyst is denied store.update, the owner allowed", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, analyst } = yield* organization(app)
        const path = `/dashboard/orgs/${owner.organizationId}/access/check`

        const denied = yield* call(app, "POST", path, { token: analyst.token, body: { permission: "store.update" } })
        expect(denied.status).toBe(201)
        expect(denied.body).toEqual({
          object: "access_decision",
          permission: "store.update",
          store_id: null,
          allowed: false,
          role: "analyst",
          reason: decide("analyst", "store.update").reason
        })
        const allowed = yield* call(app, "POST", path, { token: owner.token, body: { permission: "store.update" } })
        expect(allowed.body).toMatchObject({ allowed: true, role: "owner", reason: decide("owner", "store.update").reason })

        // Every permission, for both roles, is what the policy module says.
        for (const permission of Permissions) {
          for (const [member, role] of [[owner, "owner"], [analyst, "analyst"]] as const) {
            const response = yield* call(app, "POST", path, { token: member.token, body: { permission } })
            expect(response.body.allowed).toBe(decide(role, permission).allowed)
          }
        }
      }))

    it.effect("checks a store of the organization the same way the store routes enforce it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, analyst, storeId } = yield* organization(app)
        const path = `/dashboard/orgs/${owner.organizationId}/access/check`

        const check = (token: string, permission: string) =>
          call(app, "POST", path, { token, body: { permission, store_id: storeId } })
        expect((yield* check(analyst.token, "api_key.manage")).body).toMatchObject({
          store_id: storeId,
          allowed: false,
          role: "analyst"
        })
        expect((yield* check(analyst.token, "api_key.read")).body.allowed).toBe(true)
        expect((yield* check(owner.token, "api_key.manage")).body.allowed).toBe(true)

        // …and the route agrees.
        const create = (token: string) => call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "test" } })
        expect((yield* create(analyst.token)).status).toBe(403)
        expect((yield* create(owner.token)).status).toBe(201)
      }))

    it.effect("answers 404 for a store outside the organization, even one the caller owns elsewhere", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner } = yield* organization(app)
        const other = yield* organization(app)
        const path = `/dashboard/orgs/${owner.organizationId}/access/check`

        for (const store_id of [other.storeId, "str_doesnotexist"]) {
          const response = yield* call(app, "POST", path, { token: owner.token, body: { permission: "store.read", store_id } })
          expect(response.status).toBe(404)
          expect(response.body.error).toMatchObject({ code: "not_found", param: "store_id" })
        }

        // A member of two organizations: a store of the second is still not in the first.
        yield* call(app, "POST", `/dashboard/orgs/${other.owner.organizationId}/members`, {
          token: other.owner.token,
          body: { email: owner.email, role: "admin" }
        })
        const elsewhere = yield* call(app, "POST", path, {
          token: owner.token,
          body: { permission: "store.read", store_id: other.storeId }
        })
        expect(elsewhere.status).toBe(404)
      }))

    it.effect("rejects an unknown permission with 400 on param permission", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner } = yield* organization(app)
        const path = `/dashboard/orgs/${owner.organizationId}/access/check`
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
