/**
 * What the retention purge (src/system/Retention.ts) deletes of the mail queue, in batches it repeats: the
 * sealed content of a mail soon after it is done with (it may hold a reset link), its record later. Each
 * statement answers the id of each row it changed, to be counted.
 */
import type { SqlClient } from "@effect/sql"

type Sql = SqlClient.SqlClient

/** Clears the content of up to `limit` mails sent, or failed for good, before `before`: the record stays. */
export const clearFinishedMailBodies = (sql: Sql, before: Date, limit: number) =>
  sql`
    UPDATE outgoing_mail SET body_sealed = NULL, html_sealed = NULL WHERE id IN (
      SELECT id FROM outgoing_mail
      WHERE status <> 'queued' AND finished_at < ${before} AND (body_sealed IS NOT NULL OR html_sealed IS NOT NULL)
      LIMIT ${limit}
    )
    RETURNING id`

/** Deletes up to `limit` mails sent, or failed for good, before `before`. */
export const purgeFinishedMail = (sql: Sql, before: Date, limit: number) =>
  sql`
    DELETE FROM outgoing_mail WHERE id IN (
      SELECT id FROM outgoing_mail WHERE status <> 'queued' AND finished_at < ${before} LIMIT ${limit}
    )
    RETURNING id`
