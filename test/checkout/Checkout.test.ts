/**
 * The hosted side of a payment over HTTP: the checkout view (JSON and the page), the live status
 * stream, and the receipt.
 */
import * as Sse from "@effect/experimental/Sse"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

const INJECTION = `<script>alert("x")</script><img src=x onerror=alert(1)>`

/** A store with a test API key, its branding set with markup that must come out escaped. */
const merchant = (app: TestAppShape) =>
  Effect.gen(function*() {
    const owner = yield* Effect.promise(() => signUp(app))
    const store = yield* Effect.promise(() => createStore(app, owner.token, "Riverside Cafe"))
    const branding = yield* call(app, "PUT", `/stores/${store.id}/branding`, {
      token: owner.token,
      body: { display_name: `Cafe ${INJECTION}`, primary_color: "#123456", accent_color: "#fafafa" }
    })
    expect(branding.status).toBe(200)
    const key = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
    return { key: key.body.secret as string, storeId: store.id }
  })

const createPayment = (app: TestAppShape, key: string, body: Record<string, unknown> = {}) =>
  Effect.map(
    call(app, "POST", "/v1/payments", { token: key, body: { amount: "12.50", currency: "USD", ...body } }),
    (response) => response.body as { id: string; checkout_url: string }
  )

const simulate = (app: TestAppShape, key: string, id: string, status: string) =>
  Effect.map(call(app, "POST", `/v1/payments/${id}/simulate`, { token: key, body: { status } }), (r) => r.status)

interface Frame {
  readonly id: string
  readonly event: string
  readonly data: any
}

/** Reads an SSE response to its end; the frames are its events (the `retry:` frame and pings are not). */
const readStream = (app: TestAppShape, path: string, options: { lastEventId?: string; onOpen?: () => Promise<void> } = {}) =>
  Effect.promise(async () => {
    const response = await app.fetch(path, {
      headers: options.lastEventId === undefined ? {} : { "last-event-id": options.lastEventId }
    })
    const contentType = response.headers.get("content-type")
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let text = ""
    const firstChunk = await reader.read()
    text += decoder.decode(firstChunk.value ?? new Uint8Array(), { stream: true })
    const opened = options.onOpen?.()
    while (true) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    await opened
    const frames: Array<Frame> = []
    Sse.makeParser((event) => {
      if (event._tag === "Event") frames.push({ id: event.id!, event: event.event, data: JSON.parse(event.data) })
    }).feed(text)
    return { status: response.status, contentType, frames }
  })

describe("checkout", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("hosted pages and live status", (it) => {
    it.effect("shows a payment's public view as JSON without secrets", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* merchant(app)
        const payment = yield* createPayment(app, key, { description: "Iced latte", metadata: { internal: "secret-ish" } })
        expect(payment.checkout_url).toBe(`${app.baseUrl.replace("127.0.0.1", "localhost")}/checkout/${payment.id}`)
        const view = yield* call(app, "GET", `/checkout/${payment.id}`)
        expect(view.status).toBe(200)
        expect(view.body).toMatchObject({
          id: payment.id,
          object: "checkout",
          status: "pending",
          amount: "12.50",
          currency: "USD",
          description: "Iced latte",
          merchant: { name: `Cafe ${INJECTION}`, primary_color: "#123456" }
        })
        expect(view.body.qr.png_data_url).toMatch(/^data:image\/png;base64,/)
        expect(view.body.qr.svg).toContain("<svg")
        expect(JSON.stringify(view.body)).not.toContain("secret-ish")
        expect(JSON.stringify(view.body)).not.toContain("sk_test_")
        const missing = yield* call(app, "GET", "/checkout/pay_doesnotexist0000000000000")
        expect(missing.status).toBe(404)
        expect(missing.body.error.code).toBe("not_found")
      }))

    it.effect("serves browsers a complete page with everything merchant-supplied escaped", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* merchant(app)
        const payment = yield* createPayment(app, key, { description: INJECTION })
        const response = yield* Effect.promise(() =>
          app.fetch(`/checkout/${payment.id}`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("text/html")
        expect(response.headers.get("content-security-policy")).toContain("script-src 'nonce-")
        const html = yield* Effect.promise(() => response.text())
        expect(html).toContain("<!doctype html>")
        expect(html).toContain("12.50 USD")
        expect(html).toContain("data:image/png;base64,")
        expect(html).toContain(`/checkout/${payment.id}/events`)
        // The injected markup appears only escaped: the one script is ours, with its nonce.
        expect(html).not.toContain(INJECTION)
        expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;")
        expect(html.match(/<script/g)).toHaveLength(1)
        expect(html).not.toMatch(/<img src=x/)
      }))

    it.effect("streams the current status at once, each change, and ends after a terminal status", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* merchant(app)
        const payment = yield* createPayment(app, key)
        const stream = yield* readStream(app, `/checkout/${payment.id}/events`, {
          onOpen: async () => {
            await Effect.runPromise(simulate(app, key, payment.id, "scanned"))
            await Effect.runPromise(simulate(app, key, payment.id, "paid"))
          }
        })
        expect(stream.status).toBe(200)
        expect(stream.contentType).toContain("text/event-stream")
        expect(stream.frames.map((frame) => frame.data.status)).toEqual(["pending", "scanned", "paid"])
        expect(stream.frames.map((frame) => Number(frame.id))).toEqual([1, 2, 3])
        expect(stream.frames.every((frame) => frame.event === "payment.status")).toBe(true)
        expect(stream.frames[2]!.data).toEqual({
          id: payment.id,
          status: "paid",
          amount: "12.50",
          currency: "USD",
          amount_refunded: "0.00"
        })
      }))

    it.effect("resumes from Last-Event-ID without repeating frames", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* merchant(app)
        const payment = yield* createPayment(app, key)
        expect(yield* simulate(app, key, payment.id, "scanned")).toBe(201)
        const resumed = yield* readStream(app, `/checkout/${payment.id}/events`, {
          lastEventId: "2",
          onOpen: async () => {
            await Effect.runPromise(simulate(app, key, payment.id, "expired"))
          }
        })
        expect(resumed.frames.map((frame) => frame.data.status)).toEqual(["expired"])
        // A client that has the terminal frame gets nothing more, and the stream ends at once.
        const done = yield* readStream(app, `/checkout/${payment.id}/events`, { lastEventId: "3" })
        expect(done.frames).toEqual([])
      }))

    it.effect("has a receipt only once the payment is paid", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* merchant(app)
        const payment = yield* createPayment(app, key, { reference_id: "order-77" })
        expect((yield* call(app, "GET", `/receipts/${payment.id}`)).status).toBe(404)
        yield* simulate(app, key, payment.id, "scanned")
        yield* simulate(app, key, payment.id, "paid")
        yield* call(app, "POST", `/v1/payments/${payment.id}/refund`, { token: key, body: { amount: "2.50" } })
        const receipt = yield* call(app, "GET", `/receipts/${payment.id}`)
        expect(receipt.status).toBe(200)
        expect(receipt.body).toMatchObject({
          object: "receipt",
          payment_id: payment.id,
          status: "partially_refunded",
          amount: "12.50",
          amount_refunded: "2.50",
          reference_id: "order-77"
        })
        expect(receipt.body.refunds).toHaveLength(1)
        const page = yield* Effect.promise(() =>
          app.fetch(`/receipts/${payment.id}`, { headers: { accept: "text/html" } }).then((r) => r.text())
        )
        expect(page).toContain("order-77")
        expect(page).not.toContain(INJECTION)
      }))
  })
})
