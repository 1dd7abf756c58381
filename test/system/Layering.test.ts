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
    .filter((path) => /\.tsx?$/.test(path))
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
      .filter(({ target }) => !isRepo(target) && !publicFaces.has(target.split("/")[1]!) && !namedExceptions.has(target))
      .map(({ file, target }) => `${file} imports ${target}`)
    expect(violations).toEqual([])
  })

  it("a table's SQL is its area's: another area's Repo.ts is imported only where a named exception says why", () => {
    const violations = crossAreaImports()
      .filter(({ file, target }) => isRepo(target) && !repoExceptions.has(repoImport(file, target)))
      .map(({ file, target }) => `${file} imports ${target}`)
    expect(violations).toEqual([])
  })

  it("plan limits live in src/limits/, below the areas that create what they count: no area imports billing for them", () => {
    const violations = crossAreaImports()
      .filter(({ file, target }) => {
        const area = file.split(sep)[1]!
        // Billing sells the plans and sits above payments: an area may use its Service (the console does),
        // never its inside, and the areas below it (which check limits) not at all.
        const intoBilling = target.startsWith("billing/") &&
          (target !== "billing/Service.ts" || ["stores", "accounts", "payments", "limits"].includes(area))
        return intoBilling || (area === "limits" && ["stores", "accounts", "payments", "billing"].includes(target.split("/")[0]!))
      })
      .map(({ file, target }) => `${file} imports ${target}`)
    expect(violations).toEqual([])
  })

  it("every table has one owning area: the tables the migrations create, and the cluster's, are those of tableOwners", () => {
    expect([...tableOwners.keys()].sort()).toEqual([...tablesOfMigrations(), ...clusterTables.keys()].sort())
    const areas = new Set(
      readdirSync(join(root, "src"), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
    )
    expect([...tableOwners].filter(([, owner]) => !areas.has(owner)).map(([table]) => table)).toEqual([])
    // The migrations' tables are found: a scanner that found none would leave every statement unchecked.
    expect(tablesOfMigrations().length).toBeGreaterThan(50)
  })

  it("a table's rows are inserted only by its owning area", () => {
    const violations = [...tableOwners].flatMap(([table, owner]) =>
      sqlFiles()
        .filter(({ file, source }) => !file.startsWith(`${owner}/`) && new RegExp(`\\bINTO\\s+${table}\\b`).test(source))
        .map(({ file }) => `${file} inserts into ${table}, owned by src/${owner}/`)
    )
    expect(violations).toEqual([])
  })

  for (const [table, owner] of tableOwners) {
    it(`the ${table} table is queried only in src/${owner}/, and by the named exceptions`, () => {
      const exceptions = queriedElsewhere.get(table) ?? new Map<string, string>()
      const querying = sqlFiles().filter(({ source }) => statementOn([table]).test(source)).map(({ file }) => file)
      // The owner's own SQL is found (a pattern that matched nothing would pass any file), unless no running
      // code queries the table at all.
      expect(querying.some((file) => file.startsWith(`${owner}/`))).toBe(!notQueried.has(table))
      const outside = querying.filter((file) => !file.startsWith(`${owner}/`))
      expect(outside.filter((file) => !exceptions.has(file))).toEqual([])
      // Each exception still queries the table: a stale one would let a new query in unseen.
      expect([...exceptions.keys()].filter((file) => !outside.includes(file))).toEqual([])
    })
  }

  it("the named exceptions to a table's owner are all of owned tables", () => {
    expect([...queriedElsewhere.keys()].filter((table) => !tableOwners.has(table))).toEqual([])
    expect([...notQueried.keys()].filter((table) => !tableOwners.has(table))).toEqual([])
  })

  it("plan limits read other areas' tables only where named: one column or one count by key, from below them", () => {
    const source = readFileSync(join(root, "src", "limits", "Repo.ts"), "utf8")
    const tables = new Set(Array.from(source.matchAll(/\b(?:FROM|JOIN|UPDATE|INTO)\s+([a-z_]+)\b/g), (match) => match[1]!))
    expect([...tables].sort()).toEqual([...limitsReads.keys()].sort())
  })

  it("the named exceptions are all still in use (a stale one would let a new import in unseen)", () => {
    const used = new Set(crossAreaImports().map(({ target }) => target))
    expect([...namedExceptions.keys()].filter((target) => !used.has(target))).toEqual([])
    const usedRepos = new Set(crossAreaImports().map(({ file, target }) => repoImport(file, target)))
    expect([...repoExceptions.keys()].filter((entry) => !usedRepos.has(entry))).toEqual([])
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
  ["limits/Plans.ts", "billing sells the plans whose limits the limits area holds, and prices them from the catalogue"],
  ["payments/View.ts", "the payment object and checkout URL, as every area that shows a payment renders it"],
  ["payments/Changes.ts", "the payment change feed that live status streams follow"],
  [
    "payments/Reports.ts",
    "the reports other areas make over payments and refunds (analytics, the assistant, promotions, links, monitoring, the ledger, receipts), and the payment figures segment rules join to each customer"
  ],
  [
    "payments/Reads.ts",
    "the reads of payments other areas make inside their own transactions, or from below the payments service (customers, billing's usage)"
  ],
  ["customers/Lock.ts", "the one lock of a customer's row, which loyalty and referrals take before changing what they keep on it"],
  ["customers/Standings.ts", "the cache of customers' standing that a play checks its customer against, kept and emptied by the customers area"],
  [
    "customers/Reads.ts",
    "the reads of customers other areas make inside their own transactions (a game's play, a receipt's mail), and the relations of customers their reports, segment rules and game plays join in one statement"
  ],
  [
    "stores/Reads.ts",
    "the reads of stores other areas make from below the stores service (the access check) or inside their own transactions, and the relation of stores (never their credentials) their statements join to a store's organization"
  ],
  [
    "accounts/Memberships.ts",
    "the reads of memberships other areas make from below the accounts service (the access check, the stores a user may see) or in their own transactions; only accounts changes them"
  ],
  [
    "webhooks/Reads.ts",
    "the figures of endpoints and their queue that the security posture and monitoring report over every store, and the relation of endpoint settings the connectors (each an endpoint row) join to their own rows"
  ],
  ["webhooks/Retention.ts", "the finished webhook jobs the operations area's retention purge deletes, as the webhooks area defines them"],
  ["mail/Retention.ts", "the finished mail whose content and record the operations area's retention purge deletes, as the mail area defines it"],
  ["apikeys/Reads.ts", "the count of old active keys that the security posture reports over every store"],
  ["verification/Reads.ts", "the relation of approved verifications the security posture joins to live stores in one statement"],
  ["system/ClusterReads.ts", "the cluster's runner and shard figures monitoring reports; the operations area owns the cluster's tables"],
  [
    "loyalty/Tiers.ts",
    "the tier a customer's lifetime points reach, the loyalty area's rule that the customer row shows and segment rules test within their own statements, and which ids are a store's tiers"
  ],
  [
    "revenue-shares/Reads.ts",
    "the store's active shares, which the journal splits a payment's entry by inside the payment's transaction (revenue shares sit above the journal)"
  ],
  ["ledger/Journal.ts", "the payment engine posts the journal entry of a payment or refund in the transaction that makes it"],
  ["webhooks/Destination.ts", "connectors deliver through the webhook machinery"],
  ["webhooks/Signing.ts", "connectors sign as webhooks do"],
  ["accounts/Authentication.ts", "the console authenticates its RPCs as the REST routes do"],
  ["referrals/Attach.ts", "a customer created with a referral code is attached in the creating transaction"],
  ["ledger/Postings.ts", "revenue shares are checked in the units the journal splits them by"],
  ["stores/PaymentSettings.ts", "payments read the store's provider settings"],
  ["loyalty/Jobs.ts", "the wallet credit helpers other consumers reuse"],
  ["segments/Rules.ts", "promotions compile segment rules to SQL"],
  ["customers/View.ts", "segment previews render customers as the customers area does"],
  ["access/Policy.ts", "the role table that stores show to members, and the console shows with each role's rights"],
  ["checkout/Page.tsx", "the console's branding page previews the hosted checkout page itself, with the unsaved branding"],
  ["mail/Queue.ts", "account and API-key mails are queued by the change that causes them, which must never wait on delivery"],
  ["mail/Templates.ts", "the mail area writes every mail's text; the areas that send one pick its template"],
  ["settings/Known.ts", "the security posture checks the known provider base-URL settings"]
])

/**
 * A statement that reads or writes one of `tables`: named after FROM, JOIN, UPDATE or INTO, or handed to the
 * platform's store page (`storePageOf(sql, "table", …)`), which queries the table it is given.
 */
const statementOn = (tables: ReadonlyArray<string>) =>
  new RegExp(`\\b(?:FROM|JOIN|UPDATE|INTO)\\s+(?:${tables.join("|")})\\b|storePageOf\\(\\s*sql,\\s*"(?:${tables.join("|")})"`)

/** Each TypeScript file under src/ with its source, by its path below src/ (`area/File.ts`). */
const sqlFiles = (() => {
  let files: ReadonlyArray<{ readonly file: string; readonly source: string }> | undefined
  return () =>
    files ??= typeScriptFilesUnder("src").map((path) => ({
      file: relative(join(root, "src"), path).split(sep).join("/"),
      source: readFileSync(path, "utf8")
    }))
})()

/** The tables the migrations create and have not dropped since. */
const tablesOfMigrations = () => {
  const sources = readdirSync(join(root, "migrations"))
    .filter((file) => file.endsWith(".ts"))
    .map((file) => readFileSync(join(root, "migrations", file), "utf8"))
  const names = (pattern: RegExp) => new Set(sources.flatMap((source) => Array.from(source.matchAll(pattern), (match) => match[1]!)))
  const dropped = names(/\bDROP TABLE (?:IF EXISTS )?([a-z_]+)/g)
  return [...names(/\bCREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)].filter((table) => !dropped.has(table))
}

/** The tables the cluster's SQL storage creates for itself (no migration does). */
const clusterTables = new Map<string, string>([
  ["cluster_messages", "the cluster's persisted messages, which the operations area's retention purges once processed"],
  ["cluster_replies", "their replies, purged with them"],
  ["cluster_runners", "the runners, whose health monitoring reports through the operations area"],
  ["cluster_shards", "the shard assignments, counted for monitoring likewise"]
])

/**
 * Every table and the one area that owns it: the area that inserts its rows (checked above), and the only one
 * whose SQL reads or writes it, but for the named exceptions (`queriedElsewhere`). Other areas go through the
 * owner's Service, or a narrow read it exports (`…/Reads.ts` and the like, each a named import exception),
 * one function per question, running in the caller's transaction; where a statement must meet the owner's rows
 * with its own in one snapshot, the owner exports the relation of its rows and the statement joins it.
 */
const tableOwners = new Map<string, string>([
  ...["users", "organizations", "memberships", "sessions", "invitations", "email_changes", "email_verifications", "password_resets"]
    .map((table) => [table, "accounts"] as const),
  ["ai_usage", "ai"],
  ["analytics_daily", "analytics"],
  ["api_keys", "apikeys"],
  ...["subscriptions", "subscription_invoices", "plan_changes"].map((table) => [table, "billing"] as const),
  ["connectors", "connectors"],
  ...["customers", "consent_events"].map((table) => [table, "customers"] as const),
  ...["games", "game_prize_tables", "game_prizes", "game_plays"].map((table) => [table, "games"] as const),
  ...["journal_entries", "journal_lines"].map((table) => [table, "ledger"] as const),
  ...["payment_links", "link_payments"].map((table) => [table, "links"] as const),
  ...["loyalty_programs", "loyalty_tiers", "loyalty_rewards", "loyalty_redemptions", "points_entries"]
    .map((table) => [table, "loyalty"] as const),
  ["outgoing_mail", "mail"],
  ...["notification_configs", "notification_messages"].map((table) => [table, "notifications"] as const),
  ...["payments", "refunds", "payment_transitions"].map((table) => [table, "payments"] as const),
  // The platform's kits: the outbox and its consumers' queues (the one emitter), idempotency keys, rate limits.
  ...["outbox", "outbox_subscriptions", "outbox_pending", "idempotency_keys", "rate_limits"]
    .map((table) => [table, "platform"] as const),
  ...["promotions", "promotion_audit"].map((table) => [table, "promotions"] as const),
  ...["referral_programs", "referrals", "referral_visits", "commissions"].map((table) => [table, "referrals"] as const),
  ["revenue_shares", "revenue-shares"],
  ["risk_cases", "risk"],
  ["segments", "segments"],
  ["platform_settings", "settings"],
  ...["stores", "branches"].map((table) => [table, "stores"] as const),
  ...[...clusterTables.keys()].map((table) => [table, "system"] as const),
  ["verifications", "verification"],
  ...["webhook_endpoints", "webhook_endpoint_secrets", "webhook_jobs", "webhook_deliveries"].map((table) => [table, "webhooks"] as const)
])

/** The tables no running code queries, each with why. */
const notQueried = new Map<string, string>([])

/**
 * The files outside src/payments/ whose SQL reads the payments or refunds table, each with why. Every other
 * area asks the payments area: its Service, src/payments/Reads.ts (reads inside another area's transaction)
 * or src/payments/Reports.ts (reports, one function per question; where a report meets another area's rows
 * in one statement, that area passes in the relation of its rows and the report joins it).
 */
const paymentsSqlExceptions = new Map<string, string>([
  [
    "ledger/Repo.ts",
    "reconciliation and the backfill compare payments and refunds with their journal entries in one statement: read apart, a payment paid between the two reads would be reported without its entry"
  ]
])

/**
 * The files outside src/customers/ whose SQL reads or writes the customers table, each with why. Every other
 * area asks the customers area: its Service, or src/customers/Reads.ts (reads inside another area's
 * transaction, and the relations of customers another area's statement joins to rows of its own).
 */
const customersSqlExceptions = new Map<string, string>([
  [
    "loyalty/Repo.ts",
    "the wallet (points_balance, lifetime_points) is loyalty's pair of columns on the customer row: the wallet entity reads it and posts each new balance in the statement that writes its points entry, under the customer's lock, so a balance is never seen without its entry"
  ],
  [
    "referrals/Repo.ts",
    "the referral code is the referrals area's column on the customer row: referrals assigns it (unique, drawn again on a clash) and finds the referrer by it, with the contact details its fraud rules compare, in one read"
  ]
])

/**
 * The files outside src/stores/ whose SQL reads the stores table, each with why. Every other area asks the
 * stores area: its Service, or src/stores/Reads.ts (reads from below the stores service or inside another
 * area's transaction, and the relation of stores another area's statement joins to rows of its own).
 */
const storesSqlExceptions = new Map<string, string>([
  ["limits/Repo.ts", "plan limits sit below stores, which call them as they create one (see limitsReads): no stores module can be imported there"]
])

/**
 * The files outside src/accounts/ whose SQL reads the memberships table, each with why. Only accounts inserts,
 * changes and deletes memberships; every other area reads them through src/accounts/Memberships.ts.
 */
const membershipsSqlExceptions = new Map<string, string>([
  ["limits/Repo.ts", "plan limits sit below accounts, which call them as it adds a member (see limitsReads): no accounts module can be imported there"]
])

/**
 * The files outside src/platform/ whose SQL reads or writes the outbox, each with why. The platform's emitter
 * alone writes events; their readers (a developer's event feed, monitoring, metrics, retention) go through
 * src/platform/OutboxReads.ts.
 */
const outboxSqlExceptions = new Map<string, string>([
  [
    "webhooks/Repo.ts",
    "the webhook dispatcher takes the oldest undispatched events under lock (so two passes never queue one event twice), queues a job per subscribed endpoint and marks them dispatched in one statement, so the jobs and the marks commit together"
  ]
])

/** The files outside src/promotions/ whose SQL reads or writes the promotions table, each with why. */
const promotionsSqlExceptions = new Map<string, string>([
  [
    "segments/Repo.ts",
    "a segment is deleted only while no promotion that has not ended uses it, and the ended ones lose their link, in one statement: read apart, a promotion could take the segment between the check and the delete; promotions sit above segments (they compile its rules), so segments import nothing of theirs"
  ]
])

/** Each table queried outside its owning area, with the files that query it and why. */
const queriedElsewhere = new Map<string, ReadonlyMap<string, string>>([
  ["payments", paymentsSqlExceptions],
  ["refunds", paymentsSqlExceptions],
  ["customers", customersSqlExceptions],
  ["stores", storesSqlExceptions],
  ["memberships", membershipsSqlExceptions],
  [
    "organizations",
    new Map([["limits/Repo.ts", "plan limits sit below accounts, which call them (see limitsReads): they take the organization's row lock that serializes two creations checked against one limit"]])
  ],
  [
    "subscriptions",
    new Map([["limits/Repo.ts", "plan limits sit below the areas that call them, and billing, which writes the plan, above payments (see limitsReads): the organization's plan is read there"]])
  ],
  ["outbox", outboxSqlExceptions],
  ["promotions", promotionsSqlExceptions]
])

/**
 * The tables src/limits/Repo.ts reads, each with why it reads it itself: limits sit below stores, accounts
 * and payments (which call them as they create) and billing sits above payments, so none of those areas'
 * modules can be imported there.
 */
const limitsReads = new Map<string, string>([
  ["subscriptions", "which plan the organization is on; billing writes it"],
  ["stores", "how many stores the organization holds, counted under its lock; a payment's store's organization"],
  ["memberships", "how many members the organization holds, counted under its lock"],
  ["organizations", "the row lock that serializes two creations checked against one limit"]
])

const isRepo = (target: string) => target.split("/")[1] === "Repo.ts"

/** An import of a Repo as `importer/File.ts → area/Repo.ts`, the importer's path below src/. */
const repoImport = (file: string, target: string) => `${file.split(sep).slice(1).join("/")} → ${target}`

/**
 * The imports of another area's Repo.ts that stand today, each by importing file and with why: the SQL of a
 * table is its area's, and other areas go through that area's Service (or a narrow read it exports, such as
 * payments/Reads.ts). New code adds no entry here without its reason.
 */
const repoExceptions = new Map<string, string>([
  ["promotions/Awarding.ts → segments/Repo.ts", "promotion awarding evaluates segment rules in its own transaction"],
  ["connectors/Service.ts → webhooks/Repo.ts", "a connector is a webhook endpoint row, written in the connector's transaction"]
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
