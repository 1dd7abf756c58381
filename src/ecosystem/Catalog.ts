/**
 * The platform's products and shared services, as the public catalog lists them. Data, not code: add a
 * product by adding an entry. Ids are stable (clients may keep them); the order is the catalog's order.
 */
import type { EcosystemCategory } from "../../domain/Ecosystem.ts"

export interface CatalogEntry {
  readonly id: string
  readonly name: string
  readonly category: EcosystemCategory
  readonly description: string
  readonly url_path: string
}

export const ECOSYSTEM_CATALOG: ReadonlyArray<CatalogEntry> = [
  {
    id: "eco_payments_api",
    name: "Payments API",
    category: "payments",
    description: "Create KHQR payments in USD and KHR, follow them to paid, and refund them in full or in part.",
    url_path: "/v1/payments"
  },
  {
    id: "eco_hosted_checkout",
    name: "Hosted checkout",
    category: "payments",
    description: "A branded payment page with the QR code and live status; receipts once paid.",
    url_path: "/checkout/{id}"
  },
  {
    id: "eco_payment_links",
    name: "Payment links and invoices",
    category: "payments",
    description: "Shareable pages that take payments for a fixed or payer-chosen amount, and one-time invoices.",
    url_path: "/links/{id}"
  },
  {
    id: "eco_webhooks",
    name: "Webhooks",
    category: "integrations",
    description: "Signed, retried event deliveries (Standard Webhooks) to the merchant's own systems.",
    url_path: "/webhook-endpoints"
  },
  {
    id: "eco_loyalty",
    name: "Loyalty",
    category: "engagement",
    description: "Points, tiers, rewards and redemptions, with a public wallet for each customer.",
    url_path: "/wallet/{customerId}"
  },
  {
    id: "eco_referrals",
    name: "Referrals",
    category: "engagement",
    description: "Referral codes and QR codes, commissions and payouts, with review of flagged referrals.",
    url_path: "/dashboard/stores/{storeId}/referral-program"
  },
  {
    id: "eco_promotions",
    name: "Promotions and segments",
    category: "engagement",
    description: "Promotions aimed at customer segments, simulated before launch and approved by an owner.",
    url_path: "/dashboard/stores/{storeId}/promotions"
  },
  {
    id: "eco_games",
    name: "Promotional games",
    category: "engagement",
    description: "Spin, lucky-draw and scratch-card games with weighted prizes that honour inventory.",
    url_path: "/play/game/{gameId}"
  },
  {
    id: "eco_analytics",
    name: "Analytics",
    category: "insights",
    description: "Time series, forecasts and an executive view across an organization's stores.",
    url_path: "/dashboard/stores/{storeId}/analytics/timeseries"
  },
  {
    id: "eco_ledger",
    name: "Ledger",
    category: "insights",
    description: "A double-entry journal of every payment and refund, with trial balance and reconciliation.",
    url_path: "/dashboard/stores/{storeId}/ledger"
  },
  {
    id: "eco_risk",
    name: "Risk",
    category: "operations",
    description: "Risk cases and a summary of suspicious activity for review.",
    url_path: "/dashboard/stores/{storeId}/risk/cases"
  },
  {
    id: "eco_ai",
    name: "AI assistance",
    category: "insights",
    description: "Generated marketing copy, campaign suggestions, analytics summaries and fraud insights.",
    url_path: "/dashboard/stores/{storeId}/ai/assistant"
  },
  {
    id: "eco_connectors",
    name: "Connectors",
    category: "integrations",
    description: "Ready-made connections to outside systems, installed from the marketplace.",
    url_path: "/dashboard/marketplace"
  },
  {
    id: "eco_notifications",
    name: "Notifications",
    category: "integrations",
    description: "Store notifications to a messaging-app chat and other channels.",
    url_path: "/dashboard/stores/{storeId}/channels"
  },
  {
    id: "eco_billing",
    name: "Billing",
    category: "platform",
    description: "Plans, usage and subscription invoices of an organization.",
    url_path: "/billing/plans"
  },
  {
    id: "eco_developer_docs",
    name: "API reference",
    category: "platform",
    description: "The interactive reference and the OpenAPI document of every route.",
    url_path: "/docs"
  }
]
