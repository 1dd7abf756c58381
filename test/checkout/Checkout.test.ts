/**
 * The hosted side of a payment over HTTP: the checkout view (JSON and the page), the live status
 * stream, and the receipt.
 */
import * as Sse from "@effect/experimental/Sse"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PaymentId } from "../../domain/Ids.ts"
import { clientAs, expectFailure, wireJson } from "../support/Client.ts"
import { createPayment, newMerchant, refund, simulate } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const INJECTION = `<script>alert("x")</script><img src=x onerror=alert(1)>`

/** A store with a test API key, its branding set with markup that must come out escaped. */
const merchant = (app: TestAppShape) =>
  Effect.gen(function*() {
    const { key, owner, storeId } = yield* newMerchant(app, "Riverside Cafe")
    yield* (yield* clientAs(app, owner.token)).stores.updateBranding({
      path: { id: storeId },
      payload: { display_name: `Cafe ${INJECTION}`, primary_color: "#123456", accent_color: "#fafafa" }
    })
    return { key, storeId }
  })

interface Frame {
  readonly id: string
  readonly event: string
  readonly data: any
}

/**
 * Reads an SSE response to its end; the frames are its events (the `retry:` frame and pings are not).
 * Raw: the typed client would read the stream only as one text once it ended, and sends no Last-Event-ID.
 */
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
        const [view, response] = yield* app.client.checkout.view({ path: { id: payment.id }, withResponse: true })
        expect(view).toMatchObject({
          id: payment.id,
          object: "checkout",
          status: "pending",
          amount: "12.50",
          currency: "USD",
          description: "Iced latte",
          merchant: { name: `Cafe ${INJECTION}`, primary_color: "#123456" }
        })
        expect(view.qr.png_data_url).toMatch(/^data:image\/png;base64,/)
        expect(view.qr.svg).toContain("<svg")
        // On the wire, not in the decoded view (whose class drops any field it does not name).
        const wire = JSON.stringify(yield* wireJson(response))
        expect(wire).toContain("Iced latte")
        expect(wire).not.toContain("secret-ish")
        expect(wire).not.toContain("sk_test_")
        yield* expectFailure(
          app.client.checkout.view({ path: { id: PaymentId.make("pay_doesnotexist0000000000000") } }),
          "NotFound"
        )
      }))

    it.effect("serves browsers a complete page with everything merchant-supplied escaped", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* merchant(app)
        const payment = yield* createPayment(app, key, { description: INJECTION })
        // Raw: the HTML page, which the typed client does not ask for.
        const response = yield* Effect.promise(() =>
          app.fetch(`/checkout/${payment.id}`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("text/html")
        expect(response.headers.get("content-security-policy")).toContain("script-src 'nonce-")
        const html = yield* Effect.promise(() => response.text())
        expect(html).toContain("<!doctype html>")
        expect(html).toContain("$12.50")
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
        expect((yield* simulate(app, key, payment.id, "scanned")).status).toBe("scanned")
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

    it.effect("answers 404 in the shared error shape for the live status of an unknown payment", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        // Raw: the typed client cannot read an event stream.
        const response = yield* Effect.promise(() => app.fetch(`/checkout/pay_3kTMd92JxQeLp0aZ7yNcB1vW/events`))
        expect(response.status).toBe(404)
        expect(yield* Effect.promise(() => response.json())).toEqual({
          error: { code: "not_found", message: "No such payment: pay_3kTMd92JxQeLp0aZ7yNcB1vW", param: "id" }
        })
      }))

    it.effect("has a receipt only once the payment is paid", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* merchant(app)
        const payment = yield* createPayment(app, key, { reference_id: "order-77" })
        const receiptOf = app.client.checkout.receipt({ path: { id: payment.id } })
        yield* expectFailure(receiptOf, "NotFound")
        yield* simulate(app, key, payment.id, "scanned")
        yield* simulate(app, key, payment.id, "paid")
        yield* refund(app, key, payment.id, { amount: "2.50" })
        const receipt = yield* receiptOf
        expect(receipt).toMatchObject({
          object: "receipt",
          payment_id: payment.id,
          status: "partially_refunded",
          amount: "12.50",
          amount_refunded: "2.50",
          reference_id: "order-77"
        })
        expect(receipt.refunds).toHaveLength(1)
        // Raw: the HTML receipt.
        const page = yield* Effect.promise(() =>
          app.fetch(`/receipts/${payment.id}`, { headers: { accept: "text/html" } }).then((r) => r.text())
        )
        expect(page).toContain("order-77")
        expect(page).not.toContain(INJECTION)
      }))
  })
})
