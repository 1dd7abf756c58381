/**
 * Payment links and invoices over HTTP: the console routes, the public page and its payments, and the
 * public ecosystem catalog.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PaymentId, PaymentLinkId } from "../../domain/Ids.ts"
import type { CreateLink, LinkListParams, PayLink, PaymentLink, UpdateLink } from "../../domain/Links.ts"
import { DEFAULT_LIST_LIMIT } from "../../domain/Lists.ts"
import type { Store } from "../../domain/Stores.ts"
import { addMember } from "../support/Accounts.ts"
import { type AnyCallError, clientAs, expectFailure, wireJson } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { newMerchant, retrievePayment, simulate } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

// Raw calls only for input the typed client would refuse to send (outside the request schemas).
const call = makeCall()

const INJECTION = `<script>alert("x")</script><img src=x onerror=alert(1)>`

/** An owner with a store and a test API key of it. */
const merchant = (app: TestAppShape) => newMerchant(app, "Riverside Cafe")

type StoreId = Store["id"]
type LinkId = PaymentLink["id"]

const createLink = (app: TestAppShape, token: string, storeId: StoreId, payload: CreateLink) =>
  Effect.flatMap(clientAs(app, token), (api) => api.links.create({ path: { storeId }, payload }))

/** The typed client always sends `limit`. */
const listLinks = (app: TestAppShape, token: string, storeId: StoreId, urlParams: Partial<LinkListParams> = {}) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.links.list({ path: { storeId }, urlParams: { limit: DEFAULT_LIST_LIMIT, ...urlParams } }))

const updateLink = (app: TestAppShape, token: string, linkId: LinkId, payload: UpdateLink) =>
  Effect.flatMap(clientAs(app, token), (api) => api.links.update({ path: { linkId }, payload }))

const deleteLink = (app: TestAppShape, token: string, linkId: LinkId) =>
  Effect.flatMap(clientAs(app, token), (api) => api.links.delete({ path: { linkId } }))

const view = (app: TestAppShape, id: LinkId) => Effect.flatMap(clientAs(app), (api) => api.publicLinks.view({ path: { id } }))

const pay = (app: TestAppShape, linkId: LinkId, payload: PayLink = {}) =>
  Effect.flatMap(clientAs(app), (api) => api.publicLinks.pay({ path: { id: linkId }, payload }))


describe("payment links", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("console, public page, payments", (it) => {
    it.effect("creates, lists, deactivates, activates and deletes links", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* merchant(app)
        const created = yield* createLink(app, owner.token, storeId, {
          kind: "link",
          title: "Iced latte",
          description: "Large",
          amount: "3.5",
          currency: "USD"
        })
        expect(created).toMatchObject({
          object: "payment_link",
          kind: "link",
          store_id: storeId,
          livemode: false,
          title: "Iced latte",
          description: "Large",
          amount: "3.50",
          min_amount: null,
          max_amount: null,
          currency: "USD",
          active: true,
          status: "open",
          payments_count: 0,
          paid_at: null
        })
        expect(created.id).toMatch(/^lnk_[0-9A-Za-z]{24}$/)
        expect(created.url).toMatch(new RegExp(`^http://[^/]+/links/${created.id}$`))

        const invoice = yield* createLink(app, owner.token, storeId, {
          kind: "invoice",
          title: "March rent",
          amount: "5000",
          currency: "KHR",
          customer_email: "tenant@example.com",
          due_date: "2030-03-31"
        })
        expect(invoice.id).toMatch(/^inv_/)
        expect(invoice).toMatchObject({ kind: "invoice", amount: "5000", due_date: "2030-03-31" })

        const open = yield* createLink(app, owner.token, storeId, {
          kind: "link",
          title: "Tip jar",
          currency: "USD",
          min_amount: "1",
          max_amount: "50"
        })
        expect(open).toMatchObject({ amount: null, min_amount: "1.00", max_amount: "50.00" })

        const all = yield* listLinks(app, owner.token, storeId)
        expect(all.object).toBe("list")
        expect(all.data.map((link) => link.id)).toEqual([open.id, invoice.id, created.id])

        const page1 = yield* listLinks(app, owner.token, storeId, { limit: 2 })
        expect(page1.has_more).toBe(true)
        expect(page1.next_cursor).not.toBeNull()
        const page2 = yield* listLinks(app, owner.token, storeId, { limit: 2, cursor: page1.next_cursor ?? "" })
        expect(page2.data.map((link) => link.id)).toEqual([created.id])
        expect(page2.has_more).toBe(false)

        const invoices = yield* listLinks(app, owner.token, storeId, { kind: "invoice" })
        expect(invoices.data.map((link) => link.id)).toEqual([invoice.id])

        const off = yield* updateLink(app, owner.token, created.id, { active: false, title: "Iced latte (L)", description: null })
        expect(off).toMatchObject({ active: false, status: "inactive", title: "Iced latte (L)", description: null })
        const inactive = yield* listLinks(app, owner.token, storeId, { active: false })
        expect(inactive.data.map((link) => link.id)).toEqual([created.id])
        const on = yield* updateLink(app, owner.token, created.id, { active: true })
        expect(on).toMatchObject({ active: true, status: "open", title: "Iced latte (L)" })

        // Raw: not a boolean.
        const badFilter = yield* call(app, "GET", `/dashboard/stores/${storeId}/links?active=maybe`, { token: owner.token })
        expect(badFilter.status).toBe(400)
        expect(badFilter.body.error).toMatchObject({ code: "invalid_request", param: "active" })

        const deleted = yield* deleteLink(app, owner.token, open.id)
        expect(deleted).toEqual({ id: open.id, object: "payment_link", deleted: true })
        const after = yield* listLinks(app, owner.token, storeId)
        expect(after.data.map((link) => link.id)).toEqual([invoice.id, created.id])
        yield* expectFailure(deleteLink(app, owner.token, open.id), "NotFound")
        yield* expectFailure(view(app, open.id), "NotFound")
      }))

    it.effect("validates amounts, invoice fields, expiry and live mode", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* merchant(app)
        // Well-formed, and refused by the service's rules.
        const refused: Array<[Partial<CreateLink>, string]> = [
          [{ kind: "invoice" }, "amount"],
          [{ amount: "1.234" }, "amount"],
          [{ amount: "5", min_amount: "1" }, "min_amount"],
          [{ min_amount: "10", max_amount: "5" }, "max_amount"],
          [{ customer_email: "a@example.com" }, "customer_email"],
          [{ expires_at: "2001-01-01T00:00:00Z" }, "expires_at"]
        ]
        for (const [payload, param] of refused) {
          yield* expectFailure(
            createLink(app, owner.token, storeId, { kind: "link", title: "T", currency: "USD", ...payload }),
            "InvalidRequest",
            param,
            JSON.stringify(payload)
          )
        }
        // Raw: these are outside the request schema, which the typed client would not send.
        const malformed: Array<[Record<string, unknown>, string]> = [
          [{ amount: 5 }, "amount"],
          [{ kind: "invoice", amount: "5", due_date: "2030-02-30" }, "due_date"],
          [{ expires_at: "tomorrow" }, "expires_at"],
          [{ title: "" }, "title"],
          [{ kind: "coupon" }, "kind"]
        ]
        for (const [body, param] of malformed) {
          const response = yield* call(app, "POST", `/dashboard/stores/${storeId}/links`, {
            token: owner.token,
            body: { kind: "link", title: "T", currency: "USD", ...body }
          })
          expect(response.status, JSON.stringify(response.body)).toBe(400)
          expect(response.body.error).toMatchObject({ code: "invalid_request", param })
        }
        yield* expectFailure(createLink(app, owner.token, storeId, { kind: "link", title: "T", currency: "USD", livemode: true }), "InvalidState")
      }))

    it.effect("lets only members with the permission manage links, and hides other tenants' links", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        const link = yield* createLink(app, owner.token, storeId, { kind: "link", title: "T", amount: "1", currency: "USD" })
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        yield* expectFailure(createLink(app, analyst.token, storeId, { kind: "link", title: "T", currency: "USD" }), "Forbidden")
        yield* listLinks(app, analyst.token, storeId)
        yield* expectFailure(updateLink(app, analyst.token, link.id, { active: false }), "Forbidden")

        const developer = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "developer"))
        yield* createLink(app, developer.token, storeId, { kind: "link", title: "D", currency: "USD" })

        // An API key is a credential for the merchant API, not for the console.
        yield* expectFailure(listLinks(app, key, storeId), "Forbidden")

        const stranger = yield* merchant(app)
        const asStranger = stranger.owner.token
        const attempts: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
          ["create", createLink(app, asStranger, storeId, { kind: "link", title: "T", currency: "USD" })],
          ["list", listLinks(app, asStranger, storeId)],
          ["update", updateLink(app, asStranger, link.id, { active: false })],
          ["delete", deleteLink(app, asStranger, link.id)]
        ]
        for (const [route, request] of attempts) yield* expectFailure(request, "NotFound", undefined, route)
        // Asked by link id, the answer does not reveal which store the link belongs to.
        const strangerPut = yield* expectFailure(updateLink(app, asStranger, link.id, { active: false }), "NotFound")
        expect(JSON.stringify(strangerPut)).not.toContain(storeId)
        yield* expectFailure(listLinks(app, "", storeId), "Unauthorized")
      }))

    it.effect("shows the public view as JSON without merchant records, and as an escaped page", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* merchant(app)
        yield* (yield* clientAs(app, owner.token)).stores.updateBranding({
          path: { id: storeId },
          payload: { display_name: `Cafe ${INJECTION}`, primary_color: "#123456" }
        })
        const link = yield* createLink(app, owner.token, storeId, {
          kind: "invoice",
          title: `Order ${INJECTION}`,
          description: `Notes ${INJECTION}`,
          amount: "12.50",
          currency: "USD",
          reference_id: "internal-ref-42",
          customer_email: "private-customer@example.com",
          due_date: "2030-01-31"
        })
        const [viewed, viewResponse] = yield* app.client.publicLinks.view({ path: { id: link.id }, withResponse: true })
        expect(viewed).toMatchObject({
          id: link.id,
          object: "payment_link",
          kind: "invoice",
          title: `Order ${INJECTION}`,
          amount: "12.50",
          currency: "USD",
          active: true,
          status: "open",
          livemode: false,
          due_date: "2030-01-31",
          merchant: { name: `Cafe ${INJECTION}`, primary_color: "#123456" }
        })
        expect(viewed.pay_url).toMatch(new RegExp(`/links/${link.id}/pay$`))
        // The wire, not the decoded view (whose class would drop any field it does not name).
        const json = JSON.stringify(yield* wireJson(viewResponse))
        expect(json).not.toContain("private-customer")
        expect(json).not.toContain("internal-ref-42")
        expect(json).not.toContain(storeId)

        // Raw: the HTML page, which the typed client does not read.
        const response = yield* Effect.promise(() =>
          app.fetch(`/links/${link.id}`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("text/html")
        expect(response.headers.get("content-security-policy")).toContain("script-src 'nonce-")
        const html = yield* Effect.promise(() => response.text())
        expect(html).toContain("<!doctype html>")
        expect(html).toContain("$12.50")
        expect(html).toContain(`data-pay-url="/links/${link.id}/pay"`)
        expect(html).not.toContain(INJECTION)
        expect(html).toContain("Order &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;")
        expect(html).toContain("Notes &lt;script&gt;")
        expect(html.match(/<script/g)).toHaveLength(1)
        expect(html).toMatch(/<script nonce="[A-Za-z0-9+/=]+">/)
        expect(html).not.toMatch(/<img src=x/)
        expect(html).not.toContain("private-customer")

        yield* expectFailure(view(app, PaymentLinkId.make("lnk_doesnotexist000000000000")), "NotFound")
      }))

    it.effect("pays a fixed-amount link through the payments engine", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        const link = yield* createLink(app, owner.token, storeId, {
          kind: "link",
          title: "Iced latte",
          amount: "3.50",
          currency: "USD",
          reference_id: "menu-7"
        })
        const paid = yield* pay(app, link.id, { payer_email: "payer@example.com" })
        expect(paid).toMatchObject({ object: "link_payment", link_id: link.id, amount: "3.50", currency: "USD" })
        expect(paid.payment_id).toMatch(/^pay_/)
        expect(paid.checkout_url).toMatch(new RegExp(`/checkout/${paid.payment_id}$`))

        const payment = yield* retrievePayment(app, key, paid.payment_id)
        expect(payment).toMatchObject({
          id: paid.payment_id,
          status: "pending",
          amount: "3.50",
          currency: "USD",
          description: "Iced latte",
          reference_id: "menu-7",
          livemode: false,
          store_id: storeId,
          metadata: { link_id: link.id, payer_email: "payer@example.com" }
        })

        // The checkout address answers the payment's checkout view.
        const checkoutId = new URL(paid.checkout_url).pathname.replace(/^\/checkout\//, "")
        const checkout = yield* app.client.checkout.view({ path: { id: PaymentId.make(checkoutId) } })
        expect(checkout).toMatchObject({ id: paid.payment_id, object: "checkout", amount: "3.50" })

        // The payer may repeat the fixed amount, but not change it.
        yield* pay(app, link.id, { amount: "3.5" })
        yield* expectFailure(pay(app, link.id, { amount: "1.00" }), "InvalidRequest", "amount")

        const listed = yield* listLinks(app, owner.token, storeId)
        expect(listed.data[0]).toMatchObject({ id: link.id, payments_count: 2 })
      }))

    it.effect("lets the payer choose the amount within the link's bounds", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        const link = yield* createLink(app, owner.token, storeId, {
          kind: "link",
          title: "Donation",
          currency: "KHR",
          min_amount: "1000",
          max_amount: "100000"
        })
        const within = yield* pay(app, link.id, { amount: "5000" })
        expect(within.amount).toBe("5000")
        const payment = yield* retrievePayment(app, key, within.payment_id)
        expect(payment).toMatchObject({ amount: "5000", currency: "KHR", reference_id: null })

        for (const payload of [{ amount: "999" }, { amount: "100001" }, {}, { amount: "12.5" }]) {
          yield* expectFailure(pay(app, link.id, payload), "InvalidRequest", "amount", JSON.stringify(payload))
        }
        // Raw: a JSON number, outside the request schema.
        const numeric = yield* call(app, "POST", `/links/${link.id}/pay`, { body: { amount: 5000 } })
        expect(numeric.status).toBe(400)
        expect(numeric.body.error.code).toBe("invalid_request")
        expect(numeric.body.error.param).toBe("amount")
        const listed = yield* listLinks(app, owner.token, storeId)
        expect(listed.data[0]!.payments_count).toBe(1)
      }))

    it.effect("refuses inactive and expired links, and forgets deleted ones", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* merchant(app)
        const link = yield* createLink(app, owner.token, storeId, { kind: "link", title: "T", amount: "2", currency: "USD" })
        yield* pay(app, link.id)

        yield* updateLink(app, owner.token, link.id, { active: false })
        yield* expectFailure(pay(app, link.id), "InvalidState")
        expect(yield* view(app, link.id)).toMatchObject({ active: false, status: "inactive" })
        // Raw: the HTML page.
        const page = yield* Effect.promise(() =>
          app.fetch(`/links/${link.id}`, { headers: { accept: "text/html" } }).then((r) => r.text())
        )
        expect(page).toContain("not active")
        expect(page).not.toContain("<script")

        // A link that took payments is kept, but it is gone for everyone.
        expect(yield* deleteLink(app, owner.token, link.id)).toEqual({ id: link.id, object: "payment_link", deleted: true })
        yield* expectFailure(view(app, link.id), "NotFound")
        yield* expectFailure(pay(app, link.id), "NotFound")
        yield* expectFailure(updateLink(app, owner.token, link.id, { active: true }), "NotFound")
        yield* expectFailure(pay(app, PaymentLinkId.make("lnk_doesnotexist000000000000")), "NotFound")

        const shortLived = yield* createLink(app, owner.token, storeId, {
          kind: "link",
          title: "Flash sale",
          amount: "1",
          currency: "USD",
          expires_at: new Date(Date.now() + 1500).toISOString()
        })
        yield* Effect.sleep("2 seconds")
        yield* expectFailure(pay(app, shortLived.id), "InvalidState")
        expect((yield* view(app, shortLived.id)).status).toBe("expired")
      }))

    it.effect("takes one payment for an invoice", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        const invoice = yield* createLink(app, owner.token, storeId, {
          kind: "invoice",
          title: "Catering, 12 May",
          amount: "120.00",
          currency: "USD",
          customer_email: "client@example.com"
        })
        const first = yield* pay(app, invoice.id)
        const payment = yield* retrievePayment(app, key, first.payment_id)
        expect(payment).toMatchObject({
          amount: "120.00",
          reference_id: invoice.id,
          metadata: { link_id: invoice.id }
        })
        yield* simulate(app, key, first.payment_id, "scanned")
        yield* simulate(app, key, first.payment_id, "paid")

        const again = yield* expectFailure(pay(app, invoice.id), "InvalidState")
        expect(again.message).toContain("paid")

        expect(yield* view(app, invoice.id)).toMatchObject({ status: "paid", active: false })
        const listed = yield* listLinks(app, owner.token, storeId, { kind: "invoice" })
        expect(listed.data[0]).toMatchObject({ id: invoice.id, status: "paid", payments_count: 1 })
        expect(listed.data[0]!.paid_at).not.toBeNull()
      }))

    it.effect("answers concurrent and repeated pays of an invoice with its one pending payment", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        const invoice = yield* createLink(app, owner.token, storeId, {
          kind: "invoice",
          title: "Room 12, two nights",
          amount: "80.00",
          currency: "USD"
        })
        // Twelve payers at once: one payment, the same checkout address for all (each a 201, or the
        // typed call fails).
        const racing = yield* Effect.all(Array.from({ length: 12 }, () => pay(app, invoice.id)), {
          concurrency: "unbounded"
        })
        const paymentIds = new Set(racing.map((answer) => answer.payment_id))
        expect(paymentIds.size).toBe(1)
        const first = racing[0]!
        expect(new Set(racing.map((answer) => answer.checkout_url))).toEqual(new Set([first.checkout_url]))
        expect(first.checkout_url).toMatch(new RegExp(`/checkout/${first.payment_id}$`))

        // Later, while it is pending or scanned: still that payment.
        yield* simulate(app, key, first.payment_id, "scanned")
        const again = yield* pay(app, invoice.id)
        expect(again).toMatchObject({ payment_id: first.payment_id, checkout_url: first.checkout_url, amount: "80.00" })

        // Once it expired, paying starts a new payment; once that is paid, the invoice is closed.
        yield* simulate(app, key, first.payment_id, "expired")
        const second = yield* pay(app, invoice.id)
        expect(second.payment_id).not.toBe(first.payment_id)
        yield* simulate(app, key, second.payment_id, "scanned")
        yield* simulate(app, key, second.payment_id, "paid")
        const afterPaid = yield* Effect.all(Array.from({ length: 4 }, () => Effect.either(pay(app, invoice.id))), {
          concurrency: "unbounded"
        })
        for (const answer of afterPaid) yield* expectFailure(answer, "InvalidState")
        const listed = yield* listLinks(app, owner.token, storeId, { kind: "invoice" })
        expect(listed.data.find((link) => link.id === invoice.id)).toMatchObject({
          status: "paid",
          payments_count: 2
        })
      }))

    it.effect("lists the ecosystem catalog like any list", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const [catalog, catalogResponse] = yield* app.client.ecosystem.products({
          urlParams: { limit: DEFAULT_LIST_LIMIT },
          withResponse: true
        })
        expect(catalog).toMatchObject({ object: "list", has_more: false, next_cursor: null })
        const products = catalog.data
        expect(products.length).toBeGreaterThanOrEqual(15)
        // The keys on the wire, not those of the decoded class.
        const wire = (yield* wireJson(catalogResponse)) as { readonly data: ReadonlyArray<object> }
        expect(wire.data).toHaveLength(products.length)
        for (const product of wire.data) {
          expect(Object.keys(product).sort()).toEqual(
            ["category", "description", "id", "name", "object", "status", "url_path"]
          )
        }
        for (const product of products) {
          expect(product.object).toBe("ecosystem_product")
          expect(product.url_path).toMatch(/^\//)
          // What the catalog calls available is a route (an unknown id there is "No such …", not "No route").
          // Raw: any path the catalog names, whichever operation (if any) serves it.
          const concrete = product.url_path.replace(/\{[^}]+\}/g, "x")
          const answer = yield* Effect.promise(() => app.fetch(concrete).then((response) => response.text()))
          const routed = !answer.includes("No route for")
          expect(routed, product.url_path).toBe(product.status === "available")
          expect(["available", "coming_soon"]).toContain(product.status)
        }
        expect(products.find((product) => product.id === "eco_payments_api")?.status).toBe("available")
        expect(products.find((product) => product.id === "eco_loyalty")?.status).toBe("available")
        expect(products.find((product) => product.id === "eco_analytics")?.status).toBe("available")
        const names = products.map((product) => product.name).join(" | ")
        for (const expected of ["Payments API", "Hosted checkout", "Payment links", "Webhooks", "Loyalty", "Billing"]) {
          expect(names).toContain(expected)
        }
        expect(new Set(products.map((product) => product.id)).size).toBe(products.length)

        const pages: Array<string> = []
        let cursor: string | null = null
        do {
          const current: typeof catalog = yield* app.client.ecosystem.products({
            urlParams: cursor === null ? { limit: 5 } : { limit: 5, cursor }
          })
          pages.push(...current.data.map((product) => product.id))
          cursor = current.next_cursor
        } while (cursor !== null)
        expect(pages).toEqual(products.map((product) => product.id))

        yield* expectFailure(app.client.ecosystem.products({ urlParams: { limit: DEFAULT_LIST_LIMIT, cursor: "nonsense" } }), "InvalidRequest", "cursor")
      }))
  })
})
