/**
 * Subscription invoices are paid through the payments engine.
 *
 * - The platform's own organization and store (`PLATFORM_BILLING_STORE_ID`) receive the invoices' payments
 *   unless the `billing_store_id` platform setting names another store (the operator's live store).
 * - Each invoice points at the payment that carries its KHQR and checkout page; a payment pays at most one
 *   invoice (unique), and the `billing` outbox consumer turns a payment.completed of such a payment into
 *   the invoice paid (once: a conditional update) and the plan activated.
 * - Invoices made before this migration had a QR but no payment: they are voided. An organization has at
 *   most one open invoice (a partial unique index).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { subscribeOutboxConsumer } from "./0010_outbox_consumers.ts"

const BILLING_CONSUMER = "billing"
const BILLING_PAYMENT_EVENTS = ["payment.completed"] as const
const PLATFORM_BILLING_ORGANIZATION_ID = "org_PlatformBilling000000000"
const PLATFORM_BILLING_STORE_ID = "str_PlatformBilling000000000"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    INSERT INTO organizations (id, name) VALUES (${PLATFORM_BILLING_ORGANIZATION_ID}, 'Platform billing')
    ON CONFLICT (id) DO NOTHING`
  yield* sql`
    INSERT INTO stores (id, organization_id, name)
    VALUES (${PLATFORM_BILLING_STORE_ID}, ${PLATFORM_BILLING_ORGANIZATION_ID}, 'Subscriptions')
    ON CONFLICT (id) DO NOTHING`
  yield* sql`UPDATE subscription_invoices SET status = 'void' WHERE status = 'open'`
  yield* sql`ALTER TABLE subscription_invoices ADD COLUMN payment_id text UNIQUE REFERENCES payments (id)`
  yield* sql`ALTER TABLE subscription_invoices ADD COLUMN livemode boolean NOT NULL DEFAULT false`
  // One open invoice per organization: of two subscribes at once, one makes the invoice.
  yield* sql`CREATE UNIQUE INDEX subscription_invoices_open ON subscription_invoices (organization_id) WHERE status = 'open'`
  yield* subscribeOutboxConsumer(BILLING_CONSUMER, BILLING_PAYMENT_EVENTS)
})
