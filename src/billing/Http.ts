import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { BillingService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const BillingHttpLive = apiGroup(Api, "billing", (handlers) =>
  Effect.gen(function*() {
    const billing = yield* BillingService
    return handlers
      .handle("plans", ({ urlParams }) => billing.plans(urlParams))
      .handle("get", ({ urlParams }) => billing.get(urlParams.org_id))
      .handle("subscribe", ({ path, payload }) => billing.subscribe(path.orgId, payload.plan_id))
      .handle("simulatePay", ({ path }) => billing.simulatePay(path.id))
      .handle("history", ({ path, urlParams }) => billing.history(path.orgId, urlParams))
      .handle("invoices", ({ path, urlParams }) => billing.invoices(path.orgId, urlParams))
  }))
