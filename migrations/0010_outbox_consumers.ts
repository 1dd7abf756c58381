/**
 * Outbox consumers: areas that act on events after the change committed (conversions, bonus awards,
 * rollups, risk rules, notifications) each get their own queue of the outbox events they subscribed to.
 *
 * - `outbox_subscriptions` says which consumer wants which event types; an area's migration subscribes
 *   with `subscribeOutboxConsumer`.
 * - A trigger on the outbox copies each new event's position into `outbox_pending` once per subscribed
 *   consumer, in the transaction that writes the event: an event is queued for its consumers exactly
 *   when it commits, and a consumer deletes its row once it has applied the event.
 * - A queue of rows rather than a read position: outbox positions come from a sequence, so a later
 *   position can commit before an earlier one, and a cursor would skip the earlier event.
 * - Retention keeps an outbox event while any consumer still has it pending.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Queues every event of `types` written from now on for `consumer` (for use in a migration). */
export const subscribeOutboxConsumer = (consumer: string, types: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.forEach(types, (type) =>
      sql`INSERT INTO outbox_subscriptions (consumer, type) VALUES (${consumer}, ${type}) ON CONFLICT DO NOTHING`, { discard: true })
  })

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE outbox_subscriptions (
      consumer text NOT NULL,
      type     text NOT NULL,
      PRIMARY KEY (type, consumer)
    )`
  yield* sql`
    CREATE TABLE outbox_pending (
      consumer text   NOT NULL,
      position bigint NOT NULL,
      PRIMARY KEY (consumer, position)
    )`
  yield* sql`CREATE INDEX outbox_pending_position ON outbox_pending (position)`
  yield* sql`
    CREATE FUNCTION outbox_queue_for_consumers() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO outbox_pending (consumer, position)
        SELECT consumer, NEW.position FROM outbox_subscriptions WHERE type = NEW.type;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER outbox_queue_for_consumers AFTER INSERT ON outbox
      FOR EACH ROW EXECUTE FUNCTION outbox_queue_for_consumers()`
})
