/**
 * Customers' standing (store, mode, erasure, links' version) as the hot paths that act for a customer check
 * it — a play of a game for the customer a merchant's backend names — kept in each process for a few
 * seconds and dropped everywhere by the notice the statement that changes it sends (an erasure, a
 * revocation of the customer's links: src/customers/Repo.ts), as API keys are (src/platform/NotifiedCache.ts).
 * A play then costs no read of its customer; what it may act on a moment after an erasure in another
 * process is what it would have acted on had it come a moment before.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { makeNotifiedCache } from "../platform/NotifiedCache.ts"
import { standingOfCustomer } from "./Reads.ts"
import { CUSTOMER_STANDING_CHANGES } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

export class CustomerStandings extends Effect.Service<CustomerStandings>()("customers/CustomerStandings", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cache = yield* makeNotifiedCache({
      feed: yield* ChangeFeed,
      channel: CUSTOMER_STANDING_CHANGES,
      isNamedBy: (customerId, key: string) => key === customerId,
      lookup: (customerId: string) => standingOfCustomer(sql, customerId),
      timeToLiveMillis: 10_000,
      capacity: 50_000
    })

    /** The customer's standing, from the cache while it is fresh there; none when there is no such customer. */
    const of = traced("CustomerStandings.of")((customerId: string) => cache.get(customerId))

    /** Drops the customer's standing in this process at once, after this process changed it. */
    const changed = (customerId: string) => cache.invalidate(customerId)

    return { of, changed } as const
  })
}) {}
