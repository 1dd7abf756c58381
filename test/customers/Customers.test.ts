/**
 * Customers over HTTP, black-box: creation and every field of the customer object, validation of each
 * field, uniqueness of e-mail and external_id per store and mode, idempotent creates, lists with filters
 * and cursors, the console's search, tenancy and mode (404s), roles, preferences with their consent log,
 * the customer 360 after payments and a refund, `customer_id` on payments, and erasure (personal data
 * gone, payments and the ledger untouched, search and lookups miss, the e-mail reusable, erasing twice,
 * the actor in the access log), also of a customer who never set preferences and after any sequence of
 * preference changes.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Runtime } from "effect"
import * as fc from "fast-check"
import type { CreateCustomer, Customer, SetPreferences } from "../../domain/Customers.ts"
import { CustomerId } from "../../domain/Ids.ts"
import type { CreatePayment } from "../../domain/Payments.ts"
import { addMember } from "../support/Accounts.ts"
import { allPages, clientAs, expectFailure, listParams, wireJson, wireKeys } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { createPayment, type Merchant, newMerchant, paidPayment, refund, simulate } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

// Raw calls only for what the typed client cannot send: values outside the request schemas.
const call = makeCall()

const logs: Array<string> = []

const CUSTOMER_FIELDS = [
  "created_at",
  "email",
  "erased_at",
  "external_id",
  "id",
  "lifetime_points",
  "livemode",
  "metadata",
  "name",
  "object",
  "phone",
  "points_balance",
  "referral_code",
  "store_id",
  "tier",
  "updated_at",
  "wallet_url"
]

let serial = 0
/** An e-mail address no other test uses. */
const freshEmail = (label = "customer") => `${label}-${Date.now().toString(36)}-${++serial}@example.test`

const apiKey = (app: TestAppShape, token: string, storeId: Merchant["storeId"], mode: "test" | "live") =>
  Effect.flatMap(clientAs(app, token), (api) => api.apiKeys.create({ payload: { store_id: storeId, mode } })).pipe(
    Effect.map((key) => key.secret)
  )

/** A merchant with a test key (`key`) and a live key (`liveKey`) of one store. */
const merchantWithLiveKey = (app: TestAppShape) =>
  Effect.gen(function*() {
    const merchant = yield* newMerchant(app)
    const liveKey = yield* apiKey(app, merchant.owner.token, merchant.storeId, "live")
    return { ...merchant, liveKey }
  })

const createCustomer = (app: TestAppShape, key: string, payload: CreateCustomer, idempotencyKey?: string) =>
  Effect.flatMap(clientAs(app, key), (api) =>
    api.customers.create({ payload, headers: { "idempotency-key": idempotencyKey } }))

const newCustomer = (app: TestAppShape, key: string, payload: CreateCustomer = {}) =>
  createCustomer(app, key, { email: freshEmail(), ...payload })

const retrieve = (app: TestAppShape, key: string, id: Customer["id"]) =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.retrieve({ path: { id } }))

const listCustomers = (app: TestAppShape, key: string, urlParams: { email?: string; external_id?: string; limit?: number; cursor?: string } = {}) =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.list({ urlParams: listParams(urlParams) }))

const search = (app: TestAppShape, token: string, storeId: Merchant["storeId"], urlParams: { search?: string; livemode?: boolean; limit?: number; cursor?: string } = {}) =>
  Effect.flatMap(clientAs(app, token), (api) => api.customerConsole.list({ path: { storeId }, urlParams: listParams(urlParams) }))

const setPreferences = (app: TestAppShape, key: string, id: Customer["id"], payload: SetPreferences) =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.setPreferences({ path: { id }, payload }))

const setPreferencesAsUser = (app: TestAppShape, token: string, id: Customer["id"], payload: SetPreferences) =>
  Effect.flatMap(clientAs(app, token), (api) => api.customerConsole.setPreferences({ path: { id }, payload }))

const preferencesOf = (app: TestAppShape, key: string, id: Customer["id"]) =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.preferences({ path: { id } }))

const consentLog = (app: TestAppShape, token: string, id: Customer["id"]) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    allPages(2, (urlParams) => api.customerConsole.consentLog({ path: { id }, urlParams })))

const overview = (app: TestAppShape, token: string, id: Customer["id"]) =>
  Effect.flatMap(clientAs(app, token), (api) => api.customerConsole.retrieve({ path: { id } }))

const erase = (app: TestAppShape, token: string, id: Customer["id"]) =>
  Effect.flatMap(clientAs(app, token), (api) => api.customerConsole.erase({ path: { id } }))

const paymentFor = (app: TestAppShape, key: string, payload: Partial<CreatePayment>) => createPayment(app, key, payload)

/** The trial balance and the journal lines of a store, as the ledger's own test reads them. */
const ledgerOf = (storeId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ balance: string; lines: number; debits: string }>`
      SELECT (coalesce(sum(l.debit), 0) - coalesce(sum(l.credit), 0))::text AS balance, count(*)::int AS lines,
        coalesce(sum(l.debit), 0)::text AS debits
      FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
      WHERE e.store_id = ${storeId}`).pipe(Effect.map((rows) => rows[0]!))

/** One preference change: a subset of the four flags (at least one) with values, and free text or not. */
const preferenceChange: fc.Arbitrary<SetPreferences> = fc.record({
  email: fc.boolean(),
  sms: fc.boolean(),
  telegram: fc.boolean(),
  marketing: fc.boolean(),
  source: fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/).map((text) => `src-${text}`),
  policy_version: fc.stringMatching(/^[0-9]{4}-[0-9]{2}$/).map((text) => `pv-${text}`)
}, { requiredKeys: [] }).filter((change) =>
  change.email !== undefined || change.sms !== undefined || change.telegram !== undefined ||
  change.marketing !== undefined
)

const UNKNOWN = CustomerId.make("cus_doesnotexist000000000000")

describe("customers", () => {
  layer(testAppLayer({}, { logs }), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    // -------------------------------------------------------------------------------------------
    // Create and retrieve
    // -------------------------------------------------------------------------------------------

    it.effect("creates a customer with every field of the customer object, and retrieves it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const email = freshEmail()
        const [customer, response] = yield* Effect.flatMap(clientAs(app, merchant.key), (api) =>
          api.customers.create({
            payload: {
              email,
              external_id: "crm-1",
              name: "Sokha Chan",
              phone: "+855 12 345 678",
              metadata: { tier_hint: "vip" }
            },
            headers: {},
            withResponse: true
          }))
        expect(response.status).toBe(201)
        expect(yield* wireKeys(response)).toEqual(CUSTOMER_FIELDS)
        expect(customer.id).toMatch(/^cus_[0-9A-Za-z]{24}$/)
        expect(customer).toMatchObject({
          object: "customer",
          store_id: merchant.storeId,
          livemode: false,
          email,
          external_id: "crm-1",
          name: "Sokha Chan",
          phone: "+855 12 345 678",
          metadata: { tier_hint: "vip" },
          points_balance: 0,
          lifetime_points: 0,
          tier: null,
          referral_code: null,
          erased_at: null
        })
        expect(new Date(customer.created_at).toISOString()).toBe(customer.created_at)
        expect(customer.updated_at).toBe(customer.created_at)
        expect(yield* retrieve(app, merchant.key, customer.id)).toEqual(customer)

        // Only an external_id is enough; preferences start all false.
        const byExternalId = yield* createCustomer(app, merchant.key, { external_id: "crm-2" })
        expect(byExternalId).toMatchObject({ email: null, external_id: "crm-2", name: null, phone: null, metadata: {} })
        const preferences = yield* preferencesOf(app, merchant.key, byExternalId.id)
        expect(preferences).toMatchObject({
          object: "customer_preferences",
          customer_id: byExternalId.id,
          email: false,
          sms: false,
          telegram: false,
          marketing: false,
          updated_at: byExternalId.created_at
        })
      }))

    it.effect("refuses bad input with 400 naming the field, and creates nothing", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const tooManyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]))
        const cases: ReadonlyArray<readonly [body: unknown, param: string]> = [
          [{}, "email"],
          [{ name: "No identifier" }, "email"],
          [{ email: "not-an-email" }, "email"],
          [{ email: "a@b" }, "email"],
          [{ email: " sokha@example.com" }, "email"],
          [{ email: `${"x".repeat(250)}@example.com` }, "email"],
          [{ email: freshEmail(), name: "x".repeat(10 * 1024) }, "name"],
          [{ email: freshEmail(), name: "" }, "name"],
          [{ email: freshEmail(), phone: "call me" }, "phone"],
          [{ external_id: "x".repeat(65) }, "external_id"],
          [{ external_id: "" }, "external_id"],
          [{ email: freshEmail(), metadata: tooManyKeys }, "metadata"],
          [{ email: freshEmail(), metadata: { note: "x".repeat(501) } }, "metadata.note"],
          [{ email: freshEmail(), metadata: { ["k".repeat(41)]: "v" } }, "metadata"],
          [{ email: freshEmail(), metadata: { n: 5 } }, "metadata.n"],
          [{ email: freshEmail(), nickname: "So" }, "nickname"],
          [{ email: freshEmail(), referral_code: "FRIEND-1" }, "referral_code"],
          [{ email: freshEmail(), name: "nul\u0000" }, "name"],
          [{ email: 5 }, "email"]
        ]
        for (const [body, param] of cases) {
          const answer = yield* call(app, "POST", "/v1/customers", { token: merchant.key, body })
          const label = `${JSON.stringify(body).slice(0, 120)} → ${JSON.stringify(answer.body)}`
          expect(answer.status, label).toBe(400)
          expect(answer.body.error.code, label).toBe("invalid_request")
          expect(answer.body.error.param, label).toBe(param)
          expect(typeof answer.body.error.message, label).toBe("string")
        }
        expect((yield* listCustomers(app, merchant.key)).data).toEqual([])
        // At the limits, accepted.
        const atLimits = yield* createCustomer(app, merchant.key, {
          email: freshEmail(),
          external_id: "x".repeat(64),
          name: "n".repeat(200),
          metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${"k".repeat(38)}${i}`.slice(-40), "v".repeat(500)]))
        })
        expect(Object.keys(atLimits.metadata!)).toHaveLength(50)
      }))

    // -------------------------------------------------------------------------------------------
    // Uniqueness and idempotency
    // -------------------------------------------------------------------------------------------

    it.effect("keeps e-mail and external_id unique per store and mode: 409 naming the existing customer", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* merchantWithLiveKey(app)
        const other = yield* newMerchant(app)
        const email = freshEmail("dup")
        const first = yield* createCustomer(app, merchant.key, { email, external_id: "ext-dup" })

        const sameEmail = yield* expectFailure(createCustomer(app, merchant.key, { email }), "InvalidState", "email")
        expect(sameEmail.message).toContain(first.id)
        // Letter case does not make another address.
        yield* expectFailure(createCustomer(app, merchant.key, { email: email.toUpperCase() }), "InvalidState", "email")
        const sameExternal = yield* expectFailure(
          createCustomer(app, merchant.key, { email: freshEmail(), external_id: "ext-dup" }),
          "InvalidState",
          "external_id"
        )
        expect(sameExternal.message).toContain(first.id)
        yield* expectFailure(createCustomer(app, merchant.key, { external_id: "ext-dup" }), "InvalidState", "external_id")

        // Another store, or the other mode of this store: another customer.
        const elsewhere = yield* createCustomer(app, other.key, { email, external_id: "ext-dup" })
        const live = yield* createCustomer(app, merchant.liveKey, { email, external_id: "ext-dup" })
        expect(live.livemode).toBe(true)
        expect(new Set([first.id, elsewhere.id, live.id]).size).toBe(3)
        expect((yield* listCustomers(app, merchant.key)).data.map((c) => c.id)).toEqual([first.id])
      }))

    it.effect("lets exactly one of many simultaneous creates with one e-mail through", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const email = freshEmail("race")
        const answers = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          (i) => Effect.either(createCustomer(app, merchant.key, { email, name: `Racer ${i}` })),
          { concurrency: "unbounded" }
        )
        const created = answers.filter((answer) => answer._tag === "Right")
        const refused = answers.filter((answer) => answer._tag === "Left")
        expect(created).toHaveLength(1)
        const winner = created[0]!.right
        expect(refused).toHaveLength(11)
        for (const answer of refused) {
          expect(answer.left._tag).toBe("InvalidState")
          expect((answer.left as { message: string }).message).toContain(winner.id)
        }
        expect((yield* listCustomers(app, merchant.key, { email })).data.map((c) => c.id)).toEqual([winner.id])
      }))

    it.effect("answers a retried create with the same Idempotency-Key with the original customer", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const payload = { email: freshEmail("idem"), name: "Dara" }
        const first = yield* createCustomer(app, merchant.key, payload, "create-dara")
        const [again, response] = yield* Effect.flatMap(clientAs(app, merchant.key), (api) =>
          api.customers.create({ payload, headers: { "idempotency-key": "create-dara" }, withResponse: true }))
        expect(response.status).toBe(201)
        expect(response.headers["idempotent-replayed"]).toBe("true")
        expect(again).toEqual(first)
        yield* expectFailure(
          createCustomer(app, merchant.key, { ...payload, name: "Someone else" }, "create-dara"),
          "IdempotencyConflict"
        )
        expect((yield* listCustomers(app, merchant.key)).data).toHaveLength(1)
      }))

    // -------------------------------------------------------------------------------------------
    // Lists and search
    // -------------------------------------------------------------------------------------------

    it.effect("lists newest first with cursors, and filters by e-mail (any case) and external_id", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const created: Array<Customer> = []
        for (let i = 0; i < 7; i++) {
          created.push(yield* createCustomer(app, merchant.key, { email: freshEmail(`list${i}`), external_id: `ext-${i}` }))
        }
        const api = yield* clientAs(app, merchant.key)
        const all = yield* allPages(3, (urlParams) => api.customers.list({ urlParams }))
        expect(all.map((c) => c.id)).toEqual(created.map((c) => c.id).reverse())
        const byEmail = yield* listCustomers(app, merchant.key, { email: created[2]!.email!.toUpperCase() })
        expect(byEmail.data.map((c) => c.id)).toEqual([created[2]!.id])
        const byExternal = yield* listCustomers(app, merchant.key, { external_id: "ext-5" })
        expect(byExternal.data.map((c) => c.id)).toEqual([created[5]!.id])
        expect((yield* listCustomers(app, merchant.key, { email: "nobody@example.test" })).data).toEqual([])
        // Wildcards are not wildcards in an exact filter.
        expect((yield* listCustomers(app, merchant.key, { external_id: "ext-%" })).data).toEqual([])
        const badCursor = yield* call(app, "GET", "/v1/customers?cursor=nonsense", { token: merchant.key })
        expect(badCursor.status).toBe(400)
        expect(badCursor.body.error.param).toBe("cursor")
        const defaultLimit = yield* call(app, "GET", "/v1/customers", { token: merchant.key })
        expect(defaultLimit.body).toMatchObject({ object: "list", has_more: false, next_cursor: null })
      }))

    it.effect("searches a store's customers by e-mail, name, phone and external_id, in any case, with cursors", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* merchantWithLiveKey(app)
        const token = merchant.owner.token
        const sokha = yield* createCustomer(app, merchant.key, {
          email: "sokha.chan@riverside.example",
          name: "Sokha Chan",
          phone: "+855 12 345 678",
          external_id: "POS-0042"
        })
        const dara = yield* createCustomer(app, merchant.key, { email: "dara@elsewhere.example", name: "Dara Keo" })
        const percent = yield* createCustomer(app, merchant.key, { external_id: "100%_real", name: "Wild Card" })
        const live = yield* createCustomer(app, merchant.liveKey, { email: "live.sokha@riverside.example", name: "Sokha Live" })
        const ids = (page: { readonly data: ReadonlyArray<Customer> }) => page.data.map((c) => c.id)

        expect(ids(yield* search(app, token, merchant.storeId))).toEqual([percent.id, dara.id, sokha.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "RIVERSIDE" }))).toEqual([sokha.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "chan" }))).toEqual([sokha.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "12345678" }))).toEqual([sokha.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "345 678" }))).toEqual([sokha.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "pos-00" }))).toEqual([sokha.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "a" }))).toEqual([percent.id, dara.id, sokha.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "%" }))).toEqual([percent.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "0%_" }))).toEqual([percent.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "_" }))).toEqual([percent.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "nobody" }))).toEqual([])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "   " }))).toEqual([percent.id, dara.id, sokha.id])
        expect(ids(yield* search(app, token, merchant.storeId, { search: "sokha", livemode: true }))).toEqual([live.id])

        const api = yield* clientAs(app, token)
        const paged = yield* allPages(1, (page) =>
          api.customerConsole.list({ path: { storeId: merchant.storeId }, urlParams: { ...page, search: "a" } }))
        expect(paged.map((c) => c.id)).toEqual([percent.id, dara.id, sokha.id])

        const tooLong = yield* call(app, "GET", `/dashboard/stores/${merchant.storeId}/customers?search=${"x".repeat(201)}`, { token })
        expect(tooLong.status).toBe(400)
        expect(tooLong.body.error.param).toBe("search")
      }))

    // -------------------------------------------------------------------------------------------
    // Tenancy, mode and roles
    // -------------------------------------------------------------------------------------------

    it.effect("answers 404 for another tenant's customer, the other mode's, and an unknown id", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* merchantWithLiveKey(app)
        const other = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const live = yield* newCustomer(app, merchant.liveKey)

        for (const [key, id, label] of [
          [other.key, customer.id, "another store's key"],
          [merchant.liveKey, customer.id, "a live key, test customer"],
          [merchant.key, live.id, "a test key, live customer"],
          [merchant.key, UNKNOWN, "an unknown id"],
          [merchant.key, CustomerId.make("not-an-id"), "a malformed id"]
        ] as const) {
          yield* expectFailure(retrieve(app, key, id), "NotFound", "id", label)
          yield* expectFailure(preferencesOf(app, key, id), "NotFound", "id", label)
          yield* expectFailure(setPreferences(app, key, id, { email: true }), "NotFound", "id", label)
        }
        expect((yield* listCustomers(app, other.key)).data).toEqual([])
        expect((yield* listCustomers(app, merchant.liveKey)).data.map((c) => c.id)).toEqual([live.id])

        // The console: another organization's user sees nothing of it.
        const stranger = other.owner.token
        yield* expectFailure(overview(app, stranger, customer.id), "NotFound", "id")
        yield* expectFailure(consentLog(app, stranger, customer.id), "NotFound", "id")
        yield* expectFailure(setPreferencesAsUser(app, stranger, customer.id, { sms: true }), "NotFound", "id")
        yield* expectFailure(erase(app, stranger, customer.id), "NotFound", "id")
        yield* expectFailure(search(app, stranger, merchant.storeId), "NotFound")
        yield* expectFailure(overview(app, merchant.owner.token, UNKNOWN), "NotFound", "id")
        // Nothing above changed the customer.
        expect(yield* retrieve(app, merchant.key, customer.id)).toEqual(customer)
        expect((yield* preferencesOf(app, merchant.key, customer.id)).email).toBe(false)
      }))

    it.effect("keeps the merchant API for API keys and the console for user sessions, under the roles", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const { owner } = merchant
        const customer = yield* newCustomer(app, merchant.key)
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const developer = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "developer"))
        const admin = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "admin"))

        // A session on the merchant API, a key on the console: 403.
        yield* expectFailure(newCustomer(app, owner.token), "Forbidden")
        yield* expectFailure(retrieve(app, owner.token, customer.id), "Forbidden")
        yield* expectFailure(listCustomers(app, owner.token), "Forbidden")
        yield* expectFailure(overview(app, merchant.key, customer.id), "Forbidden")
        yield* expectFailure(search(app, merchant.key, merchant.storeId), "Forbidden")
        yield* expectFailure(erase(app, merchant.key, customer.id), "Forbidden")

        // Every role reads.
        for (const member of [analyst, developer, admin]) {
          expect((yield* overview(app, member.token, customer.id)).id).toBe(customer.id)
          expect((yield* search(app, member.token, merchant.storeId)).data.map((c) => c.id)).toEqual([customer.id])
          yield* consentLog(app, member.token, customer.id)
        }
        // Analysts and developers change nothing; admins and owners do.
        for (const member of [analyst, developer]) {
          yield* expectFailure(setPreferencesAsUser(app, member.token, customer.id, { sms: true }), "Forbidden")
          yield* expectFailure(erase(app, member.token, customer.id), "Forbidden")
        }
        expect((yield* setPreferencesAsUser(app, admin.token, customer.id, { sms: true })).sms).toBe(true)
        expect((yield* erase(app, admin.token, customer.id)).erased_at).not.toBeNull()
      }))

    // -------------------------------------------------------------------------------------------
    // Preferences and consent
    // -------------------------------------------------------------------------------------------

    it.effect("records one consent event per changed flag, with who changed it, newest first", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const admin = yield* Effect.promise(() =>
          addMember(app, merchant.owner.token, merchant.owner.organizationId, "admin"))
        const customer = yield* newCustomer(app, merchant.key)
        const keyId = (yield* (yield* clientAs(app, merchant.owner.token)).apiKeys.list({
          urlParams: listParams({ store_id: merchant.storeId })
        })).data[0]!.id

        // 1. The merchant's backend at checkout: e-mail and marketing granted.
        const first = yield* setPreferences(app, merchant.key, customer.id, {
          email: true,
          marketing: true,
          sms: false,
          source: "checkout",
          policy_version: "2030-01"
        })
        expect(first).toMatchObject({ email: true, sms: false, telegram: false, marketing: true })
        expect(first.updated_at >= customer.created_at).toBe(true)
        // 2. An admin in the console: marketing withdrawn, Telegram granted.
        const second = yield* setPreferencesAsUser(app, admin.token, customer.id, { marketing: false, telegram: true })
        expect(second).toMatchObject({ email: true, sms: false, telegram: true, marketing: false })
        // 3. The backend again, from the point of sale: SMS granted; e-mail sent unchanged records nothing.
        const third = yield* setPreferences(app, merchant.key, customer.id, { sms: true, email: true, source: "pos" })
        expect(third).toMatchObject({ email: true, sms: true, telegram: true, marketing: false })
        // Nothing changed: nothing recorded, and the time stays.
        const unchanged = yield* setPreferences(app, merchant.key, customer.id, { sms: true })
        expect(unchanged.updated_at).toBe(third.updated_at)
        expect(yield* preferencesOf(app, merchant.key, customer.id)).toEqual(third)

        const log = yield* consentLog(app, merchant.owner.token, customer.id)
        const summary = log.map((event) => ({
          purpose: event.purpose,
          granted: event.granted,
          source: event.source,
          policy_version: event.policy_version,
          actor: { type: event.actor.type, id: event.actor.id }
        }))
        const byKey = { type: "api_key", id: keyId }
        const byAdmin = { type: "user", id: admin.userId }
        // Newest first; the events of one change share its instant, in any order among themselves.
        const sortWithin = (events: typeof summary) => [...events].sort((a, b) => a.purpose.localeCompare(b.purpose))
        expect(summary.slice(0, 1)).toEqual([{ purpose: "sms", granted: true, source: "pos", policy_version: null, actor: byKey }])
        expect(sortWithin(summary.slice(1, 3))).toEqual([
          { purpose: "marketing", granted: false, source: "dashboard", policy_version: null, actor: byAdmin },
          { purpose: "telegram", granted: true, source: "dashboard", policy_version: null, actor: byAdmin }
        ])
        expect(sortWithin(summary.slice(3))).toEqual([
          { purpose: "email", granted: true, source: "checkout", policy_version: "2030-01", actor: byKey },
          { purpose: "marketing", granted: true, source: "checkout", policy_version: "2030-01", actor: byKey }
        ])
        for (const event of log) {
          expect(event.id).toMatch(/^cns_[0-9A-Za-z]{24}$/)
          expect(event).toMatchObject({ object: "consent_event", customer_id: customer.id })
        }
        expect(log[0]!.created_at).toBe(third.updated_at)

        // An empty change, or only a source, is refused; so are values of the wrong type.
        yield* expectFailure(setPreferences(app, merchant.key, customer.id, {}), "InvalidRequest")
        yield* expectFailure(setPreferences(app, merchant.key, customer.id, { source: "pos" }), "InvalidRequest")
        const wrongType = yield* call(app, "PUT", `/v1/customers/${customer.id}/preferences`, {
          token: merchant.key,
          body: { email: "yes" }
        })
        expect(wrongType.body.error).toMatchObject({ code: "invalid_request", param: "email" })
        const longSource = yield* call(app, "PUT", `/v1/customers/${customer.id}/preferences`, {
          token: merchant.key,
          body: { email: false, source: "x".repeat(65) }
        })
        expect(longSource.body.error).toMatchObject({ code: "invalid_request", param: "source" })
        expect((yield* consentLog(app, merchant.owner.token, customer.id))).toHaveLength(5)
      }))

    it.effect("keeps the consent log append-only in the database itself", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        yield* setPreferences(app, merchant.key, customer.id, { email: true, source: "import" })
        const refused = [
          sql`UPDATE consent_events SET granted = false WHERE customer_id = ${customer.id}`,
          sql`UPDATE consent_events SET source = 'forged' WHERE customer_id = ${customer.id}`,
          sql`UPDATE consent_events SET actor_id = 'usr_x' WHERE customer_id = ${customer.id}`,
          sql`DELETE FROM consent_events WHERE customer_id = ${customer.id}`
        ]
        for (const statement of refused) {
          const exit = yield* Effect.exit(statement)
          expect(exit._tag).toBe("Failure")
        }
        const log = yield* consentLog(app, merchant.owner.token, customer.id)
        expect(log.map((event) => [event.purpose, event.granted, event.source])).toEqual([["email", true, "import"]])
      }))

    // -------------------------------------------------------------------------------------------
    // Customer 360 and payments
    // -------------------------------------------------------------------------------------------

    it.effect("shows lifetime metrics and recent payments after payments and a refund", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* merchantWithLiveKey(app)
        const other = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key, { name: "Loyal Customer" })
        const stranger = yield* newCustomer(app, merchant.key)

        const empty = yield* overview(app, merchant.owner.token, customer.id)
        expect(empty.metrics).toEqual({
          payments_count: 0,
          lifetime_value: { USD: "0.00", KHR: "0" },
          refunded: { USD: "0.00", KHR: "0" },
          first_payment_at: null,
          last_payment_at: null
        })
        expect(empty.recent_payments).toEqual([])

        const first = yield* paidPayment(app, merchant.key, { amount: "12.50", customer_id: customer.id })
        const second = yield* paidPayment(app, merchant.key, { amount: "5.00", customer_id: customer.id })
        yield* refund(app, merchant.key, second.id, { amount: "2.00" })
        const riel = yield* paidPayment(app, merchant.key, { amount: "4000", currency: "KHR", customer_id: customer.id })
        const pending = yield* paymentFor(app, merchant.key, { amount: "9.99", customer_id: customer.id })
        const failed = yield* paymentFor(app, merchant.key, { amount: "1.00", customer_id: customer.id })
        yield* simulate(app, merchant.key, failed.id, "failed")
        // Someone else's payment, and one without a customer, count for nobody here.
        yield* paidPayment(app, merchant.key, { amount: "50.00", customer_id: stranger.id })
        yield* paidPayment(app, merchant.key, { amount: "70.00" })

        expect(first.customer_id).toBe(customer.id)
        expect(pending.customer_id).toBe(customer.id)
        const view = yield* overview(app, merchant.owner.token, customer.id)
        expect(view).toMatchObject({ id: customer.id, object: "customer", name: "Loyal Customer", email: customer.email })
        expect(view.metrics).toEqual({
          payments_count: 3,
          lifetime_value: { USD: "15.50", KHR: "4000" },
          refunded: { USD: "2.00", KHR: "0" },
          first_payment_at: first.paid_at,
          last_payment_at: riel.paid_at
        })
        expect(view.recent_payments.map((payment) => payment.id)).toEqual([failed.id, pending.id, riel.id, second.id, first.id])
        expect(view.recent_payments.find((payment) => payment.id === second.id)).toMatchObject({
          status: "partially_refunded",
          amount_refunded: "2.00",
          customer_id: customer.id
        })

        // Ten newest only.
        for (let i = 0; i < 6; i++) yield* paymentFor(app, merchant.key, { amount: "1.00", customer_id: customer.id })
        const many = yield* overview(app, merchant.owner.token, customer.id)
        expect(many.recent_payments).toHaveLength(10)
        expect(many.metrics.payments_count).toBe(3)

        // The payments list filters by customer.
        const api = yield* clientAs(app, merchant.key)
        const listed = yield* allPages(4, (urlParams) => api.payments.list({ urlParams: { ...urlParams, customer_id: customer.id } }))
        expect(listed).toHaveLength(11)
        expect(listed.every((payment) => payment.customer_id === customer.id)).toBe(true)
        const without = yield* paymentFor(app, merchant.key, {})
        expect(without.customer_id).toBeNull()

        // A payment names a customer of its own store and mode only.
        const foreign = yield* newCustomer(app, other.key)
        const live = yield* newCustomer(app, merchant.liveKey)
        for (const id of [foreign.id, live.id, UNKNOWN]) {
          yield* expectFailure(paymentFor(app, merchant.key, { customer_id: id }), "NotFound", "customer_id", id)
        }
      }))

    // -------------------------------------------------------------------------------------------
    // Erasure
    // -------------------------------------------------------------------------------------------

    it.effect("erases a customer who never touched preferences", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const email = freshEmail("untouched")
        const customer = yield* createCustomer(app, merchant.key, { email, name: "Dara Keo" })
        const [erased, response] = yield* Effect.flatMap(clientAs(app, merchant.owner.token), (console) =>
          console.customerConsole.erase({ path: { id: customer.id }, withResponse: true }))
        expect(response.status).toBe(200)
        expect(erased).toMatchObject({ id: customer.id, email: null, name: null })
        expect(erased.erased_at).not.toBeNull()
        // Nothing was given, so nothing is withdrawn.
        expect(yield* consentLog(app, merchant.owner.token, customer.id)).toEqual([])
        expect((yield* listCustomers(app, merchant.key, { email })).data).toEqual([])
      }))

    it.effect("erasure after any sequence of preference changes answers 200 and leaves no personal data", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const token = merchant.owner.token
        const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
        const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Runtime.runPromise(runtime)(effect)
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              fc.array(fc.tuple(preferenceChange, fc.boolean()), { maxLength: 6 }),
              async (changes) => {
                const email = freshEmail("prop")
                const name = `Prop Person ${serial}`
                const customer = await run(createCustomer(app, merchant.key, {
                  email,
                  name,
                  external_id: `prop-${serial}`,
                  phone: "+855 12 999 000",
                  metadata: { note: "private" }
                }))
                for (const [change, asUser] of changes) {
                  await run(
                    asUser
                      ? setPreferencesAsUser(app, token, customer.id, change)
                      : setPreferences(app, merchant.key, customer.id, change)
                  )
                }
                const [erased, response] = await run(Effect.flatMap(clientAs(app, token), (console) =>
                  console.customerConsole.erase({ path: { id: customer.id }, withResponse: true })))
                expect(response.status).toBe(200)
                expect(erased).toMatchObject({ email: null, external_id: null, name: null, phone: null, metadata: null })
                expect(erased.erased_at).not.toBeNull()
                const preferences = await run(preferencesOf(app, merchant.key, customer.id))
                expect(preferences).toMatchObject({ email: false, sms: false, telegram: false, marketing: false })
                const log = await run(consentLog(app, token, customer.id))
                for (const event of log) {
                  expect(event.policy_version).toBeNull()
                  expect(event.source === null || event.source === "erasure", String(event.source)).toBe(true)
                }
                expect((await run(listCustomers(app, merchant.key, { email }))).data).toEqual([])
                expect((await run(search(app, token, merchant.storeId, { search: email }))).data).toEqual([])
                const stored = await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
                  sql<{ row: string }>`
                    SELECT row_to_json(c)::text || coalesce((
                      SELECT string_agg(row_to_json(e)::text, '') FROM consent_events e WHERE e.customer_id = c.id
                    ), '') AS row
                    FROM customers c WHERE c.id = ${customer.id}`))
                expect(stored[0]!.row).not.toMatch(/prop-|Prop Person|999 000|private|src-|pv-/)
              }
            ),
            { numRuns: 20 }
          )
        )
      }))

    it.effect("erases personal data in one go, keeps payments and the ledger, and makes lookups miss", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const token = merchant.owner.token
        const email = freshEmail("erase")
        const vanna = {
          email,
          external_id: "crm-erase",
          name: "Vanna Sok",
          phone: "+855 17 000 111",
          metadata: { birthday: "1990-01-01" }
        }
        const customer = yield* createCustomer(app, merchant.key, vanna, "create-vanna")
        yield* setPreferences(app, merchant.key, customer.id, {
          email: true,
          marketing: true,
          source: "checkout",
          policy_version: "2030-01"
        })
        yield* setPreferences(app, merchant.key, customer.id, { marketing: false, source: "unsubscribe-link" })
        const paid = yield* paidPayment(app, merchant.key, { amount: "20.00", customer_id: customer.id })
        yield* refund(app, merchant.key, paid.id, { amount: "5.00" })
        const api = yield* clientAs(app, merchant.key)
        const paymentsBefore = yield* api.payments.list({ urlParams: listParams({ customer_id: customer.id }) })
        const refundsBefore = yield* api.payments.refunds({ path: { id: paid.id }, urlParams: listParams() })
        const ledgerBefore = yield* ledgerOf(merchant.storeId)
        expect(ledgerBefore.balance).toBe("0")
        const metricsBefore = (yield* overview(app, token, customer.id)).metrics

        const [erased, response] = yield* Effect.flatMap(clientAs(app, token), (console) =>
          console.customerConsole.erase({ path: { id: customer.id }, withResponse: true }))
        expect(response.status).toBe(200)
        expect(erased).toMatchObject({
          id: customer.id,
          email: null,
          external_id: null,
          name: null,
          phone: null,
          metadata: null,
          store_id: merchant.storeId,
          created_at: customer.created_at
        })
        expect(erased.erased_at).not.toBeNull()
        expect(erased.updated_at).toBe(erased.erased_at)
        expect(JSON.stringify(yield* wireJson(response))).not.toMatch(/Vanna|erase-|crm-erase|1990/)
        expect(yield* retrieve(app, merchant.key, customer.id)).toEqual(erased)

        // Financial records: untouched.
        expect(yield* api.payments.list({ urlParams: listParams({ customer_id: customer.id }) })).toEqual(paymentsBefore)
        expect(yield* api.payments.refunds({ path: { id: paid.id }, urlParams: listParams() })).toEqual(refundsBefore)
        expect(yield* ledgerOf(merchant.storeId)).toEqual(ledgerBefore)
        const view = yield* overview(app, token, customer.id)
        expect(view.metrics).toEqual(metricsBefore)
        expect(view.recent_payments.map((payment) => payment.id)).toEqual([paid.id])

        // Lookups miss.
        expect((yield* listCustomers(app, merchant.key, { email })).data).toEqual([])
        expect((yield* listCustomers(app, merchant.key, { external_id: "crm-erase" })).data).toEqual([])
        expect((yield* listCustomers(app, merchant.key)).data).toEqual([])
        for (const term of ["vanna", email, "17000111", "crm-erase"]) {
          expect((yield* search(app, token, merchant.storeId, { search: term })).data, term).toEqual([])
        }
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ row: string }>`SELECT row_to_json(c)::text AS row FROM customers c WHERE id = ${customer.id}`
        expect(stored!.row).not.toMatch(/Vanna|erase-|crm-erase|1990|000 111/)
        // A replay of the request that created the customer answers it as it is now.
        const replayed = yield* createCustomer(app, merchant.key, vanna, "create-vanna")
        expect(replayed).toEqual(erased)

        // Consent: every event kept with purpose, granted and time, without its free text; what was still
        // given is withdrawn by the erasure.
        const log = yield* consentLog(app, token, customer.id)
        const rows = log.map((event) => [event.purpose, event.granted, event.source, event.policy_version] as const)
        expect(rows.slice(0, 2)).toEqual([["email", false, "erasure", null], ["marketing", false, null, null]])
        // The first change's two events share its instant, in either order.
        expect([...rows.slice(2)].sort()).toEqual([["email", true, null, null], ["marketing", true, null, null]])
        expect(log[0]!.actor).toEqual({ type: "user", id: merchant.owner.userId })
        const preferences = yield* preferencesOf(app, merchant.key, customer.id)
        expect(preferences).toMatchObject({ email: false, sms: false, telegram: false, marketing: false })
        yield* expectFailure(setPreferences(app, merchant.key, customer.id, { email: true }), "InvalidState", "id")
        yield* expectFailure(paymentFor(app, merchant.key, { customer_id: customer.id }), "InvalidState", "customer_id")

        // Erasing again: 200, the same customer, nothing changed.
        expect(yield* erase(app, token, customer.id)).toEqual(erased)
        expect(yield* consentLog(app, token, customer.id)).toEqual(log)

        // The e-mail and external_id are free again.
        const reborn = yield* createCustomer(app, merchant.key, { email, external_id: "crm-erase" })
        expect(reborn.id).not.toBe(customer.id)
        expect((yield* listCustomers(app, merchant.key, { email })).data.map((c) => c.id)).toEqual([reborn.id])

        // The access log line of the erasure names who erased.
        const line = logs.find((entry) =>
          entry.includes(`DELETE /dashboard/customers/${customer.id}/pii 200`) && entry.includes(`actor=${merchant.owner.userId}`)
        )
        expect(line, logs.filter((entry) => entry.includes("/pii")).join("\n")).toBeDefined()
      }))
  })
})
