/**
 * `Retry-After` on throttled answers: the error body cannot set a header, so the HTTP layer adds it
 * from the `RateLimited` error's `retryAfterSeconds` (60 when it says nothing).
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { RateLimited } from "../../domain/Errors.ts"

export const withRetryAfter = <A, E, R>(effect: Effect.Effect<A, E | RateLimited, R>) =>
  Effect.tapErrorTag(effect as Effect.Effect<A, RateLimited, R>, "RateLimited", (error) =>
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(error.retryAfterSeconds ?? 60)))
    )) as Effect.Effect<A, E | RateLimited, R>
