/**
 * The wire conventions held everywhere: unknown body fields refused naming the field, errors that name
 * every allowed value and no internal schema, every object with `id` and `created_at`, the payments
 * list readable with a session like the other reads, the reset link opening a real page, and
 * registration throttled per address. (Wrong passwords and TOTP codes as 401: test/accounts.)
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createStore, signUp, uniqueEmail } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

const ADMIN_EMAIL = uniqueEmail("admin")
const REGISTRATION_LIMIT = 3

const merchantOf = (app: TestAppShape) =>
  Effect.gen(function*() {
    const owner = yield* Effect.promise(() => signUp(app))
    const store = yield* Effect.promise(() => createStore(app, owner.token))
    const key = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
    return { owner, storeId: store.id, apiKey: key.body.secret as string }
  })

/** Internal schema names and the library's own renderings must never reach a client. */
const INTERNAL = /Dto\b|Expected |readonly |ReadonlyArray|maxLength\(|minLength\(|character\(s\)|\bactual\b/

describe("wire consistency", () => {
  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), { timeout: 120_000, excludeTestServices: true })(
    "the running service",
    (it) => {
      it.effect("refuses a body field the operation does not have, naming it (nested ones too)", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { apiKey, owner, storeId } = yield* merchantOf(app)
          const payment = yield* call(app, "POST", "/v1/payments", {
            token: apiKey,
            body: { amount: "1.00", currency: "USD", amout: "2.00" }
          })
          expect(payment.status).toBe(400)
          expect(payment.body.error).toMatchObject({ code: "invalid_request", param: "amout" })
          expect(payment.body.error.message).toContain("amount, currency")
          const branding = yield* call(app, "PUT", `/stores/${storeId}/branding`, {
            token: owner.token,
            body: { display_name: "Shop", colour: "#000000" }
          })
          expect(branding.body.error).toMatchObject({ code: "invalid_request", param: "colour" })
          const nested = yield* call(app, "POST", "/verification", {
            token: owner.token,
            body: {
              business_name: "Shop",
              registration_number: "R-1",
              contact: { name: "A", email: "a@example.com", fax: "1" },
              documents: [{ type: "owner_id", url: "https://docs.example.com/id.pdf" }]
            }
          })
          expect(nested.body.error).toMatchObject({ code: "invalid_request", param: "contact.fax" })
          const login = yield* call(app, "POST", "/auth/login", { body: { email: "a@example.com", password: "x", remember: true } })
          expect(login.body.error).toMatchObject({ code: "invalid_request", param: "remember" })
        }))

      it.effect("words errors for clients: every allowed value named, no internal schema", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { apiKey, owner, storeId } = yield* merchantOf(app)
          const currency = yield* call(app, "POST", "/v1/payments", { token: apiKey, body: { amount: "1.00", currency: "EUR" } })
          expect(currency.body.error).toEqual({
            code: "invalid_request",
            message: "currency: must be USD or KHR",
            param: "currency"
          })
          const status = yield* call(app, "GET", "/v1/payments?status=done", { token: apiKey })
          expect(status.body.error.message).toBe(
            "status: must be pending, scanned, paid, expired, failed, cancelled, refunded or partially_refunded"
          )
          const simulate = yield* call(app, "POST", "/v1/payments/pay_x/simulate", { token: apiKey, body: { status: "done" } })
          expect(simulate.body.error.message).toBe("status: must be scanned, paid, failed or expired")
          const role = yield* call(app, "POST", `/dashboard/orgs/${owner.organizationId}/members`, {
            token: owner.token,
            body: { email: "someone@example.com", role: "owner" }
          })
          expect(role.body.error.message).toBe("role: must be admin, developer or analyst")
          const wrongTypes = [
            yield* call(app, "POST", "/v1/payments", { token: apiKey, body: { amount: "1.00", currency: "USD", metadata: "x" } }),
            yield* call(app, "POST", "/v1/payments", { token: apiKey, body: { amount: "1.00", currency: "USD", expires_in: "x" } }),
            yield* call(app, "PUT", `/stores/${storeId}/live-mode`, { token: owner.token, body: { live_mode: "yes" } }),
            yield* call(app, "PUT", `/stores/${storeId}/branding`, { token: owner.token, body: { display_name: 5 } }),
            yield* call(app, "POST", "/verification", {
              token: owner.token,
              body: { business_name: "S", registration_number: "R", contact: "x", documents: "x" }
            }),
            yield* call(app, "POST", "/v1/payments", { token: apiKey, body: null }),
            yield* call(app, "POST", "/v1/payments", { token: apiKey, body: [1] })
          ]
          for (const answer of wrongTypes) {
            expect(answer.status).toBe(400)
            expect(answer.body.error.message).not.toMatch(INTERNAL)
          }
          expect(wrongTypes.map((answer) => answer.body.error.message)).toEqual([
            "metadata: must be an object",
            "expires_in: must be a number",
            "live_mode: must be true or false",
            "display_name: must be a string",
            "contact: must be an object",
            "The request body must be a JSON object",
            "The request body must be a JSON object"
          ])
        }))

      it.effect("lists payments with a session token for a store the user may read", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { apiKey, owner, storeId } = yield* merchantOf(app)
          const created = yield* call(app, "POST", "/v1/payments", { token: apiKey, body: { amount: "3.00", currency: "USD" } })
          const listed = yield* call(app, "GET", `/v1/payments?store_id=${storeId}`, { token: owner.token })
          expect(listed.status).toBe(200)
          expect(listed.body.data.map((payment: any) => payment.id)).toEqual([created.body.id])
          const live = yield* call(app, "GET", `/v1/payments?store_id=${storeId}&livemode=true`, { token: owner.token })
          expect(live.body.data).toEqual([])
          const withoutStore = yield* call(app, "GET", "/v1/payments", { token: owner.token })
          expect(withoutStore.status).toBe(400)
          expect(withoutStore.body.error.param).toBe("store_id")
          const stranger = yield* Effect.promise(() => signUp(app))
          const foreign = yield* call(app, "GET", `/v1/payments?store_id=${storeId}`, { token: stranger.token })
          expect(foreign.status).toBe(404)
          // An API key still lists its own store and may not name another.
          expect((yield* call(app, "GET", "/v1/payments", { token: apiKey })).body.data).toHaveLength(1)
          const other = yield* merchantOf(app)
          expect((yield* call(app, "GET", `/v1/payments?store_id=${other.storeId}`, { token: apiKey })).status).toBe(404)
        }))

      it.effect("gives settings, members and receipts an id and created_at", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { apiKey, owner } = yield* merchantOf(app)
          const members = yield* call(app, "GET", `/dashboard/orgs/${owner.organizationId}/members`, { token: owner.token })
          expect(members.body.data[0]).toMatchObject({ id: owner.userId, object: "member", user_id: owner.userId })
          expect(typeof members.body.data[0].created_at).toBe("string")

          const payment = yield* call(app, "POST", "/v1/payments", { token: apiKey, body: { amount: "4.00", currency: "USD" } })
          for (const status of ["scanned", "paid"]) {
            yield* call(app, "POST", `/v1/payments/${payment.body.id}/simulate`, { token: apiKey, body: { status } })
          }
          const receipt = yield* call(app, "GET", `/receipts/${payment.body.id}`)
          expect(receipt.body).toMatchObject({ object: "receipt", payment_id: payment.body.id })
          expect(typeof receipt.body.id).toBe("string")
          expect(receipt.body.created_at).toBe(receipt.body.paid_at)

          const admin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL }))
          const set = yield* call(app, "PUT", "/admin/settings/telegram_bot_token", { token: admin.token, body: { value: "123456:abcdef" } })
          expect(set.status).toBe(200)
          expect(set.body).toMatchObject({ id: "telegram_bot_token", object: "platform_setting", key: "telegram_bot_token" })
          expect(typeof set.body.created_at).toBe("string")
          const list = yield* call(app, "GET", "/admin/settings", { token: admin.token })
          for (const setting of list.body.data) {
            expect(setting.id).toBe(setting.key)
            expect(setting).toHaveProperty("created_at")
          }
        }))

      it.effect("opens a real page from the reset link in the e-mail, and the page's form resets the password", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const user = yield* Effect.promise(() => signUp(app))
          yield* call(app, "POST", "/auth/forgot-password", { body: { email: user.email } })
          // The mail goes out in the background, after the answer.
          let link: string | undefined
          for (let attempt = 0; attempt < 50 && link === undefined; attempt++) {
            const mails = yield* Effect.promise(() => app.mailTo(user.email))
            link = mails.map((mail) => mail.body.match(/https?:\/\/[^/\s]+(\/reset-password\?token=\S+)/)?.[1]).find(Boolean)
            if (link === undefined) yield* Effect.sleep("100 millis")
          }
          expect(link).toBeDefined()
          const page = yield* Effect.promise(() => app.fetch(link!, { headers: { accept: "text/html" } }))
          expect(page.status).toBe(200)
          expect(page.headers.get("content-type")).toContain("text/html")
          expect(page.headers.get("cache-control")).toBe("no-store")
          expect(page.headers.get("referrer-policy")).toBe("no-referrer")
          const html = yield* Effect.promise(() => page.text())
          const token = new URL(link!, app.baseUrl).searchParams.get("token")!
          expect(html).toContain(`data-token="${token}"`)
          expect(html).toContain("/auth/reset-password")
          // What the page's script sends.
          const reset = yield* call(app, "POST", "/auth/reset-password", { body: { token, password: "a new password here" } })
          expect(reset.status).toBe(201)
          const incomplete = yield* Effect.promise(() => app.fetch("/reset-password").then((response) => response.text()))
          expect(incomplete).toContain("incomplete")
        }))
    }
  )

  layer(
    testAppLayer({ registrationsPerAddressPerHour: REGISTRATION_LIMIT }),
    { timeout: 120_000, excludeTestServices: true }
  )("with a small registration limit", (it) => {
    it.effect("throttles registration per client address, with Retry-After", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        for (let index = 0; index < REGISTRATION_LIMIT; index++) {
          const registered = yield* call(app, "POST", "/auth/register", {
            body: { email: uniqueEmail("bulk"), password: "correct horse battery staple" }
          })
          expect(registered.status).toBe(201)
        }
        const refused = yield* call(app, "POST", "/auth/register", {
          body: { email: uniqueEmail("bulk"), password: "correct horse battery staple" }
        })
        expect(refused.status).toBe(429)
        expect(refused.body.error.code).toBe("rate_limited")
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      }))
  })
})
