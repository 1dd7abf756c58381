/**
 * runtime/RequestGuard.ts: a JSON body the guard reads and checks is the route's to read again, by any of
 * the request's readers (text, json, arrayBuffer, stream), from the very request object in its context
 * (given its body in place, not replaced by another request); a body it refuses never reaches the route.
 */
import { HttpClient, HttpClientRequest, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { guardRequests, routeFinder, type GuardedRoute } from "../../runtime/RequestGuard.ts"

const ROUTES: ReadonlyArray<GuardedRoute> = ["text", "json", "bytes", "stream"].map((reader) => ({
  method: "POST",
  path: `/${reader}`,
  pattern: new RegExp(`^/${reader}$`),
  hasPayload: true,
  servedByApi: true
}))

/** The request objects the guard saw, to compare with the ones the routes read. */
const seenByGuard = new Set<HttpServerRequest.HttpServerRequest>()

const route = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const reader = request.url.slice(1)
  const decoder = new TextDecoder()
  const body = reader === "text"
    ? yield* request.text
    : reader === "json"
    ? JSON.stringify(yield* request.json)
    : reader === "bytes"
    ? decoder.decode(yield* request.arrayBuffer)
    : (yield* Stream.runCollect(request.stream)).pipe((chunks) => [...chunks].map((chunk) => decoder.decode(chunk)).join(""))
  return yield* HttpServerResponse.json({ body, sameRequest: seenByGuard.has(request) })
})

const guard = guardRequests({ maxBodyBytes: 1024, routes: ROUTES })
const findRoute = routeFinder(ROUTES)

const guarded = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  seenByGuard.add(request)
  return guard(route, request, request.url, "", findRoute(request.method, request.url))
}).pipe(Effect.catchAll((error) => HttpServerResponse.json({ error: String(error) }, { status: 500 })))

const ServerLive = HttpServer.serve(guarded).pipe(Layer.provideMerge(NodeHttpServer.layerTest))

const post = (path: string, body: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.post(path).pipe(HttpClientRequest.bodyText(body, "application/json"))
    )
    return { status: response.status, json: yield* response.json }
  })

describe("the request guard's body read", () => {
  it.effect("is read again by the route through every reader, from the same request object", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ amount: "12.50", currency: "USD", note: "ស្វាគមន៍" })
      for (const reader of ["text", "json", "bytes", "stream"]) {
        const answer = yield* post(`/${reader}`, body)
        expect(answer.status, reader).toBe(200)
        expect(answer.json, reader).toStrictEqual({ body, sameRequest: true })
      }
    }).pipe(Effect.provide(ServerLive)))

  it.effect("keeps a refused body from the route", () =>
    Effect.gen(function*() {
      const answer = yield* post("/text", "[1, 2]")
      expect(answer.status).toBe(400)
      expect(answer.json).toStrictEqual({ error: { code: "invalid_request", message: "The request body must be a JSON object" } })
    }).pipe(Effect.provide(ServerLive)))
})
