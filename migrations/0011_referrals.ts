/**
 * Referrals and affiliate commissions: a program per store, each customer's own referral code (on the
 * customer, unique across the service, since the share URL `/r/{code}` names no store), visits of share
 * links, referrals (one per referee, by a unique key) and commissions (one per paid payment of a referee,
 * by a unique key), so a replayed payment event never converts or pays twice.
 *
 * The referrals consumer of the outbox (src/referrals/Conversion.ts) gets every paid and refunded payment.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { subscribeOutboxConsumer } from "./0010_outbox_consumers.ts"

const REFERRALS_CONSUMER = "referrals"
const REFERRAL_PAYMENT_EVENTS = ["payment.completed", "payment.refunded"] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE customers ADD COLUMN referral_code text`
  yield* sql`CREATE UNIQUE INDEX customers_referral_code ON customers (referral_code) WHERE referral_code IS NOT NULL`

  yield* sql`
    CREATE TABLE referral_programs (
      store_id                text PRIMARY KEY REFERENCES stores (id),
      active                  boolean NOT NULL,
      referrer_points         integer NOT NULL CHECK (referrer_points >= 0),
      referee_points          integer NOT NULL CHECK (referee_points >= 0),
      commission_percent      text NOT NULL,
      commission_window_days  integer NOT NULL CHECK (commission_window_days BETWEEN 0 AND 3650),
      max_referrals_per_day   integer NOT NULL CHECK (max_referrals_per_day >= 0),
      updated_at              timestamptz(3) NOT NULL
    )`

  yield* sql`
    CREATE TABLE referral_visits (
      id          bigserial PRIMARY KEY,
      store_id    text NOT NULL REFERENCES stores (id),
      livemode    boolean NOT NULL,
      referrer_id text NOT NULL REFERENCES customers (id),
      created_at  timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX referral_visits_store ON referral_visits (store_id, livemode)`

  yield* sql`
    CREATE TABLE referrals (
      id              text PRIMARY KEY,
      store_id        text NOT NULL REFERENCES stores (id),
      livemode        boolean NOT NULL,
      referrer_id     text NOT NULL REFERENCES customers (id),
      referee_id      text NOT NULL UNIQUE REFERENCES customers (id),
      status          text NOT NULL CHECK (status IN ('pending', 'converted', 'flagged', 'voided')),
      flags           jsonb NOT NULL DEFAULT '[]',
      converted_at    timestamptz(3),
      converting_payment_id text,
      referrer_points integer NOT NULL DEFAULT 0 CHECK (referrer_points >= 0),
      referee_points  integer NOT NULL DEFAULT 0 CHECK (referee_points >= 0),
      reviewed_by     text,
      reviewed_at     timestamptz(3),
      review_decision text CHECK (review_decision IN ('clear', 'void')),
      review_note     text,
      created_at      timestamptz(3) NOT NULL,
      CHECK (referrer_id <> referee_id)
    )`
  yield* sql`CREATE INDEX referrals_store ON referrals (store_id, livemode, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX referrals_referrer ON referrals (referrer_id, created_at)`
  yield* sql`CREATE INDEX referrals_flagged ON referrals (store_id, livemode, created_at DESC, id DESC) WHERE status = 'flagged'`

  yield* sql`
    CREATE TABLE commissions (
      id           text PRIMARY KEY,
      store_id     text NOT NULL REFERENCES stores (id),
      livemode     boolean NOT NULL,
      referral_id  text NOT NULL REFERENCES referrals (id),
      referrer_id  text NOT NULL REFERENCES customers (id),
      payment_id   text NOT NULL UNIQUE REFERENCES payments (id),
      base_amount  bigint NOT NULL CHECK (base_amount >= 0),
      amount       bigint NOT NULL CHECK (amount >= 0),
      currency     text NOT NULL CHECK (currency IN ('USD', 'KHR')),
      status       text NOT NULL CHECK (status IN ('held', 'accrued', 'paid', 'voided')),
      paid_at      timestamptz(3),
      created_at   timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX commissions_store ON commissions (store_id, livemode, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX commissions_referral ON commissions (referral_id)`
  yield* sql`CREATE INDEX commissions_referrer ON commissions (store_id, livemode, referrer_id, status)`

  yield* subscribeOutboxConsumer(REFERRALS_CONSUMER, REFERRAL_PAYMENT_EVENTS)
})
