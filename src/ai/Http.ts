import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { withRetryAfter } from "../platform/RetryAfter.ts"
import { AiService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const AiHttpLive = apiGroup(Api, "ai", (handlers) =>
  Effect.gen(function*() {
    const ai = yield* AiService
    // A call refused by the monthly cost cap says, in Retry-After, when the next month starts.
    return handlers
      .handle("marketingCopy", ({ path, payload }) => withRetryAfter(ai.marketingCopy(path.storeId, payload)))
      .handle("campaignSuggest", ({ path, urlParams }) => withRetryAfter(ai.campaignSuggest(path.storeId, urlParams)))
      .handle("analyticsSummary", ({ path, urlParams }) => withRetryAfter(ai.analyticsSummary(path.storeId, urlParams)))
      .handle("fraudInsights", ({ path, urlParams }) => withRetryAfter(ai.fraudInsights(path.storeId, urlParams)))
      .handle("assistant", ({ path, payload }) => withRetryAfter(ai.assistant(path.storeId, payload)))
      .handle("usage", ({ path }) => ai.usage(path.storeId))
      .handle("registry", () => ai.registry())
      .handle("platformUsage", () => ai.platformUsage())
  }))
