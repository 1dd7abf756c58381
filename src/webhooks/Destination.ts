/**
 * Where webhooks may be sent. A merchant chooses the URL, so without a check the service could be made
 * to send requests into its own network (SSRF): to loopback, to private ranges, to cloud metadata at
 * 169.254.169.254. Every address the host resolves to is checked — at registration, and again before
 * every delivery, since DNS may answer differently later (rebinding).
 *
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS lifts both the https-only rule and the address rule, for local
 * development and tests.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { promises as dns } from "node:dns"
import { BlockList, isIP } from "node:net"

/** A named range of addresses no webhook is sent to. */
interface RefusedRange {
  readonly address: string
  readonly prefix: number
  readonly family: "ipv4" | "ipv6"
  readonly name: string
}

const REFUSED_RANGES: ReadonlyArray<RefusedRange> = [
  { address: "0.0.0.0", prefix: 8, family: "ipv4", name: "unspecified" },
  { address: "10.0.0.0", prefix: 8, family: "ipv4", name: "private" },
  { address: "100.64.0.0", prefix: 10, family: "ipv4", name: "shared (carrier-grade NAT)" },
  { address: "127.0.0.0", prefix: 8, family: "ipv4", name: "loopback" },
  { address: "169.254.0.0", prefix: 16, family: "ipv4", name: "link-local" },
  { address: "172.16.0.0", prefix: 12, family: "ipv4", name: "private" },
  { address: "192.168.0.0", prefix: 16, family: "ipv4", name: "private" },
  { address: "224.0.0.0", prefix: 4, family: "ipv4", name: "multicast" },
  { address: "240.0.0.0", prefix: 4, family: "ipv4", name: "reserved" },
  { address: "::", prefix: 128, family: "ipv6", name: "unspecified" },
  { address: "::1", prefix: 128, family: "ipv6", name: "loopback" },
  { address: "fc00::", prefix: 7, family: "ipv6", name: "private" },
  { address: "fe80::", prefix: 10, family: "ipv6", name: "link-local" },
  { address: "ff00::", prefix: 8, family: "ipv6", name: "multicast" }
]

// One list per name, so the refusal can say which kind of range an address is in. BlockList also
// matches IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) against the IPv4 ranges.
const refusedLists = (() => {
  const byName = new Map<string, BlockList>()
  for (const range of REFUSED_RANGES) {
    const list = byName.get(range.name) ?? new BlockList()
    list.addSubnet(range.address, range.prefix, range.family)
    byName.set(range.name, list)
  }
  return [...byName]
})()

/** The kind of range `address` is in when webhooks may not go there ("loopback", "private", …). */
export const refusedRangeOf = (address: string): string | undefined => {
  const family = isIP(address)
  if (family === 0) return "not an IP address"
  const type = family === 4 ? "ipv4" : "ipv6"
  for (const [name, list] of refusedLists) {
    if (list.check(address, type)) return name
  }
  return undefined
}

const LOOKUP_TIMEOUT = Duration.seconds(5)

/** The host of a URL as resolvers and connections see it: an IPv6 literal without its brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** Every address a host name resolves to. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<string>>

export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

/**
 * `resolve` with each host's answer reused for `ttlMillis` (at most `capacity` hosts are kept). Only
 * the lookup is cached, never the verdict: `checkDestination` still checks every address of a reused
 * answer, and the transport still connects only to the addresses that check approved. So the cache can
 * only delay noticing that a host's DNS changed, by `ttlMillis` — a rebinding to a private address within
 * that time still connects to the approved public one, never to the new one. A failed or empty lookup is
 * not kept: the next check asks again.
 */
export const cachedResolver = (resolve: Resolver, ttlMillis: number, capacity = 10_000): Resolver => {
  const answers = new Map<string, { readonly addresses: ReadonlyArray<string>; readonly at: number }>()
  return async (hostname) => {
    const now = performance.now()
    const cached = answers.get(hostname)
    if (cached !== undefined && now - cached.at < ttlMillis) return cached.addresses
    const addresses = await resolve(hostname)
    answers.delete(hostname)
    if (addresses.length > 0) {
      // Insertion order is age order: the first key is the oldest answer.
      if (answers.size >= capacity) answers.delete(answers.keys().next().value!)
      answers.set(hostname, { addresses, at: now })
    }
    return addresses
  }
}

/** The resolver webhook destinations are checked (and then connected) with; tests put a stub in its place. */
export class WebhookResolver extends Context.Reference<WebhookResolver>()("webhooks/WebhookResolver", {
  defaultValue: (): Resolver => systemResolver
}) {
  static readonly layer = (resolve: Resolver) => Layer.succeed(WebhookResolver, resolve)
}

/** Why a URL may not receive webhooks, in words for the merchant (or for the delivery record). */
export type Refusal = { readonly _tag: "Refused"; readonly reason: string }

export type DestinationCheck =
  | { readonly _tag: "Allowed"; readonly url: URL; readonly addresses: ReadonlyArray<string> }
  | Refusal

const refuse = (reason: string): Refusal => ({ _tag: "Refused", reason })

/** Names the setting that lifts a refusal, for a developer pointing webhooks at their own machine. */
const LOCAL_URLS_HINT = "; a service started with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true accepts http:// and local or private addresses"

/**
 * Whether webhooks may be sent to `rawUrl` now: its scheme, then every address its host resolves to.
 * A host that does not resolve is refused too: nothing could be delivered to it.
 */
export const checkDestination = (
  rawUrl: string,
  allowPrivateNetworks: boolean,
  resolve: Resolver = systemResolver
): Effect.Effect<DestinationCheck> =>
  Effect.gen(function*() {
    let url: URL
    try {
      url = new URL(rawUrl)
    } catch {
      return refuse("is not an absolute URL")
    }
    if (url.protocol !== "https:" && !(url.protocol === "http:" && allowPrivateNetworks)) {
      return refuse(`must be an https:// URL${LOCAL_URLS_HINT}`)
    }
    // URL keeps the brackets of an IPv6 literal ("[::1]"); the resolver and isIP want it bare.
    const host = hostOf(url)
    const addresses = isIP(host) !== 0
      ? [host]
      : yield* Effect.tryPromise(() => resolve(host)).pipe(
        // A resolver that hangs must not hold a request or a delivery worker for long.
        Effect.timeout(LOOKUP_TIMEOUT),
        Effect.orElseSucceed(() => [] as ReadonlyArray<string>)
      )
    if (addresses.length === 0) return refuse(`host ${host} could not be resolved`)
    if (!allowPrivateNetworks) {
      for (const address of addresses) {
        const range = refusedRangeOf(address)
        if (range !== undefined) {
          return refuse(
            address === host
              ? `is a ${range} address; webhooks go to the public internet only${LOCAL_URLS_HINT}`
              : `host ${host} resolves to ${address}, a ${range} address; webhooks go to the public internet only${LOCAL_URLS_HINT}`
          )
        }
      }
    }
    return { _tag: "Allowed", url, addresses }
  })
