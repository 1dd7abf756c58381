/**
 * The typed HttpApiClient for black-box tests: one per credential, sending `Authorization: Bearer …`,
 * and an assertion on its typed failures. A contract change (a path, a payload field, a success or
 * error schema) then breaks the suites at compile time rather than at run time.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { expect } from "@effect/vitest"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type { HttpClientError } from "@effect/platform/HttpClientError"
import { Effect, Either, type ParseResult } from "effect"
import { Api } from "../../domain/Api.ts"
import type { ApiClient } from "../../domain/Client.ts"
import type { ApiError } from "../../domain/Errors.ts"
import { DEFAULT_LIST_LIMIT } from "../../domain/Lists.ts"
import type { TestAppShape } from "./TestApp.ts"

/**
 * A `clientAs` for one suite: the typed client of `app` acting with `token` (a session token or an API
 * key secret); without a token (or with an empty one), a client that sends no credential. Pass an array
 * to record every response body into it, as `makeCall` does, so a suite can check afterwards that no
 * secret ever appeared in one.
 */
export const makeClientAs = (recordInto?: Array<string>) => {
  const clients = new WeakMap<TestAppShape, Map<string, ApiClient>>()
  return (app: TestAppShape, token?: string): Effect.Effect<ApiClient> =>
    Effect.suspend(() => {
      const credential = token ?? ""
      if (credential === "" && recordInto === undefined) return Effect.succeed(app.client)
      let byToken = clients.get(app)
      if (byToken === undefined) clients.set(app, byToken = new Map())
      const known = byToken.get(credential)
      if (known !== undefined) return Effect.succeed(known)
      const authenticated = (client: HttpClient.HttpClient) =>
        credential === "" ? client : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(credential))
      // The response keeps the bytes it read, so the typed client decodes the same bytes afterwards.
      const recorded = (client: HttpClient.HttpClient) =>
        recordInto === undefined ? client : HttpClient.tap(client, (response) =>
          Effect.map(Effect.orElseSucceed(response.arrayBuffer, () => new ArrayBuffer(0)), (bytes) =>
            void recordInto.push(new TextDecoder().decode(bytes))))
      return HttpApiClient.make(Api, {
        baseUrl: app.baseUrl,
        transformClient: (client) => recorded(authenticated(client))
      }).pipe(
        Effect.provide(FetchHttpClient.layer),
        Effect.tap((client) => Effect.sync(() => byToken.set(credential, client)))
      )
    })
}

/** The typed client of `app` acting with `token`; see `makeClientAs`. */
export const clientAs = makeClientAs()

/** Any failure of a typed call: to put calls to different endpoints in one list. */
export type AnyCallError = ApiError | HttpApiDecodeError | HttpClientError | ParseResult.ParseError

const describeOutcome = (value: unknown): string => {
  if (value !== null && typeof value === "object" && "response" in value) {
    const response = (value as { response?: { status?: number } }).response
    return `${String(value)} (HTTP ${response?.status})`
  }
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}

/**
 * Runs a typed call that must fail with the error tagged `tag` (and, when given, naming `param`), and
 * returns that error. A success, or any other failure, fails the test. The typed client reads an error
 * only from its declared status and `code`, so the tag stands for both.
 */
export const expectFailure = <A, E extends { readonly _tag: string }, R, const Tag extends E["_tag"]>(
  effect: Effect.Effect<A, E, R>,
  tag: Tag,
  param?: string | RegExp,
  label?: string
): Effect.Effect<Extract<E, { readonly _tag: Tag }>, never, R> =>
  Effect.map(Effect.either(effect), (result) => {
    const prefix = label === undefined ? "" : `${label}: `
    if (Either.isRight(result)) {
      return expect.fail(`${prefix}expected a ${tag} failure, got a success: ${describeOutcome(result.right)}`)
    }
    const error = result.left
    const seen = prefix + describeOutcome(error)
    expect(error._tag, seen).toBe(tag)
    const fields = error as { readonly message?: unknown; readonly param?: unknown }
    expect(typeof fields.message, seen).toBe("string")
    if (typeof param === "string") expect(fields.param, seen).toBe(param)
    else if (param !== undefined) expect(String(fields.param), seen).toMatch(param)
    return error as Extract<E, { readonly _tag: Tag }>
  })

/**
 * The JSON body of a response the typed client has already decoded (`withResponse: true`): it reads
 * the body as bytes, which the response keeps, so the bytes are read again here rather than its text.
 */
export const wireJson = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.arrayBuffer, (bytes): unknown => JSON.parse(new TextDecoder().decode(bytes)))

/**
 * The keys of a JSON object answer as they were on the wire, sorted. A decoded class has its schema's
 * keys whatever was sent, so a test that a field is absent (or that no other is there) reads the wire.
 */
export const wireKeys = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(wireJson(response), (body) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return expect.fail(`expected a JSON object, got ${JSON.stringify(body)}`)
    }
    return Object.keys(body).sort()
  })

/**
 * A list's query as the typed client sends it: `limit` always (its schema's type has the default filled
 * in; the default itself is checked with a raw call), the rest as given.
 */
export const listParams = <P extends object = {}>(urlParams?: P): { limit: number } & P =>
  ({ limit: DEFAULT_LIST_LIMIT, ...urlParams }) as { limit: number } & P

/**
 * Every item of a list, read `limit` at a time by following `next_cursor` until it is null. Each page
 * must hold at most `limit` items, and `has_more` must say whether a cursor follows.
 */
export const allPages = <A, E, R>(
  limit: number,
  readPage: (urlParams: { limit: number; cursor?: string }) => Effect.Effect<
    { readonly data: ReadonlyArray<A>; readonly has_more: boolean; readonly next_cursor: string | null },
    E,
    R
  >
): Effect.Effect<Array<A>, E, R> =>
  Effect.gen(function*() {
    const items: Array<A> = []
    let cursor: string | null = null
    do {
      const current: { readonly data: ReadonlyArray<A>; readonly has_more: boolean; readonly next_cursor: string | null } =
        yield* readPage(cursor === null ? { limit } : { limit, cursor })
      expect(current.data.length).toBeLessThanOrEqual(limit)
      items.push(...current.data)
      cursor = current.next_cursor
      expect(current.has_more).toBe(cursor !== null)
    } while (cursor !== null)
    return items
  })

/**
 * The typed client of a service in another process (a cluster node, a service killed and restarted),
 * at `baseUrl`, acting with `token` when one is given; `transformClient` adds behaviour such as retries.
 */
export const clientAt = (
  baseUrl: string,
  token?: string,
  transformClient: (client: HttpClient.HttpClient) => HttpClient.HttpClient = (client) => client
): Effect.Effect<ApiClient> =>
  HttpApiClient.make(Api, {
    baseUrl,
    transformClient: (client) =>
      transformClient(token === undefined ? client : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(token)))
  }).pipe(Effect.provide(FetchHttpClient.layer))

/**
 * A typed call made `withResponse: true`, answered as its decoded value and its JSON body as it was on
 * the wire: decoding drops fields the schema does not name, so a comparison that must see every field
 * (that nothing else was sent) compares `wire`.
 */
export const withWire = <A, E, R>(
  call: Effect.Effect<readonly [A, HttpClientResponse.HttpClientResponse], E, R>
): Effect.Effect<{ readonly value: A; readonly wire: unknown }, E | HttpClientError, R> =>
  Effect.flatMap(call, ([value, response]) => Effect.map(wireJson(response), (wire) => ({ value, wire })))
