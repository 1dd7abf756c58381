/**
 * The console's delivery log lists a store's notification messages newest first: an index in that order,
 * so the log reads one store's page without scanning every store's messages.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX notification_messages_store_newest ON notification_messages (store_id, created_at DESC, id DESC)`
})
