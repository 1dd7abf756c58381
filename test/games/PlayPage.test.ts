/**
 * The hosted game pages in a real browser (Debian's Chromium driven by playwright-core), black-box: a branded
 * store's spin game opened with the customer's id, the play button spinning the wheel onto the prize the
 * server drew and the wallet credited; a scratch card issued to the customer, scratched to reveal, and shown
 * revealed on reload — with names that try to inject markup shown as text, and no CSP violation, script error
 * or failed request. Screenshots go to test-output/e2e/games-spin.png and games-scratch.png (git-ignored).
 *
 * Needs /usr/bin/chromium; without it the suite is skipped.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { seriousViolations } from "../support/Accessibility.ts"
import { CHROMIUM, HAS_CHROMIUM, launchChromium } from "../support/Browser.ts"
import { clientAs } from "../support/Client.ts"
import { newMerchant } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/e2e/", import.meta.url))
const HOSTILE = "<img src=x onerror=alert(1)>"

class E2EBrowser extends Context.Tag("test/GamesBrowser")<E2EBrowser, Browser>() {}

const browserLayer = Layer.scoped(
  E2EBrowser,
  Effect.acquireRelease(Effect.promise(() => launchChromium()), (browser) => Effect.promise(() => browser.close()))
)

/** A fresh page that records every console error, page error, dialog and failed request. */
const watchedPage = Effect.gen(function*() {
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
  return { page, problems }
})

const text = (page: Page, selector: string) => Effect.promise(() => page.locator(selector).innerText())

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "game pages in Chromium" : `game pages in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(Layer.merge(testAppLayer(), browserLayer), { timeout: 180_000, excludeTestServices: true })("the hosted game pages", (it) => {
      it.scoped("spins the wheel onto the drawn prize and reveals a scratch card, escaped, under the CSP", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { key, owner, storeId } = yield* newMerchant(app, "Riverside Cafe")
          const dashboard = yield* clientAs(app, owner.token)
          yield* dashboard.stores.updateBranding({
            path: { id: storeId },
            payload: { display_name: "Riverside Cafe & Bakery", primary_color: "#0f766e", accent_color: "#ecfdf5" }
          })
          const customer = yield* (yield* clientAs(app, key)).customers.create({
            payload: { email: "sokha@example.test", name: "Sokha Chan" },
            headers: {}
          })
          const spin = yield* dashboard.gamesConsole.create({
            path: { storeId },
            payload: {
              name: `Lucky wheel ${HOSTILE}`,
              type: "spin",
              prizes: [
                { name: "25 bonus points", kind: "points", points: 25, weight: 1 },
                { name: HOSTILE, kind: "voucher", weight: 1, inventory: 0 }
              ]
            }
          })

          const { page, problems } = yield* watchedPage
          // The customer's credentials ride in the link: its id and the token of its wallet link.
          const credentials = `c=${customer.id}&t=${new URL(customer.wallet_url).searchParams.get("t")}`
          const response = yield* Effect.promise(() => page.goto(`${app.baseUrl}/play/game/${spin.id}?${credentials}`, { waitUntil: "load" }))
          expect(response?.status()).toBe(200)
          expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'nonce-/)
          expect(yield* text(page, "#game-name")).toBe(`Lucky wheel ${HOSTILE}`)
          expect(yield* Effect.promise(() => page.locator("li.prize").allInnerTexts())).toEqual(["25 bonus points", HOSTILE])
          expect(yield* Effect.promise(() => page.locator("img[src=x]").count())).toBe(0)
          expect(yield* Effect.promise(() => page.title())).toContain("Riverside Cafe & Bakery")
          yield* Effect.promise(() => page.locator("#play").click())
          yield* Effect.promise(() => page.waitForSelector("body[data-played]", { timeout: 20_000 }))
          expect(yield* text(page, "#result")).toBe("You won 25 bonus points: +25 points")
          expect(yield* Effect.promise(() => page.locator("#wheel").getAttribute("style"))).toMatch(/rotate\(\d+(\.\d+)?deg\)/)
          mkdirSync(OUTPUT_DIR, { recursive: true })
          yield* Effect.promise(() => page.screenshot({ path: join(OUTPUT_DIR, "games-spin.png"), fullPage: true }))
          expect(yield* seriousViolations(page)).toEqual([])
          const played = yield* Effect.promise(() => page.locator("body").getAttribute("data-played"))
          const plays = yield* (yield* clientAs(app, key)).games.customerPlays({ path: { id: customer.id }, urlParams: { limit: 10 } })
          expect(plays.data.map((play) => play.id)).toEqual([played])
          // The page links back to the customer's wallet, which the same token opens.
          yield* Effect.promise(() => page.locator("#wallet-link").click())
          yield* Effect.promise(() => page.waitForSelector("#balance"))
          expect(yield* text(page, "#balance")).toBe("25")
          expect(yield* seriousViolations(page)).toEqual([])

          // Without the customer's credentials, or with the id alone, the page cannot play.
          for (const query of ["", `?c=${customer.id}`]) {
            yield* Effect.promise(() => page.goto(`${app.baseUrl}/play/game/${spin.id}${query}`, { waitUntil: "load" }))
            expect(yield* text(page, "#status")).toBe("Open the link the store sent you to play.")
            expect(yield* Effect.promise(() => page.locator("#play").count())).toBe(0)
          }

          // A scratch card: scratched, revealed, and shown revealed on reload.
          const scratch = yield* dashboard.gamesConsole.create({
            path: { storeId },
            payload: { name: "Scratch & win", type: "scratch", prizes: [{ name: `Free cake ${HOSTILE}`, kind: "voucher", weight: 1 }] }
          })
          const card = yield* dashboard.gamesConsole.issue({ path: { gameId: scratch.id }, payload: { customer_id: customer.id } })
          const cardPage = `${app.baseUrl}/play/${card.id}${new URL(card.card_url).search}`
          const unopened = yield* Effect.promise(() => app.fetch(`/play/${card.id}`, { headers: { accept: "text/html" } }))
          expect(unopened.status).toBe(404)
          yield* Effect.promise(() => page.goto(cardPage, { waitUntil: "load" }))
          expect(yield* text(page, "#cover")).toBe("Scratch to reveal")
          yield* Effect.promise(() => page.locator("#cover").click())
          yield* Effect.promise(() => page.waitForSelector("body[data-revealed]", { timeout: 20_000 }))
          expect(yield* text(page, "#result")).toBe(`You won Free cake ${HOSTILE}`)
          const voucher = yield* text(page, "#voucher")
          expect(voucher).toMatch(/^[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/)
          yield* Effect.sleep("900 millis") // the cover's fade
          yield* Effect.promise(() => page.screenshot({ path: join(OUTPUT_DIR, "games-scratch.png"), fullPage: true }))
          expect(yield* seriousViolations(page)).toEqual([])
          yield* Effect.promise(() => page.reload({ waitUntil: "load" }))
          expect(yield* Effect.promise(() => page.locator("#cover").count())).toBe(0)
          expect(yield* text(page, "#voucher")).toBe(voucher)
          expect(yield* Effect.promise(() => page.locator("img[src=x]").count())).toBe(0)
          expect(problems).toEqual([])
        }))
    })
  }
)
