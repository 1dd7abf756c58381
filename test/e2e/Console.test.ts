/**
 * The merchant console in a real browser (Debian's Chromium driven by playwright-core) against the
 * service on PostgreSQL, as a merchant uses it: register, create a store, create a test payment, see it in
 * the list, have it paid from outside (the REST API, as the provider would) and watch its row turn Paid
 * without a reload, ride out a dropped connection, refund part of it, see the webhooks it set off and resend
 * one, create and rotate an API key, turn on two-step verification, sign out, and sign in again with MFA. axe-core checks every page
 * (no serious or critical violation); screenshots of every page at 1280 and 390 px wide go to
 * test-output/console/.
 *
 * Needs /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it); without it the suite is skipped.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { CONSOLE_EVERY_PAGE_LOADED_MARK } from "../../domain/Console.ts"
import { NodeServer } from "../../runtime/Http.ts"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { TEST_PASSWORD, uniqueEmail } from "../support/Accounts.ts"
import { CHROMIUM, HAS_CHROMIUM } from "../support/Browser.ts"
import { captureAt, ConsoleBrowser, consoleBrowserLayer, openConsolePage, screenshotOnFailure, step, eventReceiver, settled } from "../support/ConsoleBrowser.ts"
import { clientAs } from "../support/Client.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/console/", import.meta.url))
const capture = (page: Page, name: string) => captureAt(OUTPUT_DIR, page, name)

const webhookReceiver = eventReceiver("/hooks/khqr")

const rowStatus = (page: Page, paymentId: string) => page.locator(`tr[data-payment-id="${paymentId}"] [data-status]`)

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "merchant console in Chromium" : `merchant console in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(Layer.merge(testAppLayer({ webhookAllowPrivateNetworks: true }), consoleBrowserLayer), { timeout: 240_000, excludeTestServices: true })("a merchant's day", (it) => {
      it.scoped("register, take a test payment, watch it paid live, refund part of it, sign in again with MFA", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { networkBreak, page, problems } = yield* openConsolePage(yield* ConsoleBrowser)
          const email = uniqueEmail("console")

          // Signed out: the sign-in page; the page's headers are the strict ones.
          const response = yield* step(() => page.goto(`${app.baseUrl}/console`))
          expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'")
          yield* step(() => page.getByRole("heading", { name: "Sign in to your account" }).waitFor())
          yield* capture(page, "sign-in")

          // A wrong password is said on the form.
          yield* step(() => page.getByLabel("Email").fill("nobody@example.test"))
          yield* step(() => page.getByLabel("Password").fill("wrong password"))
          yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
          yield* step(() => page.getByRole("alert").waitFor())

          // Register.
          yield* step(() => page.getByRole("link", { name: "Create an account" }).click())
          yield* step(() => page.getByRole("heading", { name: "Create your account" }).waitFor())
          yield* capture(page, "register")
          yield* step(() => page.getByLabel("Your name").fill("Sokha Chan"))
          yield* step(() => page.getByLabel("Business name").fill("Riverside Coffee"))
          yield* step(() => page.getByLabel("Work email").fill(email))
          yield* step(() => page.getByLabel("Password").fill("short"))
          yield* step(() => page.getByRole("button", { name: "Create account" }).click())
          // The server's refusal is shown at the field it names.
          yield* step(() => page.locator(".field-invalid").getByLabel("Password").waitFor())
          yield* step(() => page.getByLabel("Password").fill(TEST_PASSWORD))
          yield* step(() => page.getByRole("button", { name: "Create account" }).click())

          // The first store.
          yield* step(() => page.getByRole("heading", { name: "Create your first store" }).waitFor())
          yield* capture(page, "first-store")
          yield* step(() => page.getByLabel("Store name").fill("Riverside Cafe"))
          yield* step(() => page.getByRole("button", { name: "Create store" }).click())
          yield* step(() => page.getByRole("heading", { name: "Home" }).waitFor())
          yield* step(() => page.getByText("Test mode", { exact: true }).first().waitFor())
          yield* settled(page)
          yield* capture(page, "home")

          // The code of the pages not opened yet comes while the browser is idle: once it has (the console
          // marks it), opening one fetches no script (and so shows at once, rather than after React's 300 ms
          // for a loading page).
          const scriptsFetched = () =>
            step(() => page.evaluate(() => performance.getEntriesByType("resource").filter((entry) => /\/console\/assets\/.+\.js$/.test(entry.name)).length))
          yield* step(() => page.waitForFunction((mark) => performance.getEntriesByName(mark).length > 0, CONSOLE_EVERY_PAGE_LOADED_MARK, { timeout: 30_000 }))
          const scripts = yield* scriptsFetched()
          // A test API key for the merchant's server: the secret is shown once; rotating it issues another.
          yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API keys" }).click())
          yield* step(() => page.getByText("No test keys yet").waitFor())
          expect(yield* scriptsFetched()).toBe(scripts)
          yield* capture(page, "api-keys-empty")
          yield* step(() => page.getByRole("button", { name: "Create test key" }).click())
          const createKey = page.getByRole("dialog", { name: "Create a test key" })
          yield* step(() => createKey.getByLabel("Name").fill("Checkout server"))
          yield* step(() => createKey.getByRole("button", { name: "Create key" }).click())
          const secretDialog = page.getByRole("dialog", { name: "Your secret key" })
          const firstSecret = yield* step(() => secretDialog.getByLabel("Secret key").inputValue())
          expect(firstSecret).toMatch(/^sk_test_/)
          yield* capture(page, "api-key-secret")
          yield* step(() => secretDialog.getByRole("button", { name: "I have saved it" }).click())
          yield* step(() => page.getByRole("cell", { name: "Checkout server", exact: true }).waitFor())
          yield* step(() => page.getByRole("button", { name: "Rotate Checkout server" }).click())
          yield* step(() => page.getByRole("dialog", { name: "Rotate API key" }).getByRole("button", { name: "Rotate key" }).click())
          const rotatedDialog = page.getByRole("dialog", { name: "Your new secret key" })
          const secret = yield* step(() => rotatedDialog.getByLabel("Secret key").inputValue())
          expect(secret).toMatch(/^sk_test_/)
          expect(secret).not.toBe(firstSecret)
          yield* step(() => rotatedDialog.getByRole("button", { name: "I have saved it" }).click())
          yield* step(() => page.getByText("Revoked").waitFor())
          yield* capture(page, "api-keys")

          // A webhook endpoint for the merchant's server (a local receiver here).
          const receiver = yield* webhookReceiver
          yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click())
          yield* step(() => page.getByText("No endpoints yet").waitFor())
          yield* step(() => page.getByRole("button", { name: "Add endpoint" }).click())
          const addEndpoint = page.getByRole("dialog", { name: "Add a webhook endpoint" })
          yield* step(() => addEndpoint.getByLabel("Endpoint URL").fill(receiver.url))
          yield* step(() => addEndpoint.getByLabel("All events").uncheck())
          yield* step(() => addEndpoint.getByLabel("payment.completed").waitFor())
          yield* capture(page, "webhook-create")
          yield* step(() => addEndpoint.getByRole("button", { name: "Add endpoint" }).click())
          const signing = page.getByRole("dialog", { name: "Signing secret" })
          expect(yield* step(() => signing.getByLabel("Secret").inputValue())).toMatch(/^whsec_/)
          yield* step(() => signing.getByRole("button", { name: "Done" }).click())
          yield* step(() => page.getByText("No deliveries yet").waitFor())
          const endpointPath = new URL(page.url()).pathname

          const oldKey = yield* clientAs(app, firstSecret)
          expect((yield* Effect.either(oldKey.payments.list({ urlParams: { limit: 1 } }))).pipe((result) => result._tag)).toBe("Left")

          // Payments: create a test payment; a bad amount is refused at its field first.
          yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Payments" }).click())
          yield* step(() => page.getByRole("heading", { name: "Payments" }).waitFor())
          yield* step(() => page.getByText("No payments yet").waitFor())
          yield* capture(page, "payments-empty")
          yield* step(() => page.getByRole("button", { name: "Create test payment" }).click())
          const dialog = page.getByRole("dialog", { name: "Create a test payment" })
          yield* step(() => dialog.getByLabel("Amount").fill("12.345"))
          yield* step(() => dialog.getByLabel("Reference (optional)").fill("order-1001"))
          yield* step(() => dialog.getByRole("button", { name: "Create payment" }).click())
          yield* step(() => dialog.locator(".field-invalid").getByLabel("Amount").waitFor())
          yield* capture(page, "create-payment-invalid")
          yield* step(() => dialog.getByLabel("Amount").fill("25.00"))
          yield* step(() => dialog.getByRole("button", { name: "Create payment" }).click())

          // The detail page, with the KHQR as an image.
          yield* step(() => page.getByRole("heading", { name: /\$25\.00/ }).waitFor())
          const paymentId = (yield* step(() => page.locator(".page-header .mono").textContent()))!.trim()
          expect(paymentId).toMatch(/^pay_/)
          const qr = page.getByRole("img", { name: "KHQR code of this payment" })
          yield* step(() => qr.waitFor())
          expect(yield* step(() => qr.evaluate((img: HTMLImageElement) => img.naturalWidth))).toBeGreaterThan(100)
          yield* capture(page, "payment-pending")

          // The list shows it pending; it turns paid live when the provider pays it (through REST).
          yield* step(() => page.getByRole("link", { name: "← Payments" }).click())
          yield* step(() => rowStatus(page, paymentId).filter({ hasText: "Pending" }).waitFor())
          yield* step(() => page.evaluate(`window.__sameDocument = true`))
          const merchantApi = yield* clientAs(app, secret)
          yield* merchantApi.payments.simulate({ path: { id: paymentId as never }, payload: { status: "scanned" } })
          yield* step(() => rowStatus(page, paymentId).filter({ hasText: "Scanned" }).waitFor({ timeout: 10_000 }))
          const paidAt = Date.now()
          yield* merchantApi.payments.simulate({ path: { id: paymentId as never }, payload: { status: "paid" } })
          yield* step(() => rowStatus(page, paymentId).filter({ hasText: "Paid" }).waitFor({ timeout: 10_000 }))
          const liveDelayMs = Date.now() - paidAt
          expect(yield* step(() => page.evaluate(`window.__sameDocument`))).toBe(true)
          console.info(`console: the row turned Paid ${liveDelayMs} ms after the REST call`)
          yield* capture(page, "payments-list")

          // The connection drops: the page says it is reconnecting; once back, the feed resumes and what
          // happened meanwhile (a payment made and paid) is on the page, still without a reload.
          networkBreak.now = true
          yield* step(() => page.context().setOffline(true))
          // Going offline keeps open connections; the server drops them, as a network break would.
          ;(yield* NodeServer).closeAllConnections()
          yield* step(() => page.getByText("Connection lost — reconnecting…").waitFor({ timeout: 15_000 }))
          yield* capture(page, "payments-reconnecting")
          const meanwhile = yield* merchantApi.payments.create({ payload: { amount: "4.00", currency: "USD", reference_id: "order-1002" }, headers: {} })
          yield* merchantApi.payments.simulate({ path: { id: meanwhile.id }, payload: { status: "scanned" } })
          yield* merchantApi.payments.simulate({ path: { id: meanwhile.id }, payload: { status: "paid" } })
          yield* step(() => page.context().setOffline(false))
          yield* step(() => rowStatus(page, meanwhile.id).filter({ hasText: "Paid" }).waitFor({ timeout: 15_000 }))
          yield* step(() => page.getByText("Connection lost — reconnecting…").waitFor({ state: "detached", timeout: 15_000 }))
          expect(yield* step(() => page.evaluate(`window.__sameDocument`))).toBe(true)
          networkBreak.now = false

          // Refund part of it: the remaining refundable amount is shown, and the refund is made once.
          yield* step(() => page.locator(`tr[data-payment-id="${paymentId}"] a`).click())
          yield* step(() => page.getByRole("button", { name: "Refund" }).click())
          const refund = page.getByRole("dialog", { name: "Refund payment" })
          yield* step(() => refund.getByText("Refundable:").waitFor())
          expect(yield* step(() => refund.locator(".refund-remaining strong").textContent())).toBe("$25.00")
          yield* step(() => refund.getByLabel("Amount (USD)").fill("10.00"))
          yield* step(() => refund.getByLabel("Reason (optional)").fill("One drink was missing"))
          yield* capture(page, "refund-dialog")
          yield* step(() => refund.getByRole("button", { name: "Refund" }).click())
          yield* step(() => page.locator(".amount-title [data-status]").filter({ hasText: "Partially refunded" }).waitFor())
          yield* step(() => page.getByText("Refunded $10.00").waitFor())
          const refunds = yield* merchantApi.payments.refunds({ path: { id: paymentId as never }, urlParams: { limit: 10 } })
          expect(refunds.data.map((made) => made.amount)).toEqual(["10.00"])
          yield* capture(page, "payment-refunded")

          // The webhooks the payment set off, in the endpoint's log; one sent again.
          yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click())
          yield* step(() => page.getByRole("cell", { name: receiver.url, exact: true }).waitFor())
          yield* capture(page, "webhooks")
          yield* step(() => page.getByRole("link", { name: receiver.url }).click())
          expect(new URL(page.url()).pathname).toBe(endpointPath)
          const completed = page.locator("tr[data-delivery-id]").filter({ hasText: "payment.completed" })
          for (let tries = 0; (yield* step(() => completed.count())) === 0 && tries < 20; tries++) {
            yield* step(() => page.getByRole("button", { name: "Refresh" }).click())
            yield* step(() => page.waitForTimeout(250))
          }
          yield* step(() => completed.first().getByText("200 OK").waitFor())
          yield* capture(page, "webhook-deliveries")
          // Two payments were paid (one while the connection was down): two deliveries of payment.completed.
          const rowsBefore = yield* step(() => completed.count())
          const before = receiver.received.filter((type) => type === "payment.completed").length
          expect(before).toBe(rowsBefore)
          yield* step(() => completed.first().getByRole("button", { name: "Resend payment.completed" }).click())
          yield* step(() => page.getByText("The payment.completed event is queued to be sent again.").waitFor())
          yield* step(() => completed.nth(rowsBefore).waitFor({ timeout: 10_000 }))
          expect(receiver.received.filter((type) => type === "payment.completed").length).toBe(before + 1)

          // Two-step verification from the console: the enrolment's QR code, confirmed with a code.
          yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Security" }).click())
          yield* step(() => page.getByRole("button", { name: "Set up two-step verification" }).click())
          yield* step(() => page.getByRole("img", { name: "QR code to add this account to an authenticator app" }).waitFor())
          const mfaSecret = (yield* step(() => page.locator("[data-mfa-secret]").textContent()))!.trim()
          yield* capture(page, "security-mfa-setup")
          yield* step(() => page.getByLabel("Code from the app").fill("000000"))
          yield* step(() => page.getByRole("button", { name: "Turn on" }).click())
          // A wrong code is said at its field, and the session stays.
          yield* step(() => page.locator(".field-invalid").getByLabel("Code from the app").waitFor())
          const enableCode = yield* currentTotp(mfaSecret)
          yield* step(() => page.getByLabel("Code from the app").fill(enableCode))
          yield* step(() => page.getByRole("button", { name: "Turn on" }).click())
          yield* step(() => page.getByText("Signing in and large refunds ask for a code").waitFor())
          yield* capture(page, "security")
          yield* step(() => page.getByRole("button", { name: "Sign out" }).click())
          yield* step(() => page.getByRole("heading", { name: "Sign in to your account" }).waitFor())
          yield* step(() => page.getByLabel("Email").fill(email))
          yield* step(() => page.getByLabel("Password").fill(TEST_PASSWORD))
          yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
          yield* step(() => page.getByRole("heading", { name: "Two-step verification" }).waitFor())
          yield* capture(page, "sign-in-mfa")
          // A code of the next time step: the one that turned MFA on may not be used twice.
          const code = yield* currentTotp(mfaSecret, Math.floor(Date.now() / 1000) + 30)
          yield* step(() => page.getByLabel("Authentication code").fill(code))
          yield* step(() => page.getByRole("button", { name: "Verify" }).click())
          yield* step(() => page.getByRole("heading", { name: "Home" }).waitFor())
          yield* step(() => page.locator(".feed-row").first().waitFor())
          yield* settled(page)
          yield* capture(page, "home-with-payments")

          // The session is in an HttpOnly cookie the page cannot read, and nothing is kept in storage.
          expect(yield* step(() => page.evaluate(`document.cookie`))).toBe("")
          expect(yield* step(() => page.evaluate(`JSON.stringify(Object.keys(localStorage))`))).toBe("[]")
          const cookies = yield* step(() => page.context().cookies())
          expect(cookies.find((cookie) => cookie.name === "console_session")).toMatchObject({ httpOnly: true, sameSite: "Strict" })

          expect(yield* step(() => page.evaluate(`window.__cspViolations`))).toEqual([])
          expect(problems).toEqual([])
        }).pipe(screenshotOnFailure(OUTPUT_DIR)))
    })
  }
)
