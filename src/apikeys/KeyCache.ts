/**
 * Active API keys by secret hash, kept in the process for a few seconds, so that a merchant's request
 * does not spend two database round trips (look the key up, record its use) before doing its work.
 *
 * A revoked key must stop working at once, in every process. Revoking (and rotating) sends a database
 * notification with the key's id in the revoking transaction (`API_KEY_REVOCATIONS`); every process
 * drops that key when the notice arrives, and drops everything when its listener reconnects (notices may
 * have been missed meanwhile). A lookup that was already running when a notice arrived does not store
 * what it read, since it may predate the revocation. The time-to-live bounds what remains: a notice
 * lost before a new process's listener first connects.
 *
 * Unknown secrets are not cached: a guessed secret costs a lookup each time, as before.
 */
import { Clock, Effect, Option, Stream } from "effect"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { type ActiveKeyRow, API_KEY_REVOCATIONS, ApiKeysRepo } from "./Repo.ts"

/** How long a looked-up key is trusted without asking the database again. */
const TIME_TO_LIVE_MILLIS = 10_000
/** More keys than any deployment has in use at once; beyond it the oldest entry goes. */
const CAPACITY = 10_000

interface Entry {
  readonly key: ActiveKeyRow
  readonly cachedAt: number
}

export class ApiKeyCache extends Effect.Service<ApiKeyCache>()("apikeys/ApiKeyCache", {
  scoped: Effect.gen(function*() {
    const repo = yield* ApiKeysRepo
    const feed = yield* ChangeFeed
    const entries = new Map<string, Entry>()
    // Bumped by every notice: a lookup that saw another value at its start must not store its row.
    let generation = 0

    const forget = (keyId: string) => {
      generation++
      for (const [hash, entry] of entries) if (entry.key.id === keyId) entries.delete(hash)
    }

    const notices = yield* feed.subscribe(API_KEY_REVOCATIONS)
    yield* Stream.runForEach(notices, (notice) =>
      Effect.sync(() => {
        if (notice._tag === "Notice") return forget(notice.payload)
        generation++
        entries.clear()
      })).pipe(Effect.forkScoped)

    const store = (secretHash: string, key: ActiveKeyRow, now: number) => {
      if (entries.size >= CAPACITY) entries.delete(entries.keys().next().value!)
      entries.set(secretHash, { key, cachedAt: now })
    }

    /**
     * The active key with this secret hash, from the cache when it is fresh there. A use is recorded when
     * the key is read from the database, so at most once per time-to-live per process; `last_used_at` is
     * minute-grained anyway.
     */
    const findActive = Effect.fn("ApiKeyCache.findActive")(function*(secretHash: string) {
      const now = yield* Clock.currentTimeMillis
      const cached = entries.get(secretHash)
      if (cached !== undefined && now - cached.cachedAt < TIME_TO_LIVE_MILLIS) return Option.some(cached.key)
      const startedAt = generation
      const found = yield* repo.findActiveBySecretHash(secretHash)
      if (Option.isNone(found)) {
        entries.delete(secretHash)
        return found
      }
      if (generation === startedAt) store(secretHash, found.value, now)
      // Bookkeeping only: a failure to record the use must not fail the request.
      yield* repo.touchLastUsed(found.value.id, new Date(now)).pipe(Effect.catchAllCause(() => Effect.void))
      return found
    })

    /** Forgets a key this process has just revoked, before the notice comes back from the database. */
    const revoked = (keyId: string) => Effect.sync(() => forget(keyId))

    return { findActive, revoked } as const
  }),
  dependencies: [ApiKeysRepo.Default]
}) {}
