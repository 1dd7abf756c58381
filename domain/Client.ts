/**
 * The typed HTTP client of the service, built from the same `Api` the server implements.
 *
 *   const merchant = yield* makeApiClient("https://pay.example.com", { credential: "sk_test_…" })
 *   const payment = yield* merchant.payments.create({ payload: { amount: "12.50", currency: "USD" } })
 *
 * It needs an `HttpClient` (e.g. `FetchHttpClient.layer`). `credential` (an API key or a session token)
 * is sent as `Authorization: Bearer …` on every request; without it, only the public routes answer.
 */
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import type { Effect } from "effect"
import { Api } from "./Api.ts"

export interface ApiClientOptions {
  /** An API key (`sk_test_…`, `sk_live_…`) or a session token from register/login. */
  readonly credential?: string | undefined
}

export const makeApiClient = (baseUrl: string, options: ApiClientOptions = {}) =>
  HttpApiClient.make(Api, {
    baseUrl,
    transformClient: options.credential === undefined
      ? undefined
      : HttpClient.mapRequest(HttpClientRequest.bearerToken(options.credential))
  })

export type ApiClient = Effect.Effect.Success<ReturnType<typeof makeApiClient>>
