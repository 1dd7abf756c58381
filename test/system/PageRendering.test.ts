/**
 * Every page the service renders goes through the one renderer (src/platform/pages/Document.tsx, server-side
 * React, which escapes every text and attribute), so a forgotten escape cannot happen: checked on the source.
 * In `src/`, outside the allowed places below, there is no `escapeHtml`, no string or template literal holding
 * an HTML tag, no `dangerouslySetInnerHTML`, and React's server renderer is called only by the page renderer.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import ts from "typescript"

const root = resolve(import.meta.dirname, "..", "..")

/** Where HTML is still written outside the renderer, and why. */
const ALLOWED: ReadonlyArray<{ readonly path: string; readonly why: string }> = [
  {
    path: "src/console/web/",
    why: "the merchant console: a React app built for the browser, where React renders and escapes everything"
  },
  {
    path: "src/mail/Templates.ts",
    why: "e-mail bodies for mail clients (no script, no CSP), made by the mail area's own escaping templates"
  }
]

/** The renderer: the one caller of React's server renderer, and the one writer of the doctype (React writes none). */
const RENDERER = "src/platform/pages/Document.tsx"
const DOCTYPE = "<!doctype html>\n"

const HTML_TAG = /<\/?(?:!doctype|html|head|body|main|header|footer|nav|section|article|div|span|p|a|img|script|style|link|meta|title|form|input|button|label|select|option|textarea|ul|ol|li|table|thead|tbody|tr|td|th|h[1-6]|br|hr|strong|em|b|i|code|pre|svg|iframe)(?=[\s>/])/i

const sourceFiles = (): ReadonlyArray<string> =>
  readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" })
    .filter((path) => /\.tsx?$/.test(path))
    .map((path) => relative(root, join(root, "src", path)))

const allowed = (file: string) => ALLOWED.some((place) => file.startsWith(place.path))

/** The text of every string and template literal of `source` (template literals as their literal parts). */
const literalsOf = (file: string, source: string): ReadonlyArray<string> => {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const found: Array<string> = []
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(node.text)
    else if (ts.isTemplateExpression(node)) {
      // The literal parts joined with a stand-in for each substitution, so `<p>${x}</p>` still reads as a tag.
      found.push([node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join("x"))
    }
    ts.forEachChild(node, visit)
  }
  visit(sourceFile)
  return found
}

const violationsOf = (file: string, source: string): ReadonlyArray<string> => {
  const violations: Array<string> = []
  if (/\bescapeHtml\b/.test(source)) violations.push(`${file}: escapes HTML by hand (escapeHtml)`)
  if (/\bdangerouslySetInnerHTML\b/.test(source)) violations.push(`${file}: writes raw HTML (dangerouslySetInnerHTML)`)
  if (/\brenderTo(?:Static(?:Markup|NodeStream)|String|PipeableStream|ReadableStream)\b/.test(source) && file !== RENDERER) {
    violations.push(`${file}: renders React outside the page renderer`)
  }
  for (const literal of literalsOf(file, source)) {
    if (file === RENDERER && literal === DOCTYPE) continue
    if (HTML_TAG.test(literal)) violations.push(`${file}: builds HTML in a string: ${JSON.stringify(literal.slice(0, 80))}`)
  }
  return violations
}

describe("page rendering", () => {
  it("finds what it looks for (a scanner that sees nothing would pass anything)", () => {
    expect(violationsOf("src/x/Page.ts", "const row = `<tr><td>${name}</td></tr>`")).toHaveLength(1)
    expect(violationsOf("src/x/Page.ts", `const doc = "<!doctype html>"`)).toHaveLength(1)
    expect(violationsOf("src/x/Page.ts", "import { escapeHtml } from './Html.ts'")).toHaveLength(1)
    expect(violationsOf("src/x/Page.tsx", "const A = () => <p className=\"amount\">{`${amount} riel`}</p>")).toEqual([])
    expect(violationsOf("src/x/Mail.ts", "const id = `<mail-${id}@example.com>`; if (a < b && c > d) {}")).toEqual([])
    // The allowed mail templates do hold HTML: the scanner sees it there.
    expect(violationsOf("src/mail/Templates.ts", readFileSync(join(root, "src/mail/Templates.ts"), "utf8")).length).toBeGreaterThan(0)
  })

  it("no page in src/ builds HTML outside the renderer", () => {
    const violations = sourceFiles()
      .filter((file) => !allowed(file))
      .flatMap((file) => violationsOf(file, readFileSync(join(root, file), "utf8")))
    expect(violations).toEqual([])
  })

  it("every hosted page module renders through the shared layout", () => {
    const pages = sourceFiles().filter((file) => /(?:^|\/)(?:Page|ResetPage|Home)\.tsx?$/.test(file) && !allowed(file))
    expect(pages.length).toBeGreaterThanOrEqual(7)
    for (const page of pages) {
      expect(page, "a page is a .tsx component").toMatch(/\.tsx$/)
      expect(readFileSync(join(root, page), "utf8"), page).toContain("<HostedPage")
    }
  })
})
