/**
 * Every customer page in both languages, in a real browser (Debian's Chromium driven by playwright-core):
 * checkout, receipt, wallet, hosted game, scratch card, referral landing, payment link and invoice, password
 * reset. Each is opened by a browser that asks for Khmer (`Accept-Language: km`) and by one that asks for
 * English and then picks Khmer with the page's switch (remembered by a cookie for the next page). Each page:
 * `lang` on the document, its texts in that language, riel amounts as `Intl` writes them, merchant texts
 * holding `<script>` or `onerror=` shown as text (and never run), no serious or critical axe-core violation
 * at 320 px and at 1280 px, and screenshots at both widths under test-output/pages/ (git-ignored).
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
import { seriousViolations } from "../support/Accessibility.ts"
import { CHROMIUM, HAS_CHROMIUM, launchChromium } from "../support/Browser.ts"
import { clientAs } from "../support/Client.ts"
import { createPayment, newMerchant, refund, simulate } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/pages/", import.meta.url))

// Merchant texts that would run if a page wrote them as markup.
const SCRIPT_TEXT = "<script>window.__pwned = 1</script>"
const ONERROR_TEXT = `<img src=x onerror="window.__pwned = 1">`

class PagesBrowser extends Context.Tag("test/PagesBrowser")<PagesBrowser, Browser>() {}

const browserLayer = Layer.scoped(
  PagesBrowser,
  Effect.acquireRelease(Effect.promise(() => launchChromium()), (browser) => Effect.promise(() => browser.close()))
)

const pathOf = (url: string) => {
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}

/** A store with branding, loyalty, a referral program, games, a KHR payment paid and partly refunded, links. */
const seed = (app: TestAppShape) =>
  Effect.gen(function*() {
    const { key, owner, storeId } = yield* newMerchant(app, "Phsar Thmei Coffee (legal name)")
    const dashboard = yield* clientAs(app, owner.token)
    const api = yield* clientAs(app, key)
    yield* dashboard.stores.updateBranding({
      path: { id: storeId },
      payload: { display_name: "Phsar Thmei Coffee", primary_color: "#0f766e", accent_color: "#ecfdf5" }
    })
    yield* dashboard.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Silver", threshold: 0 } })
    yield* dashboard.loyaltyConsole.createTier({ path: { storeId }, payload: { name: "Gold", threshold: 2000 } })
    yield* dashboard.loyaltyConsole.createReward({ path: { storeId }, payload: { name: ONERROR_TEXT, points_cost: 1200 } })
    yield* dashboard.referralsConsole.configure({ path: { storeId }, payload: { active: true, referrer_points: 100, referee_points: 200 } })
    const customer = yield* api.customers.create({ payload: { email: "sokha@example.test", name: "Sokha Chan" }, headers: {} })
    yield* dashboard.loyaltyConsole.adjust({ path: { id: customer.id }, payload: { points: 1500, reason: "Welcome" } })
    const code = yield* api.referrals.code({ path: { id: customer.id } })
    const spin = yield* dashboard.gamesConsole.create({
      path: { storeId },
      payload: { name: `Lucky wheel ${SCRIPT_TEXT}`, type: "spin", prizes: [{ name: "25 bonus points", kind: "points", points: 25, weight: 1 }] }
    })
    const scratch = yield* dashboard.gamesConsole.create({
      path: { storeId },
      payload: { name: "Scratch & win", type: "scratch", prizes: [{ name: `Free cake ${ONERROR_TEXT}`, kind: "voucher", weight: 1 }] }
    })
    const card = yield* dashboard.gamesConsole.issue({ path: { gameId: scratch.id }, payload: { customer_id: customer.id } })

    const pending = yield* createPayment(app, key, { amount: "40000", currency: "KHR", description: `Iced coffee ${SCRIPT_TEXT}` })
    const paid = yield* createPayment(app, key, { amount: "40000", currency: "KHR", description: `Iced coffee ${ONERROR_TEXT}`, reference_id: "order-77" })
    yield* simulate(app, key, paid.id, "scanned")
    yield* simulate(app, key, paid.id, "paid")
    yield* refund(app, key, paid.id, { amount: "10000" })
    const invoice = yield* dashboard.links.create({
      path: { storeId },
      payload: { kind: "invoice", title: `March rent ${ONERROR_TEXT}`, amount: "40000", currency: "KHR", customer_email: "tenant@example.test", due_date: "2030-03-31" }
    })
    const token = new URL(customer.wallet_url).searchParams.get("t")!
    return {
      checkout: `/checkout/${pending.id}`,
      receipt: `/receipts/${paid.id}`,
      wallet: pathOf(customer.wallet_url),
      game: `/play/game/${spin.id}?c=${customer.id}&t=${token}`,
      card: pathOf(card.card_url),
      invite: `${new URL(code.share_url).pathname}/join`,
      invoice: `/links/${invoice.id}`,
      reset: "/reset-password?token=not-a-real-token-but-a-form"
    }
  })

type Paths = Effect.Effect.Success<ReturnType<typeof seed>>
type PageName = keyof Paths
type Language = "en" | "km"

/** What each page must say, in each language: a selector and its text (exact, or a pattern). */
const EXPECTED: Record<PageName, Record<Language, ReadonlyArray<readonly [string, string | RegExp]>>> = {
  checkout: {
    en: [["#amount", "៛40,000"], ["#status", "Scan to pay"], ["#countdown", /^Expires in \d+:\d\d$/], ["#description", `Iced coffee ${SCRIPT_TEXT}`]],
    km: [["#amount", "៛40,000"], ["#status", "ស្កេនដើម្បីបង់ប្រាក់"], ["#countdown", /^ផុតកំណត់ក្នុងរយៈពេល \d+:\d\d$/], ["#description", `Iced coffee ${SCRIPT_TEXT}`]]
  },
  receipt: {
    en: [["#amount", "៛40,000"], [".receipt-heading", /^receipt$/i], ["#receipt-status", "Partly refunded"], ["#net", "៛30,000"], ["tr.refund td", "−៛10,000"], ["#reference", "order-77"], ["#description", `Iced coffee ${ONERROR_TEXT}`], ["#print", "Print receipt"]],
    km: [["#amount", "៛40,000"], [".receipt-heading", "បង្កាន់ដៃ"], ["#receipt-status", "បានសងប្រាក់វិញមួយផ្នែក"], ["#net", "៛30,000"], ["tr.refund td", "−៛10,000"], ["#reference", "order-77"], ["#description", `Iced coffee ${ONERROR_TEXT}`], ["#print", "បោះពុម្ពបង្កាន់ដៃ"]]
  },
  wallet: {
    en: [["#balance", "1,500"], ["#next-tier", "2,000 points to Gold"], ["li.reward span:first-child", ONERROR_TEXT], ["li.reward span:last-child", "1,200 pts"], ["li.entry", /^Adjusted by the store · /]],
    km: [["#balance", "1,500"], ["#next-tier", "នៅសល់ 2,000 ពិន្ទុ ទៀតដើម្បីឡើងដល់ Gold"], ["li.reward span:first-child", ONERROR_TEXT], ["li.reward span:last-child", "1,200 ពិន្ទុ"], ["li.entry", /^កែតម្រូវដោយហាង · /]]
  },
  game: {
    en: [["#game-name", `Lucky wheel ${SCRIPT_TEXT}`], ["#status", "Tap the button to play."], ["#play", "Spin"], ["#wallet-link", "Your points"]],
    km: [["#game-name", `Lucky wheel ${SCRIPT_TEXT}`], ["#status", "ចុចប៊ូតុងដើម្បីលេង។"], ["#play", "បង្វិល"], ["#wallet-link", "ពិន្ទុរបស់អ្នក"]]
  },
  card: {
    en: [["#game-name", "Scratch & win"], ["#cover", "Scratch to reveal"]],
    km: [["#game-name", "Scratch & win"], ["#cover", "កោសដើម្បីមើលលទ្ធផល"]]
  },
  invite: {
    en: [["#invited-by", "S**** C*** invites you to Phsar Thmei Coffee"], ["#how-to-join", /your first payment earns you 200 points\.$/]],
    km: [["#invited-by", "S**** C*** អញ្ជើញអ្នកមក Phsar Thmei Coffee"], ["#how-to-join", /ការបង់ប្រាក់លើកដំបូងរបស់អ្នកនឹងទទួលបាន 200 ពិន្ទុ។$/]]
  },
  invoice: {
    en: [["#title", `March rent ${ONERROR_TEXT}`], ["#amount-fixed", "៛40,000"], ["#pay-button", "Pay ៛40,000"], ["#due", "Due Mar 31, 2030"]],
    km: [["#title", `March rent ${ONERROR_TEXT}`], ["#amount-fixed", "៛40,000"], ["#pay-button", "បង់ ៛40,000"], ["#due", /^ត្រូវបង់មុនថ្ងៃ 31 មីនា 2030$/]]
  },
  reset: {
    en: [["p.title", "Choose a new password"], ["#reset-button", "Set the new password"]],
    km: [["p.title", "ជ្រើសរើសពាក្យសម្ងាត់ថ្មី"], ["#reset-button", "កំណត់ពាក្យសម្ងាត់ថ្មី"]]
  }
}

/** A browser context and its page, recording what must never happen: script errors, failed requests, CSP refusals. */
const openSession = (browser: Browser, acceptLanguage: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, extraHTTPHeaders: { "accept-language": acceptLanguage } })
      await context.addInitScript(`
        window.__cspViolations = [];
        document.addEventListener("securitypolicyviolation", (event) => window.__cspViolations.push(event.violatedDirective));
      `)
      const page = await context.newPage()
      const problems: Array<string> = []
      const fonts: Array<{ url: string; status: number; cacheControl: string | undefined }> = []
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(`console.error: ${message.text()}`)
      })
      page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
      page.on("dialog", (dialog) => problems.push(`dialog: ${dialog.message()}`))
      page.on("requestfailed", (request) => {
        if (!request.url().endsWith("/events")) problems.push(`request failed: ${request.url()}`)
      })
      page.on("response", (response) => {
        if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`)
        if (new URL(response.url()).pathname.startsWith("/fonts/")) {
          fonts.push({ url: response.url(), status: response.status(), cacheControl: response.headers()["cache-control"] })
        }
      })
      return { context, page, problems, fonts }
    }),
    ({ context }) => Effect.promise(() => context.close())
  )

const textOf = (page: Page, selector: string) =>
  Effect.promise(() => page.locator(selector).first().innerText().then((text) => text.trim()))

/** The page as it stands now: language, texts, escaping, axe and screenshots at both widths. */
const checkPage = (page: Page, name: PageName, language: Language, how: string) =>
  Effect.gen(function*() {
    expect(yield* Effect.promise(() => page.locator("html").getAttribute("lang")), `${name} ${how}`).toBe(language)
    for (const [selector, expected] of EXPECTED[name][language]) {
      const shown = yield* textOf(page, selector)
      if (typeof expected === "string") expect(shown, `${name} ${how}: ${selector}`).toBe(expected)
      else expect(shown, `${name} ${how}: ${selector}`).toMatch(expected)
    }
    // The switch says where the reader is, in each language's own name.
    expect(yield* textOf(page, `nav.languages a[aria-current="true"]`)).toBe(language === "km" ? "ខ្មែរ" : "English")
    // Merchant markup stayed text: nothing it held ran or became an element.
    expect(yield* Effect.promise(() => page.evaluate("window.__pwned"))).toBeUndefined()
    expect(yield* Effect.promise(() => page.locator("img[src=x]").count())).toBe(0)
    expect(yield* Effect.promise(() => page.evaluate("window.__cspViolations"))).toEqual([])
    mkdirSync(OUTPUT_DIR, { recursive: true })
    for (const width of [1280, 320]) {
      yield* Effect.promise(() => page.setViewportSize({ width, height: width === 320 ? 640 : 900 }))
      yield* Effect.promise(() => page.evaluate("document.fonts.ready.then(() => true)"))
      yield* Effect.promise(() => page.screenshot({ path: join(OUTPUT_DIR, `${name}-${language}-${width}.png`), fullPage: true }))
      expect(yield* seriousViolations(page), `${name} ${how} at ${width} px`).toEqual([])
    }
    yield* Effect.promise(() => page.setViewportSize({ width: 1280, height: 900 }))
  })

const open = (app: TestAppShape, page: Page, path: string) =>
  Effect.gen(function*() {
    const response = yield* Effect.promise(() => page.goto(`${app.baseUrl}${path}`, { waitUntil: "load" }))
    expect(response?.status(), path).toBe(200)
    expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'nonce-[^']+'/)
  })

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "customer pages in Chromium" : `customer pages in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(Layer.merge(testAppLayer(), browserLayer), { timeout: 240_000, excludeTestServices: true })("customer pages", (it) => {
      it.scoped("speak Khmer and English, format riel, keep merchant markup as text, and pass axe at 320 px and 1280 px", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const browser = yield* PagesBrowser
          const paths = yield* seed(app)
          const names = Object.keys(paths) as Array<PageName>

          // A browser that asks for Khmer gets every page in Khmer, in the Khmer font served by us.
          const khmer = yield* openSession(browser, "km-KH,km;q=0.9,en;q=0.5")
          for (const name of names) {
            yield* open(app, khmer.page, paths[name])
            yield* checkPage(khmer.page, name, "km", "by Accept-Language")
          }
          // The receipt on paper: the switch and the print button stay on the screen.
          yield* open(app, khmer.page, paths.receipt)
          yield* Effect.promise(() => khmer.page.emulateMedia({ media: "print" }))
          // Waited for, not read at once: the print styles apply at the next style pass.
          yield* Effect.promise(() => khmer.page.locator("nav.languages").waitFor({ state: "hidden", timeout: 5_000 }))
          yield* Effect.promise(() => khmer.page.locator("#print").waitFor({ state: "hidden", timeout: 5_000 }))
          expect(yield* textOf(khmer.page, "#net")).toBe("៛30,000")
          yield* Effect.promise(() => khmer.page.screenshot({ path: join(OUTPUT_DIR, "receipt-km-print.png"), fullPage: true }))
          yield* Effect.promise(() => khmer.page.emulateMedia({ media: "screen" }))
          // The page was just opened again: its Khmer face is asked for and awaited, then must be usable.
          expect(
            yield* Effect.promise(() =>
              khmer.page.evaluate(`document.fonts.load('16px "Noto Sans Khmer"', "ក").then(() => document.fonts.check('16px "Noto Sans Khmer"', "ក"))`)
            ),
            "the Khmer font is loaded"
          ).toBe(true)
          expect(khmer.fonts.length).toBeGreaterThan(0)
          for (const font of khmer.fonts) {
            expect(new URL(font.url).origin).toBe(app.baseUrl)
            expect(font.status).toBe(200)
            expect(font.cacheControl).toContain("max-age=31536000")
          }

          // A browser that asks for English gets English; the switch turns a page to Khmer, and the next page
          // the customer opens stays in Khmer (the cookie) until they switch back.
          const english = yield* openSession(browser, "en-US,en;q=0.9")
          for (const name of names) {
            yield* open(app, english.page, paths[name])
            yield* checkPage(english.page, name, "en", "by Accept-Language")
          }
          yield* open(app, english.page, paths.checkout)
          yield* Effect.promise(() => english.page.locator(`nav.languages a[lang="km"]`).click())
          yield* Effect.promise(() => english.page.waitForURL(/[?&]lang=km/))
          yield* checkPage(english.page, "checkout", "km", "by the switch")
          for (const name of ["receipt", "wallet"] as const) {
            yield* open(app, english.page, paths[name])
            yield* checkPage(english.page, name, "km", "remembered from the switch")
          }
          yield* Effect.promise(() => english.page.locator(`nav.languages a[lang="en"]`).click())
          yield* Effect.promise(() => english.page.waitForURL(/[?&]lang=en/))
          expect(yield* textOf(english.page, "#next-tier")).toBe("2,000 points to Gold")
          yield* open(app, english.page, paths.invite)
          expect(yield* Effect.promise(() => english.page.locator("html").getAttribute("lang"))).toBe("en")
          expect(english.problems).toEqual([])

          // A fresh result is written by the page's script from the catalog's texts, in Khmer too (last: the
          // play changes the wallet the pages above show).
          yield* open(app, khmer.page, paths.game)
          yield* Effect.promise(() => khmer.page.locator("#play").click())
          yield* Effect.promise(() => khmer.page.waitForSelector("body[data-played]", { timeout: 20_000 }))
          expect(yield* textOf(khmer.page, "#result")).toBe("អ្នកឈ្នះ 25 bonus points៖ +25 ពិន្ទុ")
          expect(khmer.problems).toEqual([])
        }))
    })
  }
)
