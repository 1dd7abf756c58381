/**
 * The `Authentication` middleware: turns `Authorization: Bearer <credential>` into the principal.
 * An API key (`sk_test_…`, `sk_live_…`) acts for its store and mode; anything else is looked up as a
 * session token. Unknown, revoked and expired credentials are all the same 401.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { type ApiKeyPrincipal, Authentication, type Principal } from "../../domain/Auth.ts"
import { Unauthorized } from "../../domain/Errors.ts"
import { ApiKeyCache } from "../apikeys/KeyCache.ts"
import { hashToken } from "../platform/Crypto.ts"
import { recordActor } from "../platform/RequestLog.ts"
import { AccountsService } from "./Service.ts"

const API_KEY_PREFIXES = ["sk_test_", "sk_live_"]

/** Whether a bearer credential is an API key (rather than a session token). */
export const isApiKeySecret = (secret: string): boolean => API_KEY_PREFIXES.some((prefix) => secret.startsWith(prefix))

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    const apiKeys = yield* ApiKeyCache

    const authenticateApiKey = (secret: string) =>
      Effect.gen(function*() {
        const key = yield* apiKeys.findActive(hashToken(secret))
        if (Option.isNone(key)) return Option.none<ApiKeyPrincipal>()
        return Option.some<ApiKeyPrincipal>({
          _tag: "ApiKey",
          keyId: key.value.id,
          storeId: key.value.store_id,
          organizationId: key.value.organization_id,
          livemode: key.value.mode === "live"
        })
      })

    return {
      bearer: (credential) =>
        Effect.gen(function*() {
          const secret = Redacted.value(credential).trim()
          if (secret.length === 0) {
            return yield* new Unauthorized({ message: "Send a credential: Authorization: Bearer <API key or session token>" })
          }
          const principal: Option.Option<Principal> = isApiKeySecret(secret)
            ? yield* authenticateApiKey(secret)
            : yield* accounts.authenticateSession(secret)
          if (Option.isNone(principal)) {
            return yield* new Unauthorized({ message: "The credential is unknown, revoked or expired" })
          }
          // The access-log line of the request names who made it.
          yield* recordActor(principal.value._tag === "User" ? principal.value.userId : principal.value.keyId)
          return principal.value
        })
    }
  })
)
