/**
 * Every migration, in order. A static record (rather than a directory scan) so the same code runs
 * unchanged on Node and on Deno. Add a new migration here with the next number.
 */
import { Migrator } from "@effect/sql"
import Migration0001 from "./0001_platform.ts"
import Migration0002 from "./0002_accounts.ts"
import Migration0003 from "./0003_stores.ts"
import Migration0004 from "./0004_payments.ts"
import Migration0005 from "./0005_webhooks.ts"
import Migration0006 from "./0006_links.ts"
import Migration0007 from "./0007_account_and_payment_hardening.ts"
import Migration0008 from "./0008_customers.ts"
import Migration0009 from "./0009_loyalty.ts"
import Migration0010 from "./0010_outbox_consumers.ts"
import Migration0011 from "./0011_referrals.ts"
import Migration0012 from "./0012_promotions.ts"
import Migration0014 from "./0014_analytics_ledger_risk.ts"
import Migration0015 from "./0015_connectors_billing.ts"
import Migration0016 from "./0016_ai.ts"
import Migration0017 from "./0017_loyalty_outbox_consumer.ts"
import Migration0018 from "./0018_promotion_awards.ts"
import Migration0019 from "./0019_games.ts"
import Migration0020 from "./0020_billing_payments.ts"
import Migration0021 from "./0021_public_links.ts"
import Migration0022 from "./0022_rate_limits.ts"
import Migration0023 from "./0023_journal_entry_ids.ts"
import Migration0024 from "./0024_mail_delivery.ts"
import Migration0025 from "./0025_console_sessions.ts"
import Migration0032 from "./0032_notification_log.ts"
import Migration0035 from "./0035_invitations.ts"
import Migration0036 from "./0036_email_changes.ts"

export const migrations = Migrator.fromRecord({
  "0001_platform": Migration0001,
  "0002_accounts": Migration0002,
  "0003_stores": Migration0003,
  "0004_payments": Migration0004,
  "0005_webhooks": Migration0005,
  "0006_links": Migration0006,
  "0007_account_and_payment_hardening": Migration0007,
  "0008_customers": Migration0008,
  "0009_loyalty": Migration0009,
  "0010_outbox_consumers": Migration0010,
  "0011_referrals": Migration0011,
  "0012_promotions": Migration0012,
  "0014_analytics_ledger_risk": Migration0014,
  "0015_connectors_billing": Migration0015,
  "0016_ai": Migration0016,
  "0017_loyalty_outbox_consumer": Migration0017,
  "0018_promotion_awards": Migration0018,
  "0019_games": Migration0019,
  "0020_billing_payments": Migration0020,
  "0021_public_links": Migration0021,
  "0022_rate_limits": Migration0022,
  "0023_journal_entry_ids": Migration0023,
  "0024_mail_delivery": Migration0024,
  "0025_console_sessions": Migration0025,
  "0032_notification_log": Migration0032,
  "0035_invitations": Migration0035,
  "0036_email_changes": Migration0036
})
