/**
 * What every request must satisfy before a route reads it: the body limit (413 before parsing, by
 * Content-Length or while a chunked body streams in), JSON bodies only (415), no NUL character or
 * unpaired surrogate anywhere the database would see it (400 naming the field), and the maximum
 * lengths of the request schemas; headers over Node's limit (431) and requests that are not HTTP (400) in
 * the error envelope too.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { connect } from "node:net"
import { appConfig } from "../../src/platform/Config.ts"
import { createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

interface Merchant {
  readonly token: string
  readonly storeId: string
  readonly apiKey: string
}

const merchantOf = (app: TestAppShape) =>
  Effect.gen(function*() {
    const owner = yield* Effect.promise(() => signUp(app))
    const store = yield* Effect.promise(() => createStore(app, owner.token))
    const key = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
    expect(key.status).toBe(201)
    return { token: owner.token, storeId: store.id, apiKey: key.body.secret as string } satisfies Merchant
  })

const rawPost = (app: TestAppShape, path: string, body: RequestInit["body"], headers: Record<string, string>) =>
  Effect.promise(async () => {
    const response = await app.fetch(path, { method: "POST", headers, body, duplex: "half" } as RequestInit)
    return { status: response.status, body: await response.json() as any }
  })

const MIB = 1024 * 1024

describe("MAX_BODY_BYTES", () => {
  it.effect("defaults to 1 MiB and is read through Config", () =>
    Effect.gen(function*() {
      const defaults = yield* appConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
      expect(defaults.maxBodyBytes).toBe(MIB)
      const set = yield* appConfig.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MAX_BODY_BYTES", "4096"]])))
      )
      expect(set.maxBodyBytes).toBe(4096)
    }))
})

describe("request limits", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("the running service", (it) => {
    it.effect("refuses a body over 1 MiB with 413 before reading it, and takes one under it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* merchantOf(app)
        const headers = { "content-type": "application/json", authorization: `Bearer ${merchant.apiKey}` }
        const huge = JSON.stringify({ amount: "1.00", currency: "USD", description: "x".repeat(2 * MIB) })
        const refused = yield* rawPost(app, "/v1/payments", huge, headers)
        expect(refused.status).toBe(413)
        expect(refused.body.error.code).toBe("payload_too_large")
        // Without credentials too: the limit holds before anything else is looked at.
        const anonymous = yield* rawPost(app, "/auth/forgot-password", JSON.stringify({ email: "a".repeat(2 * MIB) }), {
          "content-type": "application/json"
        })
        expect(anonymous.status).toBe(413)
        const fine = yield* rawPost(app, "/v1/payments", JSON.stringify({ amount: "1.00", currency: "USD" }), headers)
        expect(fine.status).toBe(201)
      }))

    it.effect("cuts off a chunked body (no Content-Length) at the limit with 413", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const chunk = new TextEncoder().encode("x".repeat(64 * 1024))
        let sent = 0
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode("{\"email\":\""))
          },
          pull(controller) {
            if (sent >= 4 * MIB) return controller.close()
            sent += chunk.length
            controller.enqueue(chunk)
          }
        })
        const response = yield* rawPost(app, "/auth/forgot-password", stream, { "content-type": "application/json" })
        expect(response.status).toBe(413)
        expect(response.body.error.code).toBe("payload_too_large")
      }))

    it.effect("answers a non-JSON body on a JSON route with 415 unsupported_media_type", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* merchantOf(app)
        const form = new FormData()
        form.append("amount", "1.00")
        form.append("currency", "USD")
        const multipart = yield* rawPost(app, "/v1/payments", form, { authorization: `Bearer ${merchant.apiKey}` })
        expect(multipart.status).toBe(415)
        expect(multipart.body.error.code).toBe("unsupported_media_type")
        for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
          const response = yield* rawPost(app, "/auth/login", "email=a@b.c&password=x", { "content-type": type })
          expect(response.status).toBe(415)
          expect(response.body.error.code).toBe("unsupported_media_type")
        }
        // A route that takes no body still accepts a request without one, whatever its Content-Type.
        const created = yield* call(app, "POST", "/v1/payments", {
          token: merchant.apiKey,
          body: { amount: "1.00", currency: "USD" }
        })
        const cancelled = yield* Effect.promise(() =>
          app.fetch(`/v1/payments/${created.body.id}/cancel`, {
            method: "POST",
            headers: { authorization: `Bearer ${merchant.apiKey}`, "content-type": "text/plain" }
          })
        )
        expect(cancelled.status).toBe(201)
      }))

    it.effect("answers a NUL character in a JSON string, a path id or a query value with 400 naming it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* merchantOf(app)
        const inBody = yield* call(app, "POST", "/v1/payments", {
          token: merchant.apiKey,
          body: { amount: "1.00", currency: "USD", description: "tea\u0000" }
        })
        expect(inBody.status).toBe(400)
        expect(inBody.body.error).toMatchObject({ code: "invalid_request", param: "description" })
        const inMetadata = yield* call(app, "POST", "/v1/payments", {
          token: merchant.apiKey,
          body: { amount: "1.00", currency: "USD", metadata: { order: "a\u0000b" } }
        })
        expect(inMetadata.body.error).toMatchObject({ code: "invalid_request", param: "metadata.order" })
        const inPath = yield* call(app, "GET", "/v1/payments/pay_%00", { token: merchant.apiKey })
        expect(inPath.status).toBe(400)
        expect(inPath.body.error).toMatchObject({ code: "invalid_request", param: "id" })
        const inQuery = yield* call(app, "GET", "/v1/payments?reference_id=%00", { token: merchant.apiKey })
        expect(inQuery.status).toBe(400)
        expect(inQuery.body.error).toMatchObject({ code: "invalid_request", param: "reference_id" })
        const publicPath = yield* call(app, "GET", "/checkout/pay_%00x")
        expect(publicPath.status).toBe(400)
        expect(publicPath.body.error.param).toBe("id")
        const login = yield* call(app, "POST", "/auth/login", { body: { email: "a\u0000@example.com", password: "x" } })
        expect(login.status).toBe(400)
        expect(login.body.error.param).toBe("email")
      }))

    it.effect("answers an unpaired UTF-16 surrogate in branding or metadata with 400 naming it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* merchantOf(app)
        // JSON.stringify escapes a lone surrogate as \ud800, which is how a client sends one.
        const branding = yield* call(app, "PUT", `/stores/${merchant.storeId}/branding`, {
          token: merchant.token,
          raw: "{\"display_name\":\"Caf\\ud800\"}"
        })
        expect(branding.status).toBe(400)
        expect(branding.body.error).toMatchObject({ code: "invalid_request", param: "display_name" })
        const metadata = yield* call(app, "POST", "/v1/payments", {
          token: merchant.apiKey,
          body: { amount: "1.00", currency: "USD", metadata: { note: "\ud800" } }
        })
        expect(metadata.status).toBe(400)
        expect(metadata.body.error.param).toBe("metadata.note")
        const key = yield* call(app, "POST", "/v1/payments", {
          token: merchant.apiKey,
          body: { amount: "1.00", currency: "USD", metadata: { "\udc00": "x" } }
        })
        expect(key.status).toBe(400)
        // A surrogate pair is an ordinary character (an emoji) and is kept.
        const emoji = yield* call(app, "POST", "/v1/payments", {
          token: merchant.apiKey,
          body: { amount: "1.00", currency: "USD", metadata: { note: "☕ 😀" } }
        })
        expect(emoji.status).toBe(201)
        expect(emoji.body.metadata.note).toBe("☕ 😀")
      }))

    it.effect("bounds every text field: a 3,000-character login e-mail is 400, not 500", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const longEmail = `${"a".repeat(3000)}@example.com`
        const withPassword = { email: longEmail, password: "correct horse battery staple" }
        for (const [path, body] of [
          ["/auth/login", withPassword],
          ["/auth/register", withPassword],
          ["/auth/forgot-password", { email: longEmail }]
        ] as const) {
          const response = yield* call(app, "POST", path, { body })
          expect(response.status, path).toBe(400)
          expect(response.body.error).toMatchObject({ code: "invalid_request", param: "email" })
          expect(response.body.error.message).toContain("254")
        }
        const longPassword = yield* call(app, "POST", "/auth/login", {
          body: { email: "someone@example.com", password: "p".repeat(10_000) }
        })
        expect(longPassword.status).toBe(400)
        expect(longPassword.body.error.param).toBe("password")
        const longToken = yield* call(app, "POST", "/auth/reset-password", {
          body: { token: "t".repeat(10_000), password: "correct horse battery staple" }
        })
        expect(longToken.status).toBe(400)
        expect(longToken.body.error.param).toBe("token")
        const merchant = yield* merchantOf(app)
        for (const amount of ["9".repeat(32), "99999999999999999999.99", "0.000000000000000000000000000001"]) {
          const huge = yield* call(app, "POST", "/v1/payments", { token: merchant.apiKey, body: { amount, currency: "USD" } })
          expect(huge.status, amount).toBe(400)
          expect(huge.body.error.param).toBe("amount")
        }
        const owner = yield* Effect.promise(() => signUp(app))
        const longOrganization = yield* call(app, "POST", "/stores", {
          token: owner.token,
          body: { name: "Shop", organization_id: "o".repeat(5000) }
        })
        expect(longOrganization.status).toBe(400)
        expect(longOrganization.body.error.param).toBe("organization_id")
      }))

    it.effect("answers headers over the limit with 431 in the error envelope, and a request that is not HTTP with 400", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const large = yield* Effect.promise(() =>
          rawExchange(app, `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${"a".repeat(20 * 1024)}\r\n\r\n`)
        )
        const [head, body] = splitResponse(large)
        expect(head[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large")
        expect(head).toContain("content-type: application/json")
        expect(head).toContain("connection: close")
        expect(JSON.parse(body)).toEqual({
          error: { code: "request_header_fields_too_large", message: expect.stringContaining("headers are larger") }
        })
        // On a kept-alive connection, after a finished response, too.
        const second = yield* Effect.promise(() =>
          rawExchange(
            app,
            "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n",
            `GET /health?cursor=${"c".repeat(70 * 1024)} HTTP/1.1\r\nHost: localhost\r\n\r\n`
          )
        )
        expect(second).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
        expect(second).toContain("HTTP/1.1 431 Request Header Fields Too Large\r\n")
        expect(second).toContain(`"code":"request_header_fields_too_large"`)
        const garbage = yield* Effect.promise(() => rawExchange(app, "NOT HTTP AT ALL\r\n\r\n"))
        const [garbageHead, garbageBody] = splitResponse(garbage)
        expect(garbageHead[0]).toBe("HTTP/1.1 400 Bad Request")
        expect(JSON.parse(garbageBody).error.code).toBe("invalid_request")
        // The server still serves well-formed requests.
        expect((yield* Effect.promise(() => app.fetch("/health"))).status).toBe(200)
      }))
  })
})

/**
 * Sends `request` on a fresh connection and reads until the server closes it; `then`, once the first
 * answer arrived, on the same connection.
 */
const rawExchange = (app: TestAppShape, request: string, then?: string) =>
  new Promise<string>((resolve, reject) => {
    const url = new URL(app.baseUrl)
    const socket = connect({ host: url.hostname, port: Number(url.port) })
    const chunks: Array<Buffer> = []
    socket.setTimeout(10_000, () => socket.destroy(new Error("no answer within 10 s")))
    socket.on("data", (chunk) => {
      if (chunks.length === 0 && then !== undefined) socket.write(then)
      chunks.push(chunk)
    })
    socket.on("error", (error) => chunks.length > 0 ? resolve(Buffer.concat(chunks).toString("utf8")) : reject(error))
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")))
    socket.write(request)
  })

/** The lower-cased status and header lines (the status line as sent), and the body. */
const splitResponse = (raw: string): [ReadonlyArray<string>, string] => {
  const end = raw.indexOf("\r\n\r\n")
  const [status = "", ...headers] = raw.slice(0, end).split("\r\n")
  return [[status, ...headers.map((line) => line.toLowerCase())], raw.slice(end + 4)]
}
