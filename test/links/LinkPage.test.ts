/**
 * The hosted payment-link page in a real browser (Debian's Chromium driven by playwright-core): the
 * page's script runs under its nonce CSP, shows a refused amount's error in place, and on a good amount
 * starts the payment and moves on to its hosted checkout. Skipped without /usr/bin/chromium.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { Browser } from "playwright-core"
import { createStore, signUp } from "../support/Accounts.ts"
import { HAS_CHROMIUM, launchChromium } from "../support/Browser.ts"
import { clientAs } from "../support/Client.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

class LinkBrowser extends Context.Tag("test/LinkBrowser")<LinkBrowser, Browser>() {}

const browserLayer = Layer.scoped(
  LinkBrowser,
  Effect.acquireRelease(
    Effect.promise(() => launchChromium()),
    (browser) => Effect.promise(() => browser.close())
  )
)

describe.skipIf(!HAS_CHROMIUM)("payment-link page in Chromium", () => {
  layer(Layer.merge(testAppLayer(), browserLayer), { timeout: 180_000, excludeTestServices: true })("pay button", (it) => {
    it.scoped("refuses an amount out of bounds in place, then goes on to the checkout", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const browser = yield* LinkBrowser
        const owner = yield* Effect.promise(() => signUp(app))
        const store = yield* Effect.promise(() => createStore(app, owner.token, "Riverside Cafe"))
        const link = yield* (yield* clientAs(app, owner.token)).links.create({
          path: { storeId: store.id },
          payload: { kind: "link", title: "Tip jar", currency: "USD", min_amount: "1", max_amount: "20" }
        })

        const context = yield* Effect.acquireRelease(
          Effect.promise(() => browser.newContext()),
          (context) => Effect.promise(() => context.close())
        )
        yield* Effect.promise(() =>
          context.addInitScript(`
            window.__cspViolations = [];
            document.addEventListener("securitypolicyviolation", (event) => {
              window.__cspViolations.push(event.violatedDirective);
            });
          `)
        )
        const page = yield* Effect.promise(() => context.newPage())
        const pageErrors: Array<string> = []
        page.on("pageerror", (error) => pageErrors.push(error.message))

        const response = yield* Effect.promise(() => page.goto(`${app.baseUrl}/links/${link.id}`))
        expect(response?.headers()["content-type"]).toContain("text/html")
        expect(yield* Effect.promise(() => page.locator("#title").textContent())).toBe("Tip jar")

        yield* Effect.promise(() => page.fill("#amount", "25"))
        yield* Effect.promise(() => page.click("#pay-button"))
        // The payer reads what the link accepts in the page's language, not the API's message for developers.
        yield* Effect.promise(() => page.locator("#error").filter({ hasText: "Enter an amount this link accepts: From $1.00 to $20.00." }).waitFor({ timeout: 10_000 }))
        expect(page.url()).toBe(`${app.baseUrl}/links/${link.id}`)
        yield* Effect.promise(() => page.goto(`${app.baseUrl}/links/${link.id}?lang=km`))
        yield* Effect.promise(() => page.fill("#amount", "25"))
        yield* Effect.promise(() => page.click("#pay-button"))
        yield* Effect.promise(() => page.locator("#error").filter({ hasText: "សូមបញ្ចូលចំនួនទឹកប្រាក់ដែលតំណនេះទទួលយក៖ ពី $1.00 ដល់ $20.00។" }).waitFor({ timeout: 10_000 }))
        yield* Effect.promise(() => page.goto(`${app.baseUrl}/links/${link.id}?lang=en`))
        expect(yield* Effect.promise(() => page.evaluate("window.__cspViolations"))).toEqual([])

        yield* Effect.promise(() => page.fill("#amount", "7.25"))
        yield* Effect.promise(() =>
          Promise.all([page.waitForURL(/\/checkout\/pay_[0-9A-Za-z]{24}$/, { timeout: 15_000 }), page.click("#pay-button")])
        )
        yield* Effect.promise(() => page.locator("#status").filter({ hasText: "Scan to pay" }).waitFor({ timeout: 10_000 }))
        expect(yield* Effect.promise(() => page.locator("#amount").textContent())).toBe("$7.25")
        expect(yield* Effect.promise(() => page.locator("#description").textContent())).toBe("Tip jar")
        expect(pageErrors).toEqual([])
      }))
  })
})
