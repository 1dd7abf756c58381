/**
 * API keys: the credentials a merchant's backend uses on the `/v1` merchant API. A key acts for one
 * store and one mode. Its secret is shown in the answers that create it (create and rotate) and never
 * again: only its SHA-256 hash is stored.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, ListParams } from "./Lists.ts"
import { authenticated } from "./Auth.ts"
import {
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse
} from "./Errors.ts"
import { ApiKeyId, StoreId } from "./Ids.ts"
import { closed } from "./Text.ts"

export const ApiKeyMode = Schema.Literal("test", "live").annotations({
  // `override`: without it a union reports its first member only ("Expected \"test\"").
  message: () => ({ message: "must be \"test\" or \"live\"", override: true }),
  description: "`test` keys see only test data and may simulate payments; `live` keys act on real payments."
})
export type ApiKeyMode = typeof ApiKeyMode.Type

const ApiKeyName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(100, { message: () => "must be at most 100 characters" })
).annotations({ description: "A label for people, such as the system that uses the key (1 to 100 characters)." })

const apiKeyFields = {
  id: ApiKeyId,
  object: Schema.Literal("api_key"),
  mode: ApiKeyMode,
  store_id: StoreId,
  name: Schema.NullOr(Schema.String),
  last4: Schema.String.annotations({ description: "The last four characters of the secret, to tell keys apart." }),
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String).annotations({
    description: "When the key last authenticated a request (updated at most once a minute)."
  }),
  revoked_at: Schema.NullOr(Schema.String),
  replaced_by: Schema.NullOr(ApiKeyId).annotations({
    description: "For a key revoked by rotation, the id of the key that replaced it."
  })
}

/** A key as listed and as answered by revoke: never with its secret. */
export class ApiKey extends Schema.Class<ApiKey>("ApiKey")(apiKeyFields) {}

/** A key in the one answer that carries its secret (create, rotate). */
export class ApiKeyWithSecret extends Schema.Class<ApiKeyWithSecret>("ApiKeyWithSecret")({
  ...apiKeyFields,
  secret: Schema.String.annotations({
    description: "`sk_test_…` or `sk_live_…`. Shown only in this answer: store it now, it cannot be shown again.",
    examples: ["sk_test_4eC39HqLyjWDarjtT1zdp7dc4eC39HqLyjWDarjtT1z"]
  })
}) {}

export const CreateApiKey = closed(
  Schema.Struct({
    store_id: StoreId,
    mode: ApiKeyMode,
    name: Schema.optional(ApiKeyName)
  }),
  "CreateApiKeyDto"
)

export const ApiKeyList = ListOf(ApiKey).annotations({ identifier: "ApiKeyList" })

const KeyPath = Schema.Struct({ id: ApiKeyId })

export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/api-keys")
      .setPayload(CreateApiKey)
      .addSuccess(ApiKeyWithSecret, { status: 201 })
      .annotate(OpenApi.Summary, "Create an API key; the secret is shown once")
      .annotate(
        OpenApi.Description,
        "Needs the `api_key.manage` permission on the store. A `live` key can be created whether or not " +
          "the store is in live mode yet: a key is only a credential, and what it may do is decided when " +
          "it is used. Keys are created from a user session; an API key cannot create keys."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/api-keys")
      .setUrlParams(Schema.Struct({
        store_id: StoreId.annotations({ description: "The store whose keys to list (required)." }),
        ...ListParams.fields
      }))
      .addSuccess(ApiKeyList)
      .annotate(OpenApi.Summary, "List a store's API keys, revoked ones included; never their secrets")
      .annotate(
        OpenApi.Description,
        "Newest first. Needs `api_key.manage` on the store. Only `last4` of each secret is shown."
      )
  )
  .add(
    HttpApiEndpoint.post("revoke", "/api-keys/:id/revoke")
      .setPath(KeyPath)
      .addSuccess(ApiKey, { status: 201 })
      .annotate(OpenApi.Summary, "Revoke a key")
      .annotate(
        OpenApi.Description,
        "The key stops authenticating at once. Revoking a revoked key changes nothing and answers the same."
      )
  )
  .add(
    HttpApiEndpoint.post("rotate", "/api-keys/:id/rotate")
      .setPath(KeyPath)
      .addSuccess(ApiKeyWithSecret, { status: 201 })
      .annotate(OpenApi.Summary, "Revoke a key and issue a new one")
      .annotate(
        OpenApi.Description,
        "In one step: a new key for the same store, mode and name is issued (its secret is in this answer, " +
          "once), and the old key is revoked with `replaced_by` set to the new key's id. A revoked key " +
          "cannot be rotated (409 `invalid_state`)."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "API keys")
  .annotate(OpenApi.Description, "A store's secret keys for the merchant API, one mode each (test or live); the secret is shown once.")
{}
