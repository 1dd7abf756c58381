/**
 * A read-through cache kept in the process for a few seconds and emptied, in every process, by a
 * database notification that the change sends in its own transaction: for what the hot paths read on
 * every request and that changes rarely (an API key, a store's payment settings).
 *
 * On a notice the entries it names are dropped; when the listener reconnects (notices may have been
 * missed) everything is. A lookup already running when a notice arrives does not store what it read,
 * since it may predate the change. The time-to-live bounds what remains: a notice lost before a new
 * process's listener first connects. What is absent (`None`) is not cached.
 *
 * Requests that miss the same key together share one lookup: when an entry expires under load, every
 * request in flight for it would otherwise look it up at once (for an API key, each also recording the
 * key's use in the same row, one after another under its lock: a few hundred milliseconds for the last).
 */
import { Clock, Deferred, Effect, Exit, Option, Stream } from "effect"
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
    // The lookup running for a key, and the generation it started in: a request joins it only if no
    // notice came since, so nobody is answered with what a change has since replaced.
    const running = new Map<K, { readonly generation: number; readonly found: Deferred.Deferred<Option.Option<V>, E> }>()

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

    /** Looks `key` up for every request that misses it until the answer comes, and stores the answer. */
    const lookUp = (key: K, now: number): Effect.Effect<Option.Option<V>, E, R> =>
      Effect.flatMap(Deferred.make<Option.Option<V>, E>(), (found) => {
        const startedAt = generation
        running.set(key, { generation: startedAt, found })
        // Uninterruptible: the requests that joined wait for this answer even if the one that asked first
        // is gone (its client hung up).
        return Effect.uninterruptible(Effect.onExit(options.lookup(key), (exit) => {
          if (running.get(key)?.found === found) running.delete(key)
          if (Exit.isSuccess(exit)) {
            if (Option.isNone(exit.value)) entries.delete(key)
            else if (generation === startedAt) {
              if (entries.size >= options.capacity) entries.delete(entries.keys().next().value!)
              entries.set(key, { value: exit.value.value, cachedAt: now })
            }
          }
          return Deferred.done(found, exit)
        }))
      })

    /** The value of `key`, from the cache while it is fresh there, else from `lookup`. */
    const get = (key: K): Effect.Effect<Option.Option<V>, E, R> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const cached = entries.get(key)
        if (cached !== undefined && now - cached.cachedAt < options.timeToLiveMillis) return Effect.succeed(Option.some(cached.value))
        const inFlight = running.get(key)
        if (inFlight !== undefined && inFlight.generation === generation) return Deferred.await(inFlight.found)
        return lookUp(key, now)
      })

    /** Drops what `payload` names at once in this process, before the notice comes back from the database. */
    const invalidate = (payload: string) => Effect.sync(() => forget(payload))

    return { get, invalidate } as const
  })
