/**
 * The dispatcher's DNS answers, reused per host for a short time: the lookup is reused, never the
 * verdict (every check still judges every address), a lookup that failed or found nothing is asked
 * again, and the oldest host goes when the cache is full.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cachedResolver, checkDestination, type Resolver } from "../../src/webhooks/Destination.ts"

/** A resolver answering from `table` (a host missing from it does not resolve), counting its lookups. */
const countingResolver = (table: Record<string, ReadonlyArray<string>>) => {
  const lookups: Array<string> = []
  const resolve: Resolver = async (host) => {
    lookups.push(host)
    const addresses = table[host]
    if (addresses === undefined) throw new Error(`ENOTFOUND ${host}`)
    return addresses
  }
  return { resolve, lookups }
}

describe("Cached webhook DNS answers", () => {
  it.live("reuses a host's answer for its time to live, then asks again", () =>
    Effect.gen(function*() {
      const { lookups, resolve } = countingResolver({ "hooks.example.com": ["93.184.215.14"] })
      const cached = cachedResolver(resolve, 100)
      expect(yield* Effect.promise(() => cached("hooks.example.com"))).toEqual(["93.184.215.14"])
      expect(yield* Effect.promise(() => cached("hooks.example.com"))).toEqual(["93.184.215.14"])
      expect(lookups).toEqual(["hooks.example.com"])
      yield* Effect.sleep("150 millis")
      yield* Effect.promise(() => cached("hooks.example.com"))
      expect(lookups).toEqual(["hooks.example.com", "hooks.example.com"])
    }))

  it.effect("reuses the lookup, not the verdict: a reused answer is checked like a fresh one", () =>
    Effect.gen(function*() {
      const table: Record<string, ReadonlyArray<string>> = { "hooks.example.com": ["93.184.215.14", "10.0.0.7"] }
      const { lookups, resolve } = countingResolver(table)
      const cached = cachedResolver(resolve, 60_000)
      for (let i = 0; i < 2; i++) {
        const check = yield* checkDestination("https://hooks.example.com/hook", false, cached)
        expect(check).toEqual({
          _tag: "Refused",
          reason: "host hooks.example.com resolves to 10.0.0.7, a private address; webhooks go to the public internet only; a service started with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true accepts http:// and local or private addresses"
        })
      }
      expect(lookups).toHaveLength(1)
    }))

  it.effect("does not keep a failed or empty lookup", () =>
    Effect.gen(function*() {
      const table: Record<string, ReadonlyArray<string>> = { "empty.example.com": [] }
      const { lookups, resolve } = countingResolver(table)
      const cached = cachedResolver(resolve, 60_000)
      yield* Effect.promise(() => cached("late.example.com").catch(() => []))
      expect(yield* Effect.promise(() => cached("empty.example.com"))).toEqual([])
      table["late.example.com"] = ["93.184.215.14"]
      table["empty.example.com"] = ["93.184.215.15"]
      expect(yield* Effect.promise(() => cached("late.example.com"))).toEqual(["93.184.215.14"])
      expect(yield* Effect.promise(() => cached("empty.example.com"))).toEqual(["93.184.215.15"])
      expect(lookups).toEqual(["late.example.com", "empty.example.com", "late.example.com", "empty.example.com"])
    }))

  it.effect("drops the oldest host's answer when full", () =>
    Effect.gen(function*() {
      const { lookups, resolve } = countingResolver({ a: ["93.184.215.1"], b: ["93.184.215.2"], c: ["93.184.215.3"] })
      const cached = cachedResolver(resolve, 60_000, 2)
      for (const host of ["a", "b", "c", "b", "c", "a"]) yield* Effect.promise(() => cached(host))
      expect(lookups).toEqual(["a", "b", "c", "a"])
    }))
})
