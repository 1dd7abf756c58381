/**
 * Promotions award their bonus points from the outbox: the `promotions` consumer gets every
 * `payment.completed` event (src/promotions/Awarding.ts). Ending a promotion whose `ends_at` passed is
 * found by the running-promotions index on its end date.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { subscribeOutboxConsumer } from "./0010_outbox_consumers.ts"

const PROMOTIONS_CONSUMER = "promotions"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* subscribeOutboxConsumer(PROMOTIONS_CONSUMER, ["payment.completed"])
  yield* sql`CREATE INDEX promotions_ending ON promotions (ends_at) WHERE status IN ('active', 'paused')`
})
