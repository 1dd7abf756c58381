/**
 * Customers of a store (per mode), their communication preferences, the append-only consent log, and
 * the customer a payment is for.
 *
 * - E-mail (case-insensitively) and external_id are unique per store and mode among customers that are
 *   not erased: partial unique indexes, so two creates racing on one address cannot both succeed, and an
 *   erased customer's address is free for a new customer.
 * - Search (the console) matches a substring of e-mail, name, phone (also as bare digits) and external_id:
 *   one stored, lower-cased text column with a trigram GIN index (pg_trgm), so `LIKE '%term%'` stays an
 *   index scan on a store with 100,000 customers.
 * - A payment's customer must be of the payment's own store and mode: the foreign key names all three.
 * - Consent events are never changed or deleted, except that erasure may clear their free text
 *   (`source`, `policy_version`): a trigger refuses anything else, whatever code sends it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A trusted extension since PostgreSQL 13: the database owner may create it without superuser rights.
  yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`

  yield* sql`
    CREATE TABLE customers (
      id                      text PRIMARY KEY,
      store_id                text NOT NULL REFERENCES stores (id),
      livemode                boolean NOT NULL,
      email                   text,
      external_id             text,
      name                    text,
      phone                   text,
      metadata                jsonb,
      prefers_email           boolean NOT NULL DEFAULT false,
      prefers_sms             boolean NOT NULL DEFAULT false,
      prefers_telegram        boolean NOT NULL DEFAULT false,
      prefers_marketing       boolean NOT NULL DEFAULT false,
      preferences_updated_at  timestamptz(3) NOT NULL,
      erased_at               timestamptz(3),
      created_at              timestamptz(3) NOT NULL,
      updated_at              timestamptz(3) NOT NULL,
      search_text             text GENERATED ALWAYS AS (lower(
                                coalesce(email, '') || ' ' || coalesce(name, '') || ' ' || coalesce(phone, '') || ' ' ||
                                regexp_replace(coalesce(phone, ''), '[^0-9]', '', 'g') || ' ' || coalesce(external_id, '')
                              )) STORED,
      UNIQUE (id, store_id, livemode),
      CHECK (erased_at IS NOT NULL OR metadata IS NOT NULL),
      CHECK (erased_at IS NULL OR
        (email IS NULL AND external_id IS NULL AND name IS NULL AND phone IS NULL AND metadata IS NULL))
    )`
  yield* sql`
    CREATE UNIQUE INDEX customers_email ON customers (store_id, livemode, lower(email))
    WHERE erased_at IS NULL AND email IS NOT NULL`
  yield* sql`
    CREATE UNIQUE INDEX customers_external_id ON customers (store_id, livemode, external_id)
    WHERE erased_at IS NULL AND external_id IS NOT NULL`
  yield* sql`
    CREATE INDEX customers_list ON customers (store_id, livemode, created_at DESC, id DESC) WHERE erased_at IS NULL`
  yield* sql`
    CREATE INDEX customers_search ON customers USING gin (search_text gin_trgm_ops) WHERE erased_at IS NULL`

  yield* sql`
    CREATE TABLE consent_events (
      id              text PRIMARY KEY,
      customer_id     text NOT NULL REFERENCES customers (id),
      purpose         text NOT NULL CHECK (purpose IN ('email', 'sms', 'telegram', 'marketing')),
      granted         boolean NOT NULL,
      source          text,
      policy_version  text,
      actor_type      text NOT NULL CHECK (actor_type IN ('api_key', 'user')),
      actor_id        text NOT NULL,
      created_at      timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX consent_events_customer ON consent_events (customer_id, created_at DESC, id DESC)`
  yield* sql.unsafe(`
    CREATE FUNCTION consent_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'consent events are append-only';
      END IF;
      IF NEW.id IS DISTINCT FROM OLD.id OR NEW.customer_id IS DISTINCT FROM OLD.customer_id
        OR NEW.purpose IS DISTINCT FROM OLD.purpose OR NEW.granted IS DISTINCT FROM OLD.granted
        OR NEW.actor_type IS DISTINCT FROM OLD.actor_type OR NEW.actor_id IS DISTINCT FROM OLD.actor_id
        OR NEW.created_at IS DISTINCT FROM OLD.created_at
        OR (NEW.source IS NOT NULL AND NEW.source IS DISTINCT FROM OLD.source)
        OR (NEW.policy_version IS NOT NULL AND NEW.policy_version IS DISTINCT FROM OLD.policy_version) THEN
        RAISE EXCEPTION 'consent events are append-only: only erasure may clear their free text';
      END IF;
      RETURN NEW;
    END $$`)
  yield* sql.unsafe(`
    CREATE TRIGGER consent_events_append_only BEFORE UPDATE OR DELETE ON consent_events
    FOR EACH ROW EXECUTE FUNCTION consent_events_append_only()`)

  yield* sql`ALTER TABLE payments ADD COLUMN customer_id text`
  yield* sql`
    ALTER TABLE payments ADD CONSTRAINT payments_customer
    FOREIGN KEY (customer_id, store_id, livemode) REFERENCES customers (id, store_id, livemode)`
  // The customer 360 and the payments list's customer filter: a customer's payments, newest first.
  yield* sql`
    CREATE INDEX payments_customer ON payments (customer_id, created_at DESC, id DESC) WHERE customer_id IS NOT NULL`
})
