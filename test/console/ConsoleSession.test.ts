/**
 * The console's session: sign-in sets an HttpOnly, SameSite=Strict cookie and never shows the token; the
 * console RPC takes the cookie only from the service's own origin; a call without it is 401; an API key
 * is never a console credential; sign-out ends the session; a console session ends when idle.
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option, Schema, TestClock } from "effect"
import {
  CarriedPayments,
  CONSOLE_CONTEXT_META,
  CONSOLE_PAYMENTS_META,
  CONSOLE_PAYMENTS_PAGE_SIZE,
  CONSOLE_RPC_PATH,
  ConsoleContext
} from "../../domain/Console.ts"
import { PaymentList } from "../../domain/Payments.ts"
import { ConsoleRpcs } from "../../domain/ConsoleRpcs.ts"
import { AccountsService } from "../../src/accounts/Service.ts"
import { TEST_PASSWORD, uniqueEmail } from "../support/Accounts.ts"
import { newMerchant } from "../support/Merchant.ts"
import { FUTURE_START, servicesOnTestApp } from "../support/Services.ts"
import { TestApp, type TestAppShape } from "../support/TestApp.ts"
import { withTestClockAt } from "../support/TestTime.ts"

/** A console RPC client that sends exactly these headers, as a browser (or a forger) would. */
const consoleWith = (app: TestAppShape, headers: Record<string, string>) =>
  RpcClient.make(ConsoleRpcs).pipe(
    Effect.provide(
      RpcClient.layerProtocolHttp({
        url: app.baseUrl + CONSOLE_RPC_PATH,
        transformClient: HttpClient.mapRequest(HttpClientRequest.setHeaders(headers))
      }).pipe(Layer.provide([RpcSerialization.layerNdjson, FetchHttpClient.layer]))
    )
  )

const failureTag = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (result) => Either.isLeft(result) ? result.left._tag : "succeeded")

const signIn = (app: TestAppShape, body: unknown, origin = app.baseUrl) =>
  Effect.promise(() =>
    app.fetch("/console/session", { method: "POST", headers: { "content-type": "application/json", origin }, body: JSON.stringify(body) })
  )

const cookieOf = (response: Response) => response.headers.get("set-cookie")?.split(";")[0] ?? ""

describe("console session", () => {
  layer(servicesOnTestApp(), { timeout: 120_000, excludeTestServices: true })("cookie and origin", (it) => {
    it.scoped("sign-in sets an HttpOnly, SameSite=Strict cookie; the RPC takes it from the own origin only", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner } = yield* newMerchant(app, "Cookie Cafe")
        const response = yield* signIn(app, { email: owner.email, password: owner.password })
        expect(response.status).toBe(200)
        const setCookie = response.headers.get("set-cookie") ?? ""
        expect(setCookie).toMatch(/^console_session=mst_\S+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/)
        // Not https here, so not Secure; and the token never reaches the page's script.
        expect(setCookie).not.toContain("Secure")
        const body = yield* Effect.promise(() => response.json() as Promise<Record<string, unknown>>)
        expect(body.object).toBe("console_session")
        expect(JSON.stringify(body)).not.toContain(cookieOf(response).split("=")[1]!)

        const cookie = cookieOf(response)
        const own = yield* consoleWith(app, { cookie, origin: app.baseUrl })
        const context = yield* own.Context()
        expect(context.me.user.email).toBe(owner.email)
        expect(context.stores.map((store) => store.name)).toEqual(["Cookie Cafe"])

        // Another site's page: the browser would name that site in Origin.
        const forged = yield* consoleWith(app, { cookie, origin: "https://evil.example" })
        expect(yield* failureTag(forged.CreateStore({ name: "Forged" }))).toBe("Forbidden")
        expect(yield* failureTag(forged.Context())).toBe("Forbidden")
        const noOrigin = yield* consoleWith(app, { cookie })
        expect(yield* failureTag(noOrigin.CreateStore({ name: "Forged" }))).toBe("Forbidden")
        // Nothing was created by the refused calls.
        expect((yield* own.Context()).stores.map((store) => store.name)).toEqual(["Cookie Cafe"])
      }))

    it.scoped("without the cookie a call is 401; an API key is never a console credential", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const anonymous = yield* consoleWith(app, { origin: app.baseUrl })
        expect(yield* failureTag(anonymous.Context())).toBe("Unauthorized")
        const bearerKey = yield* consoleWith(app, { authorization: `Bearer ${key}`, origin: app.baseUrl })
        expect(yield* failureTag(bearerKey.Context())).toBe("Unauthorized")
        const cookieKey = yield* consoleWith(app, { cookie: `console_session=${key}`, origin: app.baseUrl })
        expect(yield* failureTag(cookieKey.Context())).toBe("Unauthorized")

        // The session route itself: no JSON 401 leaks a token, and the whole envelope is there.
        const raw = yield* Effect.promise(() =>
          app.fetch(CONSOLE_RPC_PATH, {
            method: "POST",
            headers: { "content-type": "application/ndjson", origin: app.baseUrl },
            body: JSON.stringify({ _tag: "Request", id: "1", tag: "Context", payload: {}, headers: [] }) + "\n"
          }).then((response) => response.text())
        )
        expect(raw).toContain("Unauthorized")
      }))

    it.scoped("sign-in from another origin is refused; a wrong password names no field; sign-out ends the session", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner } = yield* newMerchant(app)
        const crossSite = yield* signIn(app, { email: owner.email, password: owner.password }, "https://evil.example")
        expect(crossSite.status).toBe(403)
        expect(crossSite.headers.get("set-cookie")).toBeNull()

        const invalid = yield* signIn(app, { email: owner.email, password: 12 })
        expect(invalid.status).toBe(400)
        expect((yield* Effect.promise(() => invalid.json() as Promise<{ error: { param?: string } }>)).error.param).toBe("password")

        const wrong = yield* signIn(app, { email: owner.email, password: "not the password" })
        expect(wrong.status).toBe(401)

        const cookie = cookieOf(yield* signIn(app, { email: owner.email, password: owner.password }))
        const signOut = yield* Effect.promise(() =>
          app.fetch("/console/session", { method: "DELETE", headers: { cookie, origin: app.baseUrl } })
        )
        expect(signOut.status).toBe(204)
        expect(signOut.headers.get("set-cookie")).toMatch(/^console_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/)
        const after = yield* consoleWith(app, { cookie, origin: app.baseUrl })
        expect(yield* failureTag(after.Context())).toBe("Unauthorized")
      }))

    it.scoped("the console page: no caching, a strict CSP, nosniff; assets long-cached", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        for (const path of ["/console", "/console/payments/pay_123"]) {
          const page = yield* Effect.promise(() => app.fetch(path))
          // A build may be missing in a fresh checkout: then the page says so, still uncached.
          expect([200, 503]).toContain(page.status)
          expect(page.headers.get("cache-control")).toBe("no-store")
          expect(page.headers.get("x-content-type-options")).toBe("nosniff")
          if (page.status !== 200) continue
          const csp = page.headers.get("content-security-policy") ?? ""
          expect(csp).toContain("script-src 'self'")
          expect(csp).not.toContain("unsafe-inline")
          expect(csp).toContain("frame-ancestors 'none'")
          const html = yield* Effect.promise(() => page.text())
          expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
          const script = /src="(\/console\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1]
          expect(script).toBeDefined()
          const asset = yield* Effect.promise(() => app.fetch(script!))
          expect(asset.status).toBe(200)
          expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
          expect(asset.headers.get("content-type")).toContain("javascript")
        }
        const missing = yield* Effect.promise(() => app.fetch("/console/assets/..%2Fmeta.json"))
        expect(missing.status).toBe(404)
      }))

    it.scoped("a page opened with a session carries its context as inert JSON, the Context call's answer; without one, none", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const storeName = "</script><script>alert(1)</script> & Co"
        const { owner } = yield* newMerchant(app, storeName)
        const cookie = cookieOf(yield* signIn(app, { email: owner.email, password: owner.password }))
        const page = yield* Effect.promise(() => app.fetch("/console/payments", { headers: { cookie } }))
        // A build may be missing in a fresh checkout: then there is no page to carry anything.
        if (page.status !== 200) return
        expect(page.headers.get("cache-control")).toBe("no-store")
        const html = yield* Effect.promise(() => page.text())
        const carriedIn = (page: string) => new RegExp(`<meta name="${CONSOLE_CONTEXT_META}" content="([^"]*)">`).exec(page)?.[1]
        const carried = carriedIn(html)
        // Data, not markup: the store's name cannot end the attribute or start a script.
        expect(carried).toMatch(/^[\w.!~*'()%-]+$/)
        expect(html).not.toContain("<script>alert(1)")
        const json = JSON.parse(decodeURIComponent(carried!))
        const context = Schema.decodeUnknownSync(ConsoleContext)(json)
        expect(context.me.user.email).toBe(owner.email)
        expect(context.stores.map((store) => store.name)).toEqual([storeName])
        const own = yield* consoleWith(app, { cookie, origin: app.baseUrl })
        expect(json).toEqual(Schema.encodeSync(ConsoleContext)(yield* own.Context()))

        for (const headers of [{}, { cookie: "console_session=mst_unknown" }]) {
          const signedOut = yield* Effect.promise(() => app.fetch("/console/payments", { headers }).then((response) => response.text()))
          expect(carriedIn(signedOut)).toBe("")
        }
      }))

    it.scoped("the payments list's page carries its first page, the ListPayments answer for the first store in test mode; other pages and signed-out readers none", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* newMerchant(app, "Carried Payments")
        const own = yield* consoleWith(app, { authorization: `Bearer ${owner.token}` })
        for (const [index, reference] of ["order-1", "\"></meta><script>alert(1)</script>"].entries()) {
          yield* own.CreateTestPayment({ store_id: storeId, amount: `${index + 2}.00`, currency: "USD", reference_id: reference, idempotency_key: `carried-${index}` })
        }
        const cookie = cookieOf(yield* signIn(app, { email: owner.email, password: owner.password }))
        const pageAt = (path: string, headers: Record<string, string>) =>
          Effect.promise(() => app.fetch(path, { headers }).then((response) => response.text()))
        const carriedIn = (page: string) => new RegExp(`<meta name="${CONSOLE_PAYMENTS_META}" content="([^"]*)">`).exec(page)?.[1]

        const html = yield* pageAt("/console/payments", { cookie })
        const carried = carriedIn(html)
        expect(carried).toMatch(/^[\w.!~*'()%-]+$/)
        expect(html).not.toContain("<script>alert(1)")
        const json = JSON.parse(decodeURIComponent(carried!))
        const decoded = Schema.decodeUnknownSync(CarriedPayments)(json)
        expect(decoded.store_id).toBe(storeId)
        expect(decoded.livemode).toBe(false)
        const listed = yield* own.ListPayments({ store_id: storeId, livemode: false, limit: CONSOLE_PAYMENTS_PAGE_SIZE })
        expect(json.page).toEqual(Schema.encodeSync(PaymentList)(listed))
        expect(decoded.page.data).toHaveLength(2)

        expect(carriedIn(yield* pageAt("/console", { cookie }))).toBe("")
        expect(carriedIn(yield* pageAt("/console/payments", {}))).toBe("")
      }))

    it.scoped("a test payment from the console is made once per idempotency key, simulated, and only in the user's own stores", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* newMerchant(app, "Console Payments")
        const stranger = yield* newMerchant(app, "Someone Else")
        const own = yield* consoleWith(app, { authorization: `Bearer ${owner.token}` })
        const input = { store_id: storeId, amount: "7.50", currency: "USD" as const, reference_id: "order-77", idempotency_key: "console-submit-1" }
        const first = yield* own.CreateTestPayment(input)
        const again = yield* own.CreateTestPayment(input)
        expect(again.id).toBe(first.id)
        expect(first.livemode).toBe(false)
        expect(yield* failureTag(own.CreateTestPayment({ ...input, amount: "8.00" }))).toBe("IdempotencyConflict")

        expect((yield* own.SimulatePayment({ id: first.id, status: "scanned" })).status).toBe("scanned")
        expect((yield* own.SimulatePayment({ id: first.id, status: "paid" })).status).toBe("paid")
        const detail = yield* own.PaymentDetail({ id: first.id })
        expect(detail.payment.status).toBe("paid")
        expect(detail.refunds.data).toEqual([])

        const list = yield* own.ListPayments({ store_id: storeId, livemode: false, reference_id: "order-77" })
        expect(list.data.map((payment) => payment.id)).toEqual([first.id])

        const other = yield* consoleWith(app, { authorization: `Bearer ${stranger.owner.token}` })
        expect(yield* failureTag(other.SimulatePayment({ id: first.id, status: "failed" }))).toBe("NotFound")
        expect(yield* failureTag(other.PaymentDetail({ id: first.id }))).toBe("NotFound")
        expect(yield* failureTag(other.CreateTestPayment({ ...input, idempotency_key: "other" }))).toBe("NotFound")
      }))

    it.effect("a console session ends when idle past its limit; a used one stays", () =>
      withTestClockAt(FUTURE_START)(Effect.gen(function*() {
        const accounts = yield* AccountsService
        const email = uniqueEmail("idle")
        const address = Option.some("198.51.100.77")
        yield* accounts.register({ email, password: TEST_PASSWORD }, address)
        const idle = yield* accounts.login({ email, password: TEST_PASSWORD }, address, { idleTimeoutSeconds: 600 })
        const api = yield* accounts.login({ email, password: TEST_PASSWORD }, address)
        const minutes = (n: number) => TestClock.adjust(`${n} minutes`)

        yield* minutes(9)
        expect(Option.isSome(yield* accounts.authenticateSession(idle.access_token))).toBe(true)
        // Used at minute 9: good until minute 19.
        yield* minutes(9)
        expect(Option.isSome(yield* accounts.authenticateSession(idle.access_token))).toBe(true)
        yield* minutes(11)
        expect(Option.isNone(yield* accounts.authenticateSession(idle.access_token))).toBe(true)
        // A session of POST /auth/login has no idle limit.
        expect(Option.isSome(yield* accounts.authenticateSession(api.access_token))).toBe(true)
      })))
  })
})
