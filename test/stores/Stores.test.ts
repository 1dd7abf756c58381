/**
 * Stores and branches over HTTP: creation and listing across organizations, branding, provider
 * credentials (sealed at rest, only ever shown masked), live mode and its conditions, branches and
 * their delete-or-deactivate rule, and tenant isolation and roles on every route.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Schedule, Scope } from "effect"
import { BranchId, OrganizationId, StoreId } from "../../domain/Ids.ts"
import { DEFAULT_LIST_LIMIT, type ListParams } from "../../domain/Lists.ts"
import { AccessService } from "../../src/access/Service.ts"
import { StoresService } from "../../src/stores/Service.ts"
import { addMember, signUp } from "../support/Accounts.ts"
import { type AnyCallError, expectFailure, makeClientAs, wireKeys } from "../support/Client.ts"
import { type CallResult, makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

/** Every response body of the suite, to check that the full credentials never appear in one. */
const responses: Array<string> = []

const clientAs = makeClientAs(responses)
// Raw calls only for input the typed client would refuse to send (outside the request schemas).
const call = makeCall(responses)

const signUpOwner = (app: TestAppShape, organization_name = "Dara Coffee") =>
  Effect.promise(() => signUp(app, { organization_name }))

const member = (app: TestAppShape, owner: { token: string; organizationId: OrganizationId }, role: "admin" | "developer" | "analyst") =>
  Effect.promise(() => addMember(app, owner.token, owner.organizationId, role))

const createStore = (app: TestAppShape, token: string, name = "Riverside", organization_id?: OrganizationId) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.stores.create({ payload: organization_id === undefined ? { name } : { name, organization_id } }))

/** A list's first page; the typed client always sends `limit`. */
const page = (urlParams: Partial<ListParams> = {}): ListParams => ({ limit: DEFAULT_LIST_LIMIT, ...urlParams })

const expectRawError = (response: CallResult, status: number, code: string, param?: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status)
  expect(response.body.error.code).toBe(code)
  expect(typeof response.body.error.message).toBe("string")
  if (param !== undefined) expect(response.body.error.param).toBe(param)
}

const ADMIN_EMAIL = "admin@example.test"
// Distinctive values, so that a leak into any response body is found by a plain substring search.
const BAKONG_ACCOUNT_ID = "riverside_cafe_7q4z@aclb"
const CREDENTIALS = {
  bakong_account_id: BAKONG_ACCOUNT_ID,
  merchant_name: "Riverside Cafe",
  merchant_city: "Phnom Penh",
  acquiring_bank: "ACLEDA Bank"
}

const submitVerification = (app: TestAppShape, token: string, organizationId: OrganizationId) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.verification.submit({
      payload: {
        organization_id: organizationId,
        business_name: "Riverside Cafe Co., Ltd.",
        registration_number: "KH-00012345",
        contact: { name: "Sok Dara", email: "dara@example.test" },
        documents: [{ type: "business_registration", url: "https://files.example.test/reg.pdf" }]
      }
    }))

describe("stores", () => {
  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), { timeout: 120_000, excludeTestServices: true })(
    "over HTTP",
    (it) => {
      it.effect("creates a store in the user's first organization, or in the one named", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token, "Riverside")
          expect(store.id).toMatch(/^str_[0-9A-Za-z]{24}$/)
          expect(store).toMatchObject({
            object: "store",
            organization_id: owner.organizationId,
            name: "Riverside",
            branding: { display_name: null, primary_color: null, accent_color: null, logo_url: null },
            credentials: null,
            live_mode: false
          })
          expect(new Date(store.created_at).toISOString()).toBe(store.created_at)
          expect(store.updated_at).toBe(store.created_at)

          const named = yield* createStore(app, owner.token, "Airport", owner.organizationId)
          expect(named.organization_id).toBe(owner.organizationId)

          // An Admin of a second organization creates there when they say so, in their own otherwise.
          const other = yield* signUpOwner(app, "Other Org")
          const admin = yield* member(app, other, "admin")
          const inOther = yield* createStore(app, admin.token, "Branch of other", other.organizationId)
          expect(inOther.organization_id).toBe(other.organizationId)

          const retrieved = yield* (yield* clientAs(app, owner.token)).stores.retrieve({ path: { id: store.id } })
          expect(retrieved).toEqual(store)
        }))

      it.effect("refuses bad store input, other tenants' organizations, analysts and missing credentials", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const stranger = yield* signUpOwner(app, "Stranger Org")

          // Raw: names outside the request schema.
          expectRawError(yield* call(app, "POST", "/stores", { token: owner.token, body: { name: "" } }), 400, "invalid_request", "name")
          expectRawError(yield* call(app, "POST", "/stores", { token: owner.token, body: {} }), 400, "invalid_request", "name")
          expectRawError(yield* call(app, "POST", "/stores", { token: owner.token, body: { name: 42 } }), 400, "invalid_request", "name")
          yield* expectFailure(createStore(app, owner.token, "Mine now", stranger.organizationId), "NotFound", "organization_id")
          const analyst = yield* member(app, owner, "analyst")
          yield* expectFailure(createStore(app, analyst.token, "Analyst store", owner.organizationId), "Forbidden")
          yield* expectFailure(createStore(app, "", "Anonymous"), "Unauthorized")
          yield* expectFailure(Effect.flatMap(clientAs(app), (api) => api.stores.list({ urlParams: page() })), "Unauthorized")
          yield* expectFailure(
            Effect.flatMap(clientAs(app, "mst_not-a-real-session-token"), (api) => api.stores.list({ urlParams: page() })),
            "Unauthorized"
          )
        }))

      it.effect("lists the stores of every organization of the user, newest first, page by page", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const other = yield* signUpOwner(app, "Partner Org")
          const stranger = yield* signUpOwner(app, "Stranger Org")
          const first = yield* createStore(app, owner.token, "First")
          const second = yield* createStore(app, owner.token, "Second")
          const partners = yield* createStore(app, other.token, "Partner's")
          const strangers = yield* createStore(app, stranger.token, "Stranger's")
          // The owner becomes an Analyst of the partner organization: its stores are listed too.
          yield* (yield* clientAs(app, other.token)).members.add({
            path: { orgId: other.organizationId },
            payload: { email: owner.email, role: "analyst" }
          })

          const api = yield* clientAs(app, owner.token)
          const all = yield* api.stores.list({ urlParams: page() })
          expect(all).toMatchObject({ object: "list", has_more: false, next_cursor: null })
          expect(all.data.map((store) => store.id)).toEqual([partners.id, second.id, first.id])
          expect(all.data.map((store) => store.id)).not.toContain(strangers.id)

          const seen: Array<string> = []
          let cursor: string | null = null
          do {
            const current: typeof all = yield* api.stores.list({ urlParams: page({ limit: 1, ...(cursor === null ? {} : { cursor }) }) })
            expect(current.data).toHaveLength(1)
            seen.push(current.data[0]!.id)
            cursor = current.next_cursor
            expect(current.has_more).toBe(cursor !== null)
          } while (cursor !== null)
          expect(seen).toEqual([partners.id, second.id, first.id])

          // Raw: a limit outside the schema.
          expectRawError(yield* call(app, "GET", "/stores?limit=0", { token: owner.token }), 400, "invalid_request", "limit")
          yield* expectFailure(api.stores.list({ urlParams: page({ cursor: "garbage!" }) }), "InvalidRequest", "cursor")
        }))

      it.effect("answers 404 for another tenant's store on every store route", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const stranger = yield* signUpOwner(app, "Stranger Org")
          const store = yield* createStore(app, owner.token)
          const api = yield* clientAs(app, stranger.token)
          const path = { id: store.id }
          const routes: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
            ["GET /stores/:id", api.stores.retrieve({ path })],
            ["PUT /stores/:id/branding", api.stores.updateBranding({ path, payload: { display_name: "Mine" } })],
            ["PUT /stores/:id/credentials", api.stores.setCredentials({ path, payload: CREDENTIALS })],
            ["PUT /stores/:id/live-mode", api.stores.setLiveMode({ path, payload: { live_mode: false } })],
            ["POST /stores/:storeId/branches", api.branches.create({ path: { storeId: store.id }, payload: { name: "Mine" } })],
            ["GET /stores/:storeId/branches", api.branches.list({ path: { storeId: store.id }, urlParams: page() })]
          ]
          for (const [route, request] of routes) {
            const error = yield* expectFailure(request, "NotFound", undefined, route)
            expect(error.message).not.toContain(owner.organizationId)
          }
          const ownerApi = yield* clientAs(app, owner.token)
          yield* expectFailure(ownerApi.stores.retrieve({ path: { id: StoreId.make("str_doesnotexist") } }), "NotFound")
          // Nothing changed behind the 404s.
          expect(yield* ownerApi.stores.retrieve({ path })).toEqual(store)
        }))

      it.effect("replaces the branding, validating colours and the logo URL", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          const path = { id: store.id }
          const api = yield* clientAs(app, owner.token)
          const branding = {
            display_name: "Riverside Café",
            primary_color: "#1A73E8",
            accent_color: "#ff9900",
            logo_url: "https://cdn.example.test/logo.png"
          }
          const updated = yield* api.stores.updateBranding({ path, payload: branding })
          expect(updated.branding).toEqual({ ...branding, primary_color: "#1a73e8" })
          expect(new Date(updated.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(store.updated_at).getTime())

          // PUT replaces: what is not sent is cleared.
          const replaced = yield* api.stores.updateBranding({ path, payload: { display_name: "Riverside" } })
          expect(replaced.branding).toEqual({
            display_name: "Riverside",
            primary_color: null,
            accent_color: null,
            logo_url: null
          })

          // Raw: every one of these is outside the request schema.
          const bad: Array<[Record<string, unknown>, string]> = [
            [{ primary_color: "blue" }, "primary_color"],
            [{ primary_color: "#12345" }, "primary_color"],
            [{ accent_color: "#gggggg" }, "accent_color"],
            [{ accent_color: "1a73e8" }, "accent_color"],
            [{ logo_url: "http://cdn.example.test/logo.png" }, "logo_url"],
            [{ logo_url: "not a url" }, "logo_url"],
            [{ logo_url: "javascript:alert(1)" }, "logo_url"],
            [{ logo_url: "https://user:pass@cdn.example.test/logo.png" }, "logo_url"],
            [{ logo_url: `https://cdn.example.test/${"a".repeat(2100)}` }, "logo_url"],
            [{ display_name: "" }, "display_name"],
            [{ display_name: "x".repeat(101) }, "display_name"]
          ]
          for (const [body, param] of bad) {
            const response = yield* call(app, "PUT", `/stores/${store.id}/branding`, { token: owner.token, body })
            expectRawError(response, 400, "invalid_request", param)
          }

          const analyst = yield* member(app, owner, "analyst")
          const analystApi = yield* clientAs(app, analyst.token)
          yield* expectFailure(analystApi.stores.updateBranding({ path, payload: branding }), "Forbidden")
          const developer = yield* member(app, owner, "developer")
          yield* expectFailure(
            Effect.flatMap(clientAs(app, developer.token), (api) => api.stores.updateBranding({ path, payload: branding })),
            "Forbidden"
          )
          const admin = yield* member(app, owner, "admin")
          yield* (yield* clientAs(app, admin.token)).stores.updateBranding({ path, payload: branding })
          // An Analyst still reads the store.
          const read = yield* analystApi.stores.retrieve({ path })
          expect(read.branding.display_name).toBe("Riverside Café")
        }))

      it.effect("seals the provider credentials and shows them only masked", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const sql = yield* SqlClient.SqlClient
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          const api = yield* clientAs(app, owner.token)

          const updated = yield* api.stores.setCredentials({ path: { id: store.id }, payload: CREDENTIALS })
          expect(updated.credentials).toEqual({
            configured: true,
            bakong_account_id: "*****************4z@aclb",
            merchant_name: "Riverside Cafe",
            merchant_city: "Phnom Penh",
            acquiring_bank: "ACLEDA Bank"
          })
          expect(updated.live_mode).toBe(false)
          const listed = yield* api.stores.list({ urlParams: page() })
          expect(listed.data[0]!.credentials).toEqual(updated.credentials)

          // At rest: sealed, not readable.
          const [row] = yield* sql<{ credentials: string }>`SELECT credentials FROM stores WHERE id = ${store.id}`
          expect(row!.credentials.startsWith("v1.")).toBe(true)
          expect(row!.credentials).not.toContain("riverside_cafe")

          // The payments engine gets them back in full.
          // Built in a scope of its own that lasts the test: its cache listens for changes while it is used.
          const serviceScope = yield* Scope.make()
          const stores = yield* Effect.map(Layer.buildWithScope(StoresService.Default, serviceScope), Context.get(StoresService))
          const opened = yield* stores.providerCredentials(store.id)
          expect(Option.getOrThrow(opened)).toMatchObject(CREDENTIALS)
          const unconfigured = yield* createStore(app, owner.token, "No credentials")
          expect(Option.isNone(yield* stores.providerCredentials(unconfigured.id))).toBe(true)
          expect((yield* stores.getById(store.id).pipe(AccessService.asSystem("the payments engine"))).credentials?.configured).toBe(true)

          // Setting them again replaces them.
          const replaced = yield* api.stores.setCredentials({
            path: { id: store.id },
            payload: { ...CREDENTIALS, bakong_account_id: "shop@wing", merchant_city: "Siem Reap" }
          })
          expect(replaced.credentials).toMatchObject({ bakong_account_id: "****@wing", merchant_city: "Siem Reap" })
          // This service instance is another process's in effect: it learns of the change from the database's
          // notice, within moments, well inside its cache's 10 s.
          const reopened = yield* stores.providerCredentials(store.id).pipe(
            Effect.map(Option.map((credentials) => credentials.bakong_account_id)),
            Effect.filterOrFail((account) => Option.contains(account, "shop@wing")),
            Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("2 seconds")))
          )
          expect(Option.getOrThrow(reopened)).toBe("shop@wing")
          yield* Scope.close(serviceScope, Exit.void)
        }))

      it.effect("refuses malformed credentials with the offending field, and members without the permission", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          // Raw: every one of these is outside the request schema.
          const bad: Array<[Record<string, unknown>, string]> = [
            [{ ...CREDENTIALS, bakong_account_id: "no-at-sign" }, "bakong_account_id"],
            [{ ...CREDENTIALS, bakong_account_id: "two@@signs" }, "bakong_account_id"],
            [{ ...CREDENTIALS, bakong_account_id: "has space@aclb" }, "bakong_account_id"],
            [{ ...CREDENTIALS, bakong_account_id: `${"a".repeat(30)}@aclb` }, "bakong_account_id"],
            [{ ...CREDENTIALS, merchant_name: "x".repeat(26) }, "merchant_name"],
            [{ ...CREDENTIALS, merchant_name: "" }, "merchant_name"],
            [{ ...CREDENTIALS, merchant_city: "Phnom Penh Capital City" }, "merchant_city"],
            [{ ...CREDENTIALS, merchant_city: "ភ្នំពេញ" }, "merchant_city"],
            [{ ...CREDENTIALS, acquiring_bank: 7 }, "acquiring_bank"],
            [{ merchant_name: "A", merchant_city: "B", acquiring_bank: "C" }, "bakong_account_id"]
          ]
          for (const [body, param] of bad) {
            expectRawError(
              yield* call(app, "PUT", `/stores/${store.id}/credentials`, { token: owner.token, body }),
              400,
              "invalid_request",
              param
            )
          }
          for (const role of ["analyst", "developer"] as const) {
            const someone = yield* member(app, owner, role)
            yield* expectFailure(
              Effect.flatMap(clientAs(app, someone.token), (api) =>
                api.stores.setCredentials({ path: { id: store.id }, payload: CREDENTIALS })),
              "Forbidden",
              undefined,
              role
            )
          }
          const unchanged = yield* (yield* clientAs(app, owner.token)).stores.retrieve({ path: { id: store.id } })
          expect(unchanged.credentials).toBeNull()
        }))

      it.effect("switches live mode on only with credentials and an approved verification", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const platformAdmin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL }))
          const store = yield* createStore(app, owner.token)
          const api = yield* clientAs(app, owner.token)
          const liveMode = (live_mode: boolean, token = owner.token) =>
            Effect.flatMap(clientAs(app, token), (api) => api.stores.setLiveMode({ path: { id: store.id }, payload: { live_mode } }))

          const bare = yield* expectFailure(liveMode(true), "InvalidState")
          expect(bare.message).toContain("credentials")
          expect(bare.message).toContain("verification")
          expect(bare.message).toContain("not submitted")

          yield* api.stores.setCredentials({ path: { id: store.id }, payload: CREDENTIALS })
          const unverified = yield* expectFailure(liveMode(true), "InvalidState")
          expect(unverified.message).not.toContain("credentials")
          expect(unverified.message).toContain("verification")

          const submitted = yield* submitVerification(app, owner.token, owner.organizationId)
          const pending = yield* expectFailure(liveMode(true), "InvalidState")
          expect(pending.message).toContain("pending")

          // Verified, but a second store without credentials still cannot go live.
          yield* (yield* clientAs(app, platformAdmin.token)).verification.approve({ path: { id: submitted.id } })
          const other = yield* createStore(app, owner.token, "No credentials yet")
          const noCredentials = yield* expectFailure(
            api.stores.setLiveMode({ path: { id: other.id }, payload: { live_mode: true } }),
            "InvalidState"
          )
          expect(noCredentials.message).toContain("credentials")
          expect(noCredentials.message).not.toContain("verification")

          const analyst = yield* member(app, owner, "analyst")
          yield* expectFailure(liveMode(true, analyst.token), "Forbidden")

          expect((yield* liveMode(true)).live_mode).toBe(true)
          expect((yield* liveMode(true)).live_mode).toBe(true)

          expect((yield* liveMode(false)).live_mode).toBe(false)
          // Switching off needs nothing, not even credentials.
          expect((yield* api.stores.setLiveMode({ path: { id: other.id }, payload: { live_mode: false } })).live_mode).toBe(false)
          // Raw: not a boolean.
          expectRawError(
            yield* call(app, "PUT", `/stores/${store.id}/live-mode`, { token: owner.token, body: { live_mode: "yes" } }),
            400,
            "invalid_request",
            "live_mode"
          )
        }))

      it.effect("documents what live mode requires in the OpenAPI document", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          // Raw: the OpenAPI document is not an operation of the API.
          const doc = yield* Effect.promise(() => app.fetch("/openapi.json").then((r) => r.json() as Promise<any>))
          const operation = doc.paths["/stores/{id}/live-mode"].put
          expect(operation.description).toContain("credentials")
          expect(operation.description).toContain("approved")
          expect(operation.responses["409"]).toBeDefined()
          expect(doc.paths["/stores"].post.responses["201"]).toBeDefined()
          expect(doc.paths["/stores/{storeId}/branches"].post.responses["201"]).toBeDefined()
          expect(doc.paths["/branches/{id}"].delete.responses["200"]).toBeDefined()
        }))

      it.effect("creates, lists, updates and deletes branches", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          const api = yield* clientAs(app, owner.token)
          const storePath = { storeId: store.id }
          const created = yield* api.branches.create({
            path: storePath,
            payload: { name: "Riverside", address: "12 Sisowath Quay, Phnom Penh", phone: "+855 12 345 678" }
          })
          expect(created.id).toMatch(/^br_[0-9A-Za-z]{24}$/)
          expect(created).toMatchObject({
            object: "branch",
            store_id: store.id,
            name: "Riverside",
            address: "12 Sisowath Quay, Phnom Penh",
            phone: "+855 12 345 678",
            active: true
          })
          const plain = yield* api.branches.create({ path: storePath, payload: { name: "Kiosk" } })
          expect(plain).toMatchObject({ address: null, phone: null, active: true })

          const listed = yield* api.branches.list({ path: storePath, urlParams: page() })
          expect(listed).toMatchObject({ object: "list", has_more: false, next_cursor: null })
          expect(listed.data.map((branch) => branch.id)).toEqual([plain.id, created.id])
          const firstPage = yield* api.branches.list({ path: storePath, urlParams: page({ limit: 1 }) })
          expect(firstPage.has_more).toBe(true)
          expect(firstPage.next_cursor).not.toBeNull()
          const secondPage = yield* api.branches.list({
            path: storePath,
            urlParams: page({ limit: 1, cursor: firstPage.next_cursor ?? "" })
          })
          expect(secondPage.data.map((branch) => branch.id)).toEqual([created.id])

          const patched = yield* api.branches.update({ path: { id: created.id }, payload: { name: "Riverside Quay", phone: null } })
          expect(patched).toMatchObject({
            name: "Riverside Quay",
            address: "12 Sisowath Quay, Phnom Penh",
            phone: null,
            active: true
          })
          const deactivated = yield* api.branches.update({ path: { id: created.id }, payload: { active: false } })
          expect(deactivated.active).toBe(false)
          const nothing = yield* api.branches.update({ path: { id: created.id }, payload: {} })
          expect(nothing).toEqual(deactivated)

          // Without history the branch is gone for good.
          const [deleted, deletedResponse] = yield* api.branches.delete({ path: { id: plain.id }, withResponse: true })
          expect(deleted).toEqual({ id: plain.id, object: "branch", deleted: true })
          expect(yield* wireKeys(deletedResponse)).toEqual(["deleted", "id", "object"])
          yield* expectFailure(api.branches.delete({ path: { id: plain.id } }), "NotFound")
          yield* expectFailure(api.branches.update({ path: { id: plain.id }, payload: { name: "Back" } }), "NotFound")
          const remaining = yield* api.branches.list({ path: storePath, urlParams: page() })
          expect(remaining.data.map((branch) => branch.id)).toEqual([created.id])
        }))

      it.effect("deactivates rather than deletes a branch with history", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          const api = yield* clientAs(app, owner.token)
          const branch = yield* api.branches.create({ path: { storeId: store.id }, payload: { name: "Old Market" } })
          // What a payment at the branch will do.
          const stores = yield* Effect.provide(StoresService, StoresService.Default)
          yield* stores.markBranchHasHistory(branch.id).pipe(AccessService.asSystem("a payment at the branch"))

          const [deleted, deletedResponse] = yield* api.branches.delete({ path: { id: branch.id }, withResponse: true })
          expect(deleted).toMatchObject({ id: branch.id, object: "branch", name: "Old Market", active: false })
          // On the wire, not only in the decoded union: the kept branch says nothing of a deletion.
          expect(yield* wireKeys(deletedResponse)).not.toContain("deleted")
          const listed = yield* api.branches.list({ path: { storeId: store.id }, urlParams: page() })
          expect(listed.data).toEqual([deleted])
          // Deleting it again changes nothing; it can be reactivated.
          expect(yield* api.branches.delete({ path: { id: branch.id } })).toEqual(deleted)
          const reactivated = yield* api.branches.update({ path: { id: branch.id }, payload: { active: true } })
          expect(reactivated.active).toBe(true)
        }))

      it.effect("refuses bad branch input, other tenants and analysts", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const stranger = yield* signUpOwner(app, "Stranger Org")
          const store = yield* createStore(app, owner.token)
          const api = yield* clientAs(app, owner.token)
          const branch = yield* api.branches.create({ path: { storeId: store.id }, payload: { name: "Riverside" } })

          // Raw: every one of these is outside the request schema.
          const badCreate: Array<[Record<string, unknown>, string]> = [
            [{}, "name"],
            [{ name: "" }, "name"],
            [{ name: "Ok", phone: "call me" }, "phone"],
            [{ name: "Ok", address: "" }, "address"]
          ]
          for (const [body, param] of badCreate) {
            const response = yield* call(app, "POST", `/stores/${store.id}/branches`, { token: owner.token, body })
            expectRawError(response, 400, "invalid_request", param)
          }
          expectRawError(
            yield* call(app, "PATCH", `/branches/${branch.id}`, { token: owner.token, body: { active: "no" } }),
            400,
            "invalid_request",
            "active"
          )

          const strangerApi = yield* clientAs(app, stranger.token)
          const strangers: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
            ["PATCH", strangerApi.branches.update({ path: { id: branch.id }, payload: { name: "Stolen" } })],
            ["DELETE", strangerApi.branches.delete({ path: { id: branch.id } })]
          ]
          for (const [method, request] of strangers) {
            const error = yield* expectFailure(request, "NotFound", undefined, method)
            // The answer is about the branch; it does not reveal the store behind it.
            expect(error.message).not.toContain(store.id)
          }
          yield* expectFailure(api.branches.update({ path: { id: BranchId.make("br_nosuchbranch") }, payload: { name: "x" } }), "NotFound")

          const analyst = yield* member(app, owner, "analyst")
          const analystApi = yield* clientAs(app, analyst.token)
          yield* expectFailure(analystApi.branches.create({ path: { storeId: store.id }, payload: { name: "Analyst's" } }), "Forbidden")
          yield* expectFailure(analystApi.branches.update({ path: { id: branch.id }, payload: { name: "Renamed" } }), "Forbidden")
          yield* expectFailure(analystApi.branches.delete({ path: { id: branch.id } }), "Forbidden")
          const read = yield* analystApi.branches.list({ path: { storeId: store.id }, urlParams: page() })
          expect(read.data).toHaveLength(1)
          expect(read.data[0]!.name).toBe("Riverside")

          yield* expectFailure(Effect.flatMap(clientAs(app), (api) => api.branches.delete({ path: { id: branch.id } })), "Unauthorized")
        }))

      it.effect("refuses API keys on these console routes, even for the key's own store", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          const key = yield* (yield* clientAs(app, owner.token)).apiKeys.create({ payload: { store_id: store.id, mode: "test" } })
          const api = yield* clientAs(app, key.secret)
          const routes: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
            ["GET /stores/:id", api.stores.retrieve({ path: { id: store.id } })],
            ["GET /stores", api.stores.list({ urlParams: page() })],
            ["POST /stores", api.stores.create({ payload: { name: "By key" } })],
            ["PUT /stores/:id/credentials", api.stores.setCredentials({ path: { id: store.id }, payload: CREDENTIALS })],
            ["GET /stores/:storeId/branches", api.branches.list({ path: { storeId: store.id }, urlParams: page() })]
          ]
          for (const [route, request] of routes) yield* expectFailure(request, "Forbidden", undefined, route)
        }))

      it.effect("never returns the full Bakong account id in any response", () =>
        Effect.sync(() => {
          expect(responses.length).toBeGreaterThan(50)
          const everything = responses.join("\n")
          expect(everything).not.toContain(BAKONG_ACCOUNT_ID)
          expect(everything).not.toContain("riverside_cafe_7q4z")
          expect(everything).not.toContain("shop@wing")
        }))
    }
  )
})
