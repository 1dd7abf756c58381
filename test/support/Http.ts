/**
 * Raw HTTP calls for black-box tests: any method, a JSON body or raw text, a bearer credential. Every
 * response body can be recorded, so a suite can check afterwards that no secret ever appeared in one.
 */
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
