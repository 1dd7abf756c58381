/**
 * The console's billing: the plans, the organization's plan with its usage and warnings, a plan change
 * (a paid plan answers the invoice to pay by KHQR), and the invoices, read again until one is paid.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { Billing, ChangePlan, InvoiceList, PlanList, SubscriptionInvoice } from "../Billing.ts"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { InvoiceId, OrganizationId } from "../Ids.ts"
import { ListParams } from "../Lists.ts"

const ReadErrors = Schema.Union(InvalidRequest, Forbidden, NotFound)

export class ConsoleBillingRpcs extends RpcGroup.make(
  Rpc.make("ListPlans", { success: PlanList, error: ReadErrors }),
  /** The plan, this month's usage against its limits and the warnings at 80 % of a limit. */
  Rpc.make("GetBilling", { payload: { organization_id: OrganizationId }, success: Billing, error: ReadErrors }),
  /** Free is at once; a paid plan answers its invoice, active once the invoice's KHQR is paid. */
  Rpc.make("ChangePlan", {
    payload: { organization_id: OrganizationId, ...ChangePlan.fields },
    success: Schema.Union(Billing, SubscriptionInvoice),
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  Rpc.make("ListSubscriptionInvoices", {
    payload: { organization_id: OrganizationId, cursor: ListParams.fields.cursor },
    success: InvoiceList,
    error: ReadErrors
  }),
  /** Pays an invoice as the test provider would (test configurations only). */
  Rpc.make("SimulateInvoicePayment", {
    payload: { id: InvoiceId },
    success: SubscriptionInvoice,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  })
).middleware(ConsoleAuthentication) {}
