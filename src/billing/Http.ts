import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { BillingService } from "./Service.ts"

export const BillingHttpLive = HttpApiBuilder.group(Api, "billing", (handlers) =>
  Effect.gen(function*() {
    const billing = yield* BillingService
    return handlers
      .handle("plans", () => billing.plans)
      .handle("get", ({ urlParams }) => billing.get(urlParams.org_id))
      .handle("subscribe", ({ path, payload }) => billing.subscribe(path.orgId, payload.plan_id))
      .handle("simulatePay", ({ path }) => billing.simulatePay(path.id))
      .handle("history", ({ path }) => billing.history(path.orgId))
      .handle("invoices", ({ path }) => billing.invoices(path.orgId))
  }))
