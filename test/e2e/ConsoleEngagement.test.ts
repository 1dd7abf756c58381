/**
 * The engagement half of the merchant console in a real browser (Debian's Chromium driven by
 * playwright-core) against the service (PostgreSQL when available), as a merchant's staff use it: the
 * Owner turns the loyalty program on and makes a reward, adds a customer from the keyboard, the customer
 * pays (the REST API, as the merchant's server and the provider would) and their points appear on their page
 * without a reload; a reward is redeemed at the counter and the redemption cancelled; consent is recorded; a
 * segment's live preview count changes with its rule and an invalid value is refused at its field; an Admin
 * drafts a promotion, sees its simulation, submits it and cannot approve it (the page says why, the server
 * refuses); the Owner approves it from the approval queue and activates it, and the customer's next payment
 * earns its bonus points. A second customer is erased. axe-core checks every page (no serious or critical
 * violation); screenshots at 1280 and 390 px go to test-output/console/engagement/.
 *
 * Needs /usr/bin/chromium (`apt-get install chromium`); without it the suite is skipped.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import type { PromotionId } from "../../domain/Ids.ts"
import { addMember, signUp } from "../support/Accounts.ts"
import { CHROMIUM, HAS_CHROMIUM } from "../support/Browser.ts"
import { clientAs } from "../support/Client.ts"
import { captureAt, ConsoleBrowser, consoleBrowserLayer, openConsolePage, screenshotOnFailure, step } from "../support/ConsoleBrowser.ts"
import { paidPayment, storeWithKey } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/console/engagement/", import.meta.url))
/** Screenshots and axe-core at both widths, and nothing wider than a 390 px screen (the page never scrolls sideways). */
const capture = (page: Page, name: string) =>
  Effect.gen(function*() {
    // From the top: a step may have scrolled the page, and the sticky top bar would be drawn across the middle.
    yield* step(() => page.evaluate("window.scrollTo(0, 0)"))
    yield* captureAt(OUTPUT_DIR, page, name)
    yield* step(() => page.setViewportSize({ width: 390, height: 844 }))
    const wider = yield* step(() =>
      page.evaluate(() =>
        document.documentElement.scrollWidth <= 390 ? [] : Array.from(document.querySelectorAll("body *"))
          .filter((element) => element.getBoundingClientRect().right > 391)
          .slice(0, 5)
          .map((element) => `${element.tagName.toLowerCase()}.${element.className}: ${(element.textContent ?? "").slice(0, 40)}`)
      )
    )
    yield* step(() => page.setViewportSize({ width: 1280, height: 800 }))
    expect(wider, `${name} is wider than 390 px`).toEqual([])
  })

const signInAt = (page: Page, baseUrl: string, email: string, password: string) =>
  Effect.gen(function*() {
    yield* step(() => page.goto(`${baseUrl}/console`))
    yield* step(() => page.getByLabel("Email").fill(email))
    yield* step(() => page.getByLabel("Password").fill(password))
    yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
    yield* step(() => page.getByRole("heading", { name: "Home" }).waitFor())
  })

const openMenu = (page: Page, label: string, heading: string) =>
  Effect.gen(function*() {
    yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: label, exact: true }).click())
    yield* step(() => page.getByRole("heading", { name: heading, exact: true, level: 1 }).waitFor())
  })

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "console: customers, loyalty, referrals, segments, promotions" : `console engagement (SKIPPED: no ${CHROMIUM})`,
  () => {
    layer(Layer.merge(testAppLayer(), consoleBrowserLayer), { timeout: 180_000, excludeTestServices: true })("engagement", (it) => {
      it.scoped("points on payment, redeem and cancel, a live segment preview, a four-eyes promotion that pays bonus points", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const browser = yield* ConsoleBrowser
          const owner = yield* Effect.promise(() => signUp(app))
          const merchant = yield* storeWithKey(app, owner, "Riverside Coffee")
          const admin = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "admin"))
          const merchantApi = yield* clientAs(app, merchant.key)
          const ownerTab = yield* openConsolePage(browser)
          const page = ownerTab.page
          yield* signInAt(page, app.baseUrl, owner.email, owner.password)

          // The loyalty program: earning on at 10 points a dollar, and a reward with stock.
          yield* openMenu(page, "Loyalty", "Loyalty")
          yield* step(() => page.getByLabel("Paid payments earn points").check())
          yield* step(() => page.getByLabel("Points per 1 USD").fill("10"))
          yield* step(() => page.getByRole("button", { name: "Save program" }).click())
          yield* step(() => page.getByText("Earning on").waitFor())
          yield* step(() => page.getByRole("button", { name: "New reward" }).click())
          const rewardDialog = page.getByRole("dialog", { name: "New reward" })
          yield* step(() => rewardDialog.getByLabel("Name").fill("Free iced latte"))
          yield* step(() => rewardDialog.getByLabel("Cost in points").fill("abc"))
          yield* step(() => rewardDialog.getByRole("button", { name: "Create reward" }).click())
          // A wrong value is refused at its field before anything is sent.
          yield* step(() => rewardDialog.locator(".field-invalid").getByLabel("Cost in points").waitFor())
          yield* step(() => rewardDialog.getByLabel("Cost in points").fill("100"))
          yield* step(() => rewardDialog.getByLabel("Stock (optional)").fill("5"))
          yield* step(() => rewardDialog.getByRole("button", { name: "Create reward" }).click())
          yield* step(() => page.locator("tr[data-reward='Free iced latte'] [data-testid='reward-stock']").filter({ hasText: "5" }).waitFor())
          yield* step(() => page.getByLabel("Tier name").fill("Gold"))
          yield* step(() => page.getByLabel("Threshold").fill("100"))
          yield* step(() => page.getByRole("button", { name: "Add tier" }).click())
          yield* step(() => page.getByRole("cell", { name: "Gold", exact: true }).waitFor())

          // A customer, added with the keyboard alone.
          yield* openMenu(page, "Customers", "Customers")
          yield* step(() => page.getByText("No customers yet").waitFor())
          yield* capture(page, "customers-empty")
          yield* step(() => page.getByRole("button", { name: "Add customer" }).focus())
          yield* step(() => page.keyboard.press("Enter"))
          const addDialog = page.getByRole("dialog", { name: "Add a customer" })
          yield* step(() => addDialog.getByLabel("E-mail").waitFor())
          // The dialog opens with the focus on its close button; the first field is one Tab away.
          yield* step(() => page.keyboard.press("Tab"))
          expect(yield* step(() => addDialog.getByLabel("E-mail").evaluate((input) => input === document.activeElement))).toBe(true)
          yield* step(() => page.keyboard.type("sokha@example.test"))
          yield* step(() => page.keyboard.press("Tab"))
          yield* step(() => page.keyboard.type("Sokha Chan"))
          yield* step(() => page.keyboard.press("Tab"))
          yield* step(() => page.keyboard.press("Tab"))
          yield* step(() => page.keyboard.type("+855 12 345 678"))
          yield* step(() => page.keyboard.press("Enter"))
          yield* step(() => page.getByRole("heading", { name: "Sokha Chan" }).waitFor())
          const customerId = new URL(page.url()).pathname.split("/").pop()! as never
          expect(yield* step(() => page.getByTestId("points-balance").textContent())).toBe("0")

          // They pay 12.50 USD: 125 points appear on their page without a reload.
          yield* paidPayment(app, merchant.key, { amount: "12.50", customer_id: customerId })
          yield* step(() => page.getByTestId("points-balance").filter({ hasText: "125" }).waitFor({ timeout: 15_000 }))
          yield* step(() => page.locator("tr[data-entry-type='earn']").waitFor())
          yield* step(() => page.locator(".metric").filter({ hasText: "Tier" }).getByText("Gold").waitFor())
          // Their referral code, made on demand, with its QR.
          yield* step(() => page.getByRole("button", { name: "Create referral code" }).click())
          yield* step(() => page.getByRole("img", { name: /QR code of the referral link/ }).waitFor())
          const referralCode = (yield* step(() => page.getByTestId("referral-code").textContent()))!.trim()
          // Consent: marketing given at the counter under the 2026-01 policy, in the log with who and where.
          yield* step(() => page.getByLabel("Marketing offers").check())
          yield* step(() => page.getByLabel("Source (optional)").fill("pos"))
          yield* step(() => page.getByLabel("Policy version (optional)").fill("2026-01"))
          yield* step(() => page.getByRole("button", { name: "Save preferences" }).click())
          yield* step(() => page.getByRole("cell", { name: "2026-01" }).waitFor())
          yield* capture(page, "customer-360")

          // A reward redeemed at the counter, then the redemption cancelled: the points come back.
          yield* step(() => page.getByRole("button", { name: "Redeem reward" }).click())
          const redeemDialog = page.getByRole("dialog", { name: "Redeem a reward" })
          yield* step(() => redeemDialog.getByLabel("Reward").waitFor())
          yield* capture(page, "redeem-dialog")
          yield* step(() => redeemDialog.getByRole("button", { name: "Redeem" }).click())
          yield* step(() => page.getByRole("heading", { name: "Loyalty", level: 1 }).waitFor())
          const issued = page.locator("tr[data-redemption-id] [data-status='issued']")
          yield* step(() => issued.waitFor())
          yield* step(() => page.locator("tr[data-reward='Free iced latte'] [data-testid='reward-stock']").filter({ hasText: "4" }).waitFor())
          yield* step(() => page.locator("tr[data-redemption-id]").getByRole("button", { name: /^Cancel / }).click())
          yield* step(() => page.locator("tr[data-redemption-id] [data-status='cancelled']").waitFor())
          yield* step(() => page.locator("tr[data-reward='Free iced latte'] [data-testid='reward-stock']").filter({ hasText: "5" }).waitFor())
          yield* step(() => page.getByTestId("liability").filter({ hasText: "$1.25" }).waitFor())
          yield* capture(page, "loyalty")

          // A segment whose preview follows the rule: one customer has paid at least once, none twice.
          yield* openMenu(page, "Segments", "Segments")
          const count = page.getByTestId("preview-count")
          yield* step(() => count.filter({ hasText: /^1$/ }).waitFor())
          yield* step(() => page.getByLabel("Rule 1 value").fill("2"))
          yield* step(() => count.filter({ hasText: /^0$/ }).waitFor())
          yield* step(() => page.getByLabel("Rule 1 value").fill("two"))
          yield* step(() => page.locator(".field-invalid").getByLabel("Rule 1 value").waitFor())
          yield* step(() => page.getByText("Enter a whole number").waitFor())
          yield* capture(page, "segment-invalid-rule")
          yield* step(() => page.getByLabel("Rule 1 value").fill("1"))
          yield* step(() => count.filter({ hasText: /^1$/ }).waitFor())
          yield* step(() => page.getByLabel("Segment name").fill("Regulars"))
          yield* step(() => page.getByRole("button", { name: "Save segment" }).click())
          yield* step(() => page.getByRole("cell", { name: "Regulars", exact: true }).waitFor())
          yield* capture(page, "segments")

          // The Admin drafts a promotion for the segment, starting now, and sees its simulation.
          const adminTab = yield* openConsolePage(browser)
          const adminPage = adminTab.page
          yield* signInAt(adminPage, app.baseUrl, admin.email, owner.password)
          yield* openMenu(adminPage, "Promotions", "Promotions")
          yield* step(() => adminPage.getByText("No promotions yet").waitFor())
          yield* step(() => adminPage.getByRole("button", { name: "New promotion" }).click())
          const newPromotion = adminPage.getByRole("dialog", { name: "New promotion" })
          yield* step(() => newPromotion.getByLabel("Name").fill("Double points week"))
          yield* step(() => newPromotion.getByLabel("Who").selectOption({ label: "Segment: Regulars" }))
          yield* step(() => newPromotion.getByLabel("Bonus points per payment").fill("50"))
          const aMinuteAgo = yield* step(() =>
            adminPage.evaluate(() => {
              const at = new Date(Date.now() - 60_000)
              return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
            })
          )
          yield* step(() => newPromotion.getByLabel("Starts").fill(aMinuteAgo))
          yield* capture(adminPage, "promotion-new")
          yield* step(() => newPromotion.getByRole("button", { name: "Create draft" }).click())
          const simulation = adminPage.getByTestId("simulation")
          yield* step(() => simulation.getByText("50", { exact: true }).waitFor())
          const promotionId = new URL(adminPage.url()).pathname.split("/").pop()! as PromotionId
          yield* step(() => adminPage.getByRole("button", { name: "Submit for approval" }).click())
          yield* step(() => adminPage.locator(".amount-title [data-status='pending_approval']").waitFor())
          // The Admin may not approve: the page says why, and the server refuses the call all the same.
          yield* step(() => adminPage.getByTestId("approval-refusal").filter({ hasText: "Your role (Admin) does not allow this: approve or reject promotions" }).waitFor())
          expect(yield* step(() => adminPage.getByRole("button", { name: "Approve" }).isDisabled())).toBe(true)
          yield* capture(adminPage, "promotion-pending-admin")
          const adminRpc = yield* makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: admin.token }).pipe(Effect.provide(FetchHttpClient.layer))
          const refused = yield* Effect.flip(adminRpc.ApprovePromotion({ id: promotionId }))
          expect(refused._tag).toBe("Forbidden")

          // The Owner finds it in the approval queue with who submitted it and what it would cost, approves and activates it.
          yield* openMenu(page, "Promotions", "Promotions")
          const queued = page.locator(".approval-item").filter({ hasText: "Double points week" })
          yield* step(() => queued.getByText(/Submitted by Test Owner \(admin\)/).waitFor())
          yield* step(() => queued.getByTestId("simulation").getByText("50", { exact: true }).waitFor())
          yield* capture(page, "promotions-queue")
          yield* step(() => queued.getByRole("button", { name: "Review Double points week" }).click())
          yield* step(() => page.getByRole("button", { name: "Approve" }).click())
          yield* step(() => page.locator(".amount-title [data-status='approved']").waitFor())
          yield* step(() => page.getByRole("button", { name: "Activate" }).click())
          yield* step(() => page.locator(".amount-title [data-status='active']").waitFor())
          yield* step(() => page.getByTestId("audit-trail").getByText("You activated it").waitFor())
          yield* capture(page, "promotion-active")

          // The customer's next payment earns its points and the promotion's 50 bonus points.
          yield* step(() => page.goto(`${app.baseUrl}/console/customers/${customerId}`))
          yield* step(() => page.getByTestId("points-balance").filter({ hasText: /^125$/ }).waitFor())
          yield* paidPayment(app, merchant.key, { amount: "12.50", customer_id: customerId })
          yield* step(() => page.locator("tr[data-entry-type='promotion']").waitFor({ timeout: 20_000 }))
          yield* step(() => page.getByTestId("points-balance").filter({ hasText: /^300$/ }).waitFor({ timeout: 20_000 }))

          // Erasure of another customer: the dialog says what goes and what stays.
          const other = yield* merchantApi.customers.create({ payload: { email: "dara@example.test", name: "Dara Keo" }, headers: {} })
          yield* paidPayment(app, merchant.key, { amount: "5.00", customer_id: other.id })
          yield* openMenu(page, "Customers", "Customers")
          yield* step(() => page.getByLabel("Search customers").fill("dara"))
          yield* step(() => page.locator("tr[data-customer-id]").filter({ hasText: "Sokha" }).waitFor({ state: "detached" }))
          yield* capture(page, "customers")
          yield* step(() => page.getByRole("link", { name: "Dara Keo" }).click())
          yield* step(() => page.getByRole("button", { name: "Erase personal data" }).click())
          const erase = page.getByRole("dialog", { name: "Erase personal data" })
          yield* step(() => erase.getByText("Payments and refunds").waitFor())
          yield* capture(page, "customer-erase")
          yield* step(() => erase.getByLabel("I understand the personal data is gone for good").check())
          yield* step(() => erase.getByRole("button", { name: "Erase personal data" }).click())
          yield* step(() => page.getByRole("heading", { name: /Erased customer/ }).waitFor())
          yield* step(() => page.getByRole("cell", { name: "$5.00" }).waitFor())

          // Referrals: the program on; a friend joins with Sokha's code but Sokha's phone, so the referral is
          // flagged and its commission held until it is reviewed; cleared with a note, the commission is paid out.
          yield* openMenu(page, "Referrals", "Referrals")
          yield* step(() => page.getByText("Nothing to review").waitFor())
          yield* step(() => page.getByLabel("Referrals earn rewards").check())
          yield* step(() => page.getByLabel("Referrer's points").fill("100"))
          yield* step(() => page.getByLabel("New customer's points").fill("50"))
          yield* step(() => page.getByLabel("Commission (%)").fill("10"))
          yield* step(() => page.getByRole("button", { name: "Save program" }).click())
          yield* step(() => page.getByRole("status").getByText("Saved.").waitFor())
          const friend = yield* merchantApi.customers.create({
            payload: { email: "vanna@example.test", phone: "+855 12 345 678", referral_code: referralCode },
            headers: {}
          })
          yield* paidPayment(app, merchant.key, { amount: "20.00", customer_id: friend.id })
          yield* step(() => page.reload())
          const flagged = page.getByRole("region", { name: "Fraud review" }).locator("tr").filter({ hasText: "Same e-mail, phone or id as the referrer" })
          yield* step(() => flagged.waitFor())
          yield* step(() => flagged.getByRole("button", { name: "Clear" }).click())
          const clear = page.getByRole("dialog", { name: "Clear referral" })
          yield* step(() => clear.getByLabel("Note").fill("Sisters sharing a phone, confirmed in the shop"))
          yield* step(() => clear.getByRole("button", { name: "Clear referral" }).click())
          yield* step(() => page.getByText("Nothing to review").waitFor())
          yield* step(() => page.getByRole("region", { name: "Commissions" }).getByText("$2.00").first().waitFor())
          yield* step(() => page.getByRole("button", { name: "Pay out all" }).click())
          yield* step(() => page.getByRole("dialog", { name: "Pay out commissions" }).getByRole("button", { name: "Mark paid" }).click())
          yield* step(() => page.getByText("1 commission marked paid").waitFor())
          yield* capture(page, "referrals")

          expect(ownerTab.problems).toEqual([])
          expect(adminTab.problems).toEqual([])
        }).pipe(screenshotOnFailure(OUTPUT_DIR)), 150_000)
    })
  }
)
