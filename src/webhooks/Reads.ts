/**
 * The reads other areas make of webhook endpoints and their queue. The webhooks area owns the tables; these
 * are the narrow reads the others need where WebhooksService cannot serve them: the platform's security posture
 * and monitoring (whose figures no one store's access check covers), and the connectors (each a webhook endpoint
 * row of its own) listing their endpoints' settings with their own rows in one statement. Each takes the SQL
 * client in scope, so it runs in the caller's transaction, and is named for what it answers; every read dies on
 * SQL failures: they are the infrastructure's, not the caller's.
 */
import type { SqlClient, Statement } from "@effect/sql"
import { Effect } from "effect"
import { spanWhenExported } from "../platform/Traced.ts"

type Sql = SqlClient.SqlClient

/**
 * The endpoints' delivery settings as another area's statement joins them: `id`, `events` and `enabled` (not
 * their URL). For the connectors, whose rows name their endpoint; the database pulls the relation into
 * the enclosing query, so the plan is the one a join of the table would have.
 */
export const joinableEndpointSettings = (sql: Sql): Statement.Fragment =>
  sql`SELECT id, events, enabled FROM webhook_endpoints`

/** How many endpoints, of every store, have a URL that is not HTTPS. */
export const endpointsWithoutHttps = (sql: Sql) =>
  Effect.map(
    sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE url NOT LIKE 'https://%'`,
    (rows) => rows[0]?.n ?? 0
  ).pipe(Effect.orDie, spanWhenExported("WebhookReads.endpointsWithoutHttps"))

/** How many jobs, of every endpoint, wait for delivery, and how many attempts failed since `since`. */
export const deliveryBacklog = (sql: Sql, since: Date) =>
  Effect.map(
    sql<{ jobs: number; failed: number }>`
      SELECT
        (SELECT count(*)::int FROM webhook_jobs WHERE status = 'pending') AS jobs,
        (SELECT count(*)::int FROM webhook_deliveries WHERE error IS NOT NULL AND created_at >= ${since}) AS failed`,
    (rows) => rows[0]!
  ).pipe(Effect.orDie, spanWhenExported("WebhookReads.deliveryBacklog"))
