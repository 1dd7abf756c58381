/**
 * Active API keys by secret hash, kept in the process for a few seconds, so that a merchant's request
 * does not spend two database round trips (look the key up, record its use) before doing its work.
 *
 * A revoked key must stop working at once, in every process. Revoking (and rotating) sends a database
 * notification with the key's id in the revoking transaction (`API_KEY_REVOCATIONS`), and every process
 * drops that key when the notice arrives (src/platform/NotifiedCache.ts says what else it guarantees).
 *
 * Unknown secrets are not cached: a guessed secret costs a lookup each time, as before.
 */
import { Clock, Effect } from "effect"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { makeNotifiedCache } from "../platform/NotifiedCache.ts"
import { API_KEY_REVOCATIONS, ApiKeysRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

export class ApiKeyCache extends Effect.Service<ApiKeyCache>()("apikeys/ApiKeyCache", {
  scoped: Effect.gen(function*() {
    const repo = yield* ApiKeysRepo
    const cache = yield* makeNotifiedCache({
      feed: yield* ChangeFeed,
      channel: API_KEY_REVOCATIONS,
      isNamedBy: (keyId, _secretHash, key) => key.id === keyId,
      // A use is recorded when the key is read from the database, so at most once per time-to-live per
      // process; `last_used_at` is minute-grained anyway. Bookkeeping only: a failure must not fail the request.
      lookup: (secretHash: string) =>
        repo.findActiveBySecretHash(secretHash).pipe(
          Effect.tap((found) =>
            found._tag === "None" ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (now) =>
              repo.touchLastUsed(found.value.id, new Date(now)).pipe(Effect.catchAllCause(() => Effect.void))))
        ),
      timeToLiveMillis: 10_000,
      capacity: 10_000
    })

    /** The active key with this secret hash, from the cache when it is fresh there. */
    const findActive = traced("ApiKeyCache.findActive")((secretHash: string) => cache.get(secretHash))

    /** Forgets a key this process has just revoked, before the notice comes back from the database. */
    const revoked = (keyId: string) => cache.invalidate(keyId)

    return { findActive, revoked } as const
  }),
  dependencies: [ApiKeysRepo.Default]
}) {}
