/**
 * What the retention purge (src/system/Retention.ts) deletes of the webhook queue, in batches it repeats.
 */
import type { SqlClient } from "@effect/sql"

/**
 * Deletes up to `limit` finished jobs (succeeded, failed for good or cancelled) last changed before `before`,
 * answering the id of each; their delivery records go with them (ON DELETE CASCADE).
 */
export const purgeFinishedJobs = (sql: SqlClient.SqlClient, before: Date, limit: number) =>
  sql`
    DELETE FROM webhook_jobs WHERE id IN (
      SELECT id FROM webhook_jobs WHERE status <> 'pending' AND updated_at < ${before} LIMIT ${limit}
    )
    RETURNING id`
