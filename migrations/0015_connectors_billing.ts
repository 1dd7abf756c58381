/**
 * Connectors, messaging notifications and subscription billing.
 *
 * - A connector is a webhook endpoint the console does not list as one (`webhook_endpoints.connector`):
 *   its events, signing secret, queue, retries and delivery records are the webhook dispatcher's, so there
 *   is one delivery machinery. The connector row adds its marketplace type, name and config (sealed).
 * - Notification configs per store and channel, and every message sent (one per channel and event, by a
 *   unique key, so a replayed event is not sent twice), with its outcome and next attempt.
 * - Subscriptions per organization, plan history and subscription invoices (paid at most once).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { subscribeOutboxConsumer } from "./0010_outbox_consumers.ts"

const NOTIFICATIONS_CONSUMER = "notifications"
const NOTIFICATION_EVENT_TYPES = [
  "payment.completed",
  "payment.refunded",
  "loyalty.redemption.created",
  "risk.case_opened"
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE webhook_endpoints ADD COLUMN connector boolean NOT NULL DEFAULT false`
  yield* sql`
    CREATE TABLE connectors (
      id            text PRIMARY KEY,
      store_id      text NOT NULL REFERENCES stores (id),
      endpoint_id   text NOT NULL UNIQUE REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      type          text NOT NULL,
      name          text NOT NULL,
      config_sealed text NOT NULL,
      created_at    timestamptz(3) NOT NULL,
      updated_at    timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX connectors_store ON connectors (store_id, created_at DESC, id DESC)`

  yield* sql`
    CREATE TABLE notification_configs (
      store_id     text NOT NULL REFERENCES stores (id),
      channel      text NOT NULL CHECK (channel IN ('telegram', 'whatsapp', 'sms', 'signal')),
      destination  text,
      events       text[] NOT NULL,
      enabled      boolean NOT NULL DEFAULT false,
      updated_at   timestamptz(3) NOT NULL,
      PRIMARY KEY (store_id, channel)
    )`
  yield* sql`
    CREATE TABLE notification_messages (
      id                text PRIMARY KEY,
      store_id          text NOT NULL REFERENCES stores (id),
      channel           text NOT NULL,
      destination       text NOT NULL,
      event_id          text NOT NULL,
      event_type        text NOT NULL,
      text              text NOT NULL,
      status            text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
      attempts          integer NOT NULL DEFAULT 0,
      last_status_code  integer,
      last_error        text,
      next_attempt_at   timestamptz(3),
      created_at        timestamptz(3) NOT NULL,
      UNIQUE (store_id, channel, event_id)
    )`
  yield* sql`CREATE INDEX notification_messages_due ON notification_messages (next_attempt_at) WHERE status = 'pending'`
  yield* subscribeOutboxConsumer(NOTIFICATIONS_CONSUMER, NOTIFICATION_EVENT_TYPES)

  yield* sql`
    CREATE TABLE subscriptions (
      organization_id     text PRIMARY KEY REFERENCES organizations (id),
      plan_id             text NOT NULL,
      status              text NOT NULL,
      current_period_end  timestamptz(3),
      updated_at          timestamptz(3) NOT NULL
    )`
  yield* sql`
    CREATE TABLE plan_changes (
      id               bigserial PRIMARY KEY,
      organization_id  text NOT NULL REFERENCES organizations (id),
      from_plan        text,
      to_plan          text NOT NULL,
      invoice_id       text,
      created_at       timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX plan_changes_org ON plan_changes (organization_id, id DESC)`
  yield* sql`
    CREATE TABLE subscription_invoices (
      id               text PRIMARY KEY,
      organization_id  text NOT NULL REFERENCES organizations (id),
      plan_id          text NOT NULL,
      amount           bigint NOT NULL CHECK (amount > 0),
      currency         text NOT NULL CHECK (currency = 'USD'),
      status           text NOT NULL CHECK (status IN ('open', 'paid', 'void')),
      qr_payload       text NOT NULL,
      qr_md5           text NOT NULL,
      created_at       timestamptz(3) NOT NULL,
      paid_at          timestamptz(3)
    )`
  yield* sql`CREATE INDEX subscription_invoices_org ON subscription_invoices (organization_id, created_at DESC, id DESC)`
})
