/**
 * Loyalty earning moves onto the shared outbox consumer queue (0010): the events it had not applied yet
 * are queued for it, and its own mark on the outbox (`loyalty_applied_at`) goes.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { subscribeOutboxConsumer } from "./0010_outbox_consumers.ts"

const LOYALTY_CONSUMER = "loyalty"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* subscribeOutboxConsumer(LOYALTY_CONSUMER, ["payment.completed", "payment.refunded"])
  yield* sql`
    INSERT INTO outbox_pending (consumer, position)
    SELECT ${LOYALTY_CONSUMER}, position FROM outbox
    WHERE loyalty_applied_at IS NULL AND type IN ('payment.completed', 'payment.refunded')
    ON CONFLICT DO NOTHING`
  yield* sql`DROP INDEX outbox_loyalty_pending`
  yield* sql`ALTER TABLE outbox DROP COLUMN loyalty_applied_at`
})
