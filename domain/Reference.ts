/**
 * The OpenAPI document as a reference, completed after the generator has built it from the HttpApi:
 *
 * - examples for every request body and JSON response, built from the schemas (their own `examples`
 *   first, then by field name: ids with their prefixes, timestamps, amounts), so they never drift;
 * - the HTML variant (`text/html`) of the hosted pages, which answer a browser with a page;
 * - the `webhooks` section: every event type, its payload and the Standard Webhooks signature headers;
 * - the generator's own constraint wording ("a string at most 255 character(s) long", titles such as
 *   "maxLength(255)") removed from descriptions: the constraint itself (`maxLength`) is kept;
 * - the credential each operation takes, as one of three security schemes (API key, session token,
 *   metrics token) rather than the one bearer scheme the middleware declares for all of them;
 * - what the generator cannot say: the redirect's `Location`, and why two path templates that look
 *   ambiguous are not.
 */
import { HttpApi } from "@effect/platform"
import { Context, Option } from "effect"
import { type Credential, Credentials, SecuritySchemes } from "./Auth.ts"
import { WebhookEventTypes } from "./Webhooks.ts"

type Json = any

// ---------------------------------------------------------------------------------------------
// Constraint wording
// ---------------------------------------------------------------------------------------------

const GENERATED_DESCRIPTION = /^(a string|a number|an integer|an array|a non-empty|a positive|a negative|a non-negative|a finite)\b/
const GENERATED_TITLE = /^([A-Za-z]+\(.*\)|int|unknown)$/

/** Removes the generator's constraint wording everywhere in the document, in place. */
const removeGeneratedWording = (node: Json): void => {
  if (Array.isArray(node)) {
    node.forEach(removeGeneratedWording)
    return
  }
  if (typeof node !== "object" || node === null) return
  if (typeof node.description === "string" && GENERATED_DESCRIPTION.test(node.description)) delete node.description
  if (typeof node.title === "string" && GENERATED_TITLE.test(node.title)) delete node.title
  for (const value of Object.values(node)) removeGeneratedWording(value)
}

// ---------------------------------------------------------------------------------------------
// Examples
// ---------------------------------------------------------------------------------------------

const exampleId = (prefix: string) => `${prefix}_3kTMd92JxQeLp0aZ7yNcB1vW`

const ID_PREFIXES: Record<string, string> = {
  payment: "pay",
  refund: "re",
  store: "str",
  branch: "br",
  organization: "org",
  user: "usr",
  api_key: "key",
  webhook_endpoint: "we",
  webhook_delivery: "whd",
  endpoint: "we",
  event: "evt",
  payment_link: "lnk",
  link: "lnk",
  verification: "kyc",
  receipt: "rcpt",
  delivery: "whd",
  checkout: "pay",
  customer: "cus",
  points_entry: "lpe",
  tier: "tier",
  reward: "rwd",
  redemption: "rdm",
  game: "game",
  prize: "prz",
  play: "play",
  hosted_game: "game",
  hosted_play: "play"
}

/**
 * Request examples beyond the required fields, where the optional ones are the point. Other request
 * examples show the required fields only, which are always a valid request on their own.
 */
const REQUEST_EXAMPLES: Record<string, Json> = {
  CreatePaymentDto: {
    amount: "12.50",
    currency: "USD",
    reference_id: "order-1042",
    description: "Two iced lattes",
    expires_in: 900,
    metadata: { table: "7" }
  },
  CreateRefundDto: { amount: "5.00", reason: "One latte was spilled" },
  CreateCustomerDto: {
    email: "sokha@example.com",
    external_id: "crm-10042",
    name: "Sokha Chan",
    phone: "+855 12 345 678",
    metadata: { segment: "regular" }
  },
  UpdateProgramDto: { active: true, points_per_unit: { USD: "10", KHR: "0.0025" } },
  CreateTierDto: { name: "Gold", threshold: 1000, earn_multiplier: "1.5" },
  CreateRewardDto: { name: "Free iced latte", description: "Any size, any branch", points_cost: 500, stock: 25 },
  ApiRedeemDto: { customer_id: exampleId("cus"), points: 200, reason: "Paid part of an order with points" },
  AdjustDto: { points: 250, reason: "Goodwill for a late order" },
  SetPreferencesDto: { email: true, marketing: false, source: "checkout", policy_version: "2030-01" },
  CreateLinkDto: { kind: "invoice", title: "Invoice #1042", amount: "120.00", currency: "USD", customer_email: "buyer@example.com", due_date: "2030-02-28" },
  CreateWebhookDto: { store_id: exampleId("str"), url: "https://shop.example.com/hooks/khqr", events: ["payment.completed", "payment.refunded"] },
  UpdateBrandingDto: { display_name: "Riverside Coffee", primary_color: "#1a73e8", accent_color: "#e8f0fb", logo_url: "https://cdn.example.com/logo.png" },
  CreateBranchDto: { name: "Riverside", address: "12 Sisowath Quay, Phnom Penh", phone: "+855 12 345 678" },
  RegisterDto: { email: "owner@example.com", password: "correct horse battery staple", name: "Sokha Chan", organization_name: "Riverside Coffee" },
  UpsertCredentialDto: { bakong_account_id: "coffee_shop@aclb", merchant_name: "Riverside Coffee", merchant_city: "Phnom Penh", acquiring_bank: "ACLEDA" }
}

/** A string example for a field, from its name when its schema has none. */
const stringByName = (name: string, objectType: string | undefined): string => {
  if (name === "id") return exampleId(ID_PREFIXES[objectType ?? ""] ?? "obj")
  if (name === "reference_id") return "order-1042"
  if (name === "amount_refunded") return "0.00"
  if (name === "payload") return "00020101021229270023test_merchant@devb520459995303840540512.505802KH6304A1B2"
  if (name === "md5") return "9e107d9d372bb6826bd81d3542a419d6"
  if (name === "message") return "A sentence saying what was wrong and how to put it right"
  if (name === "param") return "amount"
  if (name === "access_token") return "mst_4eC39HqLyjWDarjtT1zdp7dc4eC39HqLyjWDarjtT1z"
  if (name === "secret") return "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4f2WcR0ztQw="
  if (name === "token_type") return "Bearer"
  if (name === "svg") return "<svg xmlns=\"http://www.w3.org/2000/svg\">…</svg>"
  if (name === "png_data_url") return "data:image/png;base64,iVBORw0KGgo…"
  if (name.endsWith("_id")) return exampleId(ID_PREFIXES[name.slice(0, -3)] ?? "obj")
  if (name.endsWith("_at")) return "2030-01-31T17:00:00.000Z"
  if (name.includes("amount")) return "12.50"
  if (name.includes("email")) return "owner@example.com"
  if (name.includes("url")) return "https://shop.example.com/path"
  if (name === "currency") return "USD"
  if (name.includes("color")) return "#1a73e8"
  if (name.includes("password")) return "correct horse battery staple"
  if (name === "code" || name === "mfa_code") return "123456"
  if (name === "cursor" || name === "next_cursor") return "eyJ0IjoiMjAzMC0wMS0zMVQxNzowMDowMC4wMDBaIn0"
  if (name.includes("name")) return "Riverside Coffee"
  if (name === "title") return "Invoice #1042"
  if (name === "registration_number") return "CO-1234/2030"
  if (name === "description" || name === "reason") return "Two iced lattes"
  return "text"
}

interface ExampleContext {
  readonly schemas: Record<string, Json>
  /** Request examples show the required fields and those with examples of their own; responses show all. */
  readonly forRequest: boolean
}

const exampleOf = (schema: Json, context: ExampleContext, name = "", objectType?: string, seen: ReadonlyArray<string> = []): Json => {
  if (schema === undefined || schema === null || typeof schema !== "object") return null
  if (typeof schema.$ref === "string") {
    const key = schema.$ref.replace("#/components/schemas/", "")
    if (seen.includes(key)) return null
    return exampleOf(context.schemas[key], context, name, objectType, [...seen, key])
  }
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if (schema.const !== undefined) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  const alternatives: Array<Json> | undefined = schema.anyOf ?? schema.oneOf
  if (Array.isArray(alternatives)) {
    const chosen = alternatives.find((alternative) => alternative.type !== "null") ?? alternatives[0]
    return exampleOf(chosen, context, name, objectType, seen)
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return exampleOf(schema.allOf[0], context, name, objectType, seen)
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type
  switch (type) {
    case "object": {
      const properties: Record<string, Json> = schema.properties ?? {}
      const required: ReadonlyArray<string> = schema.required ?? []
      const ownType = properties.object?.const ?? properties.object?.enum?.[0]
      const example: Record<string, Json> = {}
      for (const [key, property] of Object.entries(properties)) {
        if (context.forRequest && !required.includes(key)) continue
        example[key] = exampleOf(property, context, key, ownType ?? objectType, seen)
      }
      if (Object.keys(properties).length === 0 && schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
        return name === "metadata" ? { order_id: "1042" } : {}
      }
      return example
    }
    case "array":
      return [exampleOf(schema.items, context, name.replace(/s$/, ""), objectType, seen)].filter((item) => item !== null)
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : name === "expires_in" ? 900 : 1
    case "boolean":
      return name === "enabled" || name === "active"
    case "null":
      return null
    case "string":
      return stringByName(name, objectType)
    default:
      return null
  }
}

/** Puts an `example` on every JSON request body and JSON response that has none. */
const addExamples = (document: Json): void => {
  const schemas: Record<string, Json> = document.components?.schemas ?? {}
  for (const item of Object.values<Json>(document.paths ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      const requestMedia = operation?.requestBody?.content?.["application/json"]
      if (requestMedia?.schema !== undefined && requestMedia.example === undefined) {
        const named = String(requestMedia.schema.$ref ?? "").replace("#/components/schemas/", "")
        requestMedia.example = REQUEST_EXAMPLES[named] ?? exampleOf(requestMedia.schema, { schemas, forRequest: true })
      }
      for (const response of Object.values<Json>(operation?.responses ?? {})) {
        const media = response?.content?.["application/json"]
        if (media?.schema !== undefined && media.example === undefined) {
          media.example = exampleOf(media.schema, { schemas, forRequest: false })
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Hosted pages
// ---------------------------------------------------------------------------------------------

/** The operations that answer a browser (Accept preferring text/html) with a complete page. */
const HOSTED_PAGES: ReadonlyArray<readonly [path: string, what: string]> = [
  ["/checkout/{id}", "the checkout page: the store's branding, the amount, the QR code and the live status"],
  ["/receipts/{id}", "the receipt page"],
  ["/links/{id}", "the payment-link page with its pay button"],
  [
    "/wallet/{customerId}",
    "the wallet page (opened with the customer's token `t`): balance, tier and progress to the next, rewards, " +
    "the customer's vouchers, recent activity, and links to the store's games and to the customer's referral page"
  ],
  [
    "/play/game/{gameId}",
    "the game page: a wheel of its prizes and, opened with a customer's `?c={customerId}&t=…`, a play button " +
    "and a link to the wallet"
  ],
  ["/play/{playId}", "the play page (opened with the card's token `t`): its result, or a scratch card to reveal"]
]

const addHtmlVariants = (document: Json): void => {
  for (const [path, what] of HOSTED_PAGES) {
    const ok = document.paths?.[path]?.get?.responses?.["200"]
    if (ok === undefined) continue
    ok.description = `${ok.description ?? "OK"}. JSON by default; a request whose Accept header prefers ` +
      `text/html (a browser) gets ${what}.`
    ok.content = {
      ...ok.content,
      "text/html": {
        schema: { type: "string", description: "A complete HTML page (no external scripts; a nonce CSP)." },
        example: "<!doctype html><html lang=\"en\">…</html>"
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------------

const EVENT_DESCRIPTIONS: Record<(typeof WebhookEventTypes)[number], string> = {
  "payment.completed": "A payment was paid.",
  "payment.refunded": "A refund of a paid payment succeeded (in full or in part); `data.object` is the payment after it.",
  "payment.failed": "The provider reported the payment failed.",
  "payment.expired": "The payment passed `expires_at` unpaid.",
  "payment.cancelled": "A pending payment was cancelled.",
  "payment.scanned": "The customer scanned the QR code; payment is expected shortly.",
  "loyalty.points_earned": "A paid payment earned loyalty points; `data.object` is the `earn` points entry.",
  "loyalty.redemption.created": "Points were redeemed (for a reward or raw); `data.object` is the issued redemption.",
  "loyalty.redemption.cancelled": "A redemption was cancelled and its points and stock returned; `data.object` is the redemption.",
  "risk.case_opened": "A risk rule opened a case; `data.object` is the risk case.",
  "referral.converted": "A referee's first payment was paid; `data.object` is the referral.",
  "referral.flagged": "A fraud rule flagged a referral, holding its points and commissions; `data.object` is the referral.",
  "commission.paid": "A payout marked an accrued commission paid; `data.object` is the commission.",
  "promotion.activated": "A promotion was activated (after approval, or resumed from paused); `data.object` is the promotion. Promotion events carry `livemode: true`: a promotion is store-wide and acts on live payments.",
  "promotion.ended": "A promotion was ended by a user, or because its `ends_at` passed; `data.object` is the promotion.",
  "game.prize_awarded": "A game play won a points or voucher prize; `data.object` is the play (with its prize and any voucher code).",
  "test.event": "Sent by `POST /webhook-endpoints/{id}/test`; `data.object` describes the test."
}

/** The schema of `data.object` for events that do not carry a payment. */
const EVENT_OBJECT_SCHEMA: Partial<Record<(typeof WebhookEventTypes)[number], string>> = {
  "loyalty.points_earned": "PointsEntry",
  "loyalty.redemption.created": "Redemption",
  "loyalty.redemption.cancelled": "Redemption",
  "risk.case_opened": "RiskCase",
  "referral.converted": "Referral",
  "referral.flagged": "Referral",
  "commission.paid": "Commission",
  "game.prize_awarded": "Play",
  "promotion.activated": "Promotion",
  "promotion.ended": "Promotion"
}

const SIGNATURE_HEADERS = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The event's id (`evt_…`), the same on every retry: use it to process an event once.",
    schema: { type: "string" },
    example: "evt_3kTMd92JxQeLp0aZ7yNcB1vW"
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "When this attempt was signed, in Unix seconds. Reject deliveries far from your clock (replays).",
    schema: { type: "string" },
    example: "1895419200"
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description: "Space-separated `v1,<base64 HMAC-SHA256>` signatures of `{webhook-id}.{webhook-timestamp}.{body}`, " +
      "keyed with the base64-decoded part of the endpoint's secret after `whsec_`; one per active secret (two for 24 " +
      "hours after a rotation). Accept the delivery if any signature matches (Standard Webhooks).",
    schema: { type: "string" },
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
  }
]

const addWebhooks = (document: Json): void => {
  const schemas: Record<string, Json> = document.components?.schemas ?? {}
  const objectExample = (type: (typeof WebhookEventTypes)[number]) =>
    exampleOf({ $ref: `#/components/schemas/${EVENT_OBJECT_SCHEMA[type] ?? "Payment"}` }, { schemas, forRequest: false })
  const webhooks: Record<string, Json> = {}
  for (const type of WebhookEventTypes) {
    const isTest = type === "test.event"
    const dataObject = isTest
      ? {
        type: "object",
        properties: {
          object: { const: "test" },
          endpoint_id: { type: "string" },
          store_id: { type: "string" },
          message: { type: "string" }
        },
        required: ["object", "endpoint_id", "store_id", "message"]
      }
      : { $ref: `#/components/schemas/${EVENT_OBJECT_SCHEMA[type] ?? "Payment"}` }
    webhooks[type] = {
      post: {
        summary: `${type}: ${EVENT_DESCRIPTIONS[type]}`,
        description: `${EVENT_DESCRIPTIONS[type]} Delivered as a POST to each enabled endpoint subscribed to ` +
          "`" + type + "` (or `*`), signed per Standard Webhooks. Answer 2xx within 15 s; anything else is retried " +
          "at about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h. A 410 answer disables the endpoint.",
        operationId: `webhook.${type}`,
        tags: ["Webhook events"],
        parameters: SIGNATURE_HEADERS,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: {
                  id: { type: "string", description: "The event id; equals the `webhook-id` header." },
                  object: { const: "event" },
                  type: { const: type },
                  created_at: { type: "string", description: "When the event happened (ISO 8601)." },
                  livemode: { type: "boolean" },
                  data: { type: "object", properties: { object: dataObject }, required: ["object"] }
                },
                required: ["id", "object", "type", "created_at", "livemode", "data"]
              },
              example: {
                id: "evt_3kTMd92JxQeLp0aZ7yNcB1vW",
                object: "event",
                type,
                created_at: "2030-01-31T17:00:00.000Z",
                livemode: false,
                data: {
                  object: isTest
                    ? {
                      object: "test",
                      endpoint_id: exampleId("we"),
                      store_id: exampleId("str"),
                      message: "A test event sent from the webhook endpoint's test route."
                    }
                    : objectExample(type)
                }
              }
            }
          }
        },
        responses: {
          "200": { description: "Any 2xx: delivered. The body is ignored." },
          "410": { description: "Gone: the endpoint is disabled and receives nothing more." }
        }
      }
    }
  }
  document.webhooks = webhooks
  document.tags = [
    ...(document.tags ?? []),
    {
      name: "Webhook events",
      description: "What the service POSTs to your webhook endpoints, and how to verify it came from us."
    }
  ]
}

// ---------------------------------------------------------------------------------------------
// Credentials
// ---------------------------------------------------------------------------------------------

/**
 * Names on each protected operation the credentials it takes, from the `Credentials` annotation of its
 * endpoint or else of its group, and lists those schemes in place of the middleware's single `bearer`.
 * An operation behind a security middleware that declares no credentials fails the build of the
 * document, so a new group cannot be left undocumented.
 */
const addCredentials = (document: Json, api: HttpApi.HttpApi.Any): void => {
  const used = new Set<Credential>()
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      const path = endpoint.path.replace(/:(\w+)\??/g, "{$1}")
      const operation = document.paths?.[path]?.[endpoint.method.toLowerCase()]
      if (operation === undefined || !Array.isArray(operation.security) || operation.security.length === 0) return
      const credentials = Context.getOption(endpoint.annotations, Credentials).pipe(
        Option.orElse(() => Context.getOption(group.annotations, Credentials)),
        Option.getOrThrowWith(() => new Error(`${endpoint.method} ${endpoint.path}: no Credentials declared`))
      )
      for (const credential of credentials) used.add(credential)
      operation.security = credentials.map((credential) => ({ [credential]: [] }))
    }
  })
  document.components.securitySchemes = Object.fromEntries(
    (Object.keys(SecuritySchemes) as Array<Credential>).filter((name) => used.has(name)).map((name) => [name, SecuritySchemes[name]])
  )
}

// ---------------------------------------------------------------------------------------------
// Redirects and path templates
// ---------------------------------------------------------------------------------------------

const describeRedirects = (document: Json): void => {
  const redirect = document.paths?.["/r/{code}"]?.get?.responses?.["302"]
  if (redirect === undefined) return
  redirect.description = "Found: the join page of the code."
  redirect.headers = {
    Location: {
      description: "The join page, `/r/{code}/join`.",
      schema: { type: "string", format: "uri-reference" },
      example: "/r/SOKHA7/join"
    }
  }
}

/**
 * `/play/game/{gameId}` and `/play/{playId}/reveal` have the same shape, but a play id always starts
 * with `play_`, so `game` is never one: no request matches both.
 */
const explainLookalikePaths = (document: Json): void => {
  const note = "Not ambiguous with `/play/game/{gameId}`: a play id starts with `play_`, so it is never `game`."
  for (const path of ["/play/{playId}", "/play/{playId}/reveal"]) {
    for (const operation of Object.values<Json>(document.paths?.[path] ?? {})) operation["x-disambiguation"] = note
  }
}

/** Completes the generated document (see the module comment); `api` is the HttpApi it was generated from. */
export const completeReference = (api: HttpApi.HttpApi.Any) => (document: Json): Json => {
  const completed = structuredClone(document)
  removeGeneratedWording(completed)
  addExamples(completed)
  addHtmlVariants(completed)
  addWebhooks(completed)
  addCredentials(completed, api)
  describeRedirects(completed)
  explainLookalikePaths(completed)
  // The generator's license type has no `identifier` (OpenAPI 3.1): a proprietary licence has no SPDX id
  // of its own, so it is named as a LicenseRef.
  if (completed.info?.license !== undefined) completed.info.license.identifier = "LicenseRef-Proprietary"
  return completed
}
