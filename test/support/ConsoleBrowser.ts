/**
 * What every browser suite of the console shares: one Chromium per suite, a page that records what went
 * wrong in it (page errors, console errors, CSP violations), and screenshots at 1280 and 390 px with
 * axe-core at both. The console is built once before the run (test/support/globalSetup.ts).
 */
import { expect } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { seriousViolations } from "./Accessibility.ts"
import { launchChromium } from "./Browser.ts"

export class ConsoleBrowser extends Context.Tag("test/ConsoleBrowser")<ConsoleBrowser, Browser>() {}

export const consoleBrowserLayer = Layer.scoped(
  ConsoleBrowser,
  Effect.acquireRelease(Effect.promise(() => launchChromium()), (browser) => Effect.promise(() => browser.close()))
)

export const step = <A>(run: () => Promise<A>) => Effect.promise(run)

/**
 * Waits until the page shows no loading state: its data is in. (Not the network falling quiet: the console
 * fetches the code of pages not yet opened while the browser is idle.)
 */
export const settled = (page: Page) => step(() => page.waitForFunction(() => document.querySelector(".loading") === null))

/**
 * A page at 1280 × 800 that records what went wrong in it. `networkBreak.now` is set by a test that breaks
 * the connection on purpose, while the browser's own network errors are expected.
 */
export const openConsolePage = (browser: Browser) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      // en-US pinned: a date input's fields (month, day, year) come in its locale's order, and the keyboard
      // tests type dates into them.
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-US" })
      await context.addInitScript(`
        window.__cspViolations = [];
        document.addEventListener("securitypolicyviolation", (event) => {
          window.__cspViolations.push(event.violatedDirective + " blocked " + (event.blockedURI || "(inline)"));
        });
      `)
      const page = await context.newPage()
      const problems: Array<string> = []
      const networkBreak = { now: false }
      page.on("pageerror", (error) => {
        problems.push(`pageerror: ${error.message}`)
        console.error(`console page error: ${error.message}`)
      })
      page.on("console", (message) => {
        // The refusals a test provokes (no session yet, a wrong password, a role without the right) are not problems.
        const expected = /status of 40[0134]/.test(message.text()) || (networkBreak.now && /net::ERR_/.test(message.text()))
        if (message.type() === "error" && !expected) {
          problems.push(`console.error: ${message.text()}`)
          console.error(`console page: ${message.text()}`)
        }
      })
      return { context, page, problems, networkBreak }
    }),
    ({ context }) => Effect.promise(() => context.close())
  )

/** axe-core in the page: no serious or critical violation. */
export const checkAccessibility = (page: Page, name: string) =>
  Effect.gen(function*() {
    const serious = yield* seriousViolations(page)
    expect(serious.map((violation) => `${name}: ${violation.id} (${violation.impact}) ${violation.help} at ${violation.nodes.join(", ")}`)).toEqual([])
  })

/** Screenshots of the page as it stands at 1280 and 390 px wide into `directory`, and axe-core at both. */
export const captureAt = (directory: string, page: Page, name: string) =>
  Effect.gen(function*() {
    mkdirSync(directory, { recursive: true })
    yield* checkAccessibility(page, `${name} (1280)`)
    yield* step(() => page.screenshot({ path: join(directory, `${name}-1280.png`), fullPage: true }))
    yield* step(() => page.setViewportSize({ width: 390, height: 844 }))
    // Laid out again by the next frame but one.
    yield* step(() => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))))
    yield* checkAccessibility(page, `${name} (390)`)
    yield* step(() => page.screenshot({ path: join(directory, `${name}-390.png`), fullPage: true }))
    yield* step(() => page.setViewportSize({ width: 1280, height: 800 }))
  })

/** What every open page showed when a step failed, as `failure-<n>.png` in `directory`, for the report. */
export const screenshotOnFailure = (directory: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapErrorCause(effect, () =>
    Effect.flatMap(ConsoleBrowser, (browser) =>
      step(async () => {
        mkdirSync(directory, { recursive: true })
        let n = 0
        for (const context of browser.contexts()) {
          for (const open of context.pages()) await open.screenshot({ path: join(directory, `failure-${++n}.png`), fullPage: true })
        }
      })
    ))

/**
 * A merchant's receiving end on loopback (webhooks, a connector): answers 200 at `path` and keeps the `type`
 * of every JSON event it got, in order.
 */
export const eventReceiver = (path: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly received: Array<string>; readonly close: () => void }>((resume) => {
      const received: Array<string> = []
      const server = createServer((request, response) => {
        let body = ""
        request.on("data", (chunk) => (body += chunk))
        request.on("end", () => {
          try {
            received.push((JSON.parse(body) as { type: string }).type)
          } catch {
            received.push("(not JSON)")
          }
          response.writeHead(200).end("ok")
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
          received,
          close: () => server.close()
        })))
    }),
    (receiver) => Effect.sync(receiver.close)
  )
