/**
 * Raw HTTP calls for black-box tests: any method, a JSON body or raw text, a bearer credential. Every
 * response body can be recorded, so a suite can check afterwards that no secret ever appeared in one.
 */
import Undici from "@effect/platform-node/Undici"
import { Effect } from "effect"
import type { TestAppShape } from "./TestApp.ts"

export interface CallOptions {
  readonly body?: unknown
  /** Sent as is, as JSON content; for malformed bodies. */
  readonly raw?: string
  readonly token?: string
  readonly headers?: Record<string, string>
}

export interface CallResult {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

/** A `call` for one suite; pass an array to record every response body into it. */
export const makeCall = (recordInto?: Array<string>) =>
(app: TestAppShape, method: string, path: string, options: CallOptions = {}): Effect.Effect<CallResult> =>
  Effect.promise(async () => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.body !== undefined || options.raw !== undefined) headers["content-type"] = "application/json"
    if (options.token) headers["authorization"] = `Bearer ${options.token}`
    const init: RequestInit = { method, headers }
    if (options.raw !== undefined) init.body = options.raw
    else if (options.body !== undefined) init.body = JSON.stringify(options.body)
    const response = await app.fetch(path, init)
    const text = await response.text()
    recordInto?.push(text)
    return { status: response.status, headers: response.headers, body: text.length > 0 ? JSON.parse(text) : null }
  })

// One connection pool per local address, kept for the test run.
const agents = new Map<string, InstanceType<typeof Undici.Agent>>()

export interface AnswerFrom {
  readonly status: number
  readonly retryAfter: string | undefined
  readonly body: any
  /** From sending the request to the end of the answer's body. */
  readonly millis: number
}

/** A raw request sent from `localAddress` (all of 127.0.0.0/8 reaches the service), as a client elsewhere would. */
export const callFrom = (
  app: TestAppShape,
  localAddress: string,
  method: "GET" | "POST",
  path: string,
  options: { readonly body?: unknown; readonly token?: string } = {}
): Effect.Effect<AnswerFrom> =>
  Effect.promise(async () => {
    let agent = agents.get(localAddress)
    if (agent === undefined) {
      agent = new Undici.Agent({ localAddress })
      agents.set(localAddress, agent)
    }
    const headers: Record<string, string> = { accept: "application/json" }
    if (options.body !== undefined) headers["content-type"] = "application/json"
    if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
    const started = performance.now()
    const response = await Undici.request(new URL(path, app.baseUrl), {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      dispatcher: agent
    })
    const text = await response.body.text()
    const millis = performance.now() - started
    const retryAfter = response.headers["retry-after"]
    return {
      status: response.statusCode,
      retryAfter: typeof retryAfter === "string" ? retryAfter : undefined,
      body: text.length > 0 && text.startsWith("{") ? JSON.parse(text) : text,
      millis
    }
  })
