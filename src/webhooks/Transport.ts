/**
 * The HTTP transport of webhook deliveries. It connects only to addresses the destination check has just
 * approved: checking a host and then letting the HTTP client resolve it again would let a DNS server
 * answer a public address to the check and a private one to the connection (DNS rebinding).
 *
 * Before each batch the dispatcher pins the host to the addresses its check resolved; the connection
 * pool's `lookup` answers from the pins and never asks DNS. The request itself is unchanged: the URL
 * keeps its host name, so the `Host` header and the TLS server name (SNI and certificate check) are the
 * host's. A pooled connection was opened to an address approved when it was opened; it is reused
 * (kept alive between deliveries, so a batch to one endpoint usually goes over one connection).
 */
import * as Undici from "@effect/platform-node/Undici"
import { Effect } from "effect"
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from "node:dns"
import { isIP } from "node:net"

interface Pin {
  readonly addresses: ReadonlyArray<string>
  holders: number
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void

/** A lookup error with a code, so the delivery record says what happened ("could not connect: …"). */
const lookupError = (code: string, message: string): NodeJS.ErrnoException =>
  Object.assign(new Error(message), { code })

/** How a POST ended: an answer (its status), no answer in time, or no answer at all (the cause). */
export type PostOutcome =
  | { readonly _tag: "Answered"; readonly status: number }
  | { readonly _tag: "TimedOut" }
  | { readonly _tag: "Failed"; readonly cause: unknown }

/** What is read of an answer's body: enough to free the connection for reuse, no more, and not for long. */
const MAX_DRAINED_BYTES = 64 * 1024
const DRAIN_TIMEOUT_MILLIS = 1_000

export interface PinnedTransportOptions {
  /** Certificate authorities to trust instead of the system's (a test's own authority). */
  readonly ca?: string | undefined
}

export const makePinnedTransport = (options: PinnedTransportOptions = {}) => Effect.gen(function*() {
  const pins = new Map<string, Pin>()

  const lookup = (hostname: string, lookupOptions: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => {
    const pin = pins.get(hostname.toLowerCase())
    if (pin === undefined) {
      return callback(lookupError("EUNCHECKED", `${hostname} was not checked before connecting`), "")
    }
    const family = typeof lookupOptions.family === "number" && lookupOptions.family !== 0 ? lookupOptions.family : undefined
    const entries = pin.addresses
      .map((address): LookupAddress => ({ address, family: isIP(address) }))
      .filter((entry) => family === undefined || entry.family === family)
    const first = entries[0]
    if (first === undefined) {
      return callback(lookupError("ENOTFOUND", `${hostname} has no checked IPv${family} address`), "")
    }
    return lookupOptions.all === true ? callback(null, entries) : callback(null, first.address, first.family)
  }

  const agent = yield* Effect.acquireRelease(
    Effect.sync(() => new Undici.Agent({ connect: options.ca === undefined ? { lookup } : { lookup, ca: options.ca } })),
    (agent) => Effect.promise(() => agent.destroy())
  )

  const pin = (hostname: string, addresses: ReadonlyArray<string>) =>
    Effect.sync(() => {
      const key = hostname.toLowerCase()
      const current = pins.get(key)
      // Deliveries to one host at the same time each checked it; any of their answers was approved.
      pins.set(key, { addresses, holders: (current?.holders ?? 0) + 1 })
    })

  const unpin = (hostname: string) =>
    Effect.sync(() => {
      const key = hostname.toLowerCase()
      const current = pins.get(key)
      if (current === undefined) return
      if (current.holders <= 1) pins.delete(key)
      else current.holders -= 1
    })

  /**
   * One POST on the pinned pool, straight on undici: a delivery is the hot path, and this costs a
   * fraction of a general HttpClient's request (no per-request scope, stream or abort on completion).
   * The answer (status line and headers) must come within `timeoutMillis`, connecting included; the body
   * is then read (a bounded part, for at most a second) only so that the connection can be reused.
   * Redirects are not followed (their targets were not checked).
   */
  const post = (url: URL, headers: Record<string, string>, body: string, timeoutMillis: number) =>
    Effect.async<PostOutcome>((resume) => {
      const controller = new AbortController()
      let timedOut = false
      let timer = setTimeout(() => {
        timedOut = true
        controller.abort()
      }, timeoutMillis)
      agent.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: "POST",
        headers,
        body,
        signal: controller.signal
      }).then(
        (response) => {
          clearTimeout(timer)
          const answered: PostOutcome = { _tag: "Answered", status: response.statusCode }
          timer = setTimeout(() => controller.abort(), DRAIN_TIMEOUT_MILLIS)
          // Whether the body was read to its end or not, the answer stands.
          const drained = () => {
            clearTimeout(timer)
            resume(Effect.succeed(answered))
          }
          response.body.dump({ limit: MAX_DRAINED_BYTES, signal: controller.signal }).then(drained, drained)
        },
        (cause: unknown) => {
          clearTimeout(timer)
          resume(Effect.succeed(timedOut ? { _tag: "TimedOut" } : { _tag: "Failed", cause }))
        }
      )
      // Interrupted (the dispatcher stopping): the request is abandoned and its connection closed.
      return Effect.sync(() => {
        clearTimeout(timer)
        controller.abort()
      })
    })

  return {
    post,
    /** Runs `use` with new connections to `hostname` going only to `addresses`. */
    pinned: <A, E, R>(hostname: string, addresses: ReadonlyArray<string>, use: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(pin(hostname, addresses), () => use, () => unpin(hostname))
  } as const
})
