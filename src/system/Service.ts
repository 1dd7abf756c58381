/**
 * Whether this process can serve traffic: the database answers and the cluster processes messages.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Effect } from "effect"
import { ServiceUnavailable } from "../../domain/Errors.ts"
import { Readiness } from "../../domain/System.ts"
import { ClusterProbe } from "./ClusterProbe.ts"
import { traced } from "../platform/Traced.ts"

const CHECK_TIMEOUT = "3 seconds"

/** One line for the log: readiness is polled often, and a stack trace per poll drowns everything else. */
const describe = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.squash(cause)
  const message = failure instanceof Error ? failure.message : String(failure)
  const reason = failure instanceof Error && failure.cause instanceof Error ? `: ${failure.cause.message}` : ""
  return `${message}${reason}`
}

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
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`database check failed: ${describe(cause)}`), false))
    )
    const clusterUsable = Effect.suspend(() => probe(probeIds[nextProbe++ % probeIds.length]!).Ping()).pipe(
      Effect.timeout(CHECK_TIMEOUT),
      Effect.as(true),
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`cluster check failed: ${describe(cause)}`), false))
    )

    const readiness = traced("System.readiness")(function*() {
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
