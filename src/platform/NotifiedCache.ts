/**
 * A read-through cache kept in the process for a few seconds and emptied, in every process, by a
 * database notification that the change sends in its own transaction: for what the hot paths read on
 * every request and that changes rarely (an API key, a store's payment settings).
 *
 * On a notice the entries it names are dropped; when the listener reconnects (notices may have been
 * missed) everything is. A lookup already running when a notice arrives does not store what it read,
 * since it may predate the change. The time-to-live bounds what remains: a notice lost before a new
 * process's listener first connects. What is absent (`None`) is not cached.
 */
import { Clock, Effect, Option, Stream } from "effect"
import type { ChangeFeed } from "./ChangeFeed.ts"

export interface NotifiedCacheOptions<K, V, E, R> {
  readonly feed: ChangeFeed["Type"]
  /** The notification channel; each notice's payload names what changed. */
  readonly channel: string
  /** Whether the entry (`key`, `value`) is what the notice `payload` names. */
  readonly isNamedBy: (payload: string, key: K, value: V) => boolean
  readonly lookup: (key: K) => Effect.Effect<Option.Option<V>, E, R>
  readonly timeToLiveMillis: number
  /** Beyond this many entries the oldest goes. */
  readonly capacity: number
}

/** The cache, in the caller's scope (its subscription ends with it). */
export const makeNotifiedCache = <K, V, E, R>(options: NotifiedCacheOptions<K, V, E, R>) =>
  Effect.gen(function*() {
    const entries = new Map<K, { readonly value: V; readonly cachedAt: number }>()
    // Bumped by every notice: a lookup that saw another value at its start must not store its row.
    let generation = 0

    const forget = (payload: string) => {
      generation++
      for (const [key, entry] of entries) if (options.isNamedBy(payload, key, entry.value)) entries.delete(key)
    }

    const notices = yield* options.feed.subscribe(options.channel)
    yield* Stream.runForEach(notices, (notice) =>
      Effect.sync(() => {
        if (notice._tag === "Notice") return forget(notice.payload)
        generation++
        entries.clear()
      })).pipe(Effect.forkScoped)

    /** The value of `key`, from the cache while it is fresh there, else from `lookup`. */
    const get = (key: K): Effect.Effect<Option.Option<V>, E, R> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const cached = entries.get(key)
        if (cached !== undefined && now - cached.cachedAt < options.timeToLiveMillis) return Option.some(cached.value)
        const startedAt = generation
        const found = yield* options.lookup(key)
        if (Option.isNone(found)) {
          entries.delete(key)
          return found
        }
        if (generation === startedAt) {
          if (entries.size >= options.capacity) entries.delete(entries.keys().next().value!)
          entries.set(key, { value: found.value, cachedAt: now })
        }
        return found
      })

    /** Drops what `payload` names at once in this process, before the notice comes back from the database. */
    const invalidate = (payload: string) => Effect.sync(() => forget(payload))

    return { get, invalidate } as const
  })
