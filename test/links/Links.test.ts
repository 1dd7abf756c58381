/**
 * Payment links and invoices over HTTP: the console routes, the public page and its payments, and the
 * public ecosystem catalog.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

const INJECTION = `<script>alert("x")</script><img src=x onerror=alert(1)>`

/** An owner with a store and a test API key of it. */
const merchant = (app: TestAppShape) =>
  Effect.gen(function*() {
    const owner = yield* Effect.promise(() => signUp(app))
    const store = yield* Effect.promise(() => createStore(app, owner.token, "Riverside Cafe"))
    const key = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
    expect(key.status).toBe(201)
    return { owner, storeId: store.id, key: key.body.secret as string }
  })

const createLink = (app: TestAppShape, token: string, storeId: string, body: Record<string, unknown>) =>
  call(app, "POST", `/dashboard/stores/${storeId}/links`, { token, body })

const pay = (app: TestAppShape, linkId: string, body: Record<string, unknown> = {}) =>
  call(app, "POST", `/links/${linkId}/pay`, { body })

const simulate = (app: TestAppShape, key: string, id: string, status: string) =>
  Effect.map(call(app, "POST", `/v1/payments/${id}/simulate`, { token: key, body: { status } }), (r) => r.status)

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
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({
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
        expect(created.body.id).toMatch(/^lnk_[0-9A-Za-z]{24}$/)
        expect(created.body.url).toMatch(new RegExp(`^http://[^/]+/links/${created.body.id}$`))

        const invoice = yield* createLink(app, owner.token, storeId, {
          kind: "invoice",
          title: "March rent",
          amount: "5000",
          currency: "KHR",
          customer_email: "tenant@example.com",
          due_date: "2030-03-31"
        })
        expect(invoice.status).toBe(201)
        expect(invoice.body.id).toMatch(/^inv_/)
        expect(invoice.body).toMatchObject({ kind: "invoice", amount: "5000", due_date: "2030-03-31" })

        const open = yield* createLink(app, owner.token, storeId, {
          kind: "link",
          title: "Tip jar",
          currency: "USD",
          min_amount: "1",
          max_amount: "50"
        })
        expect(open.status).toBe(201)
        expect(open.body).toMatchObject({ amount: null, min_amount: "1.00", max_amount: "50.00" })

        const all = yield* call(app, "GET", `/dashboard/stores/${storeId}/links`, { token: owner.token })
        expect(all.status).toBe(200)
        expect(all.body.object).toBe("list")
        expect(all.body.data.map((link: any) => link.id)).toEqual([open.body.id, invoice.body.id, created.body.id])

        const page1 = yield* call(app, "GET", `/dashboard/stores/${storeId}/links?limit=2`, { token: owner.token })
        expect(page1.body.has_more).toBe(true)
        const page2 = yield* call(
          app,
          "GET",
          `/dashboard/stores/${storeId}/links?limit=2&cursor=${page1.body.next_cursor}`,
          { token: owner.token }
        )
        expect(page2.body.data.map((link: any) => link.id)).toEqual([created.body.id])
        expect(page2.body.has_more).toBe(false)

        const invoices = yield* call(app, "GET", `/dashboard/stores/${storeId}/links?kind=invoice`, { token: owner.token })
        expect(invoices.body.data.map((link: any) => link.id)).toEqual([invoice.body.id])

        const off = yield* call(app, "PUT", `/dashboard/links/${created.body.id}`, {
          token: owner.token,
          body: { active: false, title: "Iced latte (L)", description: null }
        })
        expect(off.status).toBe(200)
        expect(off.body).toMatchObject({ active: false, status: "inactive", title: "Iced latte (L)", description: null })
        const inactive = yield* call(app, "GET", `/dashboard/stores/${storeId}/links?active=false`, { token: owner.token })
        expect(inactive.body.data.map((link: any) => link.id)).toEqual([created.body.id])
        const on = yield* call(app, "PUT", `/dashboard/links/${created.body.id}`, { token: owner.token, body: { active: true } })
        expect(on.body).toMatchObject({ active: true, status: "open", title: "Iced latte (L)" })

        const badFilter = yield* call(app, "GET", `/dashboard/stores/${storeId}/links?active=maybe`, { token: owner.token })
        expect(badFilter.status).toBe(400)

        const deleted = yield* call(app, "DELETE", `/dashboard/links/${open.body.id}`, { token: owner.token })
        expect(deleted.status).toBe(200)
        expect(deleted.body).toEqual({ id: open.body.id, object: "payment_link", deleted: true })
        const after = yield* call(app, "GET", `/dashboard/stores/${storeId}/links`, { token: owner.token })
        expect(after.body.data.map((link: any) => link.id)).toEqual([invoice.body.id, created.body.id])
        expect((yield* call(app, "DELETE", `/dashboard/links/${open.body.id}`, { token: owner.token })).status).toBe(404)
        expect((yield* call(app, "GET", `/links/${open.body.id}`)).status).toBe(404)
      }))

    it.effect("validates amounts, invoice fields, expiry and live mode", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* merchant(app)
        const expectInvalid = (body: Record<string, unknown>, param: string, status = 400) =>
          Effect.gen(function*() {
            const response = yield* createLink(app, owner.token, storeId, { kind: "link", title: "T", currency: "USD", ...body })
            expect(response.status, JSON.stringify(response.body)).toBe(status)
            expect(response.body.error.param).toBe(param)
          })
        yield* expectInvalid({ kind: "invoice" }, "amount")
        yield* expectInvalid({ amount: "1.234" }, "amount")
        yield* expectInvalid({ amount: 5 }, "amount")
        yield* expectInvalid({ amount: "5", min_amount: "1" }, "min_amount")
        yield* expectInvalid({ min_amount: "10", max_amount: "5" }, "max_amount")
        yield* expectInvalid({ customer_email: "a@example.com" }, "customer_email")
        yield* expectInvalid({ kind: "invoice", amount: "5", due_date: "2030-02-30" }, "due_date")
        yield* expectInvalid({ expires_at: "2001-01-01T00:00:00Z" }, "expires_at")
        yield* expectInvalid({ expires_at: "tomorrow" }, "expires_at")
        yield* expectInvalid({ title: "" }, "title")
        yield* expectInvalid({ kind: "coupon" }, "kind")
        const live = yield* createLink(app, owner.token, storeId, { kind: "link", title: "T", currency: "USD", livemode: true })
        expect(live.status).toBe(409)
        expect(live.body.error.code).toBe("invalid_state")
      }))

    it.effect("lets only members with the permission manage links, and hides other tenants' links", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        const link = yield* createLink(app, owner.token, storeId, { kind: "link", title: "T", amount: "1", currency: "USD" })
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const analystCreate = yield* createLink(app, analyst.token, storeId, { kind: "link", title: "T", currency: "USD" })
        expect(analystCreate.status).toBe(403)
        expect(analystCreate.body.error.code).toBe("forbidden")
        expect((yield* call(app, "GET", `/dashboard/stores/${storeId}/links`, { token: analyst.token })).status).toBe(200)
        const analystPut = yield* call(app, "PUT", `/dashboard/links/${link.body.id}`, {
          token: analyst.token,
          body: { active: false }
        })
        expect(analystPut.status).toBe(403)

        const developer = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "developer"))
        expect((yield* createLink(app, developer.token, storeId, { kind: "link", title: "D", currency: "USD" })).status)
          .toBe(201)

        // An API key is a credential for the merchant API, not for the console.
        expect((yield* call(app, "GET", `/dashboard/stores/${storeId}/links`, { token: key })).status).toBe(403)

        const stranger = yield* merchant(app)
        for (
          const response of [
            yield* createLink(app, stranger.owner.token, storeId, { kind: "link", title: "T", currency: "USD" }),
            yield* call(app, "GET", `/dashboard/stores/${storeId}/links`, { token: stranger.owner.token }),
            yield* call(app, "PUT", `/dashboard/links/${link.body.id}`, { token: stranger.owner.token, body: { active: false } }),
            yield* call(app, "DELETE", `/dashboard/links/${link.body.id}`, { token: stranger.owner.token })
          ]
        ) {
          expect(response.status).toBe(404)
          expect(response.body.error.code).toBe("not_found")
        }
        // Asked by link id, the answer does not reveal which store the link belongs to.
        const strangerPut = yield* call(app, "PUT", `/dashboard/links/${link.body.id}`, {
          token: stranger.owner.token,
          body: { active: false }
        })
        expect(JSON.stringify(strangerPut.body)).not.toContain(storeId)
        expect((yield* call(app, "GET", `/dashboard/stores/${storeId}/links`)).status).toBe(401)
      }))

    it.effect("shows the public view as JSON without merchant records, and as an escaped page", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* merchant(app)
        yield* call(app, "PUT", `/stores/${storeId}/branding`, {
          token: owner.token,
          body: { display_name: `Cafe ${INJECTION}`, primary_color: "#123456" }
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
        const view = yield* call(app, "GET", `/links/${link.body.id}`)
        expect(view.status).toBe(200)
        expect(view.body).toMatchObject({
          id: link.body.id,
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
        expect(view.body.pay_url).toMatch(new RegExp(`/links/${link.body.id}/pay$`))
        const json = JSON.stringify(view.body)
        expect(json).not.toContain("private-customer")
        expect(json).not.toContain("internal-ref-42")
        expect(json).not.toContain(storeId)

        const response = yield* Effect.promise(() =>
          app.fetch(`/links/${link.body.id}`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("text/html")
        expect(response.headers.get("content-security-policy")).toContain("script-src 'nonce-")
        const html = yield* Effect.promise(() => response.text())
        expect(html).toContain("<!doctype html>")
        expect(html).toContain("12.50 USD")
        expect(html).toContain(`data-pay-url="/links/${link.body.id}/pay"`)
        expect(html).not.toContain(INJECTION)
        expect(html).toContain("Order &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;")
        expect(html).toContain("Notes &lt;script&gt;")
        expect(html.match(/<script/g)).toHaveLength(1)
        expect(html).toMatch(/<script nonce="[A-Za-z0-9+/=]+">/)
        expect(html).not.toMatch(/<img src=x/)
        expect(html).not.toContain("private-customer")

        expect((yield* call(app, "GET", "/links/lnk_doesnotexist000000000000")).status).toBe(404)
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
        const paid = yield* pay(app, link.body.id, { payer_email: "payer@example.com" })
        expect(paid.status).toBe(201)
        expect(paid.body).toMatchObject({ object: "link_payment", link_id: link.body.id, amount: "3.50", currency: "USD" })
        expect(paid.body.payment_id).toMatch(/^pay_/)
        expect(paid.body.checkout_url).toMatch(new RegExp(`/checkout/${paid.body.payment_id}$`))

        const payment = yield* call(app, "GET", `/v1/payments/${paid.body.payment_id}`, { token: key })
        expect(payment.status).toBe(200)
        expect(payment.body).toMatchObject({
          id: paid.body.payment_id,
          status: "pending",
          amount: "3.50",
          currency: "USD",
          description: "Iced latte",
          reference_id: "menu-7",
          livemode: false,
          store_id: storeId,
          metadata: { link_id: link.body.id, payer_email: "payer@example.com" }
        })

        const checkoutPath = new URL(paid.body.checkout_url).pathname
        const checkout = yield* call(app, "GET", checkoutPath)
        expect(checkout.status).toBe(200)
        expect(checkout.body).toMatchObject({ id: paid.body.payment_id, object: "checkout", amount: "3.50" })

        // The payer may repeat the fixed amount, but not change it.
        expect((yield* pay(app, link.body.id, { amount: "3.5" })).status).toBe(201)
        const other = yield* pay(app, link.body.id, { amount: "1.00" })
        expect(other.status).toBe(400)
        expect(other.body.error.param).toBe("amount")

        const listed = yield* call(app, "GET", `/dashboard/stores/${storeId}/links`, { token: owner.token })
        expect(listed.body.data[0]).toMatchObject({ id: link.body.id, payments_count: 2 })
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
        const within = yield* pay(app, link.body.id, { amount: "5000" })
        expect(within.status).toBe(201)
        expect(within.body.amount).toBe("5000")
        const payment = yield* call(app, "GET", `/v1/payments/${within.body.payment_id}`, { token: key })
        expect(payment.body).toMatchObject({ amount: "5000", currency: "KHR", reference_id: null })

        for (const body of [{ amount: "999" }, { amount: "100001" }, {}, { amount: "12.5" }, { amount: 5000 }]) {
          const refused = yield* pay(app, link.body.id, body)
          expect(refused.status, JSON.stringify(body)).toBe(400)
          expect(refused.body.error.code).toBe("invalid_request")
          expect(refused.body.error.param).toBe("amount")
        }
        const listed = yield* call(app, "GET", `/dashboard/stores/${storeId}/links`, { token: owner.token })
        expect(listed.body.data[0].payments_count).toBe(1)
      }))

    it.effect("refuses inactive and expired links, and forgets deleted ones", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* merchant(app)
        const link = yield* createLink(app, owner.token, storeId, { kind: "link", title: "T", amount: "2", currency: "USD" })
        expect((yield* pay(app, link.body.id)).status).toBe(201)

        yield* call(app, "PUT", `/dashboard/links/${link.body.id}`, { token: owner.token, body: { active: false } })
        const inactive = yield* pay(app, link.body.id)
        expect(inactive.status).toBe(409)
        expect(inactive.body.error.code).toBe("invalid_state")
        const view = yield* call(app, "GET", `/links/${link.body.id}`)
        expect(view.body).toMatchObject({ active: false, status: "inactive" })
        const page = yield* Effect.promise(() =>
          app.fetch(`/links/${link.body.id}`, { headers: { accept: "text/html" } }).then((r) => r.text())
        )
        expect(page).toContain("not active")
        expect(page).not.toContain("<script")

        // A link that took payments is kept, but it is gone for everyone.
        const deleted = yield* call(app, "DELETE", `/dashboard/links/${link.body.id}`, { token: owner.token })
        expect(deleted.body).toEqual({ id: link.body.id, object: "payment_link", deleted: true })
        expect((yield* call(app, "GET", `/links/${link.body.id}`)).status).toBe(404)
        const gone = yield* pay(app, link.body.id)
        expect(gone.status).toBe(404)
        expect(gone.body.error.code).toBe("not_found")
        expect(
          (yield* call(app, "PUT", `/dashboard/links/${link.body.id}`, { token: owner.token, body: { active: true } }))
            .status
        ).toBe(404)
        expect((yield* pay(app, "lnk_doesnotexist000000000000")).status).toBe(404)

        const shortLived = yield* createLink(app, owner.token, storeId, {
          kind: "link",
          title: "Flash sale",
          amount: "1",
          currency: "USD",
          expires_at: new Date(Date.now() + 1500).toISOString()
        })
        expect(shortLived.status).toBe(201)
        yield* Effect.sleep("2 seconds")
        const expired = yield* pay(app, shortLived.body.id)
        expect(expired.status).toBe(409)
        expect(expired.body.error.code).toBe("invalid_state")
        expect((yield* call(app, "GET", `/links/${shortLived.body.id}`)).body.status).toBe("expired")
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
        const first = yield* pay(app, invoice.body.id)
        expect(first.status).toBe(201)
        const payment = yield* call(app, "GET", `/v1/payments/${first.body.payment_id}`, { token: key })
        expect(payment.body).toMatchObject({
          amount: "120.00",
          reference_id: invoice.body.id,
          metadata: { link_id: invoice.body.id }
        })
        expect(yield* simulate(app, key, first.body.payment_id, "scanned")).toBe(201)
        expect(yield* simulate(app, key, first.body.payment_id, "paid")).toBe(201)

        const again = yield* pay(app, invoice.body.id)
        expect(again.status).toBe(409)
        expect(again.body.error.code).toBe("invalid_state")
        expect(again.body.error.message).toContain("paid")

        const view = yield* call(app, "GET", `/links/${invoice.body.id}`)
        expect(view.body).toMatchObject({ status: "paid", active: false })
        const listed = yield* call(app, "GET", `/dashboard/stores/${storeId}/links?kind=invoice`, { token: owner.token })
        expect(listed.body.data[0]).toMatchObject({ id: invoice.body.id, status: "paid", payments_count: 1 })
        expect(listed.body.data[0].paid_at).not.toBeNull()
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
        // Twelve payers at once: one payment, the same checkout address for all.
        const racing = yield* Effect.all(Array.from({ length: 12 }, () => pay(app, invoice.body.id)), {
          concurrency: "unbounded"
        })
        expect(racing.map((answer) => answer.status)).toEqual(racing.map(() => 201))
        const paymentIds = new Set(racing.map((answer) => answer.body.payment_id))
        expect(paymentIds.size).toBe(1)
        const first = racing[0]!.body
        expect(new Set(racing.map((answer) => answer.body.checkout_url))).toEqual(new Set([first.checkout_url]))
        expect(first.checkout_url).toMatch(new RegExp(`/checkout/${first.payment_id}$`))

        // Later, while it is pending or scanned: still that payment.
        expect(yield* simulate(app, key, first.payment_id, "scanned")).toBe(201)
        const again = yield* pay(app, invoice.body.id)
        expect(again.status).toBe(201)
        expect(again.body).toMatchObject({ payment_id: first.payment_id, checkout_url: first.checkout_url, amount: "80.00" })

        // Once it expired, paying starts a new payment; once that is paid, the invoice is closed.
        expect(yield* simulate(app, key, first.payment_id, "expired")).toBe(201)
        const second = yield* pay(app, invoice.body.id)
        expect(second.status).toBe(201)
        expect(second.body.payment_id).not.toBe(first.payment_id)
        expect(yield* simulate(app, key, second.body.payment_id, "scanned")).toBe(201)
        expect(yield* simulate(app, key, second.body.payment_id, "paid")).toBe(201)
        const afterPaid = yield* Effect.all(Array.from({ length: 4 }, () => pay(app, invoice.body.id)), {
          concurrency: "unbounded"
        })
        for (const answer of afterPaid) {
          expect(answer.status).toBe(409)
          expect(answer.body.error.code).toBe("invalid_state")
        }
        const listed = yield* call(app, "GET", `/dashboard/stores/${storeId}/links?kind=invoice`, { token: owner.token })
        expect(listed.body.data.find((link: any) => link.id === invoice.body.id)).toMatchObject({
          status: "paid",
          payments_count: 2
        })
      }))

    it.effect("lists the ecosystem catalog like any list", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const catalog = yield* call(app, "GET", "/ecosystem/products")
        expect(catalog.status).toBe(200)
        expect(catalog.body).toMatchObject({ object: "list", has_more: false, next_cursor: null })
        const products = catalog.body.data as Array<any>
        expect(products.length).toBeGreaterThanOrEqual(15)
        for (const product of products) {
          expect(Object.keys(product).sort()).toEqual(
            ["category", "description", "id", "name", "object", "status", "url_path"]
          )
          expect(product.object).toBe("ecosystem_product")
          expect(product.url_path).toMatch(/^\//)
          // What the catalog calls available is a route (an unknown id there is "No such …", not "No route").
          const concrete = product.url_path.replace(/\{[^}]+\}/g, "x")
          const answer = yield* Effect.promise(() => app.fetch(concrete).then((response) => response.text()))
          const routed = !answer.includes("No route for")
          expect(routed, product.url_path).toBe(product.status === "available")
          expect(["available", "coming_soon"]).toContain(product.status)
        }
        expect(products.find((product) => product.id === "eco_payments_api").status).toBe("available")
        expect(products.find((product) => product.id === "eco_loyalty").status).toBe("coming_soon")
        const names = products.map((product) => product.name).join(" | ")
        for (const expected of ["Payments API", "Hosted checkout", "Payment links", "Webhooks", "Loyalty", "Billing"]) {
          expect(names).toContain(expected)
        }
        expect(new Set(products.map((product) => product.id)).size).toBe(products.length)

        const pages: Array<string> = []
        let cursor: string | null = null
        do {
          const response: any = yield* call(app, "GET", `/ecosystem/products?limit=5${cursor ? `&cursor=${cursor}` : ""}`)
          expect(response.status).toBe(200)
          pages.push(...response.body.data.map((product: any) => product.id))
          cursor = response.body.next_cursor
        } while (cursor !== null)
        expect(pages).toEqual(products.map((product) => product.id))

        const bad = yield* call(app, "GET", "/ecosystem/products?cursor=nonsense")
        expect(bad.status).toBe(400)
        expect(bad.body.error.param).toBe("cursor")
      }))
  })
})
