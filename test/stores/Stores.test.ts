/**
 * Stores and branches over HTTP: creation and listing across organizations, branding, provider
 * credentials (sealed at rest, only ever shown masked), live mode and its conditions, branches and
 * their delete-or-deactivate rule, and tenant isolation and roles on every route.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { StoresService } from "../../src/stores/Service.ts"
import { addMember, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

/** Every response body of the suite, to check that the full credentials never appear in one. */
const responses: Array<string> = []

const call = makeCall(responses)

const signUpOwner = (app: TestAppShape, organization_name = "Dara Coffee") =>
  Effect.promise(() => signUp(app, { organization_name }))

const member = (app: TestAppShape, owner: { token: string; organizationId: string }, role: "admin" | "developer" | "analyst") =>
  Effect.promise(() => addMember(app, owner.token, owner.organizationId, role))

const createStore = (app: TestAppShape, token: string, name = "Riverside", extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const response = yield* call(app, "POST", "/stores", { token, body: { name, ...extra } })
    expect(response.status).toBe(201)
    return response.body
  })

const expectError = (
  response: { status: number; body: any },
  status: number,
  code: string,
  param?: string
) => {
  expect(response.status).toBe(status)
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

const submitVerification = (app: TestAppShape, token: string, organizationId: string) =>
  call(app, "POST", "/verification", {
    token,
    body: {
      organization_id: organizationId,
      business_name: "Riverside Cafe Co., Ltd.",
      registration_number: "KH-00012345",
      contact: { name: "Sok Dara", email: "dara@example.test" },
      documents: [{ type: "business_registration", url: "https://files.example.test/reg.pdf" }]
    }
  })

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

          const named = yield* createStore(app, owner.token, "Airport", { organization_id: owner.organizationId })
          expect(named.organization_id).toBe(owner.organizationId)

          // An Admin of a second organization creates there when they say so, in their own otherwise.
          const other = yield* signUpOwner(app, "Other Org")
          const admin = yield* member(app, other, "admin")
          const inOther = yield* createStore(app, admin.token, "Branch of other", { organization_id: other.organizationId })
          expect(inOther.organization_id).toBe(other.organizationId)

          const retrieved = yield* call(app, "GET", `/stores/${store.id}`, { token: owner.token })
          expect(retrieved.status).toBe(200)
          expect(retrieved.body).toEqual(store)
        }))

      it.effect("refuses bad store input, other tenants' organizations, analysts and missing credentials", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const stranger = yield* signUpOwner(app, "Stranger Org")

          expectError(yield* call(app, "POST", "/stores", { token: owner.token, body: { name: "" } }), 400, "invalid_request", "name")
          expectError(yield* call(app, "POST", "/stores", { token: owner.token, body: {} }), 400, "invalid_request", "name")
          expectError(
            yield* call(app, "POST", "/stores", { token: owner.token, body: { name: 42 } }),
            400,
            "invalid_request",
            "name"
          )
          expectError(
            yield* call(app, "POST", "/stores", {
              token: owner.token,
              body: { name: "Mine now", organization_id: stranger.organizationId }
            }),
            404,
            "not_found",
            "organization_id"
          )
          const analyst = yield* member(app, owner, "analyst")
          expectError(
            yield* call(app, "POST", "/stores", {
              token: analyst.token,
              body: { name: "Analyst store", organization_id: owner.organizationId }
            }),
            403,
            "forbidden"
          )
          expectError(yield* call(app, "POST", "/stores", { body: { name: "Anonymous" } }), 401, "unauthorized")
          expectError(yield* call(app, "GET", "/stores"), 401, "unauthorized")
          expectError(
            yield* call(app, "GET", "/stores", { token: "mst_not-a-real-session-token" }),
            401,
            "unauthorized"
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
          const response = yield* call(app, "POST", `/dashboard/orgs/${other.organizationId}/members`, {
            token: other.token,
            body: { email: owner.email, role: "analyst" }
          })
          expect(response.status).toBe(201)

          const all = yield* call(app, "GET", "/stores", { token: owner.token })
          expect(all.status).toBe(200)
          expect(all.body).toMatchObject({ object: "list", has_more: false, next_cursor: null })
          expect(all.body.data.map((store: any) => store.id)).toEqual([partners.id, second.id, first.id])
          expect(all.body.data.map((store: any) => store.id)).not.toContain(strangers.id)

          const seen: Array<string> = []
          let cursor: string | null = null
          do {
            const query: string = cursor === null ? "limit=1" : `limit=1&cursor=${cursor}`
            const page = yield* call(app, "GET", `/stores?${query}`, { token: owner.token })
            expect(page.status).toBe(200)
            expect(page.body.data).toHaveLength(1)
            seen.push(page.body.data[0].id)
            cursor = page.body.next_cursor
            expect(page.body.has_more).toBe(cursor !== null)
          } while (cursor !== null)
          expect(seen).toEqual([partners.id, second.id, first.id])

          expectError(yield* call(app, "GET", "/stores?limit=0", { token: owner.token }), 400, "invalid_request", "limit")
          expectError(
            yield* call(app, "GET", "/stores?cursor=garbage!", { token: owner.token }),
            400,
            "invalid_request",
            "cursor"
          )
        }))

      it.effect("answers 404 for another tenant's store on every store route", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const stranger = yield* signUpOwner(app, "Stranger Org")
          const store = yield* createStore(app, owner.token)
          const routes: Array<[string, string, unknown]> = [
            ["GET", `/stores/${store.id}`, undefined],
            ["PUT", `/stores/${store.id}/branding`, { display_name: "Mine" }],
            ["PUT", `/stores/${store.id}/credentials`, CREDENTIALS],
            ["PUT", `/stores/${store.id}/live-mode`, { live_mode: false }],
            ["POST", `/stores/${store.id}/branches`, { name: "Mine" }],
            ["GET", `/stores/${store.id}/branches`, undefined]
          ]
          for (const [method, path, body] of routes) {
            const response = yield* call(app, method, path, { token: stranger.token, body })
            expectError(response, 404, "not_found")
            expect(response.body.error.message).not.toContain(owner.organizationId)
          }
          expectError(yield* call(app, "GET", "/stores/str_doesnotexist", { token: owner.token }), 404, "not_found")
          // Nothing changed behind the 404s.
          const unchanged = yield* call(app, "GET", `/stores/${store.id}`, { token: owner.token })
          expect(unchanged.body).toEqual(store)
        }))

      it.effect("replaces the branding, validating colours and the logo URL", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          const branding = {
            display_name: "Riverside Café",
            primary_color: "#1A73E8",
            accent_color: "#ff9900",
            logo_url: "https://cdn.example.test/logo.png"
          }
          const updated = yield* call(app, "PUT", `/stores/${store.id}/branding`, { token: owner.token, body: branding })
          expect(updated.status).toBe(200)
          expect(updated.body.branding).toEqual({ ...branding, primary_color: "#1a73e8" })
          expect(new Date(updated.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(store.updated_at).getTime())

          // PUT replaces: what is not sent is cleared.
          const replaced = yield* call(app, "PUT", `/stores/${store.id}/branding`, {
            token: owner.token,
            body: { display_name: "Riverside" }
          })
          expect(replaced.body.branding).toEqual({
            display_name: "Riverside",
            primary_color: null,
            accent_color: null,
            logo_url: null
          })

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
            expectError(response, 400, "invalid_request", param)
          }

          const analyst = yield* member(app, owner, "analyst")
          expectError(
            yield* call(app, "PUT", `/stores/${store.id}/branding`, { token: analyst.token, body: branding }),
            403,
            "forbidden"
          )
          const developer = yield* member(app, owner, "developer")
          expectError(
            yield* call(app, "PUT", `/stores/${store.id}/branding`, { token: developer.token, body: branding }),
            403,
            "forbidden"
          )
          const admin = yield* member(app, owner, "admin")
          const byAdmin = yield* call(app, "PUT", `/stores/${store.id}/branding`, { token: admin.token, body: branding })
          expect(byAdmin.status).toBe(200)
          // An Analyst still reads the store.
          const read = yield* call(app, "GET", `/stores/${store.id}`, { token: analyst.token })
          expect(read.status).toBe(200)
          expect(read.body.branding.display_name).toBe("Riverside Café")
        }))

      it.effect("seals the provider credentials and shows them only masked", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const sql = yield* SqlClient.SqlClient
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)

          const updated = yield* call(app, "PUT", `/stores/${store.id}/credentials`, { token: owner.token, body: CREDENTIALS })
          expect(updated.status).toBe(200)
          expect(updated.body.credentials).toEqual({
            configured: true,
            bakong_account_id: "*****************4z@aclb",
            merchant_name: "Riverside Cafe",
            merchant_city: "Phnom Penh",
            acquiring_bank: "ACLEDA Bank"
          })
          expect(updated.body.live_mode).toBe(false)
          const listed = yield* call(app, "GET", "/stores", { token: owner.token })
          expect(listed.body.data[0].credentials).toEqual(updated.body.credentials)

          // At rest: sealed, not readable.
          const [row] = yield* sql<{ credentials: string }>`SELECT credentials FROM stores WHERE id = ${store.id}`
          expect(row!.credentials.startsWith("v1.")).toBe(true)
          expect(row!.credentials).not.toContain("riverside_cafe")

          // The payments engine gets them back in full.
          const stores = yield* Effect.provide(StoresService, StoresService.Default)
          const opened = yield* stores.providerCredentials(store.id)
          expect(Option.getOrThrow(opened)).toMatchObject(CREDENTIALS)
          const unconfigured = yield* createStore(app, owner.token, "No credentials")
          expect(Option.isNone(yield* stores.providerCredentials(unconfigured.id))).toBe(true)
          expect((yield* stores.getById(store.id)).credentials?.configured).toBe(true)

          // Setting them again replaces them.
          const replaced = yield* call(app, "PUT", `/stores/${store.id}/credentials`, {
            token: owner.token,
            body: { ...CREDENTIALS, bakong_account_id: "shop@wing", merchant_city: "Siem Reap" }
          })
          expect(replaced.body.credentials).toMatchObject({ bakong_account_id: "****@wing", merchant_city: "Siem Reap" })
          expect(Option.getOrThrow(yield* stores.providerCredentials(store.id)).bakong_account_id).toBe("shop@wing")
        }))

      it.effect("refuses malformed credentials with the offending field, and members without the permission", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
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
            expectError(
              yield* call(app, "PUT", `/stores/${store.id}/credentials`, { token: owner.token, body }),
              400,
              "invalid_request",
              param
            )
          }
          for (const role of ["analyst", "developer"] as const) {
            const someone = yield* member(app, owner, role)
            expectError(
              yield* call(app, "PUT", `/stores/${store.id}/credentials`, { token: someone.token, body: CREDENTIALS }),
              403,
              "forbidden"
            )
          }
          const unchanged = yield* call(app, "GET", `/stores/${store.id}`, { token: owner.token })
          expect(unchanged.body.credentials).toBeNull()
        }))

      it.effect("switches live mode on only with credentials and an approved verification", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const platformAdmin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL }))
          const store = yield* createStore(app, owner.token)
          const liveMode = (live_mode: boolean, token = owner.token) =>
            call(app, "PUT", `/stores/${store.id}/live-mode`, { token, body: { live_mode } })

          const bare = yield* liveMode(true)
          expectError(bare, 409, "invalid_state")
          expect(bare.body.error.message).toContain("credentials")
          expect(bare.body.error.message).toContain("verification")
          expect(bare.body.error.message).toContain("not submitted")

          expect((yield* call(app, "PUT", `/stores/${store.id}/credentials`, { token: owner.token, body: CREDENTIALS })).status)
            .toBe(200)
          const unverified = yield* liveMode(true)
          expectError(unverified, 409, "invalid_state")
          expect(unverified.body.error.message).not.toContain("credentials")
          expect(unverified.body.error.message).toContain("verification")

          const submitted = yield* submitVerification(app, owner.token, owner.organizationId)
          expect(submitted.status).toBe(201)
          const pending = yield* liveMode(true)
          expectError(pending, 409, "invalid_state")
          expect(pending.body.error.message).toContain("pending")

          // Verified, but a second store without credentials still cannot go live.
          const approved = yield* call(app, "POST", `/admin/verifications/${submitted.body.id}/approve`, {
            token: platformAdmin.token
          })
          expect(approved.status).toBe(201)
          const other = yield* createStore(app, owner.token, "No credentials yet")
          const noCredentials = yield* call(app, "PUT", `/stores/${other.id}/live-mode`, {
            token: owner.token,
            body: { live_mode: true }
          })
          expectError(noCredentials, 409, "invalid_state")
          expect(noCredentials.body.error.message).toContain("credentials")
          expect(noCredentials.body.error.message).not.toContain("verification")

          const analyst = yield* member(app, owner, "analyst")
          expectError(yield* liveMode(true, analyst.token), 403, "forbidden")

          const live = yield* liveMode(true)
          expect(live.status).toBe(200)
          expect(live.body.live_mode).toBe(true)
          const again = yield* liveMode(true)
          expect(again.status).toBe(200)
          expect(again.body.live_mode).toBe(true)

          const off = yield* liveMode(false)
          expect(off.status).toBe(200)
          expect(off.body.live_mode).toBe(false)
          // Switching off needs nothing, not even credentials.
          const otherOff = yield* call(app, "PUT", `/stores/${other.id}/live-mode`, {
            token: owner.token,
            body: { live_mode: false }
          })
          expect(otherOff.status).toBe(200)
          expectError(
            yield* call(app, "PUT", `/stores/${store.id}/live-mode`, { token: owner.token, body: { live_mode: "yes" } }),
            400,
            "invalid_request",
            "live_mode"
          )
        }))

      it.effect("documents what live mode requires in the OpenAPI document", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
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
          const created = yield* call(app, "POST", `/stores/${store.id}/branches`, {
            token: owner.token,
            body: { name: "Riverside", address: "12 Sisowath Quay, Phnom Penh", phone: "+855 12 345 678" }
          })
          expect(created.status).toBe(201)
          expect(created.body.id).toMatch(/^br_[0-9A-Za-z]{24}$/)
          expect(created.body).toMatchObject({
            object: "branch",
            store_id: store.id,
            name: "Riverside",
            address: "12 Sisowath Quay, Phnom Penh",
            phone: "+855 12 345 678",
            active: true
          })
          const plain = yield* call(app, "POST", `/stores/${store.id}/branches`, { token: owner.token, body: { name: "Kiosk" } })
          expect(plain.status).toBe(201)
          expect(plain.body).toMatchObject({ address: null, phone: null, active: true })

          const listed = yield* call(app, "GET", `/stores/${store.id}/branches`, { token: owner.token })
          expect(listed.status).toBe(200)
          expect(listed.body).toMatchObject({ object: "list", has_more: false, next_cursor: null })
          expect(listed.body.data.map((branch: any) => branch.id)).toEqual([plain.body.id, created.body.id])
          const firstPage = yield* call(app, "GET", `/stores/${store.id}/branches?limit=1`, { token: owner.token })
          expect(firstPage.body.has_more).toBe(true)
          const secondPage = yield* call(app, "GET", `/stores/${store.id}/branches?limit=1&cursor=${firstPage.body.next_cursor}`, {
            token: owner.token
          })
          expect(secondPage.body.data.map((branch: any) => branch.id)).toEqual([created.body.id])

          const patched = yield* call(app, "PATCH", `/branches/${created.body.id}`, {
            token: owner.token,
            body: { name: "Riverside Quay", phone: null }
          })
          expect(patched.status).toBe(200)
          expect(patched.body).toMatchObject({
            name: "Riverside Quay",
            address: "12 Sisowath Quay, Phnom Penh",
            phone: null,
            active: true
          })
          const deactivated = yield* call(app, "PATCH", `/branches/${created.body.id}`, { token: owner.token, body: { active: false } })
          expect(deactivated.body.active).toBe(false)
          const nothing = yield* call(app, "PATCH", `/branches/${created.body.id}`, { token: owner.token, body: {} })
          expect(nothing.status).toBe(200)
          expect(nothing.body).toEqual(deactivated.body)

          // Without history the branch is gone for good.
          const deleted = yield* call(app, "DELETE", `/branches/${plain.body.id}`, { token: owner.token })
          expect(deleted.status).toBe(200)
          expect(deleted.body).toEqual({ id: plain.body.id, object: "branch", deleted: true })
          expectError(yield* call(app, "DELETE", `/branches/${plain.body.id}`, { token: owner.token }), 404, "not_found")
          expectError(
            yield* call(app, "PATCH", `/branches/${plain.body.id}`, { token: owner.token, body: { name: "Back" } }),
            404,
            "not_found"
          )
          const remaining = yield* call(app, "GET", `/stores/${store.id}/branches`, { token: owner.token })
          expect(remaining.body.data.map((branch: any) => branch.id)).toEqual([created.body.id])
        }))

      it.effect("deactivates rather than deletes a branch with history", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          const branch = yield* call(app, "POST", `/stores/${store.id}/branches`, { token: owner.token, body: { name: "Old Market" } })
          // What a payment at the branch will do.
          const stores = yield* Effect.provide(StoresService, StoresService.Default)
          yield* stores.markBranchHasHistory(branch.body.id)

          const deleted = yield* call(app, "DELETE", `/branches/${branch.body.id}`, { token: owner.token })
          expect(deleted.status).toBe(200)
          expect(deleted.body).toMatchObject({ id: branch.body.id, object: "branch", name: "Old Market", active: false })
          expect(deleted.body.deleted).toBeUndefined()
          const listed = yield* call(app, "GET", `/stores/${store.id}/branches`, { token: owner.token })
          expect(listed.body.data).toEqual([deleted.body])
          // Deleting it again changes nothing; it can be reactivated.
          const again = yield* call(app, "DELETE", `/branches/${branch.body.id}`, { token: owner.token })
          expect(again.body).toEqual(deleted.body)
          const reactivated = yield* call(app, "PATCH", `/branches/${branch.body.id}`, { token: owner.token, body: { active: true } })
          expect(reactivated.body.active).toBe(true)
        }))

      it.effect("refuses bad branch input, other tenants and analysts", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const stranger = yield* signUpOwner(app, "Stranger Org")
          const store = yield* createStore(app, owner.token)
          const branch = yield* call(app, "POST", `/stores/${store.id}/branches`, { token: owner.token, body: { name: "Riverside" } })

          const badCreate: Array<[Record<string, unknown>, string]> = [
            [{}, "name"],
            [{ name: "" }, "name"],
            [{ name: "Ok", phone: "call me" }, "phone"],
            [{ name: "Ok", address: "" }, "address"]
          ]
          for (const [body, param] of badCreate) {
            const response = yield* call(app, "POST", `/stores/${store.id}/branches`, { token: owner.token, body })
            expectError(response, 400, "invalid_request", param)
          }
          expectError(
            yield* call(app, "PATCH", `/branches/${branch.body.id}`, { token: owner.token, body: { active: "no" } }),
            400,
            "invalid_request",
            "active"
          )

          for (const [method, body] of [["PATCH", { name: "Stolen" }], ["DELETE", undefined]] as const) {
            const response = yield* call(app, method, `/branches/${branch.body.id}`, { token: stranger.token, body })
            expectError(response, 404, "not_found")
            // The answer is about the branch; it does not reveal the store behind it.
            expect(response.body.error.message).not.toContain(store.id)
          }
          const unknown = yield* call(app, "PATCH", "/branches/br_nosuchbranch", { token: owner.token, body: { name: "x" } })
          expectError(unknown, 404, "not_found")

          const analyst = yield* member(app, owner, "analyst")
          expectError(
            yield* call(app, "POST", `/stores/${store.id}/branches`, { token: analyst.token, body: { name: "Analyst's" } }),
            403,
            "forbidden"
          )
          expectError(
            yield* call(app, "PATCH", `/branches/${branch.body.id}`, { token: analyst.token, body: { name: "Renamed" } }),
            403,
            "forbidden"
          )
          expectError(yield* call(app, "DELETE", `/branches/${branch.body.id}`, { token: analyst.token }), 403, "forbidden")
          const read = yield* call(app, "GET", `/stores/${store.id}/branches`, { token: analyst.token })
          expect(read.status).toBe(200)
          expect(read.body.data).toHaveLength(1)
          expect(read.body.data[0].name).toBe("Riverside")

          expectError(yield* call(app, "DELETE", `/branches/${branch.body.id}`), 401, "unauthorized")
        }))

      it.effect("refuses API keys on these console routes, even for the key's own store", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const store = yield* createStore(app, owner.token)
          const key = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
          expect(key.status).toBe(201)
          const secret: string = key.body.secret
          const routes: Array<[string, string, unknown]> = [
            ["GET", `/stores/${store.id}`, undefined],
            ["GET", "/stores", undefined],
            ["POST", "/stores", { name: "By key" }],
            ["PUT", `/stores/${store.id}/credentials`, CREDENTIALS],
            ["GET", `/stores/${store.id}/branches`, undefined]
          ]
          for (const [method, path, body] of routes) {
            expectError(yield* call(app, method, path, { token: secret, body }), 403, "forbidden")
          }
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
