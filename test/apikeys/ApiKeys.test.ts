/**
 * API keys over HTTP: create, list, revoke and rotate; that a secret is answered only where it is
 * issued; that revoked and rotated-away keys stop authenticating; roles and tenancy.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { DEFAULT_LIST_LIMIT, type ListParams } from "../../domain/Lists.ts"
import { ApiKeyId, StoreId } from "../../domain/Ids.ts"
import { addMember, createStore, signUp } from "../support/Accounts.ts"
import { type AnyCallError, expectFailure, makeClientAs, wireJson, wireKeys } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

/** Every response body of the suite, to check where secrets appear. */
const responses: Array<string> = []

const clientAs = makeClientAs(responses)
// Raw calls only for input the typed client would refuse to send (outside the request schemas).
const call = makeCall(responses)

const owner = (app: TestAppShape) =>
  Effect.promise(async () => {
    const account = await signUp(app)
    const store = await createStore(app, account.token)
    return { ...account, storeId: store.id }
  })

const createKey = (app: TestAppShape, token: string, storeId: StoreId, mode: "test" | "live", name?: string) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.apiKeys.create({ payload: name === undefined ? { store_id: storeId, mode } : { store_id: storeId, mode, name } }))

const listKeys = (app: TestAppShape, token: string, storeId: StoreId, urlParams: Partial<ListParams> = {}) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.apiKeys.list({ urlParams: { store_id: storeId, limit: DEFAULT_LIST_LIMIT, ...urlParams } }))

const revoke = (app: TestAppShape, token: string, id: ApiKeyId) =>
  Effect.flatMap(clientAs(app, token), (api) => api.apiKeys.revoke({ path: { id } }))

const rotate = (app: TestAppShape, token: string, id: ApiKeyId) =>
  Effect.flatMap(clientAs(app, token), (api) => api.apiKeys.rotate({ path: { id } }))

const whoami = (app: TestAppShape, secret: string) => Effect.flatMap(clientAs(app, secret), (api) => api.session.whoami())

const occurrences = (needle: string) => responses.filter((text) => text.includes(needle)).length

describe("API keys", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("creates test and live keys whose secret is shown once and authenticates for the store", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const api = yield* clientAs(app, token)

        const [test, testResponse] = yield* api.apiKeys.create({
          payload: { store_id: storeId, mode: "test", name: "backend" },
          withResponse: true
        })
        expect(test).toMatchObject({
          object: "api_key",
          mode: "test",
          store_id: storeId,
          name: "backend",
          last_used_at: null,
          revoked_at: null,
          replaced_by: null
        })
        expect(test.id).toMatch(/^key_[0-9A-Za-z]{24}$/)
        // 32 random bytes in base62 are 43 characters.
        expect(test.secret).toMatch(/^sk_test_[0-9A-Za-z]{43}$/)
        expect(test.last4).toBe(test.secret.slice(-4))
        expect(new Date(test.created_at).toISOString()).toBe(test.created_at)
        // On the wire, not in the decoded class.
        expect(yield* wireKeys(testResponse)).not.toContain("secret_hash")

        // A live key is only a credential: it can be created before the store goes live.
        const live = yield* createKey(app, token, storeId, "live")
        expect(live.secret).toMatch(/^sk_live_[0-9A-Za-z]{43}$/)
        expect(live.name).toBeNull()

        const asTest = yield* whoami(app, test.secret)
        expect(asTest).toMatchObject({ object: "principal", type: "api_key", store_id: storeId, livemode: false })
        const asLive = yield* whoami(app, live.secret)
        expect(asLive).toMatchObject({ type: "api_key", store_id: storeId, livemode: true })

        const listed = yield* listKeys(app, token, storeId)
        const used = listed.data.find((key) => key.id === test.id)
        expect(used?.last_used_at ?? null).not.toBeNull()
      }))

    it.effect("lists a store's keys newest first, in pages, never with a secret", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const created: Array<{ readonly id: string; readonly secret: string }> = []
        for (const name of ["one", "two", "three"]) created.push(yield* createKey(app, token, storeId, "test", name))

        const api = yield* clientAs(app, token)
        const [all, allResponse] = yield* api.apiKeys.list({
          urlParams: { store_id: storeId, limit: DEFAULT_LIST_LIMIT },
          withResponse: true
        })
        expect(all).toMatchObject({ object: "list", has_more: false, next_cursor: null })
        expect(all.data.map((key) => key.id)).toEqual(created.map((key) => key.id).reverse())
        for (const key of all.data) expect(key.object).toBe("api_key")
        // On the wire, not in the decoded list (whose class has no secret whatever was sent).
        const wire = (yield* wireJson(allResponse)) as { readonly data: ReadonlyArray<object> }
        expect(wire.data).toHaveLength(3)
        for (const key of wire.data) expect(key).not.toHaveProperty("secret")

        const first = yield* listKeys(app, token, storeId, { limit: 2 })
        expect(first.data.map((key) => key.name)).toEqual(["three", "two"])
        expect(first.has_more).toBe(true)
        expect(first.next_cursor).not.toBeNull()
        const second = yield* listKeys(app, token, storeId, { limit: 2, cursor: first.next_cursor ?? "" })
        expect(second.data.map((key) => key.name)).toEqual(["one"])
        expect(second.has_more).toBe(false)

        for (const key of created) expect(occurrences(key.secret)).toBe(1)
      }))

    it.effect("revokes a key idempotently; a revoked key no longer authenticates", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const key = yield* createKey(app, token, storeId, "test")
        yield* whoami(app, key.secret)

        const [revoked, revokedResponse] = yield* (yield* clientAs(app, token)).apiKeys.revoke({
          path: { id: key.id },
          withResponse: true
        })
        expect(revoked).toMatchObject({ id: key.id, object: "api_key", replaced_by: null })
        expect(revoked.revoked_at).not.toBeNull()
        expect(yield* wireKeys(revokedResponse)).not.toContain("secret")

        const again = yield* revoke(app, token, key.id)
        expect(again).toEqual(revoked)

        yield* expectFailure(whoami(app, key.secret), "Unauthorized")

        const listed = yield* listKeys(app, token, storeId)
        expect(listed.data[0]).toEqual(revoked)
      }))

    it.effect("rotates a key: a new key for the same store, mode and name; the old one revoked and replaced", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const old = yield* createKey(app, token, storeId, "live", "pos")

        const rotated = yield* rotate(app, token, old.id)
        expect(rotated).toMatchObject({ object: "api_key", store_id: storeId, mode: "live", name: "pos", revoked_at: null })
        expect(rotated.id).not.toBe(old.id)
        expect(rotated.secret).toMatch(/^sk_live_/)
        expect(rotated.secret).not.toBe(old.secret)
        expect(rotated.last4).toBe(rotated.secret.slice(-4))

        yield* expectFailure(whoami(app, old.secret), "Unauthorized")
        const fresh = yield* whoami(app, rotated.secret)
        expect(fresh).toMatchObject({ store_id: storeId, livemode: true })

        const listed = yield* listKeys(app, token, storeId)
        const oldListed = listed.data.find((key) => key.id === old.id)
        expect(oldListed?.revoked_at ?? null).not.toBeNull()
        expect(oldListed?.replaced_by).toBe(rotated.id)

        yield* expectFailure(rotate(app, token, old.id), "InvalidState")

        expect(occurrences(old.secret)).toBe(1)
        expect(occurrences(rotated.secret)).toBe(1)
      }))

    it.effect("lets one of two racing rotations win", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const old = yield* createKey(app, token, storeId, "test")
        const results = yield* Effect.all(
          [1, 2, 3].map(() => Effect.either(rotate(app, token, old.id))),
          { concurrency: "unbounded" }
        )
        // One 201; the others 409 invalid_state.
        expect(results.filter(Either.isRight)).toHaveLength(1)
        expect(results.filter(Either.isLeft).map((result) => result.left._tag)).toEqual(["InvalidState", "InvalidState"])
        const listed = yield* listKeys(app, token, storeId)
        expect(listed.data).toHaveLength(2)
      }))

    it.effect("follows the roles: an analyst may list but not create, revoke or rotate; a developer may", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, organizationId, storeId } = yield* owner(app)
        const key = yield* createKey(app, token, storeId, "test")
        const analyst = yield* Effect.promise(() => addMember(app, token, organizationId, "analyst"))
        const developer = yield* Effect.promise(() => addMember(app, token, organizationId, "developer"))

        yield* listKeys(app, analyst.token, storeId)
        yield* expectFailure(createKey(app, analyst.token, storeId, "test"), "Forbidden")
        yield* expectFailure(revoke(app, analyst.token, key.id), "Forbidden")
        yield* expectFailure(rotate(app, analyst.token, key.id), "Forbidden")

        yield* createKey(app, developer.token, storeId, "test")
      }))

    it.effect("treats another tenant's keys and stores as missing (404)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const victim = yield* owner(app)
        const key = yield* createKey(app, victim.token, victim.storeId, "test")
        const intruder = yield* owner(app)

        const actions: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
          ["revoke", revoke(app, intruder.token, key.id)],
          ["rotate", rotate(app, intruder.token, key.id)]
        ]
        for (const [action, request] of actions) {
          const error = yield* expectFailure(request, "NotFound", undefined, action)
          expect(error.message).not.toContain(victim.storeId)
        }
        yield* expectFailure(listKeys(app, intruder.token, victim.storeId), "NotFound")
        yield* expectFailure(createKey(app, intruder.token, victim.storeId, "test"), "NotFound")
        yield* expectFailure(revoke(app, intruder.token, ApiKeyId.make("key_doesnotexist")), "NotFound")

        // The victim's key is untouched.
        yield* whoami(app, key.secret)
      }))

    it.effect("manages keys from a user session only: an API key cannot create, list, revoke or rotate keys", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        const key = yield* createKey(app, token, storeId, "test")
        yield* expectFailure(createKey(app, key.secret, storeId, "live"), "Forbidden")
        yield* expectFailure(listKeys(app, key.secret, storeId), "Forbidden")
        yield* expectFailure(rotate(app, key.secret, key.id), "Forbidden")
        yield* expectFailure(revoke(app, key.secret, key.id), "Forbidden")
      }))

    it.effect("rejects bad input with 400 and a missing credential with 401", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { token, storeId } = yield* owner(app)
        // Raw: every one of these is outside the request schema, which the typed client would not send.
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
        yield* expectFailure(listKeys(app, token, storeId, { cursor: "nope" }), "InvalidRequest", "cursor")

        yield* expectFailure(createKey(app, "", storeId, "test"), "Unauthorized")
        yield* expectFailure(whoami(app, "sk_test_" + "A".repeat(43)), "Unauthorized")
      }))

    it.effect("documents the routes in the OpenAPI document with their success statuses", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        // The OpenAPI document is not an operation of the API: read raw.
        const doc = (yield* call(app, "GET", "/openapi.json")).body
        expect(doc.paths["/api-keys"].post.responses["201"]).toBeDefined()
        expect(doc.paths["/api-keys"].get.responses["200"]).toBeDefined()
        expect(doc.paths["/api-keys/{id}/revoke"].post.responses["201"]).toBeDefined()
        expect(doc.paths["/api-keys/{id}/rotate"].post.responses["201"]).toBeDefined()
        expect(doc.paths["/api-keys/{id}/rotate"].post.responses["409"]).toBeDefined()
      }))
  })
})
