import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option } from "effect"
import { Api } from "../../domain/Api.ts"
import { RateLimiter } from "../platform/RateLimit.ts"
import { withRetryAfter } from "../platform/RetryAfter.ts"
import { prefersHtml } from "../platform/Html.ts"
import { renderHostedPage } from "../platform/pages/Document.tsx"
import { checkoutPage, receiptPage } from "./Page.tsx"
import { CheckoutService } from "./Service.ts"
import { StreamSlots } from "./StreamSlots.ts"
import { apiGroup } from "../platform/WireResponses.ts"

const acceptHeader = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.headers["accept"])

/** `Last-Event-ID` as the number of the last frame the client has; anything else counts as none. */
const lastEventId = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const raw = request.headers["last-event-id"]
  return raw !== undefined && /^\d{1,12}$/.test(raw.trim()) ? Number(raw.trim()) : undefined
})

export const CheckoutHttpLive = apiGroup(Api, "checkout", (handlers) =>
  Effect.gen(function*() {
    const checkout = yield* CheckoutService
    const slots = yield* StreamSlots
    const limiter = yield* RateLimiter
    return handlers
      .handle("view", ({ path }) =>
        Effect.gen(function*() {
          yield* withRetryAfter(limiter.admitPageView)
          const view = yield* checkout.view(path.id)
          return prefersHtml(yield* acceptHeader) ? yield* renderHostedPage(checkoutPage(view)) : view
        }))
      .handle("events", ({ path }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const release = yield* withRetryAfter(slots.take(Option.getOrElse(request.remoteAddress, () => "unknown")))
          // The slot is the connection's until its response is over: ended, failed, or the client went away.
          // The response's own "close" says so in every case, even one where the stream never started.
          NodeHttpServerRequest.toServerResponse(request).once("close", release)
          const body = yield* checkout.statusStream(path.id, yield* lastEventId)
          return HttpServerResponse.raw(body, {
            headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" }
          })
        }))
      .handle("receipt", ({ path }) =>
        Effect.gen(function*() {
          yield* withRetryAfter(limiter.admitPageView)
          const receipt = yield* checkout.receipt(path.id)
          return prefersHtml(yield* acceptHeader) ? yield* renderHostedPage(receiptPage(receipt)) : receipt
        }))
  }))
