/**
 * The layering of the design, checked on the source so it stays true: `domain/` is the contract that
 * typed clients import on their own, so it must not pull in the server (`src/`) or the process wiring
 * (`runtime/`); `src/` holds the rules and must run under any wiring, so it must not reach into `runtime/`.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"

const root = resolve(import.meta.dirname, "..", "..")
const layers = ["domain", "src", "runtime"] as const
type Layer = (typeof layers)[number]

/**
 * What each layer must never import. Migrations are history: running code owns its names and constants, and a
 * migration keeps the literal values it wrote, so today's code never depends on how a table came to be.
 */
const forbidden: Record<Layer, ReadonlyArray<string>> = {
  domain: ["src", "runtime", "migrations"],
  src: ["runtime", "migrations"],
  runtime: []
}

// An import or re-export clause is identifiers, braces, commas, `*`, `as` and `type`: limiting the clause to
// those characters keeps a match from running on from an unrelated `export const …` into a later string.
const staticImport = /^\s*(?:import|export)\s+(?:type\s+)?[\w$*\s{},]*?\bfrom\s*["']([^"']+)["']/gm
const sideEffectImport = /^\s*import\s*["']([^"']+)["']/gm
const dynamicImport = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g

const specifiersOf = (source: string): ReadonlyArray<string> =>
  [staticImport, sideEffectImport, dynamicImport].flatMap((pattern) =>
    Array.from(source.matchAll(pattern), (match) => match[1]!)
  )

const typeScriptFilesUnder = (layer: Layer): ReadonlyArray<string> =>
  readdirSync(join(root, layer), { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts"))
    .map((path) => join(root, layer, path))

/** The top-level folder a relative specifier of `file` lands in; packages (`effect`, `node:fs`) have none. */
const layerOf = (file: string, specifier: string): string | undefined =>
  specifier.startsWith(".") ? relative(root, resolve(dirname(file), specifier)).split(sep)[0] : undefined

const importsOf = (layer: Layer) =>
  typeScriptFilesUnder(layer).flatMap((file) =>
    specifiersOf(readFileSync(file, "utf8")).map((specifier) => ({
      file: relative(root, file),
      specifier,
      target: layerOf(file, specifier)
    }))
  )

describe("layering", () => {
  it("finds the imports it checks (a scanner that sees nothing would pass anything)", () => {
    expect(importsOf("src").some((i) => i.target === "domain")).toBe(true)
    expect(importsOf("runtime").some((i) => i.target === "src")).toBe(true)
    expect(specifiersOf(`import {\n  a,\n  type B\n} from "../src/x.ts"\nexport * from "./y.ts"`)).toEqual([
      "../src/x.ts",
      "./y.ts"
    ])
  })

  for (const layer of layers) {
    const banned = forbidden[layer]
    if (banned.length === 0) continue
    it(`nothing in ${layer}/ imports from ${banned.map((b) => `${b}/`).join(" or ")}`, () => {
      const violations = importsOf(layer)
        .filter((i) => i.target !== undefined && banned.includes(i.target))
        .map((i) => `${i.file} imports ${i.specifier}`)
      expect(violations).toEqual([])
    })
  }

  it("a business area reaches another only through its Service or Entity, or a named exception (a kit lives in src/platform/)", () => {
    const violations = crossAreaImports()
      .filter(({ target }) => !publicFaces.has(target.split("/")[1]!) && !namedExceptions.has(target))
      .map(({ file, target }) => `${file} imports ${target}`)
    expect(violations).toEqual([])
  })

  it("the named exceptions are all still in use (a stale one would let a new import in unseen)", () => {
    const used = new Set(crossAreaImports().map(({ target }) => target))
    expect([...namedExceptions.keys()].filter((target) => !used.has(target))).toEqual([])
  })
})

/** What one area may import of another: its service (the rules) and its entity (serialized state). */
const publicFaces = new Set(["Service.ts", "Entity.ts"])

/**
 * The other cross-area imports that stand today, each with why. New code goes through a Service; an entry
 * here needs its reason.
 */
const namedExceptions = new Map<string, string>([
  ["apikeys/KeyCache.ts", "the key cache is invalidated by accounts when a member leaves"],
  ["billing/Limits.ts", "plan limits are checked inside the creating transaction of stores, members and payments"],
  ["payments/View.ts", "the payment object and checkout URL, as every area that shows a payment renders it"],
  ["payments/Changes.ts", "the payment change feed that live status streams follow"],
  ["payments/Repo.ts", "reads of payment rows inside another area's transaction (the table's owner is payments)"],
  ["webhooks/Destination.ts", "connectors deliver through the webhook machinery"],
  ["webhooks/Repo.ts", "a connector is a webhook endpoint row, written in the connector's transaction"],
  ["webhooks/Signing.ts", "connectors sign as webhooks do"],
  ["accounts/Authentication.ts", "the console authenticates its RPCs as the REST routes do"],
  ["referrals/Attach.ts", "a customer created with a referral code is attached in the creating transaction"],
  ["ledger/Postings.ts", "journal lines are posted in the transaction of the payment or refund they record"],
  ["stores/PaymentSettings.ts", "payments read the store's provider settings"],
  ["loyalty/Jobs.ts", "the wallet credit helpers other consumers reuse"],
  ["segments/Repo.ts", "promotion awarding evaluates segment rules in its own transaction"],
  ["segments/Rules.ts", "promotions compile segment rules to SQL"],
  ["customers/Repo.ts", "segment previews read customer rows"],
  ["customers/View.ts", "segment previews render customers as the customers area does"],
  ["access/Policy.ts", "the role table that stores show to members, and the console shows with each role's rights"],
  ["checkout/Page.ts", "the console's branding page previews the hosted checkout page itself, with the unsaved branding"],
  ["promotions/Repo.ts", "the AI campaign suggestion simulates through the promotions query"],
  ["mail/Queue.ts", "account and API-key mails are queued by the change that causes them, which must never wait on delivery"],
  ["mail/Templates.ts", "the mail area writes every mail's text; the areas that send one pick its template"],
  ["settings/Known.ts", "the security posture checks the known provider base-URL settings"]
])

/** Every import from one business area (src/<area>/) into another, as `area/File.ts`. */
const crossAreaImports = () =>
  importsOf("src").flatMap(({ file, specifier }) => {
    if (!specifier.startsWith("..")) return []
    const [, area] = file.split(sep)
    const target = relative(join(root, "src"), resolve(root, dirname(file), specifier)).split(sep)
    if (target.length !== 2 || target[0] === "platform" || target[0] === area || target[0] === "..") return []
    return [{ file, target: target.join("/") }]
  })
