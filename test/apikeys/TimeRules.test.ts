/**
 * The time rules of API keys under TestClock, through ApiKeysService and the key cache against the
 * suite's database: a rotated or revoked key stops authenticating at the moment of the rotation (API keys
 * have no grace period: "old revoked, new issued"), that moment is the Clock's, and a key's last use is
 * recorded at most once a minute. The clock moves; nothing sleeps.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Option, TestClock } from "effect"
import { ApiKeyCache } from "../../src/apikeys/KeyCache.ts"
import { ApiKeysRepo } from "../../src/apikeys/Repo.ts"
import { ApiKeysService } from "../../src/apikeys/Service.ts"
import { hashToken } from "../../src/platform/Crypto.ts"
import { FUTURE_START, servicesOnTestApp, type StoreOwner, withNewStoreOwner } from "../support/Services.ts"

const MINUTE = 60_000

describe("API key time rules", () => {
  layer(servicesOnTestApp(), { timeout: 120_000, excludeTestServices: true })("with TestClock", (it) => {
    /** A new key of the owner's store, and whether a secret authenticates (through the key cache) now. */
    const newKey = (owner: StoreOwner, mode: "test" | "live") =>
      Effect.gen(function*() {
        const apiKeys = yield* ApiKeysService
        const cache = yield* ApiKeyCache
        const key = yield* owner.asOwner(apiKeys.create({ store_id: owner.store.id, mode }))
        const isActive = (secret: string) => Effect.map(cache.findActive(hashToken(secret)), Option.isSome)
        return { apiKeys, key, isActive }
      })

    it.effect("a rotated key is refused from the moment of the rotation; its replacement works", () =>
      withNewStoreOwner((owner) =>
        Effect.gen(function*() {
          const repo = yield* ApiKeysRepo
          const { apiKeys, isActive, key: old } = yield* newKey(owner, "test")
          expect(yield* isActive(old.secret)).toBe(true)

          yield* TestClock.adjust("1 hour")
          const replacement = yield* owner.asOwner(apiKeys.rotate(old.id))
          // At once, even though the old key was in the cache a moment ago.
          expect(yield* isActive(old.secret)).toBe(false)
          expect(yield* isActive(replacement.secret)).toBe(true)
          const rotated = Option.getOrThrow(yield* repo.findById(old.id))
          expect(rotated.revoked_at?.getTime()).toBe(FUTURE_START + 60 * MINUTE)
          expect(rotated.replaced_by).toBe(replacement.id)
        })))

    it.effect("a revoked key is refused from the moment it is revoked, and keeps that time", () =>
      withNewStoreOwner((owner) =>
        Effect.gen(function*() {
          const { apiKeys, isActive, key } = yield* newKey(owner, "live")
          expect(yield* isActive(key.secret)).toBe(true)

          const revokeAfter = (wait: Duration.DurationInput) =>
            Effect.zipRight(TestClock.adjust(wait), owner.asOwner(apiKeys.revoke(key.id)))
          expect(Date.parse((yield* revokeAfter("90 minutes")).revoked_at!)).toBe(FUTURE_START + 90 * MINUTE)
          expect(yield* isActive(key.secret)).toBe(false)
          // Revoking again a day later answers the same: the time of the first revoke stays.
          expect(Date.parse((yield* revokeAfter("1 day")).revoked_at!)).toBe(FUTURE_START + 90 * MINUTE)
        })))

    it.effect("a key's last use is recorded at most once a minute", () =>
      withNewStoreOwner((owner) =>
        Effect.gen(function*() {
          const repo = yield* ApiKeysRepo
          const { isActive, key } = yield* newKey(owner, "test")
          const use = isActive(key.secret)
          const lastUsed = Effect.map(repo.findById(key.id), (row) => Option.getOrThrow(row).last_used_at?.getTime())

          yield* use
          expect(yield* lastUsed).toBe(FUTURE_START)
          // Past the cache's lifetime (seconds) the key is read again, but within the minute its use is not
          // written, to the last millisecond of the minute…
          yield* TestClock.setTime(FUTURE_START + MINUTE)
          yield* use
          expect(yield* lastUsed).toBe(FUTURE_START)
          // …and once the minute is over (and the cache's lifetime again) it is.
          yield* TestClock.setTime(FUTURE_START + 2 * MINUTE)
          yield* use
          expect(yield* lastUsed).toBe(FUTURE_START + 2 * MINUTE)
        })))
  })
})
