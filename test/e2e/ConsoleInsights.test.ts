/**
 * The console's games, insights, integrations and platform-admin pages in a real browser (Debian's Chromium
 * driven by playwright-core) against the service on PostgreSQL (when available), as their users use them:
 *
 * - a platform administrator reviews the merchant's KYC submission and approves it, sets a platform
 *   setting, and reads the security posture, the live monitoring, AI usage and the ledger across stores;
 * - the merchant creates a game with its prizes and odds, activates it, a customer plays it on its hosted
 *   page and the figures move in the console without a reload, the merchant ends it and every draw is
 *   verified in the browser from the disclosed seed; then analytics, ledger, a risk case resolved, the AI
 *   assistant, revenue shares with the 100 % rule at the form, a connector installed and tested, the
 *   notification channels; and, once approved and with provider credentials, the store switches live;
 * - the merchant, who is no platform administrator, sees no admin page and the server refuses the admin
 *   procedures (asserted through the typed console client too).
 *
 * axe-core checks every page (no serious or critical violation); screenshots at 1280 and 390 px go to
 * test-output/console/insights/. Needs /usr/bin/chromium; without it the suite is skipped.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { type SignedUp, signUp } from "../support/Accounts.ts"
import { CHROMIUM, HAS_CHROMIUM } from "../support/Browser.ts"
import { captureAt, ConsoleBrowser, consoleBrowserLayer, openConsolePage, screenshotOnFailure, step, eventReceiver } from "../support/ConsoleBrowser.ts"
import { clientAs } from "../support/Client.ts"
import { paidPayment, storeWithKey } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/console/insights/", import.meta.url))
/** Screenshots from the top of the page (a step may have scrolled it), with axe-core. */
const capture = (page: Page, name: string) =>
  Effect.zipRight(step(() => page.evaluate("window.scrollTo(0, 0)")), captureAt(OUTPUT_DIR, page, name))

const ADMIN_EMAIL = "platform-admin@example.test"

const connectorReceiver = eventReceiver("/events")

/** A new browser context signed in to the console as `user`, on its home page. */
const signedIn = (browser: Browser, app: TestAppShape, user: SignedUp) =>
  Effect.gen(function*() {
    const opened = yield* openConsolePage(browser)
    const { page } = opened
    yield* step(() => page.goto(`${app.baseUrl}/console`))
    yield* step(() => page.getByLabel("Email").fill(user.email))
    yield* step(() => page.getByLabel("Password").fill(user.password))
    yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
    yield* step(() => page.getByRole("navigation", { name: "Main" }).waitFor())
    return opened
  })

const menu = (page: Page, label: string) =>
  step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: label, exact: true }).click())

const heading = (page: Page, name: string) => step(() => page.getByRole("heading", { name, level: 1 }).waitFor())

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "console insights in Chromium" : `console insights in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(
      Layer.merge(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL], webhookAllowPrivateNetworks: true }), consoleBrowserLayer),
      { timeout: 180_000, excludeTestServices: true }
    )("games, insights and the platform", (it) => {
      it.scoped("an admin approves KYC; a merchant runs a fair game, reads its figures, and goes live", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const browser = yield* ConsoleBrowser
          const admin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL, organization_name: "KHQR Platform" }))
          const owner = yield* Effect.promise(() => signUp(app, { organization_name: "Riverside Coffee" }))
          const merchant = yield* storeWithKey(app, owner, "Riverside Cafe")
          const ownerApi = yield* clientAs(app, owner.token)
          const keyApi = yield* clientAs(app, merchant.key)
          yield* ownerApi.verification.submit({
            payload: {
              business_name: "Riverside Coffee Co., Ltd.",
              registration_number: "KH-00012345",
              contact: { name: "Sok Dara", email: "dara@example.test", phone: "+85512345678" },
              documents: [
                { type: "business_registration", url: "https://files.example.test/registration.pdf" },
                { type: "owner_id", url: "https://files.example.test/owner-id.pdf" }
              ]
            }
          })
          // A day's trade: a large payment (the risk rules open a case on it) and a regular one.
          const large = yield* paidPayment(app, merchant.key, { amount: "1500.00", reference_id: "catering-42" })
          yield* paidPayment(app, merchant.key, { amount: "12.50", reference_id: "order-7" })
          const customer = yield* keyApi.customers.create({ payload: { name: "Chan Sophea", email: "sophea@example.test" }, headers: {} })

          // ---------------------------------------------------------------------------------------------
          // The platform administrator
          // ---------------------------------------------------------------------------------------------
          const adminView = yield* signedIn(browser, app, admin)
          const adminPage = adminView.page
          yield* menu(adminPage, "KYC reviews")
          yield* heading(adminPage, "KYC reviews")
          const submitted = adminPage.locator("tr[data-verification-id]").filter({ hasText: "Riverside Coffee Co., Ltd." })
          yield* step(() => submitted.waitFor())
          yield* capture(adminPage, "kyc-queue")
          yield* step(() => submitted.getByRole("button", { name: /Review/ }).click())
          const review = adminPage.getByRole("dialog", { name: "Verification" })
          yield* step(() => review.getByRole("link", { name: "https://files.example.test/owner-id.pdf" }).waitFor())
          yield* capture(adminPage, "kyc-review")
          yield* step(() => review.getByRole("button", { name: "Approve" }).click())
          yield* step(() => adminPage.getByText("No pending verifications").waitFor())
          yield* step(() => adminPage.getByRole("button", { name: "Approved" }).click())
          yield* step(() => adminPage.locator("tr[data-verification-id]").filter({ hasText: "Riverside Coffee Co., Ltd." }).waitFor())

          // Platform settings: the monthly AI cap, set here (its source says so).
          yield* menu(adminPage, "Platform settings")
          yield* heading(adminPage, "Platform settings")
          const cap = adminPage.locator('tr[data-setting="ai_monthly_cost_cap_usd"]')
          yield* step(() => cap.getByRole("button", { name: "Set ai_monthly_cost_cap_usd" }).click())
          const setCap = adminPage.getByRole("dialog", { name: "Set ai_monthly_cost_cap_usd" })
          yield* step(() => setCap.getByLabel("New value").fill("5.00"))
          yield* step(() => setCap.getByRole("button", { name: "Save" }).click())
          yield* step(() => cap.getByText("Set here").waitFor())
          yield* capture(adminPage, "platform-settings")

          yield* menu(adminPage, "Security posture")
          yield* step(() => adminPage.locator("[data-score]").waitFor())
          yield* capture(adminPage, "security-posture")
          yield* menu(adminPage, "Monitoring")
          yield* step(() => adminPage.locator('[data-metric="Database"]').filter({ hasText: "Up" }).waitFor())
          // It refreshes on its own.
          yield* step(() => adminPage.getByText(/updated /).waitFor({ timeout: 10_000 }))
          yield* capture(adminPage, "monitoring")
          yield* menu(adminPage, "AI usage")
          yield* heading(adminPage, "AI usage")
          yield* step(() => adminPage.getByRole("heading", { name: "By store" }).waitFor())
          yield* capture(adminPage, "platform-ai-usage")
          yield* menu(adminPage, "Ledger across stores")
          yield* step(() => adminPage.getByRole("heading", { name: "Trial balance" }).waitFor())
          yield* step(() => adminPage.getByRole("button", { name: "Run reconciliation" }).click())
          yield* step(() => adminPage.getByText(/All clear|mismatch/).waitFor())
          yield* capture(adminPage, "platform-ledger")
          expect(adminView.problems).toEqual([])

          // ---------------------------------------------------------------------------------------------
          // The merchant
          // ---------------------------------------------------------------------------------------------
          const { page, problems } = yield* signedIn(browser, app, owner)
          yield* heading(page, "Home")
          // No platform section for a merchant, and its pages are not there.
          expect(yield* step(() => page.getByRole("navigation", { name: "Main" }).getByText("Platform").count())).toBe(0)
          yield* step(() => page.goto(`${app.baseUrl}/console/platform/verifications`))
          yield* heading(page, "Page not found")

          // A game: prizes with their odds, created paused, then activated.
          yield* menu(page, "Games")
          yield* step(() => page.getByText("No games yet").waitFor())
          yield* capture(page, "games-empty")
          yield* step(() => page.getByRole("button", { name: "New game" }).click())
          const newGame = page.getByRole("dialog", { name: "New game" })
          yield* step(() => newGame.getByLabel("Name", { exact: true }).fill("Lucky wheel"))
          yield* step(() => newGame.getByRole("group", { name: "Prize 1" }).getByLabel("Weight").fill("30"))
          expect(yield* step(() => newGame.locator('[data-odds="0"]').textContent())).toContain("25.0 %")
          yield* step(() => newGame.getByRole("group", { name: "Prize 2" }).getByLabel("Weight").fill("0"))
          yield* step(() => newGame.getByRole("button", { name: "Create game" }).click())
          // The server's refusal is shown at the prize's field it names.
          yield* step(() => newGame.getByRole("group", { name: "Prize 2" }).locator(".field-invalid").getByLabel("Weight").waitFor())
          yield* capture(page, "game-create-invalid")
          yield* step(() => newGame.getByRole("group", { name: "Prize 2" }).getByLabel("Weight").fill("5"))
          yield* capture(page, "game-create")
          yield* step(() => newGame.getByRole("button", { name: "Create game" }).click())
          yield* step(() => page.getByRole("heading", { name: /Lucky wheel/ }).waitFor())
          yield* step(() => page.getByText("Paused", { exact: true }).waitFor())
          const gameId = (yield* step(() => page.locator(".page-header .mono").textContent()))!.trim()
          expect(gameId).toMatch(/^game_/)
          yield* step(() => page.getByRole("button", { name: "Activate" }).click())
          yield* step(() => page.getByText("Active", { exact: true }).waitFor())
          yield* step(() => page.locator('[data-metric="Plays"]').filter({ hasText: "0" }).waitFor())

          // The customer plays on the game's hosted page (opened with their own link, as from the wallet); the
          // console's figures follow without a reload.
          yield* step(() => page.evaluate(`window.__sameDocument = true`))
          const token = new URL(customer.wallet_url).searchParams.get("t")!
          const player = yield* step(() => adminView.context.newPage())
          // A shopper who asked for less motion: the wheel does not turn, the result shows at once (the
          // turning wheel is test/games/PlayPage.test.ts's).
          yield* step(() => player.emulateMedia({ reducedMotion: "reduce" }))
          yield* step(() => player.goto(`${app.baseUrl}/play/game/${gameId}?c=${customer.id}&t=${token}`))
          for (let play = 1; play <= 2; play++) {
            const before = yield* step(() => player.evaluate(`document.body.dataset.played ?? ""`))
            yield* step(() => player.getByRole("button", { name: "Spin" }).click())
            yield* step(() => player.waitForFunction((previous) => (document.body.dataset["played"] ?? "") !== previous, before, { timeout: 10_000 }))
            yield* step(() => page.locator('[data-metric="Plays"]').filter({ hasText: String(play) }).waitFor({ timeout: 10_000 }))
          }
          yield* step(() => player.close())
          expect(yield* step(() => page.evaluate(`window.__sameDocument`))).toBe(true)
          yield* step(() => page.locator("tr[data-play-id]").nth(1).waitFor())
          yield* capture(page, "game-live")

          // The end discloses the seed; every draw is re-run here in the browser.
          yield* step(() => page.getByRole("button", { name: "End game" }).click())
          yield* step(() => page.getByRole("dialog", { name: "End this game" }).getByRole("button", { name: "End game" }).click())
          yield* step(() => page.getByText("Ended", { exact: true }).waitFor())
          yield* step(() => page.getByRole("button", { name: "Verify every draw" }).click())
          yield* step(() => page.locator('[data-verified="true"]').filter({ hasText: "All 2 draws verified" }).waitFor())
          yield* capture(page, "game-verified")

          // Analytics: the range's revenue with the forecast after it, and the organization's summary.
          yield* menu(page, "Analytics")
          yield* heading(page, "Analytics")
          yield* step(() => page.getByText("$1,512.50").first().waitFor())
          yield* step(() => page.getByRole("heading", { name: /Executive summary/ }).waitFor())
          yield* step(() => page.locator("figure.chart").first().getByText("Forecast").first().waitFor({ state: "attached" }))
          yield* capture(page, "analytics")

          // Ledger: balanced, reconciled, journals listed.
          yield* menu(page, "Ledger")
          yield* step(() => page.getByText("Balanced", { exact: true }).waitFor())
          yield* step(() => page.getByRole("button", { name: "Run reconciliation" }).click())
          yield* step(() => page.getByText(/All clear: 2 payments/).waitFor())
          // A journal entry names its payment by the merchant's reference and amount, the id after it.
          yield* step(() => page.getByRole("link", { name: "catering-42 · $1,500.00" }).first().waitFor())
          yield* step(() => page.getByText(large.id).first().waitFor())
          yield* capture(page, "ledger")

          // Risk: the large payment's case, its subject linked, resolved with a resolution.
          yield* menu(page, "Risk")
          const riskCase = page.getByRole("button", { name: "Unusually large payment" })
          for (let tries = 0; (yield* step(() => riskCase.count())) === 0 && tries < 40; tries++) {
            yield* step(() => page.waitForTimeout(250))
            yield* step(() => page.getByRole("button", { name: /^All/ }).click())
            yield* step(() => page.getByRole("button", { name: /^Open/ }).click())
          }
          yield* capture(page, "risk")
          yield* step(() => riskCase.click())
          const caseDialog = page.getByRole("dialog", { name: "Risk case" })
          yield* step(() => caseDialog.getByRole("link", { name: "Payment catering-42 · $1,500.00" }).waitFor())
          yield* step(() => caseDialog.getByRole("button", { name: "Resolve" }).click())
          yield* step(() => caseDialog.locator(".field-invalid").getByLabel("Resolution").waitFor())
          yield* step(() => caseDialog.getByLabel("Resolution").fill("Catering order confirmed by phone with the customer."))
          yield* capture(page, "risk-case")
          yield* step(() => caseDialog.getByRole("button", { name: "Resolve" }).click())
          yield* step(() => caseDialog.getByText("This case is closed").waitFor())
          yield* step(() => page.keyboard.press("Escape"))
          yield* step(() => caseDialog.waitFor({ state: "hidden" }))

          // AI: the assistant answers from the store's figures, and shows them; usage against the cap.
          yield* menu(page, "AI assistant")
          yield* step(() => page.getByText("of the $5.00 monthly cap").waitFor())
          yield* step(() => page.getByLabel("Your question").fill("What was my revenue in the last 7 days?"))
          yield* step(() => page.getByRole("button", { name: "Ask" }).click())
          yield* step(() => page.locator(".chat-answer").getByText("Figures used").click())
          yield* step(() => page.getByLabel("Product").fill("Iced latte"))
          yield* step(() => page.getByRole("button", { name: "Write copy" }).click())
          yield* step(() => page.getByText(/of 160 characters/).waitFor())
          yield* capture(page, "ai")

          // Revenue shares: the 100 % rule holds at the form.
          yield* menu(page, "Revenue shares")
          yield* step(() => page.getByText("No revenue shares").waitFor())
          yield* step(() => page.getByRole("button", { name: "Add share" }).click())
          const share = page.getByRole("dialog", { name: "Add a revenue share" })
          yield* step(() => share.getByLabel("Party").fill("Mall landlord"))
          yield* step(() => share.getByLabel("Percentage of each paid payment").fill("60"))
          yield* step(() => share.getByRole("button", { name: "Add share" }).click())
          yield* step(() => page.getByRole("cell", { name: "Mall landlord", exact: true }).waitFor())
          yield* step(() => page.getByRole("button", { name: "Add share" }).click())
          yield* step(() => share.getByLabel("Party").fill("Franchisor"))
          yield* step(() => share.getByLabel("Percentage of each paid payment").fill("50"))
          yield* step(() => share.locator(".field-invalid").getByText("At most 40 %").waitFor())
          yield* capture(page, "revenue-share-over")
          yield* step(() => share.getByLabel("Percentage of each paid payment").fill("40"))
          yield* step(() => share.getByRole("button", { name: "Add share" }).click())
          yield* step(() => page.getByRole("cell", { name: "Franchisor", exact: true }).waitFor())
          yield* capture(page, "revenue-shares")

          // Connectors: install one (its secret field write-only), send a test event, see its delivery.
          const receiver = yield* connectorReceiver
          yield* menu(page, "Connectors")
          yield* step(() => page.getByText("No connectors installed").waitFor())
          yield* capture(page, "connectors")
          yield* step(() => page.getByRole("button", { name: "Install Accounting export" }).click())
          const install = page.getByRole("dialog", { name: "Install Accounting export" })
          yield* step(() => install.getByLabel("Delivery URL").fill(receiver.url))
          yield* step(() => install.getByLabel("API key").fill("acct_live_secret_9Qw7"))
          expect(yield* step(() => install.getByLabel("API key").getAttribute("type"))).toBe("password")
          yield* step(() => install.getByRole("button", { name: "Install" }).click())
          const signing = page.getByRole("dialog", { name: "Connector signing secret" })
          expect(yield* step(() => signing.getByLabel("Secret").inputValue())).toMatch(/^whsec_/)
          yield* step(() => signing.getByRole("button", { name: "Done" }).click())
          yield* step(() => page.getByRole("button", { name: "Send test event to Accounting export" }).click())
          const tested = page.getByRole("dialog", { name: "Test event sent" })
          yield* step(() => tested.getByText("Delivered: the receiver answered 200.").waitFor())
          expect(receiver.received).toContain("test.event")
          yield* capture(page, "connector-test")
          yield* step(() => tested.getByRole("button", { name: "Done" }).click())
          yield* step(() => page.getByRole("button", { name: "Configure Accounting export" }).click())
          const configure = page.getByRole("dialog", { name: "Configure Accounting export" })
          // The saved secret is never put back in the field, only its masked form as a hint.
          expect(yield* step(() => configure.getByLabel("API key").inputValue())).toBe("")
          yield* step(() => configure.getByRole("button", { name: "Cancel" }).click())

          yield* menu(page, "Notifications")
          yield* step(() => page.getByRole("heading", { name: "Telegram" }).waitFor())
          yield* step(() => page.getByText("No messages sent yet").waitFor())
          yield* capture(page, "notifications")

          // The admin procedures are refused to the merchant by the server itself.
          const merchantConsole = yield* makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: owner.token }).pipe(
            Effect.provide(FetchHttpClient.layer)
          )
          const refused = (effect: Effect.Effect<unknown, { readonly _tag: string }>) =>
            Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left._tag : "succeeded"))
          expect(yield* refused(merchantConsole.ListVerifications({}))).toBe("Forbidden")
          expect(yield* refused(merchantConsole.SecurityPosture())).toBe("Forbidden")
          expect(yield* refused(merchantConsole.SetPlatformSetting({ key: "ai_monthly_cost_cap_usd", value: "1000" }))).toBe("Forbidden")
          expect(yield* refused(merchantConsole.PlatformReconcile())).toBe("Forbidden")

          // Going live: approved and with provider credentials, the store may use live mode, and the switch opens.
          expect(yield* step(() => page.getByRole("switch").first().isDisabled())).toBe(true)
          yield* ownerApi.stores.setCredentials({
            path: { id: merchant.storeId },
            payload: { bakong_account_id: "riverside_cafe@aclb", merchant_name: "Riverside Cafe", merchant_city: "Phnom Penh", acquiring_bank: "ACLEDA Bank" }
          })
          yield* ownerApi.stores.setLiveMode({ path: { id: merchant.storeId }, payload: { live_mode: true } })
          yield* step(() => page.reload())
          yield* heading(page, "Notifications")
          yield* step(() => page.getByRole("switch").first().click())
          yield* step(() => page.getByText("you are viewing test data").waitFor({ state: "detached" }))
          yield* menu(page, "Analytics")
          yield* step(() => page.getByText(/live mode, with a 14-day forecast/).waitFor())
          yield* capture(page, "analytics-live")

          expect(yield* step(() => page.evaluate(`window.__cspViolations`))).toEqual([])
          expect(problems).toEqual([])
        }).pipe(screenshotOnFailure(OUTPUT_DIR)), 240_000)
    })
  }
)
