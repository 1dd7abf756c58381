/**
 * API keys over HTTP: create, list, revoke and rotate; that a secret is answered only where it is
 * issued; that revoked and rotated-away keys stop authenticating; roles and tenancy.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

/** Every response body of the suite, to check where secrets appear. */
const responses: Array<string> = []

const call = makeCall(responses)

const owner = (app: TestAppShape) =>
  Effect.promise(async () => {
    const account = await signUp(app)
    const store = await createStore(app, account.token)
    return { ...account, storeId: store.id }
  })

const whoami = (app: TestAppShape, secret: string) => call(app, "GET", "/v1/whoami", { token: secret })

const occurrences = (needle: string) => responses.filter((text) => text.includes(needle)).length

describe("API keys", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("creates test and live keys whose secret is shown once and authenticates for the store", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)

        const test = yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "test", name: "backend" } })
        expect(test.status).toBe(201)
        expect(test.body).toMatchObject({
          object: "api_key",
          mode: "test",
          store_id: storeId,
          name: "backend",
          last_used_at: null,
          revoked_at: null,
          replaced_by: null
        })
        expect(test.body.id).toMatch(/^key_[0-9A-Za-z]{24}$/)
        // 32 random bytes in base62 are 43 characters.
        expect(test.body.secret).toMatch(/^sk_test_[0-9A-Za-z]{43}$/)
        expect(test.body.last4).toBe(test.body.secret.slice(-4))
        expect(new Date(test.body.created_at).toISOString()).toBe(test.body.created_at)
        expect(Object.keys(test.body)).not.toContain("secret_hash")

        // A live key is only a credential: it can be created before the store goes live.
        const live = yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "live" } })
        expect(live.status).toBe(201)
        expect(live.body.secret).toMatch(/^sk_live_[0-9A-Za-z]{43}$/)
        expect(live.body.name).toBeNull()

        const asTest = yield* whoami(app, test.body.secret)
        expect(asTest.status).toBe(200)
        expect(asTest.body).toMatchObject({ object: "principal", type: "api_key", store_id: storeId, livemode: false })
        const asLive = yield* whoami(app, live.body.secret)
        expect(asLive.body).toMatchObject({ type: "api_key", store_id: storeId, livemode: true })

        const listed = yield* call(app, "GET", `/api-keys?store_id=${storeId}`, { token })
        const used = listed.body.data.find((key: any) => key.id === test.body.id)
        expect(used.last_used_at).not.toBeNull()
      }))

    it.effect("lists a store's keys newest first, in pages, never with a secret", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const created: Array<any> = []
        for (const name of ["one", "two", "three"]) {
          created.push((yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "test", name } })).body)
        }

        const all = yield* call(app, "GET", `/api-keys?store_id=${storeId}`, { token })
        expect(all.status).toBe(200)
        expect(all.body).toMatchObject({ object: "list", has_more: false, next_cursor: null })
        expect(all.body.data.map((key: any) => key.id)).toEqual(created.map((key) => key.id).reverse())
        for (const key of all.body.data) {
          expect(key).not.toHaveProperty("secret")
          expect(key.object).toBe("api_key")
        }

        const first = yield* call(app, "GET", `/api-keys?store_id=${storeId}&limit=2`, { token })
        expect(first.body.data.map((key: any) => key.name)).toEqual(["three", "two"])
        expect(first.body.has_more).toBe(true)
        const second = yield* call(app, "GET", `/api-keys?store_id=${storeId}&limit=2&cursor=${first.body.next_cursor}`, { token })
        expect(second.body.data.map((key: any) => key.name)).toEqual(["one"])
        expect(second.body.has_more).toBe(false)

        for (const key of created) expect(occurrences(key.secret)).toBe(1)
      }))

    it.effect("revokes a key idempotently; a revoked key no longer authenticates", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const key = (yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "test" } })).body
        expect((yield* whoami(app, key.secret)).status).toBe(200)

        const revoked = yield* call(app, "POST", `/api-keys/${key.id}/revoke`, { token })
        expect(revoked.status).toBe(201)
        expect(revoked.body).toMatchObject({ id: key.id, object: "api_key", replaced_by: null })
        expect(revoked.body.revoked_at).not.toBeNull()
        expect(revoked.body).not.toHaveProperty("secret")

        const again = yield* call(app, "POST", `/api-keys/${key.id}/revoke`, { token })
        expect(again.status).toBe(201)
        expect(again.body).toEqual(revoked.body)

        const refused = yield* whoami(app, key.secret)
        expect(refused.status).toBe(401)
        expect(refused.body.error.code).toBe("unauthorized")

        const listed = yield* call(app, "GET", `/api-keys?store_id=${storeId}`, { token })
        expect(listed.body.data[0]).toEqual(revoked.body)
      }))

    it.effect("rotates a key: a new key for the same store, mode and name; the old one revoked and replaced", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const old = (yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "live", name: "pos" } })).body

        const rotated = yield* call(app, "POST", `/api-keys/${old.id}/rotate`, { token })
        expect(rotated.status).toBe(201)
        expect(rotated.body).toMatchObject({ object: "api_key", store_id: storeId, mode: "live", name: "pos", revoked_at: null })
        expect(rotated.body.id).not.toBe(old.id)
        expect(rotated.body.secret).toMatch(/^sk_live_/)
        expect(rotated.body.secret).not.toBe(old.secret)
        expect(rotated.body.last4).toBe(rotated.body.secret.slice(-4))

        expect((yield* whoami(app, old.secret)).status).toBe(401)
        const fresh = yield* whoami(app, rotated.body.secret)
        expect(fresh.status).toBe(200)
        expect(fresh.body).toMatchObject({ store_id: storeId, livemode: true })

        const listed = yield* call(app, "GET", `/api-keys?store_id=${storeId}`, { token })
        const oldListed = listed.body.data.find((key: any) => key.id === old.id)
        expect(oldListed.revoked_at).not.toBeNull()
        expect(oldListed.replaced_by).toBe(rotated.body.id)

        const twice = yield* call(app, "POST", `/api-keys/${old.id}/rotate`, { token })
        expect(twice.status).toBe(409)
        expect(twice.body.error.code).toBe("invalid_state")

        expect(occurrences(old.secret)).toBe(1)
        expect(occurrences(rotated.body.secret)).toBe(1)
      }))

    it.effect("lets one of two racing rotations win", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const old = (yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "test" } })).body
        const results = yield* Effect.all(
          [1, 2, 3].map(() => call(app, "POST", `/api-keys/${old.id}/rotate`, { token })),
          { concurrency: "unbounded" }
        )
        expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409])
        const listed = yield* call(app, "GET", `/api-keys?store_id=${storeId}`, { token })
        expect(listed.body.data).toHaveLength(2)
      }))

    it.effect("follows the roles: an analyst may list but not create, revoke or rotate; a developer may", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, organizationId, storeId } = yield* owner(app)
        const key = (yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "test" } })).body
        const analyst = yield* Effect.promise(() => addMember(app, token, organizationId, "analyst"))
        const developer = yield* Effect.promise(() => addMember(app, token, organizationId, "developer"))

        expect((yield* call(app, "GET", `/api-keys?store_id=${storeId}`, { token: analyst.token })).status).toBe(200)
        const refused = yield* call(app, "POST", "/api-keys", { token: analyst.token, body: { store_id: storeId, mode: "test" } })
        expect(refused.status).toBe(403)
        expect(refused.body.error.code).toBe("forbidden")
        expect((yield* call(app, "POST", `/api-keys/${key.id}/revoke`, { token: analyst.token })).status).toBe(403)
        expect((yield* call(app, "POST", `/api-keys/${key.id}/rotate`, { token: analyst.token })).status).toBe(403)

        const made = yield* call(app, "POST", "/api-keys", { token: developer.token, body: { store_id: storeId, mode: "test" } })
        expect(made.status).toBe(201)
      }))

    it.effect("treats another tenant's keys and stores as missing (404)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const victim = yield* owner(app)
        const key = (yield* call(app, "POST", "/api-keys", { token: victim.token, body: { store_id: victim.storeId, mode: "test" } })).body
        const intruder = yield* owner(app)

        for (const action of ["revoke", "rotate"]) {
          const response = yield* call(app, "POST", `/api-keys/${key.id}/${action}`, { token: intruder.token })
          expect(response.status).toBe(404)
          expect(response.body.error.code).toBe("not_found")
          expect(response.body.error.message).not.toContain(victim.storeId)
        }
        expect((yield* call(app, "GET", `/api-keys?store_id=${victim.storeId}`, { token: intruder.token })).status).toBe(404)
        const create = yield* call(app, "POST", "/api-keys", { token: intruder.token, body: { store_id: victim.storeId, mode: "test" } })
        expect(create.status).toBe(404)
        expect((yield* call(app, "POST", "/api-keys/key_doesnotexist/revoke", { token: intruder.token })).status).toBe(404)

        // The victim's key is untouched.
        expect((yield* whoami(app, key.secret)).status).toBe(200)
      }))

    it.effect("manages keys from a user session only: an API key cannot create, list, revoke or rotate keys", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const key = (yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "test" } })).body
        const asKey = { token: key.secret }
        expect((yield* call(app, "POST", "/api-keys", { ...asKey, body: { store_id: storeId, mode: "live" } })).status).toBe(403)
        expect((yield* call(app, "GET", `/api-keys?store_id=${storeId}`, asKey)).status).toBe(403)
        expect((yield* call(app, "POST", `/api-keys/${key.id}/rotate`, asKey)).status).toBe(403)
        expect((yield* call(app, "POST", `/api-keys/${key.id}/revoke`, asKey)).status).toBe(403)
      }))

    it.effect("rejects bad input with 400 and a missing credential with 401", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const cases = [
          { body: { store_id: storeId, mode: "production" }, param: "mode" },
          { body: { mode: "test" }, param: "store_id" },
          { body: { store_id: storeId, mode: "test", name: "" }, param: "name" },
          { body: { store_id: storeId, mode: "test", name: "x".repeat(101) }, param: "name" }
        ]
        for (const { body, param } of cases) {
          const response = yield* call(app, "POST", "/api-keys", { token, body })
          expect(response.status).toBe(400)
          expect(response.body.error).toMatchObject({ code: "invalid_request", param })
        }
        const badMode = yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "prod" } })
        expect(badMode.body.error.message).toBe('mode: must be "test" or "live"')
        const noStore = yield* call(app, "GET", "/api-keys", { token })
        expect(noStore.status).toBe(400)
        expect(noStore.body.error.param).toBe("store_id")
        const badCursor = yield* call(app, "GET", `/api-keys?store_id=${storeId}&cursor=nope`, { token })
        expect(badCursor.status).toBe(400)
        expect(badCursor.body.error.param).toBe("cursor")

        expect((yield* call(app, "POST", "/api-keys", { body: { store_id: storeId, mode: "test" } })).status).toBe(401)
        expect((yield* whoami(app, "sk_test_" + "A".repeat(43))).status).toBe(401)
      }))

    it.effect("documents the routes in the OpenAPI document with their success statuses", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const doc = (yield* call(app, "GET", "/openapi.json")).body
        expect(doc.paths["/api-keys"].post.responses["201"]).toBeDefined()
        expect(doc.paths["/api-keys"].get.responses["200"]).toBeDefined()
        expect(doc.paths["/api-keys/{id}/revoke"].post.responses["201"]).toBeDefined()
        expect(doc.paths["/api-keys/{id}/rotate"].post.responses["201"]).toBeDefined()
        expect(doc.paths["/api-keys/{id}/rotate"].post.responses["409"]).toBeDefined()
      }))
  })
})
