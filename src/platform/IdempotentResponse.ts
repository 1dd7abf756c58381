/**
 * The HTTP side of idempotency (src/platform/Idempotency.ts): a fresh value goes back to the handler to
 * be encoded as usual; a replay becomes the response it was the first time — the stored status and the
 * stored JSON body, byte for byte — marked `idempotent-replayed: true`.
 */
import { HttpServerResponse } from "@effect/platform"
import type { IdempotentOutcome } from "./Idempotency.ts"

export const idempotentResponse = <A>(outcome: IdempotentOutcome<A>): A | HttpServerResponse.HttpServerResponse =>
  outcome._tag === "Fresh"
    ? outcome.value
    : HttpServerResponse.unsafeJson(outcome.body, {
      status: outcome.status,
      headers: { "idempotent-replayed": "true" }
    })
