/**
 * Segments (saved rule sets) and promotions (bonus points through an approval workflow), the append-only
 * audit trail of every promotion move. (The promotions' outbox consumer of paid payments subscribes in a
 * later migration, together with the consumer itself: a subscription without its consumer would queue
 * events for no one.)
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE segments (
      id          text PRIMARY KEY,
      store_id    text NOT NULL REFERENCES stores (id),
      name        text NOT NULL,
      match       text NOT NULL CHECK (match IN ('all', 'any')),
      rules       jsonb NOT NULL,
      created_at  timestamptz(3) NOT NULL,
      updated_at  timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX segments_list ON segments (store_id, created_at DESC, id DESC)`

  yield* sql`
    CREATE TABLE promotions (
      id                   text PRIMARY KEY,
      store_id             text NOT NULL REFERENCES stores (id),
      name                 text NOT NULL,
      segment_id           text REFERENCES segments (id),
      bonus_points         integer NOT NULL CHECK (bonus_points > 0),
      min_amount           bigint CHECK (min_amount > 0),
      min_currency         text CHECK (min_currency IN ('USD', 'KHR')),
      starts_at            timestamptz(3) NOT NULL,
      ends_at              timestamptz(3) NOT NULL,
      status               text NOT NULL CHECK (status IN
                             ('draft', 'pending_approval', 'approved', 'rejected', 'active', 'paused', 'ended')),
      rejection_reason     text,
      submitted_by         text,
      approved_by          text,
      created_at           timestamptz(3) NOT NULL,
      updated_at           timestamptz(3) NOT NULL,
      CHECK (ends_at > starts_at),
      CHECK ((min_amount IS NULL) = (min_currency IS NULL))
    )`
  yield* sql`CREATE INDEX promotions_list ON promotions (store_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX promotions_running ON promotions (store_id) WHERE status = 'active'`
  yield* sql`CREATE INDEX promotions_segment ON promotions (segment_id) WHERE segment_id IS NOT NULL`

  yield* sql`
    CREATE TABLE promotion_audit (
      promotion_id  text NOT NULL REFERENCES promotions (id) ON DELETE CASCADE,
      seq           bigserial,
      action        text NOT NULL,
      from_status   text,
      to_status     text NOT NULL,
      user_id       text,
      reason        text,
      at            timestamptz(3) NOT NULL,
      PRIMARY KEY (promotion_id, seq)
    )`
  // The audit trail is append-only: a row is never changed (deleting the promotion takes its trail).
  yield* sql`
    CREATE FUNCTION promotion_audit_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'promotion_audit rows are append-only';
    END $$`
  yield* sql`
    CREATE TRIGGER promotion_audit_immutable BEFORE UPDATE ON promotion_audit
    FOR EACH ROW EXECUTE FUNCTION promotion_audit_immutable()`

  // Per-customer metrics read paid payments of a customer; the customers index (customer_id, created_at)
  // does not cover paid_at, amount, currency.
  yield* sql`
    CREATE INDEX payments_customer_paid ON payments (customer_id, paid_at)
      INCLUDE (amount, amount_refunded, currency)
      WHERE customer_id IS NOT NULL AND paid_at IS NOT NULL`
})
