/**
 * Customer search in the console (`npm run bench:customers`; `npm run bench` runs it with the others): how
 * fast `GET /dashboard/stores/{storeId}/customers?search=…` answers on a store with 100,000 customers.
 *
 * 1. A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server), or the one at
 *    BENCH_DATABASE_URL as it is. The customers are written straight into it, so it must be a PostgreSQL
 *    this process can reach (the embedded database is the service's own).
 * 2. The service as a child process (the bundle of `runtime/main.ts`, as `npm start` runs it), a user and a store made
 *    over HTTP, then BENCH_CUSTOMERS customers (100,000) of that store and as many of a second store bulk-
 *    inserted with `generate_series` (e-mail, name, phone and external_id of realistic shapes), and ANALYZE.
 * 3. For each kind of search (one customer's e-mail, a common surname, phone digits, an external_id prefix,
 *    a term that matches nobody, a two-letter term, no search at all, the fifth page of a common term),
 *    BENCH_SEARCHES requests (200) one after another with varying terms: p50, p99 and the most rows a page
 *    held. Then BENCH_CONNECTIONS (16) clients at once for BENCH_DURATION seconds (10), the kinds mixed:
 *    requests per second and p50/p99.
 * 4. A markdown table for the README (and the figures as JSON to BENCH_SUMMARY_FILE, for bench/all.ts). The
 *    child is stopped and the fresh database dropped however it ends.
 */
import autocannon from "autocannon"
import { cpus } from "node:os"
import {
  formatInt,
  formatMs,
  log,
  openDatabase,
  percentile,
  positiveNumber,
  postJson,
  runBench,
  setLogPrefix,
  startService,
  withClient,
  writeSummary
} from "./support.ts"

setLogPrefix("bench:customers")

const CUSTOMERS = Math.round(positiveNumber("BENCH_CUSTOMERS", 100_000))
const SEARCHES = Math.round(positiveNumber("BENCH_SEARCHES", 200))
const CONNECTIONS = Math.round(positiveNumber("BENCH_CONNECTIONS", 16))
const DURATION_SECONDS = positiveNumber("BENCH_DURATION", 10)

const FIRST_NAMES = ["Sokha", "Dara", "Vanna", "Sophea", "Chanthou", "Rithy", "Bopha", "Kosal", "Srey", "Visal", "Malis", "Piseth"]
const LAST_NAMES = ["Chan", "Keo", "Sok", "Meas", "Chea", "Heng", "Lim", "Ouk", "Pich", "Ros", "Sar", "Touch", "Vong", "Yim"]
const DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "riverside.example"]

const sqlArray = (values: ReadonlyArray<string>) => `ARRAY[${values.map((value) => `'${value}'`).join(", ")}]`

/**
 * `count` customers of `storeId`, one a second back in time from now: unique e-mails and external_ids,
 * names from the lists above, Cambodian mobile numbers. Ids are 24 hex characters (a subset of base62).
 */
const insertCustomers = (storeId: string, count: number, label: string) => `
  INSERT INTO customers (id, store_id, livemode, email, external_id, name, phone, metadata,
    preferences_updated_at, created_at, updated_at)
  SELECT 'cus_' || substr(md5('${label}' || g), 1, 24), '${storeId}', false,
    '${label}' || g || '@' || (${sqlArray(DOMAINS)})[1 + g % ${DOMAINS.length}],
    'CRM-${label}-' || lpad(g::text, 7, '0'),
    (${sqlArray(FIRST_NAMES)})[1 + g % ${FIRST_NAMES.length}] || ' ' ||
      (${sqlArray(LAST_NAMES)})[1 + (g / ${FIRST_NAMES.length}) % ${LAST_NAMES.length}],
    '+855 ' || (10 + g % 89) || ' ' || lpad(((g * 7919) % 1000000)::text, 6, '0'),
    '{}'::jsonb, t, t, t
  FROM generate_series(1, ${count}) AS g, LATERAL (SELECT now() - make_interval(secs => g) AS t) AS at`

interface SearchKind {
  readonly name: string
  /** The query string for the `i`-th request of the kind. */
  readonly query: (i: number) => string
}

const pick = <A>(values: ReadonlyArray<A>, i: number) => values[i % values.length]!

const KINDS: ReadonlyArray<SearchKind> = [
  { name: "one customer's e-mail", query: (i) => `search=${encodeURIComponent(`cust${1 + ((i * 7_919) % CUSTOMERS)}@`)}` },
  { name: "a common surname (first page of ~7,000)", query: (i) => `search=${pick(LAST_NAMES, i).toLowerCase()}` },
  { name: "phone digits", query: (i) => `search=${String(100_000 + ((i * 104_729) % 900_000)).slice(0, 5)}` },
  { name: "external_id prefix", query: (i) => `search=${encodeURIComponent(`CRM-cust-00${String(100 + (i % 900))}`)}` },
  { name: "a term no customer has", query: (i) => `search=${encodeURIComponent(`zq${i}xw`)}` },
  { name: "a two-letter term", query: (i) => `search=${pick(["so", "ch", "ke", "da", "va"], i)}` },
  { name: "no search (newest first)", query: () => "" }
]

interface KindFigures {
  readonly name: string
  readonly p50: number
  readonly p99: number
  readonly mostRows: number
}

const get = async (url: string, token: string) => {
  const started = performance.now()
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  const body = await response.json() as any
  const ms = performance.now() - started
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${JSON.stringify(body)}`)
  return { ms, body }
}

const measureKind = async (listUrl: string, token: string, kind: SearchKind): Promise<KindFigures> => {
  const latencies: Array<number> = []
  let mostRows = 0
  for (let i = 0; i < SEARCHES; i++) {
    const query = kind.query(i)
    const { body, ms } = await get(`${listUrl}${query === "" ? "" : `?${query}`}`, token)
    latencies.push(ms)
    mostRows = Math.max(mostRows, body.data.length)
  }
  latencies.sort((a, b) => a - b)
  return { name: kind.name, p50: percentile(latencies, 50), p99: percentile(latencies, 99), mostRows }
}

/** The fifth page of a common term: four cursors followed, then the page itself timed. */
const measureDeepPage = async (listUrl: string, token: string): Promise<KindFigures> => {
  const latencies: Array<number> = []
  let mostRows = 0
  for (let i = 0; i < Math.max(1, Math.floor(SEARCHES / 5)); i++) {
    let cursor: string | null = null
    const term = pick(LAST_NAMES, i).toLowerCase()
    for (let page = 0; page < 5; page++) {
      const { body, ms } = await get(`${listUrl}?search=${term}${cursor === null ? "" : `&cursor=${cursor}`}`, token)
      if (page === 4) {
        latencies.push(ms)
        mostRows = Math.max(mostRows, body.data.length)
      }
      cursor = body.next_cursor
    }
  }
  latencies.sort((a, b) => a - b)
  return { name: "the fifth page of a common surname", p50: percentile(latencies, 50), p99: percentile(latencies, 99), mostRows }
}

/** CONNECTIONS clients at once for DURATION_SECONDS, the `n`-th request asking `queryOf(n)`. */
const load = async (listUrl: string, token: string, queryOf: (n: number) => string) => {
  let counter = 0
  const result = await autocannon({
    url: listUrl,
    headers: { authorization: `Bearer ${token}` },
    connections: CONNECTIONS,
    duration: DURATION_SECONDS,
    requests: [{
      setupRequest: (request) => {
        const query = queryOf(counter++)
        return { ...request, path: `${new URL(listUrl).pathname}${query === "" ? "" : `?${query}`}` }
      }
    }]
  })
  return {
    requestsPerSecond: result["2xx"] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors
  }
}

const main = async () => {
  const cores = cpus().length
  const cpuModel = cpus()[0]?.model.trim() ?? "unknown CPU"
  log(`machine: ${cores} cores (${cpuModel}), node ${process.version}`)
  const database = await openDatabase()
  if (database.url === undefined) {
    throw new Error("this bench writes its customers straight into PostgreSQL: set BENCH_POSTGRES_URL or BENCH_DATABASE_URL")
  }
  log(`database: ${database.description}`)
  const service = await startService(database)
  log(`service listening on ${service.baseUrl}`)
  const session = await postJson(service.baseUrl, "/auth/register", {
    email: `bench-customers-${Date.now().toString(36)}@example.test`,
    password: "correct horse battery staple"
  })
  const token: string = session.access_token
  const store = await postJson(service.baseUrl, "/stores", { name: "Bench Store" }, token)
  const other = await postJson(service.baseUrl, "/stores", { name: "Bench Neighbour" }, token)

  const loadStarted = performance.now()
  await withClient(database.url, async (client) => {
    await client.query(insertCustomers(store.id, CUSTOMERS, "cust"))
    await client.query(insertCustomers(other.id, CUSTOMERS, "other"))
    await client.query("ANALYZE customers")
  })
  log(`inserted ${formatInt(CUSTOMERS)} customers into the store and as many into another, in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`)

  const listUrl = new URL(`/dashboard/stores/${store.id}/customers`, service.baseUrl).toString()
  // Warm the service and the database's caches before anything is timed.
  for (const kind of KINDS) for (let i = 0; i < 10; i++) await get(`${listUrl}?${kind.query(i)}`, token)

  const figures: Array<KindFigures> = []
  for (const kind of KINDS) {
    const measured = await measureKind(listUrl, token, kind)
    figures.push(measured)
    log(`  ${kind.name}: p50 ${formatMs(measured.p50)}, p99 ${formatMs(measured.p99)} (at most ${measured.mostRows} rows a page)`)
  }
  const deep = await measureDeepPage(listUrl, token)
  figures.push(deep)
  log(`  ${deep.name}: p50 ${formatMs(deep.p50)}, p99 ${formatMs(deep.p99)}`)

  log(`mixed searches: ${CONNECTIONS} connections for ${DURATION_SECONDS} s`)
  const mixed = await load(listUrl, token, (n) => pick(KINDS, n).query(Math.floor(n / KINDS.length)))
  log(`  ${formatInt(mixed.requestsPerSecond)} searches/s, p50 ${formatMs(mixed.p50)}, p99 ${formatMs(mixed.p99)}, non-2xx ${mixed.non2xx}, errors ${mixed.errors}`)
  // The same route without a search: what the route costs whatever is searched (session, access check, JSON).
  log(`the first page without a search: ${CONNECTIONS} connections for ${DURATION_SECONDS} s`)
  const unsearched = await load(listUrl, token, () => "")
  log(`  ${formatInt(unsearched.requestsPerSecond)} pages/s, p50 ${formatMs(unsearched.p50)}, p99 ${formatMs(unsearched.p99)}`)

  const plan = await withClient(database.url, async (client) =>
    (await client.query<{ "QUERY PLAN": string }>(
      `EXPLAIN SELECT id FROM customers WHERE store_id = $1 AND livemode = false AND erased_at IS NULL
        AND search_text LIKE '%' || lower($2) || '%' ORDER BY created_at DESC, id DESC LIMIT 21`,
      [store.id, "cust4242@"]
    )).rows.map((row) => row["QUERY PLAN"]))
  log(`plan of a rare term:\n    ${plan.join("\n    ")}`)
  const problems = service.problems()
  if (problems.count > 0) log(`the service logged ${problems.count} warnings, errors or 5xx; first: ${problems.first[0]}`)

  console.log("")
  console.log(`Customer search on ${formatInt(CUSTOMERS)} customers (${database.description}; ${cores} cores, node ${process.version})`)
  console.log("")
  console.log("| search | p50 | p99 | rows per page |")
  console.log("|---|---:|---:|---:|")
  for (const figure of figures) {
    console.log(`| ${figure.name} | ${formatMs(figure.p50)} | ${formatMs(figure.p99)} | ≤ ${figure.mostRows} |`)
  }
  console.log(`| the kinds above mixed, ${CONNECTIONS} connections × ${DURATION_SECONDS} s | ${formatMs(mixed.p50)} | ${formatMs(mixed.p99)} | ${formatInt(mixed.requestsPerSecond)} searches/s |`)
  console.log(`| no search, ${CONNECTIONS} connections × ${DURATION_SECONDS} s | ${formatMs(unsearched.p50)} | ${formatMs(unsearched.p99)} | ${formatInt(unsearched.requestsPerSecond)} pages/s |`)
  console.log("")
  writeSummary({
    database: database.description,
    customers: CUSTOMERS,
    searches: SEARCHES,
    kinds: figures,
    mixed: { connections: CONNECTIONS, seconds: DURATION_SECONDS, ...mixed },
    unsearched: { connections: CONNECTIONS, seconds: DURATION_SECONDS, ...unsearched },
    serviceProblems: problems.count
  })
  if (problems.count > 0 || mixed.non2xx + unsearched.non2xx > 0 || mixed.errors + unsearched.errors > 0) process.exitCode = 1
}

runBench(main)
