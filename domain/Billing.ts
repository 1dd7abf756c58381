/**
 * Subscription billing: the plans and their limits, an organization's subscription and usage, its plan
 * history, and the subscription invoices paid through the payments engine.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated, Credentials } from "./Auth.ts"
import { InvalidStateResponse, NotFoundResponse } from "./Errors.ts"
import { InvoiceId, OrganizationId, PaymentId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { closed, maxText } from "./Text.ts"

const Timestamp = Schema.String.annotations({ description: "ISO 8601 time", examples: ["2026-01-05T10:00:00.000Z"] })
const listOf = <A, I, R>(item: Schema.Schema<A, I, R>, identifier: string) => ListOf(item).annotations({ identifier })

export const PlanIds = ["free", "starter", "growth"] as const
export type PlanId = (typeof PlanIds)[number]

export class Plan extends Schema.Class<Plan>("Plan")({
  id: Schema.Literal(...PlanIds),
  object: Schema.Literal("plan"),
  name: Schema.String,
  price: Schema.Struct({
    amount: Schema.String.annotations({ description: "Decimal US dollars a month", examples: ["19.00"] }),
    currency: Schema.Literal("USD")
  }),
  interval: Schema.Literal("month"),
  limits: Schema.Struct({ stores: Schema.Number, payments_per_month: Schema.Number, team_members: Schema.Number })
}) {}

export const PlanList = listOf(Plan, "PlanList")

export class Billing extends Schema.Class<Billing>("Billing")({
  object: Schema.Literal("billing"),
  org_id: OrganizationId,
  plan: Plan,
  subscription: Schema.Struct({ status: Schema.String, current_period_end: Schema.NullOr(Timestamp) }),
  usage: Schema.Struct({ stores: Schema.Number, payments_this_month: Schema.Number, team_members: Schema.Number }),
  warnings: Schema.Array(Schema.String)
}) {}

export class SubscriptionInvoice extends Schema.Class<SubscriptionInvoice>("SubscriptionInvoice")({
  id: InvoiceId,
  object: Schema.Literal("subscription_invoice"),
  org_id: OrganizationId,
  plan_id: Schema.String,
  amount: Schema.String.annotations({ description: "Decimal string, as payment amounts", examples: ["19.00"] }),
  currency: Schema.Literal("USD"),
  status: Schema.Literal("open", "paid", "void"),
  qr: Schema.Struct({ payload: Schema.String, md5: Schema.String }).annotations({
    description: "The KHQR of the invoice's payment, made by the payments engine"
  }),
  checkout_url: Schema.String.annotations({ description: "The hosted checkout page of the invoice's payment" }),
  payment_id: Schema.NullOr(PaymentId).annotations({
    description: "The payment that carries the invoice's KHQR; its payment.completed event pays the invoice"
  }),
  created_at: Timestamp,
  paid_at: Schema.NullOr(Timestamp)
}) {}


export class PlanChange extends Schema.Class<PlanChange>("PlanChange")({
  object: Schema.Literal("plan_change"),
  org_id: OrganizationId,
  from_plan: Schema.NullOr(Schema.String),
  to_plan: Schema.String,
  invoice_id: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

export const PlanHistory = listOf(PlanChange, "PlanHistory")
export const InvoiceList = listOf(SubscriptionInvoice, "SubscriptionInvoiceList")

export const ChangePlan = closed(Schema.Struct({ plan_id: maxText(32) }), "ChangePlanDto")

const OrgPath = Schema.Struct({ orgId: OrganizationId })

export class BillingGroup extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.get("plans", "/billing/plans")
      .annotate(Credentials, ["apiKey", "session"])
      .setUrlParams(ListParams)
      .addSuccess(PlanList)
      .annotate(OpenApi.Summary, "List plans")
      .annotate(
        OpenApi.Description,
        "Plans are data: free, starter, growth, each with its monthly price (decimal USD) and limits " +
          "(`payments_per_month` counts live-mode payments)."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/billing")
      .setUrlParams(Schema.Struct({ org_id: OrganizationId }))
      .addSuccess(Billing)
      .annotate(OpenApi.Summary, "Plan, usage and warnings")
      .annotate(
        OpenApi.Description,
        "The organization's plan, subscription and usage: stores, live-mode payments created this calendar " +
          "month (UTC; test mode is free and not counted) and team members. A warning is given for each " +
          "limit at 80 % or more of its value. When a limit is reached, the next store, live payment or " +
          "member is refused with 403 `forbidden` naming the plan. Any member of the organization may read it."
      )
  )
  .add(
    HttpApiEndpoint.post("subscribe", "/billing/:orgId/subscribe")
      .setPath(OrgPath)
      .setPayload(ChangePlan)
      // Each member with its own status: the status of a union is not carried to its members.
      .addSuccess(Billing, { status: 201 })
      .addSuccess(SubscriptionInvoice, { status: 201 })
      .annotate(OpenApi.Summary, "Subscribe to a plan")
      .annotate(
        OpenApi.Description,
        "A free plan activates at once (answers the billing object, 201). A paid plan answers an open " +
          "subscription invoice: a payment of the platform's billing store carries it, so its `qr` is that " +
          "payment's KHQR and `checkout_url` its hosted checkout page; when the payment is paid, its " +
          "payment.completed event pays the invoice (once) and activates the plan for 30 days (a renewal of " +
          "the running plan extends it). Subscribing again to the same plan while its QR can still be paid " +
          "answers the same invoice; choosing another plan voids the open invoice and cancels its payment. " +
          "An unknown plan is 400 (`plan_id`); a plan whose limits are below what the organization holds " +
          "(stores, team members) is 409 with the limit as `param`; the free plan while on it is 409. A paid " +
          "plan in a production configuration whose billing store is not live is 409. Owners only (403)."
      )
  )
  .add(
    HttpApiEndpoint.post("simulatePay", "/billing/invoices/:id/simulate-pay")
      .setPath(Schema.Struct({ id: InvoiceId }))
      .addSuccess(SubscriptionInvoice, { status: 201 })
      .annotate(OpenApi.Summary, "Confirm a subscription invoice payment (mock provider only)")
      .annotate(
        OpenApi.Description,
        "Pays the invoice's payment as the mock provider would (scanned, then paid), which pays the invoice " +
          "and activates its plan; answers the paid invoice. 403 in a live configuration (NODE_ENV=production, " +
          "or an invoice whose payment is live); an invoice already paid (or void) is 409, and of simultaneous " +
          "calls one pays and the others are 409. Owners only."
      )
  )
  .add(
    HttpApiEndpoint.get("history", "/billing/:orgId/history")
      .setUrlParams(ListParams)
      .setPath(OrgPath)
      .addSuccess(PlanHistory)
      .annotate(OpenApi.Summary, "Plan history")
      .annotate(OpenApi.Description, "Every plan change of the organization, newest first.")
  )
  .add(
    HttpApiEndpoint.get("invoices", "/billing/:orgId/invoices")
      .setUrlParams(ListParams)
      .setPath(OrgPath)
      .addSuccess(InvoiceList)
      .annotate(OpenApi.Summary, "Invoice history")
      .annotate(OpenApi.Description, "The organization's subscription invoices, newest first.")
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Billing")
  .annotate(OpenApi.Description, "Plans, an organization's subscription, its invoices and history.")
{}
