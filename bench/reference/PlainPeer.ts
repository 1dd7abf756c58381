/**
 * The hand-written peer (a reference server of bench/requests.ts, not part of the product): plain
 * `node:http` and node-postgres doing exactly the database work the service does for
 * `GET /v1/payments?limit=<n>` and `POST /v1/payments` with a test-mode API key, and answering the same
 * JSON. What the service pays beyond this on those two paths is its own code, not the database.
 *
 * The same work, statement for statement (read from the service's statements with `log_statement = 'all'`):
 *
 * - The API key: the SHA-256 of the bearer secret, looked up in a per-process cache of active keys kept
 *   10 s (src/apikeys/KeyCache.ts); on a miss, the key joined to its store, then its use recorded, each
 *   in autocommit, one after the other (src/apikeys/Repo.ts).
 * - The list: one SELECT of `limit + 1` rows, newest first (src/payments/Repo.ts, with the service's
 *   six unused filter slots as the constant TRUE it sends for them), in autocommit; the page and the
 *   cursor built from the rows (src/platform/Pagination.ts).
 * - Creation: the body read and checked, the amount parsed, the store's payment settings from a 10 s cache
 *   (src/stores/PaymentSettings.ts; a store without credentials pays into the sandbox merchant), the KHQR
 *   built by the product's own pure encoder (src/payments/Khqr.ts), then one `INSERT` in autocommit,
 *   without RETURNING: the answer is built from the values inserted (src/payments/Repo.ts). A test-mode
 *   payment has no plan limit to check (src/limits/Service.ts), and without an Idempotency-Key nothing is
 *   claimed (src/platform/Idempotency.ts).
 *
 * Only what the bench sends is served: `limit` on the list, and `amount`, `currency`, `reference_id`,
 * `description`, `metadata`, `expires_in` on creation; anything else is a 400 rather than a silently
 * different answer.
 *
 * Environment: DATABASE_URL, HOST (127.0.0.1), PORT (0: a free port). Logs `listening on http://host:port`.
 */
import { Either } from "effect"
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import pg from "pg"
import { MAX_DESCRIPTION_LENGTH, MAX_EXPIRES_IN, MAX_REFERENCE_ID_LENGTH, MIN_EXPIRES_IN } from "../../domain/Payments.ts"
import { buildKhqr, TEST_MERCHANT } from "../../src/payments/Khqr.ts"
import { newId } from "../../src/platform/Ids.ts"
import { formatAmount } from "../../src/platform/Money.ts"

const host = process.env["HOST"] ?? "127.0.0.1"
const port = Number(process.env["PORT"] ?? "0")
const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined) throw new Error("DATABASE_URL is required")

// The service's pool (runtime/Database.ts).
const pool = new pg.Pool({ connectionString: databaseUrl, max: 20, idleTimeoutMillis: 30_000, application_name: "bench-plain-peer" })
pool.on("error", () => {})

const CACHE_MILLIS = 10_000
const LAST_USED_GRANULARITY_MS = 60_000
const DEFAULT_EXPIRY_SECONDS = 900
const MAX_BODY_BYTES = 1024 * 1024
const DECIMAL_PLACES = { USD: 2, KHR: 0 } as const
type Currency = keyof typeof DECIMAL_PLACES

// ---------------------------------------------------------------------------------------------
// The API key and the store's settings, cached as the service caches them
// ---------------------------------------------------------------------------------------------

interface ActiveKey {
  readonly id: string
  readonly storeId: string
  readonly livemode: boolean
}

const keys = new Map<string, { readonly key: ActiveKey | undefined; readonly until: number }>()

const activeKey = async (secret: string): Promise<ActiveKey | undefined> => {
  const hash = createHash("sha256").update(secret, "utf8").digest("hex")
  const cached = keys.get(hash)
  const now = Date.now()
  if (cached !== undefined && cached.until > now) return cached.key
  const { rows } = await pool.query<{ id: string; store_id: string; organization_id: string; mode: string }>(
    `
            SELECT k.id, k.store_id, s.organization_id, k.mode
            FROM api_keys k JOIN stores s ON s.id = k.store_id
            WHERE k.secret_hash = $1 AND k.revoked_at IS NULL`,
    [hash]
  )
  const row = rows[0]
  // Unknown secrets are not cached, as in the service.
  if (row === undefined) return undefined
  const at = new Date(now)
  await pool.query(
    `
          UPDATE api_keys SET last_used_at = $1
          WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)`,
    [at, row.id, new Date(now - LAST_USED_GRANULARITY_MS)]
  ).catch(() => undefined)
  const key = { id: row.id, storeId: row.store_id, livemode: row.mode === "live" }
  keys.set(hash, { key, until: now + CACHE_MILLIS })
  return key
}

const settings = new Map<string, { readonly hasCredentials: boolean; readonly until: number }>()

/** Whether the store has provider credentials of its own; the bench's store has none (sandbox merchant). */
const storeHasCredentials = async (storeId: string): Promise<boolean> => {
  const cached = settings.get(storeId)
  const now = Date.now()
  if (cached !== undefined && cached.until > now) return cached.hasCredentials
  const { rows } = await pool.query<{ credentials: string | null; live_mode: boolean }>(
    "SELECT credentials, live_mode FROM stores WHERE id = $1",
    [storeId]
  )
  const hasCredentials = rows[0]?.credentials != null
  settings.set(storeId, { hasCredentials, until: now + CACHE_MILLIS })
  return hasCredentials
}

// ---------------------------------------------------------------------------------------------
// The payment on the wire (src/payments/View.ts), written by hand
// ---------------------------------------------------------------------------------------------

interface PaymentRow {
  readonly id: string
  readonly store_id: string
  readonly branch_id: string | null
  readonly customer_id: string | null
  readonly livemode: boolean
  readonly status: string
  readonly amount: string
  readonly currency: Currency
  readonly amount_refunded: string
  readonly reference_id: string | null
  readonly description: string | null
  readonly metadata: Record<string, string>
  readonly qr_payload: string
  readonly qr_md5: string
  readonly expires_at: Date
  readonly paid_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

let baseUrl = ""

const paymentJson = (row: PaymentRow) => ({
  id: row.id,
  object: "payment",
  status: row.status,
  amount: formatAmount(BigInt(row.amount), row.currency),
  currency: row.currency,
  amount_refunded: formatAmount(BigInt(row.amount_refunded), row.currency),
  reference_id: row.reference_id,
  description: row.description,
  metadata: row.metadata,
  livemode: row.livemode,
  store_id: row.store_id,
  branch_id: row.branch_id,
  customer_id: row.customer_id,
  expires_at: row.expires_at.toISOString(),
  paid_at: row.paid_at === null ? null : row.paid_at.toISOString(),
  checkout_url: `${baseUrl}/checkout/${row.id}`,
  qr: { payload: row.qr_payload, md5: row.qr_md5 },
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

// ---------------------------------------------------------------------------------------------
// The two routes
// ---------------------------------------------------------------------------------------------

const send = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const fail = (response: ServerResponse, status: number, code: string, message: string, param?: string) =>
  send(response, status, { error: { code, message, ...(param === undefined ? {} : { param }) } })

const LIST_SQL = `
          SELECT * FROM payments
          WHERE store_id = $1 AND livemode = $2
            AND TRUE
            AND TRUE
            AND TRUE
            AND TRUE
            AND TRUE
            AND TRUE
          ORDER BY "created_at" DESC, "id" DESC
          LIMIT $3`

const list = async (response: ServerResponse, key: ActiveKey, query: URLSearchParams) => {
  for (const name of query.keys()) {
    if (name !== "limit") return fail(response, 400, "invalid_request", `the reference peer serves only limit, not ${name}`, name)
  }
  const limit = query.has("limit") ? Number(query.get("limit")) : 10
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return fail(response, 400, "invalid_request", "limit must be a whole number from 1 to 100", "limit")
  }
  const { rows } = await pool.query<PaymentRow>(LIST_SQL, [key.storeId, key.livemode, limit + 1])
  const hasMore = rows.length > limit
  const page = hasMore ? rows.slice(0, limit) : rows
  const last = page[page.length - 1]
  send(response, 200, {
    object: "list",
    data: page.map(paymentJson),
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined
      ? Buffer.from(JSON.stringify({ t: last.created_at.toISOString(), id: last.id }), "utf8").toString("base64url")
      : null
  })
}

const INSERT_SQL = `
          INSERT INTO payments (id, store_id, branch_id, customer_id, livemode, status, amount, currency, reference_id,
            description, metadata, provider, qr_payload, qr_md5, expires_at, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, 'pending',
            $6, $7, $8, $9,
            $10::jsonb, $11, $12, $13, $14, $15,
            $16)`

const CREATE_FIELDS = new Set(["amount", "currency", "reference_id", "description", "metadata", "expires_in"])

const readBody = (request: IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) chunks.push(chunk)
    })
    request.on("end", () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/** A wire amount in minor units (src/platform/Money.ts parseAmount), or why not. */
const parseAmount = (input: unknown, currency: Currency): bigint | string => {
  if (typeof input !== "string" || input.length > 32 || !/^\d+(\.\d+)?$/.test(input)) return "amount must be a decimal string"
  const [integerPart = "", fractionPart = ""] = input.split(".")
  if (integerPart.length > 1 && integerPart.startsWith("0")) return "amount must not have leading zeros"
  const places = DECIMAL_PLACES[currency]
  if (fractionPart.length > places) return `${currency} amounts have at most ${places} decimal places`
  if (integerPart.length > 12) return "amount is too large"
  const minor = BigInt(integerPart + fractionPart.padEnd(places, "0"))
  return minor === 0n ? "amount must be greater than zero" : minor
}

const create = async (request: IncomingMessage, response: ServerResponse, key: ActiveKey) => {
  const text = await readBody(request)
  if (text === undefined) return fail(response, 413, "payload_too_large", "The request body is too large")
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text)
  } catch {
    return fail(response, 400, "invalid_request", "The request body could not be read as JSON")
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return fail(response, 400, "invalid_request", "The request body must be a JSON object")
  }
  for (const name of Object.keys(body)) {
    if (!CREATE_FIELDS.has(name)) return fail(response, 400, "invalid_request", `the reference peer does not take ${name}`, name)
  }
  const currency = body["currency"]
  if (currency !== "USD" && currency !== "KHR") return fail(response, 400, "invalid_request", "currency must be USD or KHR", "currency")
  const amount = parseAmount(body["amount"], currency)
  if (typeof amount === "string") return fail(response, 400, "invalid_request", amount, "amount")
  const referenceId = body["reference_id"]
  const description = body["description"]
  const metadata = body["metadata"] ?? {}
  const expiresIn = body["expires_in"] ?? DEFAULT_EXPIRY_SECONDS
  if (referenceId !== undefined && (typeof referenceId !== "string" || referenceId.length === 0 || referenceId.length > MAX_REFERENCE_ID_LENGTH)) {
    return fail(response, 400, "invalid_request", `reference_id must be a string of 1 to ${MAX_REFERENCE_ID_LENGTH} characters`, "reference_id")
  }
  if (description !== undefined && (typeof description !== "string" || description.length > MAX_DESCRIPTION_LENGTH)) {
    return fail(response, 400, "invalid_request", `description must be a string of at most ${MAX_DESCRIPTION_LENGTH} characters`, "description")
  }
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata) || Object.values(metadata).some((v) => typeof v !== "string")) {
    return fail(response, 400, "invalid_request", "metadata must be an object of strings", "metadata")
  }
  if (typeof expiresIn !== "number" || !Number.isInteger(expiresIn) || expiresIn < MIN_EXPIRES_IN || expiresIn > MAX_EXPIRES_IN) {
    return fail(response, 400, "invalid_request", "expires_in must be a whole number of seconds", "expires_in")
  }
  if (key.livemode || await storeHasCredentials(key.storeId)) {
    return fail(response, 400, "invalid_request", "the reference peer creates test-mode payments of the sandbox merchant only")
  }
  const createdAt = new Date()
  const expiresAt = new Date(createdAt.getTime() + expiresIn * 1000)
  const qr = buildKhqr({
    ...TEST_MERCHANT,
    currency,
    amountMinor: amount,
    billNumber: typeof referenceId === "string" ? referenceId.slice(0, 25) : undefined,
    createdAt,
    expiresAt
  })
  if (Either.isLeft(qr)) return fail(response, 400, "invalid_request", qr.left.message)
  // As the service: the new row is what was inserted and the columns' defaults, not read back. (The
  // metadata is answered in the order sent; the service answers jsonb's order, the same keys.)
  const row: PaymentRow = {
    id: newId("pay"),
    store_id: key.storeId,
    branch_id: null,
    customer_id: null,
    livemode: key.livemode,
    status: "pending",
    amount: amount.toString(),
    currency,
    amount_refunded: "0",
    reference_id: typeof referenceId === "string" ? referenceId : null,
    description: typeof description === "string" ? description : null,
    metadata: metadata as Record<string, string>,
    qr_payload: qr.right.payload,
    qr_md5: qr.right.md5,
    expires_at: expiresAt,
    paid_at: null,
    created_at: createdAt,
    updated_at: createdAt
  }
  await pool.query(INSERT_SQL, [
    row.id,
    row.store_id,
    row.branch_id,
    row.customer_id,
    row.livemode,
    row.amount,
    row.currency,
    row.reference_id,
    row.description,
    JSON.stringify(row.metadata),
    "mock",
    row.qr_payload,
    row.qr_md5,
    row.expires_at,
    row.created_at,
    row.updated_at
  ])
  send(response, 201, paymentJson(row))
}

const handle = async (request: IncomingMessage, response: ServerResponse) => {
  const url = new URL(request.url ?? "/", "http://peer")
  if (url.pathname !== "/v1/payments") return fail(response, 404, "not_found", `No route for ${request.method} ${url.pathname}`)
  if (request.method !== "GET" && request.method !== "POST") {
    return fail(response, 405, "method_not_allowed", `${request.method} is not supported on ${url.pathname}`)
  }
  const authorization = request.headers.authorization ?? ""
  const secret = authorization.startsWith("Bearer ") ? authorization.slice(7).trim() : ""
  const key = secret.startsWith("sk_test_") || secret.startsWith("sk_live_") ? await activeKey(secret) : undefined
  if (key === undefined) return fail(response, 401, "unauthorized", "The credential is unknown, revoked or expired")
  if (request.method === "GET") return list(response, key, url.searchParams)
  return create(request, response, key)
}

const server = createServer((request, response) => {
  handle(request, response).catch((error: unknown) => {
    console.error(`request failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    if (!response.headersSent) fail(response, 500, "internal_error", "An internal error occurred")
    else response.destroy()
  })
})

server.listen(port, host, () => {
  baseUrl = `http://localhost:${(server.address() as AddressInfo).port}`
  console.log(`listening on http://${host}:${(server.address() as AddressInfo).port}`)
})

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    server.close()
    server.closeAllConnections()
    void pool.end().finally(() => process.exit(0))
  })
}
