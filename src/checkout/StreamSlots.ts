/**
 * How many live status streams (`GET /checkout/{id}/events`) each client address holds open in this
 * process. The route is public and a stream lasts until the payment ends, so without a cap one address
 * could open thousands and hold their memory; SSE_MAX_STREAMS_PER_ADDRESS is generous for many payers
 * behind one shared address (a shop's Wi-Fi, carrier NAT) and small next to what a process can hold.
 */
import { Effect } from "effect"
import { RateLimited } from "../../domain/Errors.ts"
import { AppConfig } from "../platform/Config.ts"
import { traced } from "../platform/Traced.ts"

/** A client that found its address's slots taken is asked to come back after this long. */
const RETRY_AFTER_SECONDS = 5

export class StreamSlots extends Effect.Service<StreamSlots>()("checkout/StreamSlots", {
  effect: Effect.gen(function*() {
    const { sseMaxStreamsPerAddress } = yield* AppConfig
    const openByAddress = new Map<string, number>()

    /**
     * Takes one of the address's slots and answers the function that gives it back (once, however often
     * it is called); fails with 429 when all of them are taken.
     */
    const take = traced("StreamSlots.take")(function*(address: string) {
      const open = openByAddress.get(address) ?? 0
      if (open >= sseMaxStreamsPerAddress) {
        return yield* new RateLimited({
          message: `Too many open live status streams from this address (at most ${sseMaxStreamsPerAddress}); ` +
            "close one or retry later",
          retryAfterSeconds: RETRY_AFTER_SECONDS
        })
      }
      openByAddress.set(address, open + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        const remaining = (openByAddress.get(address) ?? 1) - 1
        // Addresses with nothing open are forgotten, so the map does not grow with every visitor.
        if (remaining <= 0) openByAddress.delete(address)
        else openByAddress.set(address, remaining)
      }
    })

    return { take } as const
  })
}) {}
