/**
 * The merchant console with the keyboard alone (Tab, Shift+Tab, Enter, Escape and typing; no click): sign
 * in with two-step verification, skip to the content, create an API key, create a test payment, have it
 * paid, refund part of it through the dialog, and open the webhooks and team pages. Every element Tab
 * lands on shows its focus; dialogs hold the focus while open and hand it back on close. axe-core checks
 * every page opened; screenshots go to test-output/console-keyboard/.
 *
 * Needs /usr/bin/chromium; without it the suite is skipped.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import type { Locator, Page } from "playwright-core"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { createStore, signUp } from "../support/Accounts.ts"
import { CHROMIUM, HAS_CHROMIUM } from "../support/Browser.ts"
import { captureAt, checkAccessibility, ConsoleBrowser, consoleBrowserLayer, openConsolePage, screenshotOnFailure, step, settled } from "../support/ConsoleBrowser.ts"
import { clientAs } from "../support/Client.ts"
import { focusInside, focusOf, tabTo } from "../support/Keyboard.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/console-keyboard/", import.meta.url))

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "merchant console with the keyboard" : `merchant console with the keyboard (SKIPPED: no ${CHROMIUM})`,
  () => {
    layer(Layer.merge(testAppLayer(), consoleBrowserLayer), { timeout: 240_000, excludeTestServices: true })("keyboard only", (it) => {
      it.scoped("signs in with MFA, makes a key, a payment and a refund, and opens webhooks and team", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          // An owner with a store and two-step verification on (set up through the API: the console's own
          // enrolment is walked in Console.test.ts).
          const owner = yield* Effect.promise(() => signUp(app))
          yield* Effect.promise(() => createStore(app, owner.token, "Keyboard Cafe"))
          const api = yield* clientAs(app, owner.token)
          const setup = yield* api.session.mfaSetup()
          yield* api.session.mfaEnable({ payload: { code: yield* currentTotp(setup.secret) } })

          const { page, problems } = yield* openConsolePage(yield* ConsoleBrowser)
          const keys = (text: string) => step(() => page.keyboard.type(text))
          const press = (key: string) => step(() => page.keyboard.press(key))
          const main = page.getByRole("navigation", { name: "Main" })

          // Sign in: the e-mail field has the focus; Tab to the password; Enter sends the form.
          yield* step(() => page.goto(`${app.baseUrl}/console`))
          yield* step(() => page.getByRole("heading", { name: "Sign in to your account" }).waitFor())
          expect(yield* focusOf(page.getByLabel("Email"))).toBe("visible")
          yield* checkAccessibility(page, "sign-in")
          yield* keys(owner.email)
          yield* tabTo(page, page.getByLabel("Password"))
          yield* keys(owner.password)
          yield* press("Enter")
          // The code step: its field has the focus.
          yield* step(() => page.getByRole("heading", { name: "Two-step verification" }).waitFor())
          expect(yield* focusOf(page.getByLabel("Authentication code"))).toBe("visible")
          yield* keys(yield* currentTotp(setup.secret, Math.floor(Date.now() / 1000) + 30))
          yield* press("Enter")
          yield* step(() => page.getByRole("heading", { name: "Home" }).waitFor())
          yield* settled(page)
          yield* checkAccessibility(page, "home")

          // The first Tab of a page reaches the skip link; Enter moves the focus to the content.
          yield* step(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur()))
          const skip = page.getByRole("link", { name: "Skip to content" })
          expect(yield* tabTo(page, skip)).toBe(1)
          yield* captureAt(OUTPUT_DIR, page, "skip-link")
          yield* press("Enter")
          expect(yield* step(() => page.locator("#main").evaluate((element) => element === document.activeElement))).toBe(true)

          // An API key: the dialog takes the focus, the secret is shown, and closing hands the focus back.
          yield* tabTo(page, main.getByRole("link", { name: "API keys" }), { backwards: true })
          yield* press("Enter")
          yield* step(() => page.getByRole("heading", { name: "API keys" }).waitFor())
          const createKey = page.getByRole("button", { name: "Create test key" })
          yield* tabTo(page, createKey)
          yield* press("Enter")
          const keyDialog = page.getByRole("dialog", { name: "Create a test key" })
          yield* step(() => keyDialog.waitFor())
          expect(yield* focusInside(keyDialog)).toBe(true)
          yield* checkAccessibility(page, "api-key-create")
          yield* tabTo(page, keyDialog.getByLabel("Name"))
          yield* keys("Till")
          yield* tabTo(page, keyDialog.getByRole("button", { name: "Create key" }))
          yield* press("Enter")
          const secretDialog = page.getByRole("dialog", { name: "Your secret key" })
          expect(yield* step(() => secretDialog.getByLabel("Secret key").inputValue())).toMatch(/^sk_test_/)
          expect(yield* focusInside(secretDialog)).toBe(true)
          yield* tabTo(page, secretDialog.getByRole("button", { name: "I have saved it" }))
          yield* press("Enter")
          yield* step(() => page.getByRole("cell", { name: "Till", exact: true }).waitFor())
          yield* checkAccessibility(page, "api-keys")

          // A test payment, created from its dialog; on its page, paid (simulated) and refunded in part.
          yield* tabTo(page, main.getByRole("link", { name: "Payments" }), { backwards: true })
          yield* press("Enter")
          yield* step(() => page.getByRole("heading", { name: "Payments" }).waitFor())
          const createPayment = page.getByRole("button", { name: "Create test payment" })
          yield* tabTo(page, createPayment)
          yield* press("Enter")
          const paymentDialog = page.getByRole("dialog", { name: "Create a test payment" })
          yield* step(() => paymentDialog.waitFor())
          // Escape closes it and the focus is back on the button that opened it.
          yield* press("Escape")
          yield* step(() => paymentDialog.waitFor({ state: "hidden" }))
          expect(yield* focusOf(createPayment)).toBe("visible")
          yield* press("Enter")
          yield* step(() => paymentDialog.waitFor())
          // Escape and the opener again at once, before the first closing's `close` event (a browser handles
          // input before such tasks): the dialog opens again and stays open.
          yield* step(() =>
            page.evaluate(() =>
              new Promise<void>((resolve) => {
                const dialog = document.querySelector<HTMLDialogElement>("dialog[open]")!
                const opener = [...document.querySelectorAll("button")].find((button) => button.textContent === "Create test payment")!
                new MutationObserver((_, observer) => {
                  if (dialog.open) return
                  observer.disconnect()
                  opener.click()
                  resolve()
                }).observe(dialog, { attributes: true, attributeFilter: ["open"] })
                dialog.dispatchEvent(new Event("cancel", { cancelable: true }))
              })
            )
          )
          yield* step(() => page.waitForTimeout(200))
          expect(yield* step(() => paymentDialog.isVisible())).toBe(true)
          yield* tabTo(page, paymentDialog.getByLabel("Amount"))
          yield* keys("25.00")
          yield* tabTo(page, paymentDialog.getByRole("button", { name: "Create payment" }))
          yield* press("Enter")
          yield* step(() => page.getByRole("heading", { name: /\$25\.00/ }).waitFor())
          yield* checkAccessibility(page, "payment-pending")
          // Scanned, then paid, as the provider would have it.
          yield* tabTo(page, page.getByRole("button", { name: "Simulate scan" }))
          yield* press("Enter")
          yield* step(() => page.locator(".page-header").getByText("Scanned", { exact: true }).waitFor())
          // The pressed button is gone with the step it took: the focus is on the next action, not the page's start.
          const simulatePayment = page.getByRole("button", { name: "Simulate payment" })
          yield* step(() => page.waitForFunction(() => document.activeElement?.textContent === "Simulate payment"))
          expect(yield* focusOf(simulatePayment)).toBe("visible")
          yield* press("Enter")
          const refund = page.getByRole("button", { name: "Refund", exact: true })
          yield* step(() => refund.waitFor())
          yield* step(() => page.getByRole("status").filter({ hasText: "Simulated: the payment is now paid" }).waitFor({ state: "attached" }))
          expect(yield* focusOf(refund)).toBe("visible")
          yield* captureAt(OUTPUT_DIR, page, "payment-paid")
          yield* press("Enter")
          const refundDialog = page.getByRole("dialog", { name: "Refund payment" })
          yield* step(() => refundDialog.waitFor())
          expect(yield* focusInside(refundDialog)).toBe(true)
          yield* tabTo(page, refundDialog.getByLabel("Amount (USD)"))
          yield* press("Control+A")
          yield* keys("10.00")
          yield* captureAt(OUTPUT_DIR, page, "refund-dialog")
          yield* tabTo(page, refundDialog.getByRole("button", { name: "Refund" }))
          yield* press("Enter")
          yield* step(() => refundDialog.waitFor({ state: "hidden" }))
          yield* step(() => page.getByText("Partially refunded").first().waitFor())
          yield* checkAccessibility(page, "payment-refunded")

          // The webhooks page: its dialog opens with Enter and closes with Escape, the focus returned.
          yield* tabTo(page, main.getByRole("link", { name: "Webhooks" }), { backwards: true })
          yield* press("Enter")
          const addEndpoint = page.getByRole("button", { name: "Add endpoint" })
          yield* tabTo(page, addEndpoint)
          yield* checkAccessibility(page, "webhooks")
          yield* press("Enter")
          const endpointDialog = page.getByRole("dialog", { name: "Add a webhook endpoint" })
          yield* step(() => endpointDialog.waitFor())
          expect(yield* focusInside(endpointDialog)).toBe(true)
          yield* checkAccessibility(page, "webhook-create")
          yield* press("Escape")
          yield* step(() => endpointDialog.waitFor({ state: "hidden" }))
          expect(yield* focusOf(addEndpoint)).toBe("visible")

          // The team page, under Settings.
          yield* tabTo(page, main.getByRole("link", { name: "Team" }), { backwards: true })
          yield* press("Enter")
          yield* step(() => page.getByRole("heading", { name: "Team" }).first().waitFor())
          yield* settled(page)
          yield* captureAt(OUTPUT_DIR, page, "team")

          expect(problems).toEqual([])
        }).pipe(screenshotOnFailure(OUTPUT_DIR)), { timeout: 180_000 })
    })
  }
)
