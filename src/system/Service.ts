/**
 * Whether this process can serve traffic: the database answers and the cluster processes messages.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../domain/Errors.ts"
import { Readiness } from "../../domain/System.ts"
import { ClusterProbe } from "./ClusterProbe.ts"

const CHECK_TIMEOUT = "3 seconds"

export class SystemService extends Effect.Service<SystemService>()("system/SystemService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const probe = yield* ClusterProbe.client
    // Readiness is asked often; the probe id spreads those pings over a few shards.
    const probeIds = ["probe-a", "probe-b", "probe-c"]
    let nextProbe = 0

    const databaseUsable = sql`SELECT 1`.pipe(
      Effect.timeout(CHECK_TIMEOUT),
      Effect.as(true),
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("database check failed", cause), false))
    )
    const clusterUsable = Effect.suspend(() => probe(probeIds[nextProbe++ % probeIds.length]!).Ping()).pipe(
      Effect.timeout(CHECK_TIMEOUT),
      Effect.as(true),
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("cluster check failed", cause), false))
    )

    const readiness = Effect.fn("System.readiness")(function*() {
      const [database, cluster] = yield* Effect.all([databaseUsable, clusterUsable], { concurrency: 2 })
      if (!database || !cluster) {
        const failing = [database ? undefined : "database", cluster ? undefined : "cluster"].filter(Boolean)
        return yield* new ServiceUnavailable({ message: `not ready: ${failing.join(" and ")} unavailable` })
      }
      return new Readiness({ status: "ready", checks: { database: "ok", cluster: "ok" } })
    })

    return { readiness } as const
  })
}) {}
