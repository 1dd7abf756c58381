import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { AnalyticsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const AnalyticsHttpLive = apiGroup(Api, "analytics", (handlers) =>
  Effect.gen(function*() {
    const analytics = yield* AnalyticsService
    return handlers
      .handle("timeseries", ({ path, urlParams }) => analytics.timeseries(path.storeId, urlParams))
      .handle("forecast", ({ path, urlParams }) => analytics.forecast(path.storeId, urlParams))
      .handle("executive", ({ path, urlParams }) => analytics.executive(path.orgId, urlParams))
  }))
