/**
 * How customers, their preferences, consent events and the customer 360 look on the wire (API.md
 * "Customers, consent, erasure").
 */
import {
  ConsentActor,
  ConsentEvent,
  Customer,
  Customer360,
  CustomerMetrics,
  CustomerPreferences,
  CustomerTier
} from "../../domain/Customers.ts"
import type { Currency } from "../../domain/Money.ts"
import { formatAmount } from "../platform/Money.ts"
import type { LinkUrls } from "../platform/PublicLinks.ts"
import type { CustomerPaymentFigures } from "../payments/Reads.ts"
import type { PaymentRow } from "../payments/Reads.ts"
import { toPayment } from "../payments/View.ts"
import type { ConsentEventRow, CustomerRow } from "./Repo.ts"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

const customerFields = (row: CustomerRow, links: LinkUrls) => ({
  id: row.id,
  object: "customer" as const,
  store_id: row.store_id,
  livemode: row.livemode,
  email: row.email,
  external_id: row.external_id,
  name: row.name,
  phone: row.phone,
  metadata: row.metadata,
  points_balance: row.points_balance,
  lifetime_points: row.lifetime_points,
  tier: row.tier === null ? null : new CustomerTier(row.tier),
  referral_code: row.referral_code,
  erased_at: iso(row.erased_at),
  wallet_url: links.wallet(row.id, row.public_link_version),
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

/** The customer, with its wallet link under `links` (the public base URL of the moment). */
export const toCustomer = (row: CustomerRow, links: LinkUrls): Customer => new Customer(customerFields(row, links))

export const toPreferences = (row: CustomerRow): CustomerPreferences =>
  new CustomerPreferences({
    object: "customer_preferences",
    customer_id: row.id,
    email: row.prefers_email,
    sms: row.prefers_sms,
    telegram: row.prefers_telegram,
    marketing: row.prefers_marketing,
    updated_at: row.preferences_updated_at.toISOString()
  })

export const toConsentEvent = (row: ConsentEventRow): ConsentEvent =>
  new ConsentEvent({
    id: row.id,
    object: "consent_event",
    customer_id: row.customer_id,
    purpose: row.purpose,
    granted: row.granted,
    source: row.source,
    policy_version: row.policy_version,
    actor: new ConsentActor({ type: row.actor_type, id: row.actor_id }),
    created_at: row.created_at.toISOString()
  })

const byCurrency = (rows: ReadonlyArray<CustomerPaymentFigures>, amountOf: (row: CustomerPaymentFigures) => bigint) => {
  const amount = (currency: Currency) => {
    const row = rows.find((candidate) => candidate.currency === currency)
    return formatAmount(row === undefined ? 0n : amountOf(row), currency)
  }
  return { USD: amount("USD"), KHR: amount("KHR") }
}

/** The first or the last (`pick`: Math.min or Math.max) of some instants, as ISO 8601. */
const instantOf = (dates: ReadonlyArray<Date | null>, pick: (a: number, b: number) => number) => {
  const times = dates.filter((date): date is Date => date !== null).map((date) => date.getTime())
  return times.length === 0 ? null : new Date(times.reduce((a, b) => pick(a, b))).toISOString()
}

/** The customer 360: the customer, its figures per currency summed up, and its newest payments. */
export const toCustomer360 = (
  row: CustomerRow,
  metrics: ReadonlyArray<CustomerPaymentFigures>,
  payments: ReadonlyArray<PaymentRow>,
  baseUrl: string,
  links: LinkUrls
): Customer360 =>
  new Customer360({
    ...customerFields(row, links),
    metrics: new CustomerMetrics({
      payments_count: metrics.reduce((sum, currency) => sum + currency.paid_count, 0),
      lifetime_value: byCurrency(metrics, (currency) => currency.net),
      refunded: byCurrency(metrics, (currency) => currency.refunded),
      first_payment_at: instantOf(metrics.map((currency) => currency.first_paid_at), Math.min),
      last_payment_at: instantOf(metrics.map((currency) => currency.last_paid_at), Math.max)
    }),
    recent_payments: payments.map((payment) => toPayment(payment, baseUrl))
  })
