/**
 * Analytics, ledger reports, revenue shares and risk cases.
 *
 * - Revenue shares: agreements per store; the active ones of a store sum to at most 100 %, checked in the
 *   transaction that changes them while it holds the store's row lock, so two concurrent creates cannot
 *   both pass. A paid payment moves each active share from `merchant_payable` to the new
 *   `revenue_share_payable` account in its own journal entry; a refund moves it back in proportion.
 * - Analytics: a daily rollup per store, mode, UTC day and currency (payments paid, revenue, refunds),
 *   kept by the `analytics` outbox consumer, which recomputes the day an event touched from the payments
 *   and refunds of that day (so applying an event twice changes nothing). Filled here from the history.
 * - Risk cases: at most one open (or investigating) case per store, kind and subject, by a partial unique
 *   index, so rules racing on two events open one case. The risk rules are an outbox consumer.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { subscribeOutboxConsumer } from "./0010_outbox_consumers.ts"

const RISK_CONSUMER = "risk"
const ANALYTICS_CONSUMER = "analytics"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE journal_lines DROP CONSTRAINT journal_lines_account_check`
  yield* sql`
    ALTER TABLE journal_lines ADD CONSTRAINT journal_lines_account_check
      CHECK (account IN ('provider_clearing', 'merchant_payable', 'refunds', 'revenue_share_payable'))`

  yield* sql`
    CREATE TABLE revenue_shares (
      id          text PRIMARY KEY,
      store_id    text NOT NULL REFERENCES stores (id),
      party       text NOT NULL,
      percent     numeric(7, 4) NOT NULL CHECK (percent > 0 AND percent <= 100),
      active      boolean NOT NULL DEFAULT true,
      created_at  timestamptz(3) NOT NULL,
      updated_at  timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX revenue_shares_store ON revenue_shares (store_id, created_at DESC, id DESC)`

  yield* sql`
    CREATE INDEX payments_paid_day ON payments (store_id, livemode, paid_at)
      INCLUDE (amount, currency, amount_refunded, customer_id) WHERE paid_at IS NOT NULL`
  yield* sql`CREATE INDEX refunds_store_day ON refunds (store_id, livemode, created_at) INCLUDE (amount, currency)`
  yield* sql`
    CREATE TABLE analytics_daily (
      store_id    text NOT NULL,
      livemode    boolean NOT NULL,
      day         date NOT NULL,
      currency    text NOT NULL,
      paid_count  integer NOT NULL,
      revenue     bigint NOT NULL,
      refunds     bigint NOT NULL,
      PRIMARY KEY (store_id, livemode, day, currency)
    )`
  yield* sql`
    INSERT INTO analytics_daily (store_id, livemode, day, currency, paid_count, revenue, refunds)
    SELECT store_id, livemode, day, currency, sum(paid_count), sum(revenue), sum(refunds)
    FROM (
      SELECT store_id, livemode, (paid_at AT TIME ZONE 'UTC')::date AS day, currency,
             count(*) AS paid_count, sum(amount) AS revenue, 0 AS refunds
      FROM payments WHERE paid_at IS NOT NULL GROUP BY 1, 2, 3, 4
      UNION ALL
      SELECT store_id, livemode, (created_at AT TIME ZONE 'UTC')::date, currency, 0, 0, sum(amount)
      FROM refunds WHERE status = 'succeeded' GROUP BY 1, 2, 3, 4
    ) history
    GROUP BY 1, 2, 3, 4`
  yield* subscribeOutboxConsumer(ANALYTICS_CONSUMER, ["payment.completed", "payment.refunded"])

  yield* sql`
    CREATE TABLE risk_cases (
      id            text PRIMARY KEY,
      store_id      text NOT NULL REFERENCES stores (id),
      livemode      boolean NOT NULL,
      kind          text NOT NULL CHECK (kind IN ('velocity', 'large_amount', 'refund_ratio', 'referral_fraud')),
      subject_type  text NOT NULL,
      subject_id    text NOT NULL,
      status        text NOT NULL CHECK (status IN ('open', 'investigating', 'resolved', 'dismissed')),
      resolution    text,
      details       jsonb NOT NULL DEFAULT '{}',
      created_at    timestamptz(3) NOT NULL,
      updated_at    timestamptz(3) NOT NULL
    )`
  yield* sql`
    CREATE UNIQUE INDEX risk_cases_one_open ON risk_cases (store_id, livemode, kind, subject_type, subject_id)
      WHERE status IN ('open', 'investigating')`
  yield* sql`CREATE INDEX risk_cases_store ON risk_cases (store_id, created_at DESC, id DESC)`

  yield* subscribeOutboxConsumer(RISK_CONSUMER, ["payment.completed", "payment.refunded", "referral.flagged"])
})
