/**
 * `GET /checkout/{id}/events` answered by the Node server directly, beside the Effect HTTP handler.
 *
 * A live status stream is open for minutes, thousands at a time. Served by the Effect handler, each one
 * kept its request fiber waiting for the body to end — the fiber's continuation of every middleware and
 * its context, some 35 KiB of heap per stream, more than the stream itself. Here a short fiber does what
 * the request needs (the address's slot, the one read of the payment, the error in the shared envelope)
 * and ends; the body (a plain Readable fed by LiveStatus) is then piped to the Node response with nothing
 * of Effect held for it. The server gave the request its id and writes its access line and metric when
 * the stream is over (runtime/AccessLog.ts), as for every request.
 *
 * The route stays declared in the HttpApi (domain/Checkout.ts): the OpenAPI document describes it, and
 * the Effect handler answers the requests this does not take (HEAD, and anything before it is installed).
 */
import { Effect, Layer, Option, Runtime, Schema } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { type ApiError, errorStatus, toErrorEnvelope } from "../domain/Errors.ts"
import { PaymentId } from "../domain/Ids.ts"
import { CheckoutService } from "../src/checkout/Service.ts"
import { StreamSlots } from "../src/checkout/StreamSlots.ts"
import { spanWhenExported } from "../src/platform/Traced.ts"

export const STATUS_STREAM_ROUTE = "/checkout/:id/events"
/** Every stream's path starts so: any other request is told apart without splitting its URL. */
const STATUS_STREAM_PREFIX = "/checkout/"
const STATUS_STREAM_PATH = /^\/checkout\/([^/]+)\/events\/?$/

/**
 * A request the Node server answers itself, with the id the server gave it (runtime/AccessLog.ts); answers
 * false to leave it to the Effect handler.
 */
export type DirectRoute = (request: IncomingMessage, response: ServerResponse, requestId: string) => boolean

const headerOf = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/** `Last-Event-ID` as the number of the last frame the client has; anything else counts as none. */
const lastEventIdOf = (raw: string | undefined) =>
  raw !== undefined && /^\d{1,12}$/.test(raw.trim()) ? Number(raw.trim()) : undefined

const decodePaymentId = Schema.decodeUnknownOption(PaymentId)

/**
 * The payment id of a status stream's path, decoded as the HttpApi decodes it; none for any other path,
 * or an id the route's schema refuses (the Effect handler then answers it, with its own error).
 */
const paymentIdOf = (url: string): PaymentId | undefined => {
  if (!url.startsWith(STATUS_STREAM_PREFIX)) return undefined
  const path = url.split("?")[0] ?? url
  const match = STATUS_STREAM_PATH.exec(path)
  if (match === null) return undefined
  let raw: string
  try {
    raw = decodeURIComponent(match[1]!)
  } catch {
    return undefined
  }
  return Option.getOrUndefined(decodePaymentId(raw))
}

const STREAM_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" }

const sendError = (response: ServerResponse, error: ApiError, requestId: string) => {
  const headers: Record<string, string> = { "content-type": "application/json", "x-request-id": requestId }
  if (error._tag === "RateLimited") headers["retry-after"] = String(error.retryAfterSeconds ?? 60)
  response.writeHead(errorStatus(error), headers)
  response.end(JSON.stringify(toErrorEnvelope(error)))
}

const INTERNAL_ERROR = JSON.stringify({ error: { code: "internal_error", message: "An internal error occurred; it has been logged" } })

export const makeStatusStreamRoute = Effect.gen(function*() {
  const checkout = yield* CheckoutService
  const slots = yield* StreamSlots
  const runFork = Runtime.runFork(yield* Effect.runtime<never>())

  const serve = (request: IncomingMessage, response: ServerResponse, paymentId: PaymentId, requestId: string) => {
    const answer = Effect.gen(function*() {
      const release = yield* slots.take(request.socket.remoteAddress ?? "unknown")
      // The slot is the connection's until its response is over: ended, failed, or the client went away.
      response.once("close", release)
      const body = yield* checkout.statusStream(paymentId, lastEventIdOf(headerOf(request, "last-event-id")))
      if (response.destroyed) {
        body.destroy()
      } else {
        // The client going away ends the body, which forgets the stream.
        response.once("close", () => body.destroy())
        response.writeHead(200, { ...STREAM_HEADERS, "x-request-id": requestId })
        body.pipe(response)
      }
    }).pipe(
      // Too many streams from the address (429), or no such payment (404).
      Effect.catchAll((error) => Effect.sync(() => sendError(response, error, requestId))),
      Effect.catchAllCause((cause) =>
        Effect.zipRight(
          Effect.logError("request failed", cause),
          Effect.sync(() => {
            if (!response.headersSent) {
              response.writeHead(500, { "content-type": "application/json", "x-request-id": requestId })
              response.end(INTERNAL_ERROR)
            } else response.destroy()
          })
        )),
      // As the server's other API routes: a span only while a tracer exports them.
      spanWhenExported(`GET ${STATUS_STREAM_ROUTE}`, { kind: "server", attributes: { "http.route": STATUS_STREAM_ROUTE } }),
      Effect.annotateLogs("request_id", requestId)
    )
    runFork(answer)
  }

  const route: DirectRoute = (request, response, requestId) => {
    if (request.method !== "GET" || request.url === undefined) return false
    const paymentId = paymentIdOf(request.url)
    if (paymentId === undefined) return false
    serve(request, response, paymentId, requestId)
    return true
  }
  return route
})

/** Where the Node server looks for the routes it answers itself. */
export interface DirectRoutes {
  direct: DirectRoute | undefined
}

/** Installs the status stream route on `server` for as long as the layer lives. */
export const statusStreamsOn = (server: DirectRoutes) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    server.direct = yield* makeStatusStreamRoute
    yield* Effect.addFinalizer(() => Effect.sync(() => (server.direct = undefined)))
  }))
