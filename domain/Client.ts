/**
 * The typed HTTP client of the service, built from the same `Api` the server implements.
 */
import { HttpApiClient } from "@effect/platform"
import type { Effect } from "effect"
import { Api } from "./Api.ts"

export const makeApiClient = (baseUrl: string) => HttpApiClient.make(Api, { baseUrl })

export type ApiClient = Effect.Effect.Success<ReturnType<typeof makeApiClient>>
