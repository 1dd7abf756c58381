/**
 * Mail delivery: the `outgoing_mail` table, where mail was only stored, becomes the queue the sender
 * works from. Each message has a status (queued → sent, or failed once given up), its attempts, the last
 * error and the provider's message id; the HTML part is sealed beside the text part; a deduplication key
 * makes a mail that a retried event asks for again be queued once. Receipts subscribe to payment events.
 *
 * Mail to a customer names the customer; when the customer is erased, a trigger clears the address and
 * the body of their mail and withdraws what was still queued, so erasure leaves no copy of either here.
 *
 * Mail stored before delivery existed: what is older than a day is marked failed rather than sent now
 * (its links have expired); the rest is delivered.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { RECEIPT_EVENT_TYPES, RECEIPTS_CONSUMER } from "../src/mail/Names.ts"
import { subscribeOutboxConsumer } from "./0010_outbox_consumers.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE outgoing_mail
      ALTER COLUMN body_sealed DROP NOT NULL,
      ADD COLUMN html_sealed          text,
      ADD COLUMN kind                 text NOT NULL DEFAULT 'account',
      ADD COLUMN status               text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
      ADD COLUMN attempts             integer NOT NULL DEFAULT 0,
      ADD COLUMN last_error           text,
      ADD COLUMN provider_message_id  text,
      ADD COLUMN next_attempt_at      timestamptz(3) NOT NULL DEFAULT now(),
      ADD COLUMN claimed_until        timestamptz(3),
      ADD COLUMN finished_at          timestamptz(3),
      ADD COLUMN dedupe_key           text,
      ADD COLUMN customer_id          text`
  yield* sql`CREATE UNIQUE INDEX outgoing_mail_dedupe ON outgoing_mail (dedupe_key) WHERE dedupe_key IS NOT NULL`
  yield* sql`CREATE INDEX outgoing_mail_due ON outgoing_mail (next_attempt_at) WHERE status = 'queued'`
  yield* sql`CREATE INDEX outgoing_mail_finished ON outgoing_mail (finished_at) WHERE status <> 'queued'`
  yield* sql`CREATE INDEX outgoing_mail_list ON outgoing_mail (created_at DESC, id DESC)`
  yield* sql`
    UPDATE outgoing_mail SET status = 'failed', finished_at = now(),
      last_error = 'stored before mail delivery was configured'
    WHERE created_at < now() - interval '1 day'`
  yield* sql`CREATE INDEX outgoing_mail_customer ON outgoing_mail (customer_id) WHERE customer_id IS NOT NULL`
  yield* sql.unsafe(`
    CREATE FUNCTION outgoing_mail_forget_erased_customer() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE outgoing_mail SET recipient = 'erased', body_sealed = NULL, html_sealed = NULL,
        status = CASE WHEN status = 'queued' THEN 'failed' ELSE status END,
        last_error = CASE WHEN status = 'queued' THEN 'the customer was erased' ELSE last_error END,
        finished_at = coalesce(finished_at, now()), claimed_until = NULL
      WHERE customer_id = NEW.id;
      RETURN NULL;
    END $$`)
  yield* sql`
    CREATE TRIGGER outgoing_mail_forget_erased_customer AFTER UPDATE OF erased_at ON customers
      FOR EACH ROW WHEN (OLD.erased_at IS NULL AND NEW.erased_at IS NOT NULL)
      EXECUTE FUNCTION outgoing_mail_forget_erased_customer()`
  yield* subscribeOutboxConsumer(RECEIPTS_CONSUMER, RECEIPT_EVENT_TYPES)
})
