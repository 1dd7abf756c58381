/**
 * The console's decisions and corrections in a real browser (Debian's Chromium driven by playwright-core)
 * against the service on PostgreSQL (when available), as a store's staff make them:
 *
 * - an Admin's promotion is rejected by the Owner with a reason, edited back to a draft and submitted again,
 *   approved, activated, paused, resumed and ended (ending asks once more), every move in its audit trail;
 * - a referral flagged as fraud (the friend has the referrer's phone) is voided with a note;
 * - a customer's points are adjusted by hand, refused without a reason, then added and removed;
 * - the store's Telegram notifications are set up and a test message goes to a local Bot API fake (the real
 *   API's paths, bodies and answers): the message reaches the chat and shows in the console's delivery log;
 *   a chat the bot is not in is refused in Telegram's own words; a paid payment's message follows.
 *
 * axe-core checks every page (no serious or critical violation); screenshots at 1280 and 390 px go to
 * test-output/console/decisions/. Needs /usr/bin/chromium; without it the suite is skipped.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { addMember, type SignedUp, signUp } from "../support/Accounts.ts"
import { CHROMIUM, HAS_CHROMIUM } from "../support/Browser.ts"
import { clientAs } from "../support/Client.ts"
import { captureAt, ConsoleBrowser, consoleBrowserLayer, openConsolePage, screenshotOnFailure, step } from "../support/ConsoleBrowser.ts"
import { paidPayment, storeWithKey } from "../support/Merchant.ts"
import { telegramBotApi } from "../support/TelegramBotApi.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/console/decisions/", import.meta.url))
const capture = (page: Page, name: string) =>
  Effect.zipRight(step(() => page.evaluate("window.scrollTo(0, 0)")), captureAt(OUTPUT_DIR, page, name))

const ADMIN_EMAIL = "decisions-platform-admin@example.test"
const BOT_TOKEN = "7012345678:AAH-riverside-alerts-bot-token"
const STAFF_CHAT = "-1001234567890"

const signedIn = (browser: Browser, app: TestAppShape, user: { readonly email: string }, password: string) =>
  Effect.gen(function*() {
    const opened = yield* openConsolePage(browser)
    const { page } = opened
    yield* step(() => page.goto(`${app.baseUrl}/console`))
    yield* step(() => page.getByLabel("Email").fill(user.email))
    yield* step(() => page.getByLabel("Password").fill(password))
    yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
    yield* step(() => page.getByRole("heading", { name: "Home", level: 1 }).waitFor())
    return opened
  })

const menu = (page: Page, label: string) =>
  Effect.gen(function*() {
    yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: label, exact: true }).click())
    yield* step(() => page.getByRole("heading", { name: label, level: 1 }).waitFor())
  })

/** A merchant's Owner with a store and an Admin in their organization. */
const newMerchant = Effect.gen(function*() {
  const app = yield* TestApp
  const browser = yield* ConsoleBrowser
  const owner: SignedUp = yield* Effect.promise(() => signUp(app, { organization_name: "Riverside Coffee" }))
  const merchant = yield* storeWithKey(app, owner, "Riverside Cafe")
  const admin = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "admin"))
  return { app, browser, owner, merchant, admin }
})

const consoleAs = (app: TestAppShape, token: string) =>
  makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: token }).pipe(Effect.provide(FetchHttpClient.layer))

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "console decisions in Chromium" : `console decisions in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(Layer.merge(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), consoleBrowserLayer), { timeout: 180_000, excludeTestServices: true })(
      "decisions",
      (it) => {
        it.scoped("a promotion rejected, edited, approved, paused, resumed and ended", () =>
          Effect.gen(function*() {
            const { admin, app, browser, merchant, owner } = yield* newMerchant

            // The Admin's draft, submitted for approval (through the console's procedures, as their page would).
            const adminRpc = yield* consoleAs(app, admin.token)
            const draft = yield* adminRpc.CreatePromotion({
              store_id: merchant.storeId,
              name: "Rainy season bonus",
              bonus_points: 40,
              starts_at: new Date(Date.now() - 60_000),
              ends_at: new Date(Date.now() + 30 * 86_400_000)
            })
            yield* adminRpc.SubmitPromotion({ id: draft.id })

            const { page, problems } = yield* signedIn(browser, app, owner, owner.password)

            // The Owner rejects it with a reason; the reason is required and kept.
            yield* menu(page, "Promotions")
            yield* step(() => page.getByRole("button", { name: "Review Rainy season bonus" }).click())
            yield* step(() => page.getByRole("button", { name: "Reject" }).click())
            const reject = page.getByRole("dialog", { name: "Reject promotion" })
            yield* step(() => reject.getByRole("button", { name: "Reject promotion" }).click())
            yield* step(() => reject.locator(".field-invalid").getByLabel("Reason").waitFor())
            yield* step(() => reject.getByLabel("Reason").fill("40 points is more than our margin allows"))
            yield* capture(page, "promotion-reject")
            yield* step(() => reject.getByRole("button", { name: "Reject promotion" }).click())
            yield* step(() => page.locator(".amount-title [data-status='rejected']").waitFor())
            yield* step(() => page.getByRole("note").getByText("40 points is more than our margin allows").waitFor())
            yield* step(() => page.getByTestId("audit-trail").getByText("“40 points is more than our margin allows”", { exact: false }).waitFor())
            yield* capture(page, "promotion-rejected")

            // The Admin lowers the bonus (back to a draft) and submits it again; the Owner approves and activates it.
            const adminView = yield* signedIn(browser, app, admin, owner.password)
            yield* step(() => adminView.page.goto(`${app.baseUrl}/console/promotions/${draft.id}`))
            yield* step(() => adminView.page.getByRole("button", { name: "Edit" }).click())
            const edit = adminView.page.getByRole("dialog", { name: "Edit promotion" })
            yield* step(() => edit.getByLabel("Bonus points per payment").fill("20"))
            yield* step(() => edit.getByRole("button", { name: "Save draft" }).click())
            yield* step(() => adminView.page.locator(".amount-title [data-status='draft']").waitFor())
            yield* step(() => adminView.page.getByRole("button", { name: "Submit for approval" }).click())
            yield* step(() => adminView.page.locator(".amount-title [data-status='pending_approval']").waitFor())
            expect(adminView.problems).toEqual([])

            yield* step(() => page.reload())
            yield* step(() => page.getByRole("button", { name: "Approve" }).click())
            yield* step(() => page.locator(".amount-title [data-status='approved']").waitFor())
            yield* step(() => page.getByRole("button", { name: "Activate" }).click())
            yield* step(() => page.locator(".amount-title [data-status='active']").waitFor())
            // Paused, then resumed: the same promotion, active again.
            yield* step(() => page.getByRole("button", { name: "Pause" }).click())
            yield* step(() => page.locator(".amount-title [data-status='paused']").waitFor())
            yield* step(() => page.getByTestId("audit-trail").getByText("You paused it").waitFor())
            yield* capture(page, "promotion-paused")
            yield* step(() => page.getByRole("button", { name: "Resume" }).click())
            yield* step(() => page.locator(".amount-title [data-status='active']").waitFor())
            // Ended, after saying it is for good; a cancel first leaves it running.
            yield* step(() => page.getByRole("button", { name: "End", exact: true }).click())
            const end = page.getByRole("dialog", { name: "End this promotion" })
            yield* step(() => end.getByText("cannot be started again", { exact: false }).waitFor())
            yield* step(() => end.getByRole("button", { name: "Cancel" }).click())
            yield* step(() => end.waitFor({ state: "hidden" }))
            yield* step(() => page.locator(".amount-title [data-status='active']").waitFor())
            yield* step(() => page.getByRole("button", { name: "End", exact: true }).click())
            yield* capture(page, "promotion-end")
            yield* step(() => end.getByRole("button", { name: "End promotion" }).click())
            yield* step(() => page.locator(".amount-title [data-status='ended']").waitFor())
            yield* step(() => end.waitFor({ state: "hidden" }))
            expect(yield* step(() => page.getByRole("button", { name: /^(Pause|Resume|Activate|End)$/ }).count())).toBe(0)
            const trail = yield* step(() => page.getByTestId("audit-trail").locator("li").allTextContents())
            expect(trail.length).toBeGreaterThanOrEqual(9)
            for (const verb of ["rejected it", "paused it", "resumed it", "ended it"]) expect(trail.some((entry) => entry.includes(verb)), verb).toBe(true)
            yield* capture(page, "promotion-ended")

            expect(yield* step(() => page.evaluate(`window.__cspViolations`))).toEqual([])
            expect(problems).toEqual([])
          }).pipe(screenshotOnFailure(OUTPUT_DIR)), 150_000)

        it.scoped("a referral voided, points adjusted, a scratch card issued by name, a Telegram test message in the log", () =>
          Effect.gen(function*() {
            const { admin, app, browser, merchant, owner } = yield* newMerchant
            const keyApi = yield* clientAs(app, merchant.key)
            const ownerApi = yield* clientAs(app, owner.token)
            const adminRpc = yield* consoleAs(app, admin.token)
            const { page, problems } = yield* signedIn(browser, app, owner, owner.password)

            // A referral flagged as fraud (the friend has the referrer's phone), voided with a note.
            yield* ownerApi.referralsConsole.configure({
              path: { storeId: merchant.storeId },
              payload: { active: true, referrer_points: 100, referee_points: 50, commission_percent: "10" }
            })
            const referrer = yield* keyApi.customers.create({ payload: { name: "Sokha Chan", email: "sokha@example.test", phone: "+855 12 345 678" }, headers: {} })
            const code = yield* keyApi.referrals.code({ path: { id: referrer.id } })
            yield* keyApi.customers.create({
              payload: { name: "Vanna Chan", email: "vanna@example.test", phone: "+855 12 345 678", referral_code: code.code },
              headers: {}
            })
            yield* menu(page, "Referrals")
            const flagged = page.getByRole("region", { name: "Fraud review" }).locator("tr").filter({ hasText: "Vanna Chan" })
            yield* step(() => flagged.getByText("Same e-mail, phone or id as the referrer").waitFor())
            yield* step(() => flagged.getByRole("button", { name: "Void" }).click())
            const voiding = page.getByRole("dialog", { name: "Void referral" })
            yield* step(() => voiding.getByText("cancelled for good", { exact: false }).waitFor())
            yield* step(() => voiding.getByLabel("Note").fill("Same person with two e-mails, seen at the counter"))
            yield* capture(page, "referral-void")
            yield* step(() => voiding.getByRole("button", { name: "Void referral" }).click())
            yield* step(() => page.getByText("Nothing to review").waitFor())
            const voided = page.getByRole("region", { name: "All referrals" }).locator("tr").filter({ hasText: "Vanna Chan" })
            yield* step(() => voided.locator("[data-status='voided']").getByText("Voided").waitFor())
            yield* step(() => voided.getByText("Same person with two e-mails, seen at the counter", { exact: false }).waitFor())
            yield* capture(page, "referral-voided")

            // Points adjusted by hand on Sokha's page: a reason is required; added, then some removed.
            yield* step(() => page.goto(`${app.baseUrl}/console/customers/${referrer.id}`))
            yield* step(() => page.getByRole("heading", { name: "Sokha Chan", level: 1 }).waitFor())
            const balance = page.getByTestId("points-balance")
            yield* step(() => balance.filter({ hasText: /^0$/ }).waitFor())
            yield* step(() => page.getByRole("button", { name: "Adjust points" }).click())
            const adjust = page.getByRole("dialog", { name: "Adjust points" })
            yield* step(() => adjust.getByLabel("Points").fill("250"))
            yield* step(() => adjust.getByRole("button", { name: "Adjust points" }).click())
            yield* step(() => adjust.locator(".field-invalid").getByLabel("Reason").waitFor())
            yield* step(() => adjust.getByLabel("Reason").fill("Goodwill for a late order"))
            yield* capture(page, "points-adjust")
            yield* step(() => adjust.getByRole("button", { name: "Adjust points" }).click())
            yield* step(() => balance.filter({ hasText: /^250$/ }).waitFor())
            yield* step(() => page.locator("tr[data-entry-type='adjust']").filter({ hasText: "Goodwill for a late order" }).getByText("+250").waitFor())
            yield* step(() => page.getByRole("button", { name: "Adjust points" }).click())
            yield* step(() => adjust.getByLabel("Adjustment").selectOption({ label: "Remove points" }))
            yield* step(() => adjust.getByLabel("Points").fill("75"))
            yield* step(() => adjust.getByLabel("Reason").fill("Points given twice by mistake"))
            yield* step(() => adjust.getByRole("button", { name: "Adjust points" }).click())
            yield* step(() => balance.filter({ hasText: /^175$/ }).waitFor())
            yield* step(() => page.locator("tr[data-entry-type='adjust']").filter({ hasText: "Points given twice by mistake" }).getByText("-75").waitFor())
            yield* capture(page, "points-adjusted")

            // A scratch card for Sokha, found by name: no id to copy from anywhere.
            const scratch = yield* adminRpc.CreateGame({
              store_id: merchant.storeId,
              name: "Monsoon scratch",
              type: "scratch",
              prizes: [{ name: "Free cake", kind: "voucher", weight: 1 }]
            })
            yield* step(() => page.goto(`${app.baseUrl}/console/games/${scratch.id}`))
            const issueCard = page.getByRole("region", { name: "Issue a scratch card" })
            yield* step(() => issueCard.getByRole("button", { name: "Issue card" }).click())
            yield* step(() => issueCard.locator(".field-invalid").getByLabel("Customer").waitFor())
            yield* step(() => issueCard.getByLabel("Customer").fill("Sokha"))
            yield* step(() => issueCard.locator(".field-hint").getByRole("link", { name: "Sokha Chan" }).waitFor())
            yield* step(() => issueCard.getByRole("button", { name: "Issue card" }).click())
            yield* step(() => issueCard.getByText("Card issued", { exact: false }).waitFor())
            yield* step(() => page.locator("tr[data-play-id]").getByRole("link", { name: "Sokha Chan" }).waitFor())
            yield* capture(page, "scratch-card-issued")

            // Telegram: the platform's bot points at the fake Bot API; the store's staff chat gets a test message.
            const telegram = yield* telegramBotApi(BOT_TOKEN, [STAFF_CHAT])
            const platformAdmin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL, organization_name: "KHQR Platform" }))
            const platformRpc = yield* consoleAs(app, platformAdmin.token)
            yield* platformRpc.SetPlatformSetting({ key: "telegram_bot_token", value: BOT_TOKEN })
            yield* platformRpc.SetPlatformSetting({ key: "telegram_api_base_url", value: telegram.baseUrl })

            yield* menu(page, "Notifications")
            yield* step(() => page.getByText("No messages sent yet").waitFor())
            const card = page.getByRole("region", { name: "Telegram" })
            expect(yield* step(() => card.getByRole("button", { name: "Send test message on Telegram" }).isDisabled())).toBe(true)
            // A chat the bot is not in: Telegram's refusal, in its words, on the card and in the log.
            yield* step(() => card.getByLabel("Chat ID").fill("-1009999999999"))
            yield* step(() => card.getByLabel("Payment received").check())
            yield* step(() => card.getByLabel("Send Telegram messages").check())
            yield* step(() => card.getByRole("button", { name: "Save Telegram" }).click())
            yield* step(() => card.getByText("Saved.").waitFor())
            yield* step(() => card.getByRole("button", { name: "Send test message on Telegram" }).click())
            yield* step(() => card.getByText("Bad Request: chat not found", { exact: false }).waitFor())
            const log = page.getByRole("region", { name: "Delivery log" })
            yield* step(() => log.locator("tr").filter({ hasText: "-1009999999999" }).getByText("Bad Request: chat not found").waitFor())
            expect(telegram.sent).toEqual([])

            // The group's real chat id: the message is sent, reaches the chat, and the log says so.
            yield* step(() => card.getByLabel("Chat ID").fill(STAFF_CHAT))
            yield* step(() => card.getByRole("button", { name: "Save Telegram" }).click())
            yield* step(() => card.getByText("Saved.").waitFor())
            yield* step(() => card.getByRole("button", { name: "Send test message on Telegram" }).click())
            yield* step(() => card.getByText(`Test message sent to ${STAFF_CHAT}.`).waitFor())
            expect(telegram.sent.map((message) => message.chatId)).toEqual([STAFF_CHAT])
            const testText = telegram.sent[0]!.text
            const sentRow = log.locator("tr").filter({ hasText: STAFF_CHAT }).filter({ has: page.locator(".badge-paid") })
            yield* step(() => sentRow.getByText(testText.split("\n")[0]!, { exact: false }).first().waitFor())
            yield* step(() => sentRow.getByText("200", { exact: false }).first().waitFor())
            yield* capture(page, "notifications-test-sent")

            // A paid payment: its message is sent from the outbox and appears in the log on refresh.
            const payment = yield* paidPayment(app, merchant.key, { amount: "12.50", reference_id: "order-7" })
            for (let tries = 0; telegram.sent.length < 2 && tries < 80; tries++) yield* step(() => page.waitForTimeout(250))
            expect(telegram.sent.length).toBe(2)
            expect(telegram.sent[1]!.text).toContain(payment.id)
            yield* step(() => log.getByRole("button", { name: "Refresh" }).click())
            yield* step(() => log.locator("tr").filter({ hasText: "payment.completed" }).filter({ has: page.locator(".badge-paid") }).waitFor())
            yield* capture(page, "notifications-log")

            expect(yield* step(() => page.evaluate(`window.__cspViolations`))).toEqual([])
            expect(problems).toEqual([])
          }).pipe(screenshotOnFailure(OUTPUT_DIR)), 150_000)
      }
    )
  }
)
