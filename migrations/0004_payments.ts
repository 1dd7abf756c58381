/**
 * Payments, refunds and the double-entry ledger. Amounts are integer minor units (bigint).
 *
 * Journal entries are immutable (UPDATE and DELETE are refused by a trigger) and balanced: a deferred
 * constraint trigger checks at commit that each entry's debits equal its credits, so an unbalanced
 * entry can never be committed, whatever code writes it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE payments (
      id               text PRIMARY KEY,
      store_id         text NOT NULL REFERENCES stores (id),
      livemode         boolean NOT NULL,
      status           text NOT NULL CHECK (status IN
                         ('pending', 'scanned', 'paid', 'expired', 'failed', 'cancelled', 'refunded', 'partially_refunded')),
      amount           bigint NOT NULL CHECK (amount > 0),
      currency         text NOT NULL CHECK (currency IN ('USD', 'KHR')),
      amount_refunded  bigint NOT NULL DEFAULT 0,
      version          integer NOT NULL DEFAULT 1,
      reference_id     text,
      description      text,
      metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
      provider         text NOT NULL,
      qr_payload       text NOT NULL,
      qr_md5           text NOT NULL,
      expires_at       timestamptz(3) NOT NULL,
      scanned_at       timestamptz(3),
      paid_at          timestamptz(3),
      failed_at        timestamptz(3),
      expired_at       timestamptz(3),
      cancelled_at     timestamptz(3),
      created_at       timestamptz(3) NOT NULL DEFAULT now(),
      updated_at       timestamptz(3) NOT NULL DEFAULT now(),
      CHECK (amount_refunded >= 0 AND amount_refunded <= amount)
    )`
  yield* sql`CREATE INDEX payments_list ON payments (store_id, livemode, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX payments_reference ON payments (store_id, livemode, reference_id)`
  yield* sql`CREATE INDEX payments_open ON payments (expires_at) WHERE status IN ('pending', 'scanned')`
  yield* sql`CREATE INDEX payments_md5 ON payments (qr_md5)`

  // Every message that changed a payment, by its idempotency key: a replayed message finds its row and
  // answers without applying the change again.
  yield* sql`
    CREATE TABLE payment_transitions (
      payment_id   text NOT NULL REFERENCES payments (id),
      request_key  text NOT NULL,
      transition   text NOT NULL,
      created_at   timestamptz(3) NOT NULL DEFAULT now(),
      PRIMARY KEY (payment_id, request_key)
    )`

  yield* sql`
    CREATE TABLE refunds (
      id          text PRIMARY KEY,
      payment_id  text NOT NULL REFERENCES payments (id),
      store_id    text NOT NULL REFERENCES stores (id),
      livemode    boolean NOT NULL,
      amount      bigint NOT NULL CHECK (amount > 0),
      currency    text NOT NULL,
      reason      text,
      status      text NOT NULL DEFAULT 'succeeded',
      request_key text NOT NULL,
      created_at  timestamptz(3) NOT NULL DEFAULT now(),
      UNIQUE (payment_id, request_key)
    )`
  yield* sql`CREATE INDEX refunds_payment ON refunds (payment_id, created_at DESC, id DESC)`

  yield* sql`
    CREATE TABLE journal_entries (
      id          text PRIMARY KEY,
      store_id    text NOT NULL REFERENCES stores (id),
      livemode    boolean NOT NULL,
      currency    text NOT NULL,
      kind        text NOT NULL CHECK (kind IN ('payment', 'refund', 'adjustment')),
      payment_id  text REFERENCES payments (id),
      refund_id   text REFERENCES refunds (id),
      memo        text,
      created_at  timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX journal_entries_payment ON journal_entries (payment_id) WHERE kind = 'payment'`
  yield* sql`CREATE UNIQUE INDEX journal_entries_refund ON journal_entries (refund_id) WHERE kind = 'refund'`
  yield* sql`CREATE INDEX journal_entries_store ON journal_entries (store_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE journal_lines (
      entry_id  text NOT NULL REFERENCES journal_entries (id),
      line      integer NOT NULL,
      account   text NOT NULL CHECK (account IN ('provider_clearing', 'merchant_payable', 'refunds')),
      debit     bigint NOT NULL DEFAULT 0 CHECK (debit >= 0),
      credit    bigint NOT NULL DEFAULT 0 CHECK (credit >= 0),
      PRIMARY KEY (entry_id, line),
      CHECK ((debit = 0) <> (credit = 0))
    )`

  // When the request that owns an idempotency key started; a request that died leaves its key in
  // progress, and after a lease another request may take the key over.
  yield* sql`ALTER TABLE idempotency_keys ADD COLUMN locked_at timestamptz(3) NOT NULL DEFAULT now()`
  // json, not jsonb: a replayed answer is the original, byte for byte (jsonb would reorder its keys).
  yield* sql`ALTER TABLE idempotency_keys ALTER COLUMN response TYPE json USING response::json`
  // The identity of the work a key stands for: a retry that takes an abandoned key over continues the
  // same work (the same entity message); the same key used again after it expired starts new work.
  yield* sql`ALTER TABLE idempotency_keys ADD COLUMN request_token text NOT NULL DEFAULT md5(random()::text)`

  yield* sql.unsafe(`
    CREATE FUNCTION journal_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'journal rows are immutable: post a new entry instead';
    END $$`)
  yield* sql.unsafe(`
    CREATE TRIGGER journal_entries_immutable BEFORE UPDATE OR DELETE ON journal_entries
    FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`)
  yield* sql.unsafe(`
    CREATE TRIGGER journal_lines_immutable BEFORE UPDATE OR DELETE ON journal_lines
    FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`)
  yield* sql.unsafe(`
    CREATE FUNCTION journal_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      imbalance bigint;
      line_count integer;
    BEGIN
      SELECT coalesce(sum(debit) - sum(credit), 0), count(*) INTO imbalance, line_count
      FROM journal_lines WHERE entry_id = NEW.entry_id;
      IF imbalance <> 0 OR line_count < 2 THEN
        RAISE EXCEPTION 'journal entry % is not balanced (debits - credits = %, lines = %)', NEW.entry_id, imbalance, line_count;
      END IF;
      RETURN NULL;
    END $$`)
  yield* sql.unsafe(`
    CREATE CONSTRAINT TRIGGER journal_lines_balanced AFTER INSERT ON journal_lines
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION journal_check_balanced()`)
})
