/**
 * The hosted checkout page in a real browser (Debian's Chromium driven by playwright-core), black-box:
 * the service runs in-process on a free port, a merchant creates a payment over HTTP, the browser opens
 * the checkout page, and the page follows the live status (SSE) to "Paid" or "Expired" without a reload.
 * Screenshots of each state go to test-output/e2e/ (git-ignored).
 *
 * Needs /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it); without it the suite is
 * skipped. Never a browser downloaded by Playwright.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import type { CreatePayment } from "../../domain/Payments.ts"
import { CHROMIUM, HAS_CHROMIUM, launchChromium } from "../support/Browser.ts"
import { clientAs } from "../support/Client.ts"
import { createPayment as createPaymentOf, newMerchant, simulate } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"


const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/e2e/", import.meta.url))

const STORE_NAME = "Riverside Cafe & Bakery"
const DESCRIPTION = "Iced latte and a croissant"

/** One Chromium for the whole suite; playwright-core gives it a fresh, temporary user-data-dir. */
class E2EBrowser extends Context.Tag("test/E2EBrowser")<E2EBrowser, Browser>() {}

const browserLayer = Layer.scoped(
  E2EBrowser,
  Effect.acquireRelease(
    Effect.promise(() => launchChromium()),
    (browser) => Effect.promise(() => browser.close())
  )
)

/** An owner, a store with its checkout branding, and a test API key. */
const merchant = (app: TestAppShape) =>
  Effect.gen(function*() {
    const { key, owner, storeId } = yield* newMerchant(app, "Riverside Cafe (legal name)")
    const branded = yield* (yield* clientAs(app, owner.token)).stores.updateBranding({
      path: { id: storeId },
      payload: { display_name: STORE_NAME, primary_color: "#0f766e", accent_color: "#ecfdf5" }
    })
    expect(branded.branding.display_name).toBe(STORE_NAME)
    return { key }
  })

const createPayment = (app: TestAppShape, key: string, payload: Partial<CreatePayment>) =>
  createPaymentOf(app, key, { amount: "12.50", description: DESCRIPTION, ...payload })

/**
 * A fresh browser context and page with everything the test checks afterwards: console errors, page
 * errors, CSP violations (seen by the page itself), failed requests, main-frame navigations, and the
 * requests to the live status stream.
 */
const openSession = (browser: Browser) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
      // Init scripts come in over the DevTools protocol, so the page's own CSP does not stop this one.
      await context.addInitScript(`
        window.__cspViolations = [];
        document.addEventListener("securitypolicyviolation", (event) => {
          window.__cspViolations.push(event.violatedDirective + " blocked " + (event.blockedURI || "(inline)"));
        });
      `)
      const page = await context.newPage()
      const problems: Array<string> = []
      const eventRequests: Array<string> = []
      let navigations = 0
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(`console.error: ${message.text()}`)
      })
      page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
      page.on("requestfailed", (request) => {
        // The live status stream is closed by the page itself once the payment is over.
        if (!request.url().endsWith("/events")) problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`)
      })
      page.on("response", (response) => {
        if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`)
      })
      page.on("request", (request) => {
        if (request.url().endsWith("/events")) eventRequests.push(request.url())
      })
      page.on("framenavigated", (frame) => {
        if (frame === page.mainFrame()) navigations++
      })
      return {
        context,
        page,
        problems,
        eventRequests,
        navigations: () => navigations,
        cspViolations: () => page.evaluate("window.__cspViolations") as Promise<Array<string>>
      }
    }),
    ({ context }) => Effect.promise(() => context.close())
  )

type Session = Effect.Effect.Success<ReturnType<typeof openSession>>

const text = (page: Page, selector: string) => page.locator(selector).textContent().then((value) => value?.trim() ?? "")

const waitForStatus = (page: Page, title: string, timeout: number) =>
  Effect.promise(async () => {
    const started = Date.now()
    // A locator, not waitForFunction with a string: that one is eval'd in the page, which its CSP refuses.
    await page.locator("#status").filter({ hasText: new RegExp(`^\\s*${title}\\s*$`) }).waitFor({ timeout })
    return Date.now() - started
  })

const screenshot = (page: Page, name: string) =>
  Effect.promise(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true })
    const path = join(OUTPUT_DIR, name)
    await page.screenshot({ path, fullPage: true })
    return path
  })

/** Opens the checkout page of `payment` and checks everything a pending page must show. */
const openCheckout = (app: TestAppShape, session: Session, payment: { id: string; checkout_url: string }) =>
  Effect.gen(function*() {
    const { page } = session
    // checkout_url names `localhost`; the service listens on 127.0.0.1, so open the same path there.
    const checkoutPath = new URL(payment.checkout_url).pathname
    expect(checkoutPath).toBe(`/checkout/${payment.id}`)
    const response = yield* Effect.promise(() => page.goto(`${app.baseUrl}${checkoutPath}`, { waitUntil: "load" }))
    expect(response?.status()).toBe(200)
    expect(response?.headers()["content-type"]).toContain("text/html")
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'nonce-")
    // A marker that only survives if the page is never reloaded or navigated away from.
    yield* Effect.promise(() => page.evaluate(`window.__e2eMarker = "same-document"`))

    expect(yield* Effect.promise(() => page.title())).toBe(`Pay ${STORE_NAME}`)
    expect(yield* Effect.promise(() => text(page, "header h1"))).toBe(STORE_NAME)
    expect(yield* Effect.promise(() => text(page, "#amount"))).toBe("$12.50")
    expect(yield* Effect.promise(() => text(page, "#description"))).toBe(DESCRIPTION)
    expect(yield* Effect.promise(() => page.locator(".badge").isVisible())).toBe(true)

    const qr = page.locator("img#qr")
    expect(yield* Effect.promise(() => qr.isVisible())).toBe(true)
    const image = yield* Effect.promise(() =>
      qr.evaluate((img: any) => ({ complete: img.complete as boolean, width: img.naturalWidth as number, src: img.src as string }))
    )
    expect(image.complete).toBe(true)
    expect(image.width).toBeGreaterThan(0)
    expect(image.src).toMatch(/^data:image\/png;base64,/)
    const box = yield* Effect.promise(() => qr.boundingBox())
    expect(box!.width).toBeGreaterThan(100)
    expect(box!.height).toBeGreaterThan(100)

    expect(yield* Effect.promise(() => text(page, "#status"))).toBe("Scan to pay")
    // The countdown is filled by the page's script: a sign it ran under the page's CSP.
    expect(yield* Effect.promise(() => text(page, "#countdown"))).toMatch(/^Expires in \d+:\d\d$/)
    return { qr }
  })

/** Nothing went wrong in the page, and it is still the document first loaded. */
const expectCleanSameDocument = (session: Session) =>
  Effect.gen(function*() {
    expect(session.problems).toEqual([])
    expect(yield* Effect.promise(() => session.cspViolations())).toEqual([])
    expect(session.navigations()).toBe(1)
    expect(yield* Effect.promise(() => session.page.evaluate("window.__e2eMarker"))).toBe("same-document")
  })

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "checkout page in Chromium" : `checkout page in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(Layer.merge(testAppLayer(), browserLayer), { timeout: 180_000, excludeTestServices: true })(
      "the page follows the payment live",
      (it) => {
        it.scoped("shows branding, amount and QR, then turns to Paid without a reload", () =>
          Effect.gen(function*() {
            const app = yield* TestApp
            const session = yield* openSession(yield* E2EBrowser)
            const { page } = session
            const { key } = yield* merchant(app)
            const payment = yield* createPayment(app, key, {})

            const { qr } = yield* openCheckout(app, session, payment)
            yield* screenshot(page, "checkout-pending.png")
            yield* expectCleanSameDocument(session)

            expect((yield* simulate(app, key, payment.id, "scanned")).status).toBe("scanned")
            const scannedMs = yield* waitForStatus(page, "Confirm in your app", 10_000)
            // Still payable: the QR code stays until the payment is over.
            expect(yield* Effect.promise(() => qr.isVisible())).toBe(true)
            yield* screenshot(page, "checkout-scanned.png")

            expect((yield* simulate(app, key, payment.id, "paid")).status).toBe("paid")
            const paidMs = yield* waitForStatus(page, "Paid", 10_000)
            expect(yield* Effect.promise(() => text(page, "#detail"))).toBe("Thank you! Your payment was received.")
            expect(yield* Effect.promise(() => qr.isHidden())).toBe(true)
            expect(yield* Effect.promise(() => page.locator("#countdown").isHidden())).toBe(true)
            expect(yield* Effect.promise(() => text(page, "#amount"))).toBe("$12.50")
            expect(yield* Effect.promise(() => text(page, "header h1"))).toBe(STORE_NAME)
            yield* screenshot(page, "checkout-paid.png")

            yield* expectCleanSameDocument(session)
            // One stream followed the payment to the end: no reconnects, no polling.
            expect(session.eventRequests).toEqual([`${app.baseUrl}/checkout/${payment.id}/events`])
            console.log(`checkout e2e: scanned shown after ${scannedMs} ms, paid shown after ${paidMs} ms`)
          }))

        it.scoped("turns to Expired without a reload when the payment expires", () =>
          Effect.gen(function*() {
            const app = yield* TestApp
            const session = yield* openSession(yield* E2EBrowser)
            const { page } = session
            const { key } = yield* merchant(app)
            // Created last, right before the page opens: it has two seconds to show as pending.
            const payment = yield* createPayment(app, key, { expires_in: 2 })

            const { qr } = yield* openCheckout(app, session, payment)
            expect(yield* Effect.promise(() => text(page, "#countdown"))).toMatch(/^Expires in 0:0[0-2]$/)
            yield* screenshot(page, "checkout-expiring.png")

            const expiredMs = yield* waitForStatus(page, "Expired", 15_000)
            expect(yield* Effect.promise(() => text(page, "#detail"))).toBe(
              "This payment request has expired. Ask the merchant for a new one."
            )
            expect(yield* Effect.promise(() => qr.isHidden())).toBe(true)
            expect(yield* Effect.promise(() => page.locator("#countdown").isHidden())).toBe(true)
            yield* screenshot(page, "checkout-expired.png")

            yield* expectCleanSameDocument(session)
            expect(session.eventRequests).toEqual([`${app.baseUrl}/checkout/${payment.id}/events`])
            console.log(`checkout e2e: expired shown ${expiredMs} ms after the page was checked`)
          }))
      }
    )
  }
)
