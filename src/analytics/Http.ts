import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { AnalyticsService } from "./Service.ts"

export const AnalyticsHttpLive = HttpApiBuilder.group(Api, "analytics", (handlers) =>
  Effect.gen(function*() {
    const analytics = yield* AnalyticsService
    return handlers
      .handle("timeseries", ({ path, urlParams }) => analytics.timeseries(path.storeId, urlParams))
      .handle("forecast", ({ path, urlParams }) => analytics.forecast(path.storeId, urlParams))
      .handle("executive", ({ path, urlParams }) => analytics.executive(path.orgId, urlParams))
  }))
