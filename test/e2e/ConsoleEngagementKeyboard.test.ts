/**
 * The engagement and insights pages of the console used with the keyboard alone (Tab, Shift+Tab, Enter,
 * Space, Escape and the arrow keys; no click), in a real browser (Debian's Chromium driven by
 * playwright-core) against the service on PostgreSQL (when available): sign in, add a customer, adjust
 * their points, redeem a reward and cancel the redemption, build a segment rule, create a promotion and
 * submit it, change the analytics date range and read a chart's figures, reconcile the ledger and open a
 * journal entry, filter the risk cases and open one.
 *
 * On the way, every control the focus stops on must show it (a focus ring), a dialog keeps the focus inside
 * it and gives it back to the control that opened it when closed, and axe-core finds no serious or critical
 * violation. Screenshots go to test-output/console/keyboard/. Needs /usr/bin/chromium; without it the suite
 * is skipped.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Locator, Page } from "playwright-core"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { signUp } from "../support/Accounts.ts"
import { CHROMIUM, HAS_CHROMIUM } from "../support/Browser.ts"
import { captureAt, checkAccessibility, ConsoleBrowser, consoleBrowserLayer, openConsolePage, screenshotOnFailure, step } from "../support/ConsoleBrowser.ts"
import { paidPayment, storeWithKey } from "../support/Merchant.ts"
import { focusStop, isFocused, press, staysInside, tabTo, typeText } from "../support/Keyboard.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/console/keyboard/", import.meta.url))

/** A menu entry from wherever the focus is: back up through the page into the menu, then Enter. */
const openFromMenu = (page: Page, label: string, unseen: Array<string>) =>
  Effect.gen(function*() {
    yield* tabTo(page, page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: label, exact: true }), { unseen, backwards: true, max: 120 })
    yield* press(page, "Enter")
    yield* step(() => page.getByRole("heading", { name: label, level: 1 }).waitFor())
    yield* checkAccessibility(page, label)
  })

const screenshot = (page: Page, name: string) =>
  step(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true })
    await page.screenshot({ path: join(OUTPUT_DIR, `${name}.png`) })
  })

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "console by keyboard alone" : `console by keyboard alone (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(Layer.merge(testAppLayer(), consoleBrowserLayer), { timeout: 180_000, excludeTestServices: true })("keyboard", (it) => {
      it.scoped("customers, points, a reward redeemed and cancelled, a segment, a promotion, analytics, ledger and risk without a pointer", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const browser = yield* ConsoleBrowser
          const owner = yield* Effect.promise(() => signUp(app, { organization_name: "Riverside Coffee" }))
          const merchant = yield* storeWithKey(app, owner, "Riverside Cafe")
          const rpc = yield* makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: owner.token }).pipe(Effect.provide(FetchHttpClient.layer))
          yield* rpc.ConfigureLoyalty({ store_id: merchant.storeId, active: true, points_per_unit: { USD: "10" } })
          yield* rpc.CreateReward({ store_id: merchant.storeId, name: "Free iced latte", points_cost: 100, stock: 5 })
          // A day's trade: a large payment (the risk rules open a case on it) and a regular one, in the ledger.
          yield* paidPayment(app, merchant.key, { amount: "1500.00", reference_id: "catering-42" })
          yield* paidPayment(app, merchant.key, { amount: "12.50", reference_id: "order-7" })
          // Riel takings in millions, which the revenue chart's axis must write in full view.
          yield* paidPayment(app, merchant.key, { amount: "3500000", currency: "KHR", reference_id: "wedding-order" })

          const { page, problems } = yield* openConsolePage(browser)
          const unseen: Array<string> = []

          // Sign in.
          yield* step(() => page.goto(`${app.baseUrl}/console`))
          yield* tabTo(page, page.getByLabel("Email"), { unseen })
          yield* typeText(page, owner.email)
          yield* tabTo(page, page.getByLabel("Password"), { unseen })
          yield* typeText(page, owner.password)
          yield* press(page, "Enter")
          yield* step(() => page.getByRole("heading", { name: "Home", level: 1 }).waitFor())

          // The skip link is the first stop and takes the focus to the page's content.
          yield* tabTo(page, page.getByRole("link", { name: "Skip to content" }), { unseen, max: 1 })
          yield* screenshot(page, "skip-link")
          yield* press(page, "Enter")
          expect(yield* step(() => page.evaluate(() => document.activeElement?.id))).toBe("main")

          // A customer.
          yield* openFromMenu(page, "Customers", unseen)
          yield* tabTo(page, page.getByRole("button", { name: "Add customer" }), { unseen })
          yield* press(page, "Enter")
          const addDialog = page.getByRole("dialog", { name: "Add a customer" })
          yield* tabTo(page, addDialog.getByLabel("E-mail"), { unseen })
          yield* typeText(page, "sokha@example.test")
          yield* tabTo(page, addDialog.getByLabel("Name"), { unseen })
          yield* typeText(page, "Sokha Chan")
          yield* press(page, "Enter")
          yield* step(() => page.getByRole("heading", { name: "Sokha Chan", level: 1 }).waitFor())
          yield* checkAccessibility(page, "customer")

          // Points by hand: the dialog keeps the focus, Escape closes it and the focus goes back to its button.
          const adjustButton = page.getByRole("button", { name: "Adjust points" })
          yield* tabTo(page, adjustButton, { unseen })
          yield* press(page, "Enter")
          const adjust = page.getByRole("dialog", { name: "Adjust points" })
          yield* step(() => adjust.waitFor())
          expect(yield* staysInside(page, adjust, 12)).toEqual([])
          yield* press(page, "Escape")
          yield* step(() => adjust.waitFor({ state: "hidden" }))
          expect(yield* isFocused(adjustButton)).toBe(true)
          yield* press(page, "Enter")
          yield* tabTo(page, adjust.getByLabel("Points"), { unseen })
          yield* typeText(page, "300")
          yield* tabTo(page, adjust.getByLabel("Reason"), { unseen })
          yield* typeText(page, "Welcome gift")
          yield* screenshot(page, "adjust-dialog")
          yield* press(page, "Enter")
          yield* step(() => page.getByTestId("points-balance").filter({ hasText: /^300$/ }).waitFor())
          expect(yield* isFocused(adjustButton)).toBe(true)

          // A reward redeemed at the counter (the reward chosen with the arrows), then the redemption cancelled.
          const redeemButton = page.getByRole("button", { name: "Redeem reward" })
          yield* tabTo(page, redeemButton, { unseen, backwards: true })
          yield* press(page, "Enter")
          const redeem = page.getByRole("dialog", { name: "Redeem a reward" })
          yield* tabTo(page, redeem.getByLabel("Reward"), { unseen })
          yield* press(page, "ArrowDown")
          yield* tabTo(page, redeem.getByRole("button", { name: "Redeem", exact: true }), { unseen })
          yield* press(page, "Enter")
          yield* step(() => page.getByRole("heading", { name: "Loyalty", level: 1 }).waitFor())
          const issued = page.locator("tr[data-redemption-id]").filter({ has: page.locator("[data-status='issued']") })
          yield* tabTo(page, issued.getByRole("button", { name: /^Cancel / }), { unseen })
          yield* press(page, "Enter")
          yield* step(() => page.locator("tr[data-redemption-id] [data-status='cancelled']").waitFor())
          yield* checkAccessibility(page, "loyalty")

          // A segment: the rule's field changed with the arrows, its value typed, the preview following.
          yield* openFromMenu(page, "Segments", unseen)
          const count = page.getByTestId("preview-count")
          yield* step(() => count.filter({ hasText: /^0$/ }).waitFor())
          const field = page.getByLabel("Rule 1 field")
          yield* tabTo(page, field, { unseen })
          yield* press(page, "ArrowDown", "ArrowDown", "ArrowDown", "ArrowDown")
          expect(yield* step(() => field.evaluate((select) => (select as HTMLSelectElement).selectedOptions[0]?.text))).toBe("Points balance")
          yield* tabTo(page, page.getByLabel("Rule 1 value"), { unseen })
          yield* typeText(page, "100")
          yield* step(() => count.filter({ hasText: /^1$/ }).waitFor())
          yield* press(page, "Control+A")
          yield* typeText(page, "1000")
          yield* step(() => count.filter({ hasText: /^0$/ }).waitFor())
          yield* press(page, "Control+A")
          yield* typeText(page, "100")
          yield* step(() => count.filter({ hasText: /^1$/ }).waitFor())
          yield* tabTo(page, page.getByLabel("Segment name"), { unseen, backwards: true })
          yield* typeText(page, "Regulars")
          yield* screenshot(page, "segment-builder")
          yield* press(page, "Enter")
          yield* step(() => page.getByRole("cell", { name: "Regulars", exact: true }).waitFor())

          // A promotion for the segment, created and submitted.
          yield* openFromMenu(page, "Promotions", unseen)
          yield* tabTo(page, page.getByRole("button", { name: "New promotion" }), { unseen })
          yield* press(page, "Enter")
          const newPromotion = page.getByRole("dialog", { name: "New promotion" })
          yield* tabTo(page, newPromotion.getByLabel("Name"), { unseen })
          yield* typeText(page, "Double points week")
          yield* tabTo(page, newPromotion.getByLabel("Who"), { unseen })
          yield* press(page, "ArrowDown")
          expect(yield* step(() => newPromotion.getByLabel("Who").evaluate((select) => (select as HTMLSelectElement).selectedOptions[0]?.text))).toBe("Segment: Regulars")
          yield* tabTo(page, newPromotion.getByLabel("Bonus points per payment"), { unseen })
          yield* typeText(page, "50")
          yield* tabTo(page, newPromotion.getByRole("button", { name: "Create draft" }), { unseen })
          yield* press(page, "Enter")
          yield* step(() => page.getByRole("heading", { name: /Double points week/, level: 1 }).waitFor())
          yield* tabTo(page, page.getByRole("button", { name: "Submit for approval" }), { unseen })
          yield* press(page, "Enter")
          yield* step(() => page.locator(".amount-title [data-status='pending_approval']").waitFor())
          yield* checkAccessibility(page, "promotion")

          // Analytics: the range started two months back, typed into the date's fields, applied; the first
          // chart's figures opened. (The arrow keys step one field: a month back from the 31st is no date,
          // and the input is then empty.)
          yield* openFromMenu(page, "Analytics", unseen)
          const figures = page.locator("details.chart-figures").first()
          const twoMonthsBack = new Date(Date.now() - 60 * 86_400_000)
          const [year, month, day] = twoMonthsBack.toISOString().slice(0, 10).split("-")
          yield* tabTo(page, page.getByLabel("From"), { unseen })
          // The month field has the focus; each field moves on to the next once full (en-US: month, day, year).
          yield* typeText(page, `${month}${day}${year}`)
          expect(yield* step(() => page.getByLabel("From").inputValue())).toBe(`${year}-${month}-${day}`)
          yield* tabTo(page, page.getByRole("button", { name: "Apply" }), { unseen })
          yield* press(page, "Enter")
          // The figures now start on the day typed (a count of rows would also grow when the forecast's arrive).
          yield* step(() => figures.locator("tbody tr").first().locator("th").getByText(`${year}-${month}-${day}`, { exact: true }).waitFor({ state: "attached" }))
          yield* tabTo(page, figures.locator("summary"), { unseen })
          yield* press(page, "Enter")
          yield* step(() => figures.locator("table").waitFor({ state: "visible" }))
          yield* screenshot(page, "analytics-figures")
          yield* captureAt(OUTPUT_DIR, page, "analytics-khr")

          // Ledger: reconciled, and a journal entry's lines opened.
          yield* openFromMenu(page, "Ledger", unseen)
          yield* tabTo(page, page.getByRole("button", { name: "Run reconciliation" }), { unseen })
          yield* press(page, "Enter")
          yield* step(() => page.getByText(/All clear: 3 payments/).waitFor())
          const lines = page.getByRole("button", { name: /^\d+ lines of / }).first()
          yield* tabTo(page, lines, { unseen })
          yield* press(page, "Enter")
          expect(yield* step(() => lines.getAttribute("aria-expanded"))).toBe("true")

          // Risk: every case with Space, the large payment's case opened with Enter, closed with Escape.
          for (let tries = 0; (yield* rpc.RiskCases({ store_id: merchant.storeId })).data.length === 0 && tries < 40; tries++) {
            yield* Effect.sleep("250 millis")
          }
          yield* openFromMenu(page, "Risk", unseen)
          const all = page.getByRole("button", { name: /^All/ })
          yield* tabTo(page, all, { unseen })
          yield* press(page, " ")
          expect(yield* step(() => all.getAttribute("aria-pressed"))).toBe("true")
          const riskCase = page.locator("tr").filter({ hasText: "catering-42" }).getByRole("button", { name: "Unusually large payment" })
          yield* tabTo(page, riskCase, { unseen })
          yield* press(page, "Enter")
          const caseDialog = page.getByRole("dialog", { name: "Risk case" })
          yield* step(() => caseDialog.getByRole("link", { name: /catering-42/ }).waitFor())
          yield* screenshot(page, "risk-case")
          yield* press(page, "Escape")
          yield* step(() => caseDialog.waitFor({ state: "hidden" }))
          expect(yield* isFocused(riskCase)).toBe(true)

          expect(unseen, "controls whose focus cannot be seen").toEqual([])
          expect(problems).toEqual([])
        }).pipe(screenshotOnFailure(OUTPUT_DIR)), 150_000)
    })
  }
)
