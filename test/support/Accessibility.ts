/**
 * axe-core in a page under test: the serious and critical accessibility violations of what it shows now.
 * The hosted pages allow only their own nonce'd script, so axe's source is evaluated through the
 * DevTools protocol (which a page's CSP does not govern) rather than added as a script element.
 */
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Page } from "playwright-core"

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  /** The elements at fault, as CSS selectors, with axe's summary of each. */
  readonly nodes: ReadonlyArray<string>
}

/** The serious and critical axe violations of the page as it stands. */
export const seriousViolations = (page: Page): Effect.Effect<ReadonlyArray<Violation>> =>
  Effect.promise(async () => {
    // Once per document: the console changes pages without loading a new one, and evaluating axe's
    // half a megabyte again for each check was 60 % of the time the checks took.
    if (await page.evaluate(`typeof window.axe === "undefined"`)) await page.evaluate(AXE_SOURCE)
    const violations = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((result) =>
      result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => n.target.join(" ") + ": " + (n.failureSummary || "")) })))`)) as ReadonlyArray<Violation>
    return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical")
  })
