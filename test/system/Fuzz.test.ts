/**
 * Hostile input over every operation of the running service's own OpenAPI document: bodies built from
 * each operation's schema and then spoiled (NUL characters, unpaired surrogates, huge strings, numbers
 * beyond any column, wrong types, unknown fields, deep nesting, not JSON at all), path ids and query
 * values spoiled the same way, and wrong content types. Whatever arrives, the answer is never a 5xx,
 * and every error has the shared envelope. The run is bounded (a few hundred requests) so it stays
 * part of `npm test`; a failure prints fast-check's seed and the request that caused it.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

/** How many requests one run sends; each operation gets several. */
const RUNS = 600

type JsonSchema = {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly enum?: ReadonlyArray<unknown>
  readonly const?: unknown
  readonly properties?: Record<string, JsonSchema>
  readonly required?: ReadonlyArray<string>
  readonly items?: JsonSchema
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly examples?: ReadonlyArray<unknown>
}

interface Operation {
  readonly method: string
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<{ readonly name: string; readonly schema: JsonSchema }>
  readonly body: JsonSchema | undefined
}

interface Credentials {
  readonly session: string
  readonly apiKey: string
  /** Real ids, so that spoiled bodies reach real objects and not only 404s. */
  readonly ids: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

const hostileStrings: ReadonlyArray<string> = [
  "",
  " ",
  "\u0000",
  "pay_\u0000",
  "\ud800",
  "x\udc00y",
  "😀",
  "x".repeat(300),
  "x".repeat(70_000),
  "9".repeat(40),
  "99999999999999999999.99",
  "-1",
  "0.001",
  "1e309",
  "NaN",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "../../etc/passwd",
  "%00",
  "\\u0000",
  "https://127.0.0.1/",
  "2030-13-45T99:99:99Z",
  "a@b",
  "${jndi:ldap://x}"
]

const hostileString = fc.oneof(fc.constantFrom(...hostileStrings), fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 20 }))

const hostileNumber = fc.constantFrom(-1, 0, 1.5, 2 ** 53 + 1, 1e308, -1e308, Number.MAX_SAFE_INTEGER)

/** Nesting far deeper than any schema, as raw text (a value this deep is beyond JSON.stringify). */
const deeplyNested = (depth: number, field?: string) => {
  const nested = "[".repeat(depth) + "]".repeat(depth)
  return field === undefined ? nested : `{"${field}":${nested}}`
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 })
)

// ---------------------------------------------------------------------------------------------
// Values from the document's schemas
// ---------------------------------------------------------------------------------------------

const makeResolver = (document: any) => (schema: JsonSchema): JsonSchema => {
  let current = schema
  for (let hops = 0; current.$ref !== undefined && hops < 10; hops++) {
    current = document.components.schemas[current.$ref.replace("#/components/schemas/", "")]
  }
  return current
}

/** A value that fits `schema` more or less (the aim is to get past the first check, not to be valid). */
const fromSchema = (resolve: (schema: JsonSchema) => JsonSchema, schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> => {
  const resolved = resolve(schema)
  if (depth > 4) return hostileValue
  if (resolved.const !== undefined) return fc.constant(resolved.const)
  if (resolved.enum !== undefined) return fc.constantFrom(...resolved.enum)
  const alternatives = resolved.anyOf ?? resolved.oneOf ?? resolved.allOf
  if (alternatives !== undefined && alternatives.length > 0) {
    return fc.oneof(...alternatives.map((alternative) => fromSchema(resolve, alternative, depth + 1)))
  }
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type
  switch (type) {
    case "object": {
      const properties = resolved.properties ?? {}
      const record: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, property] of Object.entries(properties)) record[name] = fromSchema(resolve, property, depth + 1)
      return fc.record(record, { requiredKeys: [...(resolved.required ?? [])].filter((key) => key in record) })
    }
    case "array":
      return fc.array(resolved.items ? fromSchema(resolve, resolved.items, depth + 1) : hostileValue, { maxLength: 3 })
    case "integer":
    case "number":
      return fc.oneof(fc.integer({ min: 0, max: 1000 }), hostileNumber)
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "string":
      return resolved.examples && resolved.examples.length > 0
        ? fc.oneof(fc.constantFrom(...resolved.examples), hostileString)
        : hostileString
    default:
      return hostileValue
  }
}

/** Spoils one part of a body: a field replaced, an unknown field added, a required one removed. */
const spoil = (body: unknown): fc.Arbitrary<unknown> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return fc.constant(body)
  const keys = Object.keys(body)
  const variants: Array<fc.Arbitrary<unknown>> = [
    fc.constant(body),
    fc.tuple(hostileString, hostileValue).map(([key, value]) => ({ ...body, [key]: value })),
    hostileValue
  ]
  if (keys.length > 0) {
    variants.push(
      fc.tuple(fc.constantFrom(...keys), hostileValue).map(([key, value]) => ({ ...body, [key]: value })),
      fc.constantFrom(...keys).map((key) => Object.fromEntries(Object.entries(body).filter(([name]) => name !== key)))
    )
  }
  return fc.oneof(...variants)
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

interface HostileRequest {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string | FormData | undefined
}

/** Without unpaired surrogates, which a URL cannot carry (they are sent percent-encoded above instead). */
const wellFormed = (text: string) => text.replace(/\p{Surrogate}/gu, "")

const encodePathValue = fc.oneof(
  { weight: 4, arbitrary: fc.constant("real") },
  { weight: 1, arbitrary: fc.constantFrom("%00", "pay_%00x", "%ED%A0%80", "%E0%A4%A", "x".repeat(2000), "..%2F..%2F", "%F0%9F%98%80") },
  { weight: 1, arbitrary: hostileString.map((text) => encodeURIComponent(wellFormed(text.slice(0, 200)))) }
)

const requestFor = (
  operation: Operation,
  resolve: (schema: JsonSchema) => JsonSchema,
  credentials: Credentials
): fc.Arbitrary<HostileRequest> => {
  const pathValues = fc.tuple(
    ...operation.pathParams.map(() => fc.tuple(encodePathValue, fc.constantFrom(...credentials.ids)))
  )
  const queryValues = fc.array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...(operation.queryParams.length > 0 ? operation.queryParams.map((param) => param.name) : ["x"])), hostileString),
      fc.oneof(hostileString, fc.constantFrom(...credentials.ids), fc.constant("20"))
    ),
    { maxLength: 3 }
  )
  const body = operation.body === undefined
    ? fc.oneof(fc.constant(undefined), hostileValue)
    : fromSchema(resolve, operation.body).chain(spoil)
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant("application/json") },
    { weight: 1, arbitrary: fc.constantFrom("multipart/form-data", "text/plain", "application/x-www-form-urlencoded", "application/xml", "none") }
  )
  const credential = fc.constantFrom("session", "apiKey", "none")
  const rawText = fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(
    "{",
    "[1,",
    "nul",
    "\u0000",
    "{\"a\":\"\\ud800\"}",
    deeplyNested(100_000),
    deeplyNested(50_000, "metadata"),
    deeplyNested(50_000, "email")
  ) })
  return fc.record({ pathValues, queryValues, body, contentType, credential, rawText }).map((parts): HostileRequest => {
    let index = 0
    const path = operation.path.replace(/\{[^}]+\}/g, () => {
      const [choice, realId] = parts.pathValues[index++]!
      return choice === "real" ? realId : choice
    })
    const query = parts.queryValues.map(([key, value]) => `${encodeURIComponent(wellFormed(key))}=${encodeURIComponent(wellFormed(value))}`).join("&")
    const headers: Record<string, string> = {}
    const token = parts.credential === "session" ? credentials.session : parts.credential === "apiKey" ? credentials.apiKey : undefined
    if (token !== undefined) headers["authorization"] = `Bearer ${token}`
    let body: string | FormData | undefined
    if (operation.method !== "GET" && (parts.body !== undefined || parts.rawText !== undefined)) {
      if (parts.contentType === "multipart/form-data") {
        const form = new FormData()
        form.append("field", "value")
        body = form
      } else {
        body = parts.rawText ?? JSON.stringify(parts.body)
        if (parts.contentType !== "none") headers["content-type"] = parts.contentType
      }
    }
    return { method: operation.method, url: query.length > 0 ? `${path}?${query}` : path, headers, body }
  })
}

const send = async (app: TestAppShape, request: HostileRequest) => {
  const response = await app.fetch(request.url, { method: request.method, headers: request.headers, body: request.body ?? null })
  const contentType = response.headers.get("content-type") ?? ""
  // An event stream stays open until its payment ends: only its status matters here.
  const text = contentType.includes("text/event-stream") ? (await response.body?.cancel(), "") : await response.text()
  return { status: response.status, contentType, text }
}

const operationsOf = (document: any): ReadonlyArray<Operation> => {
  const operations: Array<Operation> = []
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue
      const parameters: Array<any> = operation.parameters ?? []
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((param) => param.in === "path").map((param) => param.name),
        queryParams: parameters.filter((param) => param.in === "query").map((param) => ({ name: param.name, schema: param.schema })),
        body: operation.requestBody?.content?.["application/json"]?.schema
      })
    }
  }
  return operations
}

describe("fuzzing the OpenAPI operations", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("the running service", (it) => {
    it.effect(`answers ${RUNS} hostile requests over every operation without a 5xx`, () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const owner = yield* Effect.promise(() => signUp(app))
        const store = yield* Effect.promise(() => createStore(app, owner.token))
        const key = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
        // A second key for the fuzzer to revoke and rotate, so the one it sends stays valid.
        const spareKey = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
        const payment = yield* call(app, "POST", "/v1/payments", {
          token: key.body.secret,
          body: { amount: "10.00", currency: "USD", expires_in: 3600 }
        })
        const credentials: Credentials = {
          session: owner.token,
          apiKey: key.body.secret,
          ids: [owner.organizationId, store.id, spareKey.body.id, payment.body.id, owner.userId]
        }

        const document = yield* Effect.promise(() => app.fetch("/openapi.json").then((response) => response.json()))
        const operations = operationsOf(document)
        expect(operations.length).toBeGreaterThan(40)
        const resolve = makeResolver(document)
        const requests = fc.oneof(...operations.map((operation) => requestFor(operation, resolve, credentials)))

        const failures: Array<string> = []
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(requests, async (request) => {
              const answer = await send(app, request)
              const envelopeOk = answer.status < 400 || !answer.contentType.includes("application/json") ||
                typeof JSON.parse(answer.text)?.error?.code === "string"
              if (answer.status >= 500 || !envelopeOk) {
                failures.push(`${request.method} ${request.url.slice(0, 200)} → ${answer.status} ${answer.text.slice(0, 200)}`)
                return false
              }
              return true
            }),
            { numRuns: RUNS, endOnFailure: true }
          )
        ).pipe(Effect.catchAllDefect((defect) => Effect.sync(() => failures.push(String((defect as Error)?.stack ?? defect).slice(0, 3000)))))
        expect(failures).toEqual([])
      }), 90_000)
  })
})
