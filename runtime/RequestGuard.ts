/**
 * What every request must satisfy before a route reads it: a body no larger than MAX_BODY_BYTES (413
 * `payload_too_large`, decided from Content-Length where there is one, before anything is read), a body
 * of JSON on the API's routes (415 `unsupported_media_type`), and no text the database cannot store —
 * a NUL character or an unpaired surrogate — in the body, the path or the query (400 `invalid_request`
 * naming the field). Without this, such input reached a query and came back as a 500.
 */
import { FileSystem, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Layer, Option, Stream } from "effect"
import type { IncomingMessage } from "node:http"
import { CONSOLE_RPC_PATH } from "../domain/Console.ts"
import type { ErrorCode } from "../domain/Errors.ts"
import { findUnsafeText, paramOf, textProblem } from "../domain/Text.ts"

export interface GuardedRoute {
  readonly method: string
  /** The path template, `:name` for a parameter. */
  readonly path: string
  readonly pattern: RegExp
  /** Whether the route takes a JSON body (its body must then be a JSON object). */
  readonly hasPayload: boolean
  /** Whether the HttpApi serves it (rather than a page, a document or the console RPC). */
  readonly servedByApi: boolean
}

/** The route a request's method and path select, looked up among the routes of its method only. */
export const routeFinder = (routes: ReadonlyArray<GuardedRoute>) => {
  const byMethod = new Map<string, Array<GuardedRoute>>()
  for (const route of routes) {
    const ofMethod = byMethod.get(route.method)
    if (ofMethod === undefined) byMethod.set(route.method, [route])
    else ofMethod.push(route)
  }
  return (method: string, path: string): GuardedRoute | undefined => {
    const candidates = byMethod.get(method)
    if (candidates === undefined) return undefined
    for (const candidate of candidates) if (candidate.pattern.test(path)) return candidate
    return undefined
  }
}

export interface RequestGuardOptions {
  readonly maxBodyBytes: number
  readonly routes: ReadonlyArray<GuardedRoute>
}

const reject = (status: number, code: ErrorCode, message: string, param?: string) =>
  HttpServerResponse.unsafeJson(
    { error: param === undefined ? { code, message } : { code, message, param } },
    { status }
  )

type Checked =
  | { readonly _tag: "Refuse"; readonly response: HttpServerResponse.HttpServerResponse }
  /** The request goes on as it came, or with the body read here given to it (`giveBodyRead`). */
  | { readonly _tag: "PassOn" }

const refuse = (response: HttpServerResponse.HttpServerResponse): Checked => ({ _tag: "Refuse", response })

const PASS_ON: Checked = { _tag: "PassOn" }

const notAnObject = reject(400, "invalid_request", "The request body must be a JSON object")

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"])

const hasBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const length = request.headers["content-length"]
  if (length !== undefined) return Number(length) !== 0
  return request.headers["transfer-encoding"] !== undefined
}

/** `application/json` or a `+json` type; no Content-Type at all is read as JSON too, as the framework does. */
const isJsonContent = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return true
  const type = (contentType.split(";")[0] ?? "").trim().toLowerCase()
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"))
}

const tooLarge = (maxBodyBytes: number) =>
  reject(413, "payload_too_large", `The request body is larger than the limit of ${maxBodyBytes} bytes`)

const isBodyLimitFailure = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "cause" in error && error.cause instanceof Error &&
  error.cause.message === "maxBytes exceeded"

type BodyRead =
  | { readonly _tag: "Complete"; readonly text: string }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Unreadable" }

/**
 * Reads a body of at most `maxBytes`. Past the limit the rest is read and dropped rather than the
 * connection cut (which is what the framework's own limit does): a client still sending would get a
 * reset instead of the 413. Node's request timeout bounds how long a sender can keep that up.
 */
const readBounded = (source: IncomingMessage, maxBytes: number) =>
  Effect.async<BodyRead>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let overLimit = false
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (overLimit) return
      if (size > maxBytes) {
        overLimit = true
        chunks.length = 0
      } else {
        chunks.push(chunk)
      }
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(overLimit ? { _tag: "TooLarge" } : { _tag: "Complete", text: Buffer.concat(chunks).toString("utf8") }))
    }
    const onError = () => {
      cleanup()
      resume(Effect.succeed({ _tag: "Unreadable" }))
    }
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(cleanup)
  })

const encoder = new TextEncoder()

/**
 * Gives the request itself the body read here (the underlying stream has been consumed): its own
 * properties then shadow the platform's readers of the stream, and every way of reading the body answers
 * from memory; `json` and `urlParamsBody` go through `text`, so the bytes are made only for a handler that
 * asks for them. The request in the context stays the one the routes read, so nothing is provided again (a
 * copy of the request's context and a fiber-ref change each way), and the routes read an object of the
 * shape every request has rather than one inheriting from it.
 */
const giveBodyRead = (request: HttpServerRequest.HttpServerRequest, text: string): Checked => {
  const bytes = () => encoder.encode(text)
  Object.defineProperties(request, {
    text: { value: Effect.succeed(text), configurable: true },
    arrayBuffer: { get: () => Effect.sync(() => bytes().buffer as ArrayBuffer), configurable: true },
    stream: { get: () => Stream.suspend(() => Stream.succeed(bytes())), configurable: true }
  })
  return PASS_ON
}

/** The path's segments decoded, or undefined when one is not valid percent-encoded UTF-8. */
const decodeSegments = (path: string): ReadonlyArray<string> | undefined => {
  if (!path.includes("%")) return path.split("/")
  try {
    return path.split("/").map(decodeURIComponent)
  } catch {
    return undefined
  }
}

/**
 * Wraps the routes: checks the request, and reads and checks a JSON body (the framework later reads the
 * same, cached, text) within `maxBodyBytes`; every other body read below it is bounded by the server's
 * `maxBodySizeOf`.
 */
export const guardRequests = (options: RequestGuardOptions) => {
  const { maxBodyBytes, routes } = options

  const checkPath = (path: string, route: GuardedRoute | undefined) => {
    // The common case at once: nothing percent-encoded, and nothing unsafe in the path as it came.
    if (!path.includes("%") && textProblem(path) === undefined) return Option.none()
    const segments = decodeSegments(path)
    if (segments === undefined) {
      return Option.some(reject(400, "invalid_request", "The path is not valid percent-encoded UTF-8"))
    }
    const templateSegments = route?.path.split("/") ?? []
    for (const [index, segment] of segments.entries()) {
      const problem = textProblem(segment)
      if (problem === undefined) continue
      const template = templateSegments[index]
      const param = template?.startsWith(":") ? template.slice(1) : undefined
      return Option.some(reject(400, "invalid_request", `${param ?? "The path"} ${problem}`, param))
    }
    return Option.none()
  }

  const checkQuery = (query: string) => {
    if (query === "") return Option.none()
    for (const [key, value] of new URLSearchParams(query)) {
      const problem = textProblem(key) ?? textProblem(value)
      if (problem !== undefined) {
        const param = paramOf([key])
        return Option.some(reject(400, "invalid_request", `${param} ${problem}`, param))
      }
    }
    return Option.none()
  }

  /** Either the answer that refuses the body, or the request to pass on with the body read. */
  const checkJsonBody = (request: HttpServerRequest.HttpServerRequest, route: GuardedRoute) =>
    Effect.gen(function*() {
      const read = yield* readBounded(NodeHttpServerRequest.toIncomingMessage(request), maxBodyBytes)
      if (read._tag === "TooLarge") return refuse(tooLarge(maxBodyBytes))
      if (read._tag === "Unreadable") return refuse(reject(400, "invalid_request", "The request body could not be read"))
      if (read.text.trim() === "") return route.hasPayload ? refuse(notAnObject) : giveBodyRead(request, read.text)
      let body: unknown
      try {
        body = JSON.parse(read.text)
      } catch {
        return refuse(reject(400, "invalid_request", "The request body could not be read as JSON"))
      }
      if (route.hasPayload && (typeof body !== "object" || body === null || Array.isArray(body))) return refuse(notAnObject)
      const unsafe = findUnsafeText(body)
      if (unsafe !== undefined) {
        const param = paramOf(unsafe.path)
        return refuse(reject(400, "invalid_request", `${param ?? "The request body"} ${unsafe.problem}`, param))
      }
      return giveBodyRead(request, read.text)
    })

  /**
   * What to do with the request: `Refuse` it, `PassOn` as it came, or check its JSON body (`ReadBody`).
   * Synchronous: only a body is waited for.
   */
  const check = (
    request: HttpServerRequest.HttpServerRequest,
    path: string,
    query: string,
    route: GuardedRoute | undefined
  ): Checked | { readonly _tag: "ReadBody"; readonly route: GuardedRoute } => {
    const declaredLength = request.headers["content-length"]
    if (declaredLength !== undefined && Number(declaredLength) > maxBodyBytes) return refuse(tooLarge(maxBodyBytes))
    const pathRejection = checkPath(path, route)
    if (Option.isSome(pathRejection)) return refuse(pathRejection.value)
    const queryRejection = checkQuery(query)
    if (Option.isSome(queryRejection)) return refuse(queryRejection.value)
    // Unknown routes and wrong methods are answered 404/405 by the router, without reading the body;
    // the console RPC speaks its own protocol and is bounded by the framework's limit below.
    if (route === undefined || route.path === CONSOLE_RPC_PATH) return PASS_ON
    if (!METHODS_WITH_BODY.has(request.method)) return PASS_ON
    if (!hasBody(request)) return route.hasPayload ? refuse(notAnObject) : PASS_ON
    const contentType = request.headers["content-type"]
    if (!isJsonContent(contentType)) {
      return refuse(reject(415, "unsupported_media_type", `The request body must be application/json, not ${contentType}`))
    }
    return { _tag: "ReadBody", route }
  }

  /**
   * Guards `httpEffect`, the handling of `request`, whose path and query string are `path` and `query`
   * and which `route` (none: an unknown route or a wrong method) is to answer.
   */
  return <E, R>(
    httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    request: HttpServerRequest.HttpServerRequest,
    path: string,
    query: string,
    route: GuardedRoute | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
    const checked = check(request, path, query, route)
    if (checked._tag === "Refuse") return Effect.succeed(checked.response)
    // Providing the request again would copy the whole request context for nothing.
    if (checked._tag !== "ReadBody") return httpEffect
    return Effect.flatMap(checkJsonBody(request, checked.route), (read): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
      read._tag === "Refuse" ? Effect.succeed(read.response) : httpEffect)
  }
}

/**
 * The bound of every body read below the guard (the console RPC's included): the server's context holds
 * it (runtime/Http.ts), so no request provides it again.
 */
export const maxBodySizeOf = (maxBodyBytes: number) =>
  Layer.succeed(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(maxBodyBytes)))

/** Whether a failure is a body read cut off at the framework's limit (the console RPC's). */
export const isBodyTooLarge = isBodyLimitFailure

export const payloadTooLarge = tooLarge
