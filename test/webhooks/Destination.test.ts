/**
 * The destination check on its own, with a stand-in resolver: which schemes and addresses are refused
 * without WEBHOOK_ALLOW_PRIVATE_NETWORKS, that every resolved address counts, and that the flag lifts
 * both rules.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkDestination, refusedRangeOf, type Resolver } from "../../src/webhooks/Destination.ts"

const resolvesTo = (table: Record<string, ReadonlyArray<string>>): Resolver => async (host) => {
  const addresses = table[host]
  if (addresses === undefined) throw new Error(`ENOTFOUND ${host}`)
  return addresses
}

describe("Webhook destinations", () => {
  it("names the refused range of an address", () => {
    const cases: Array<[string, string | undefined]> = [
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["10.0.0.1", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", undefined],
      ["192.168.100.7", "private"],
      ["169.254.169.254", "link-local"],
      ["0.0.0.0", "unspecified"],
      ["100.64.0.1", "shared (carrier-grade NAT)"],
      ["224.0.0.1", "multicast"],
      ["255.255.255.255", "reserved"],
      ["::1", "loopback"],
      ["::", "unspecified"],
      ["fc00::1", "private"],
      ["fdff:ffff::1", "private"],
      ["fe80::1", "link-local"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:10.1.1.1", "private"],
      ["8.8.8.8", undefined],
      ["93.184.215.14", undefined],
      ["2606:4700:4700::1111", undefined]
    ]
    for (const [address, range] of cases) expect(refusedRangeOf(address), address).toBe(range)
  })

  it.effect("refuses a host when any of its addresses is refused", () =>
    Effect.gen(function*() {
      const resolve = resolvesTo({
        "public.example": ["93.184.215.14", "2606:2800:220:1::1"],
        "mixed.example": ["93.184.215.14", "10.0.0.5"],
        "v6-loopback.example": ["::1"]
      })
      const allowed = yield* checkDestination("https://public.example/hook", false, resolve)
      expect(allowed).toMatchObject({ _tag: "Allowed", addresses: ["93.184.215.14", "2606:2800:220:1::1"] })
      expect(yield* checkDestination("https://mixed.example/hook", false, resolve)).toEqual({
        _tag: "Refused",
        reason: "host mixed.example resolves to 10.0.0.5, a private address; webhooks go to the public internet only; a service started with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true accepts http:// and local or private addresses"
      })
      expect(yield* checkDestination("https://v6-loopback.example/hook", false, resolve)).toMatchObject({ _tag: "Refused" })
      expect(yield* checkDestination("https://nowhere.example/hook", false, resolve)).toEqual({
        _tag: "Refused",
        reason: "host nowhere.example could not be resolved"
      })
    }))

  it.effect("refuses plain http and IP literals in refused ranges unless private networks are allowed", () =>
    Effect.gen(function*() {
      const resolve = resolvesTo({ "localhost": ["127.0.0.1", "::1"] })
      for (const url of ["http://93.184.215.14/hook", "https://127.0.0.1:8443/hook", "https://[::1]/hook", "https://localhost/hook"]) {
        expect((yield* checkDestination(url, false, resolve))._tag, url).toBe("Refused")
        expect((yield* checkDestination(url, true, resolve))._tag, url).toBe("Allowed")
      }
      expect((yield* checkDestination("ftp://93.184.215.14/", true, resolve))._tag).toBe("Refused")
    }))
})
