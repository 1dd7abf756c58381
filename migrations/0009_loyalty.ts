/**
 * Loyalty: a program per store, tiers, rewards with stock, redemptions with voucher codes, and each
 * customer's wallet (balance and lifetime points on the customer, every change an append-only points entry).
 *
 * - A balance never goes below zero and a stock never below zero: CHECK constraints, whatever code sends.
 * - Points entries are keyed per customer by the message that made them (`entry_key`, unique): a message
 *   replayed after its transaction committed finds its own entry instead of applying again.
 * - The outbox gains `loyalty_applied_at`: the loyalty consumer marks each paid or refunded payment's event
 *   once the wallet has it, and retention keeps such an event until it is marked.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    ALTER TABLE customers
      ADD COLUMN points_balance  integer NOT NULL DEFAULT 0 CHECK (points_balance >= 0),
      ADD COLUMN lifetime_points integer NOT NULL DEFAULT 0 CHECK (lifetime_points >= 0)`

  yield* sql`
    CREATE TABLE loyalty_programs (
      store_id        text PRIMARY KEY REFERENCES stores (id),
      active          boolean NOT NULL,
      points_per_usd  text NOT NULL,
      points_per_khr  text NOT NULL,
      updated_at      timestamptz(3) NOT NULL
    )`

  yield* sql`
    CREATE TABLE loyalty_tiers (
      id               text PRIMARY KEY,
      store_id         text NOT NULL REFERENCES stores (id),
      name             text NOT NULL,
      threshold        integer NOT NULL CHECK (threshold >= 0),
      earn_multiplier  text NOT NULL,
      created_at       timestamptz(3) NOT NULL,
      UNIQUE (store_id, threshold)
    )`

  yield* sql`
    CREATE TABLE loyalty_rewards (
      id           text PRIMARY KEY,
      store_id     text NOT NULL REFERENCES stores (id),
      name         text NOT NULL,
      description  text,
      points_cost  integer NOT NULL CHECK (points_cost > 0),
      stock        integer CHECK (stock >= 0),
      active       boolean NOT NULL,
      created_at   timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX loyalty_rewards_store ON loyalty_rewards (store_id, created_at DESC, id DESC)`

  yield* sql`
    CREATE TABLE loyalty_redemptions (
      id            text PRIMARY KEY,
      store_id      text NOT NULL REFERENCES stores (id),
      livemode      boolean NOT NULL,
      customer_id   text NOT NULL REFERENCES customers (id),
      reward_id     text REFERENCES loyalty_rewards (id),
      points        integer NOT NULL CHECK (points > 0),
      status        text NOT NULL CHECK (status IN ('issued', 'fulfilled', 'cancelled')),
      voucher_code  text NOT NULL UNIQUE,
      reason        text,
      cancel_key    text,
      created_at    timestamptz(3) NOT NULL,
      fulfilled_at  timestamptz(3),
      cancelled_at  timestamptz(3)
    )`
  yield* sql`CREATE INDEX loyalty_redemptions_store ON loyalty_redemptions (store_id, livemode, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX loyalty_redemptions_reward ON loyalty_redemptions (reward_id) WHERE reward_id IS NOT NULL`

  yield* sql`
    CREATE TABLE points_entries (
      id             text PRIMARY KEY,
      customer_id    text NOT NULL REFERENCES customers (id),
      store_id       text NOT NULL,
      livemode       boolean NOT NULL,
      type           text NOT NULL CHECK (type IN
                       ('earn', 'reverse', 'redeem', 'redeem_cancel', 'adjust', 'referral', 'promotion', 'game')),
      points         integer NOT NULL,
      balance_after  integer NOT NULL CHECK (balance_after >= 0),
      shortfall      integer NOT NULL DEFAULT 0,
      payment_id     text,
      redemption_id  text,
      reason         text,
      entry_key      text NOT NULL,
      created_at     timestamptz(3) NOT NULL,
      UNIQUE (customer_id, entry_key)
    )`
  yield* sql`CREATE INDEX points_entries_customer ON points_entries (customer_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX points_entries_payment ON points_entries (payment_id) WHERE payment_id IS NOT NULL`
  yield* sql.unsafe(`
    CREATE FUNCTION points_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'points entries are append-only';
    END $$`)
  yield* sql.unsafe(`
    CREATE TRIGGER points_entries_append_only BEFORE UPDATE OR DELETE ON points_entries
    FOR EACH ROW EXECUTE FUNCTION points_entries_append_only()`)

  yield* sql`ALTER TABLE outbox ADD COLUMN loyalty_applied_at timestamptz`
  yield* sql`
    CREATE INDEX outbox_loyalty_pending ON outbox (position)
    WHERE loyalty_applied_at IS NULL AND type IN ('payment.completed', 'payment.refunded')`
})
