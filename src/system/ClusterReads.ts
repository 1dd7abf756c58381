/**
 * The reads other areas make of the cluster's own tables (runners and shards, kept by the cluster's SQL
 * storage). The operations area owns them, as it purges the cluster's messages; monitoring reports their figures
 * through this module rather than reading them itself.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { spanWhenExported } from "../platform/Traced.ts"

/** How many runners are healthy and how many shards are assigned; one runner and no shards in a single process. */
export const healthyRunnersAndShards = (sql: SqlClient.SqlClient) =>
  sql<{ runners: number; shards: number }>`
    SELECT
      (SELECT count(*)::int FROM cluster_runners WHERE healthy) AS runners,
      (SELECT count(*)::int FROM cluster_shards) AS shards`.pipe(
    Effect.map((rows) => rows[0] ?? { runners: 0, shards: 0 }),
    // The single-process runtime keeps no runner tables.
    Effect.orElseSucceed(() => ({ runners: 1, shards: 0 })),
    spanWhenExported("ClusterReads.healthyRunnersAndShards")
  )
