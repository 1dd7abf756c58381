/**
 * The hosted wallet page in a real browser (Debian's Chromium driven by playwright-core), black-box: a
 * branded store with tiers and rewards, a customer who earned and redeemed points, and the page showing
 * the balance, the tier with the progress to the next, the rewards, the customer's voucher, the recent
 * activity (never the merchant's note) and a link to the store's game that opens it with the customer's play
 * button — with names that try to inject markup shown as text, and no CSP violation, script error or failed
 * request. The page is opened through the customer's `wallet_url`. The screenshot goes to
 * test-output/e2e/wallet.png (git-ignored).
 *
 * Needs /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it); without it the suite is
 * skipped. Never a browser downloaded by Playwright.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser } from "playwright-core"
import { seriousViolations } from "../support/Accessibility.ts"
import { CHROMIUM, HAS_CHROMIUM, launchChromium } from "../support/Browser.ts"
import { clientAs } from "../support/Client.ts"
import { newMerchant } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/e2e/", import.meta.url))
const HOSTILE = "<img src=x onerror=alert(1)>"

class E2EBrowser extends Context.Tag("test/E2EBrowser")<E2EBrowser, Browser>() {}

const browserLayer = Layer.scoped(
  E2EBrowser,
  Effect.acquireRelease(Effect.promise(() => launchChromium()), (browser) => Effect.promise(() => browser.close()))
)

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "wallet page in Chromium" : `wallet page in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(Layer.merge(testAppLayer(), browserLayer), { timeout: 180_000, excludeTestServices: true })("the wallet page", (it) => {
      it.scoped("shows branding, balance, tier progress, rewards and activity, escaped, under the CSP", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { key, owner, storeId } = yield* newMerchant(app, "Riverside Cafe (legal name)")
          const dashboard = yield* clientAs(app, owner.token)
          yield* dashboard.stores.updateBranding({
            path: { id: storeId },
            payload: { display_name: "Riverside Cafe & Bakery", primary_color: "#0f766e", accent_color: "#ecfdf5" }
          })
          yield* dashboard.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Silver", threshold: 0 } })
          yield* dashboard.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Gold", threshold: 1000 } })
          yield* dashboard.loyaltyConsole.createReward({ path: { storeId }, payload: { name: "Free iced latte", points_cost: 300 } })
          yield* dashboard.loyaltyConsole.createReward({ path: { storeId }, payload: { name: HOSTILE, points_cost: 900, stock: 3 } })
          const customer = yield* (yield* clientAs(app, key)).customers.create({
            payload: { email: "sokha@example.test", name: "Sokha Chan" },
            headers: {}
          })
          yield* dashboard.loyaltyConsole.adjust({ path: { id: customer.id }, payload: { points: 750, reason: "Welcome, note for staff" } })
          const redemption = yield* (yield* clientAs(app, key)).loyalty.redeemPoints({
            payload: { customer_id: customer.id, points: 200 },
            headers: {}
          })
          yield* dashboard.gamesConsole.create({
            path: { storeId },
            payload: { name: "Lucky wheel", type: "spin", prizes: [{ name: "10 points", kind: "points", points: 10, weight: 1 }] }
          })

          const browser = yield* E2EBrowser
          const context = yield* Effect.acquireRelease(
            Effect.promise(() => browser.newContext({ viewport: { width: 480, height: 900 } })),
            (context) => Effect.promise(() => context.close())
          )
          const page = yield* Effect.promise(() => context.newPage())
          const problems: Array<string> = []
          page.on("console", (message) => {
            if (message.type() === "error") problems.push(`console.error: ${message.text()}`)
          })
          page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
          page.on("dialog", (dialog) => problems.push(`dialog: ${dialog.message()}`))
          page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()}`))

          const walletLink = new URL(customer.wallet_url)
          const response = yield* Effect.promise(() =>
            page.goto(`${app.baseUrl}${walletLink.pathname}${walletLink.search}`, { waitUntil: "load" }))
          expect(response?.status()).toBe(200)
          expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'nonce-/)
          const text = (selector: string) => Effect.promise(() => page.locator(selector).innerText())
          expect(yield* text("#balance")).toBe("550")
          expect(yield* text("#tier")).toBe("Silver")
          expect(yield* text("#next-tier")).toBe("1,000 points to Gold")
          expect(yield* text("#customer")).toBe("S**** C***")
          expect(yield* Effect.promise(() => page.locator("li.reward").allInnerTexts())).toEqual([
            expect.stringContaining(HOSTILE),
            expect.stringContaining("Free iced latte")
          ])
          expect(yield* Effect.promise(() => page.locator("li.entry").allInnerTexts())).toEqual([
            expect.stringContaining("Redeemed"),
            expect.stringContaining("Adjusted by the store")
          ])
          expect(yield* Effect.promise(() => page.locator("body").innerText())).not.toContain("note for staff")
          expect(yield* text("li.voucher .code")).toBe(redemption.voucher_code)
          expect(yield* Effect.promise(() => page.locator("img[src=x]").count())).toBe(0)
          expect(yield* Effect.promise(() => page.title())).toContain("Riverside Cafe & Bakery")

          mkdirSync(OUTPUT_DIR, { recursive: true })
          yield* Effect.promise(() => page.screenshot({ path: join(OUTPUT_DIR, "wallet.png"), fullPage: true }))
          expect(yield* seriousViolations(page)).toEqual([])

          // The game link carries the customer's credentials: the game page offers the play button.
          yield* Effect.promise(() => page.locator("li.game a").click())
          yield* Effect.promise(() => page.waitForSelector("#game-name"))
          expect(yield* text("#game-name")).toBe("Lucky wheel")
          expect(yield* Effect.promise(() => page.locator("#play").isVisible())).toBe(true)
          expect(yield* seriousViolations(page)).toEqual([])
          expect(problems).toEqual([])
        }))
    })
  }
)
