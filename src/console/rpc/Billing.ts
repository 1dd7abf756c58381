/** The billing group's handlers: each one call of the billing service. */
import { Effect } from "effect"
import { ConsoleBillingRpcs } from "../../../domain/console/Billing.ts"
import { MAX_LIST_LIMIT } from "../../../domain/Lists.ts"
import { BillingService } from "../../billing/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsoleBillingLive = ConsoleBillingRpcs.toLayer(Effect.gen(function*() {
  const billing = yield* BillingService
  return ConsoleBillingRpcs.of({
    ListPlans: () => hideDefects(billing.plans({ limit: MAX_LIST_LIMIT })),
    GetBilling: ({ organization_id }) => hideDefects(billing.get(organization_id)),
    ChangePlan: ({ organization_id, plan_id }) => hideDefects(billing.subscribe(organization_id, plan_id)),
    ListSubscriptionInvoices: ({ cursor, organization_id }) =>
      hideDefects(billing.invoices(organization_id, { limit: MAX_LIST_LIMIT, cursor })),
    SimulateInvoicePayment: ({ id }) => hideDefects(billing.simulatePay(id))
  })
}))
