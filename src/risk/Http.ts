import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { RiskService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const RiskHttpLive = apiGroup(Api, "risk", (handlers) =>
  Effect.gen(function*() {
    const risk = yield* RiskService
    return handlers
      .handle("cases", ({ path, urlParams }) => risk.cases(path.storeId, urlParams))
      .handle("summary", ({ path, urlParams }) => risk.summary(path.storeId, urlParams.livemode))
      .handle("update", ({ path, payload }) => risk.update(path.caseId, payload))
  }))
