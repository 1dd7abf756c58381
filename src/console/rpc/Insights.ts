/**
 * The console's insights procedures (domain/console/Insights.ts): analytics, ledger, risk, AI and revenue
 * shares, each one call of the area's service, which checks access and the role.
 */
import { Effect } from "effect"
import { ConsoleInsightsRpcs } from "../../../domain/console/Insights.ts"
import { DEFAULT_LIST_LIMIT } from "../../../domain/Lists.ts"
import { AiService } from "../../ai/Service.ts"
import { AnalyticsService } from "../../analytics/Service.ts"
import { LedgerService } from "../../ledger/Service.ts"
import { RevenueSharesService } from "../../revenue-shares/Service.ts"
import { RiskService } from "../../risk/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsoleInsightsLive = ConsoleInsightsRpcs.toLayer(Effect.gen(function*() {
  const analytics = yield* AnalyticsService
  const ledger = yield* LedgerService
  const risk = yield* RiskService
  const ai = yield* AiService
  const shares = yield* RevenueSharesService
  return ConsoleInsightsRpcs.of({
    RevenueTimeseries: ({ store_id, ...range }) => hideDefects(analytics.timeseries(store_id, range)),
    RevenueForecast: ({ store_id, ...params }) => hideDefects(analytics.forecast(store_id, params)),
    ExecutiveSummary: ({ livemode, organization_id }) => hideDefects(analytics.executive(organization_id, { livemode })),
    TrialBalance: ({ livemode, store_id }) => hideDefects(ledger.trialBalance(store_id, livemode)),
    LedgerJournals: ({ cursor, limit, livemode, store_id }) =>
      hideDefects(ledger.journals(store_id, { limit: limit ?? DEFAULT_LIST_LIMIT, cursor, livemode })),
    Reconcile: ({ store_id }) => hideDefects(ledger.reconcile(store_id)),
    RiskCases: ({ cursor, limit, livemode, status, store_id }) =>
      hideDefects(risk.cases(store_id, { limit: limit ?? DEFAULT_LIST_LIMIT, cursor, status, livemode })),
    RiskSummary: ({ livemode, store_id }) => hideDefects(risk.summary(store_id, livemode)),
    UpdateRiskCase: ({ id, ...change }) => hideDefects(risk.update(id, change)),
    MarketingCopy: ({ store_id, ...input }) => hideDefects(ai.marketingCopy(store_id, input)),
    AskAssistant: ({ store_id, ...question }) => hideDefects(ai.assistant(store_id, question)),
    AiUsage: ({ store_id }) => hideDefects(ai.usage(store_id)),
    ListRevenueShares: ({ cursor, limit, store_id }) => hideDefects(shares.list(store_id, { limit: limit ?? DEFAULT_LIST_LIMIT, cursor })),
    CreateRevenueShare: ({ store_id, ...input }) => hideDefects(shares.create(store_id, input)),
    UpdateRevenueShare: ({ id, ...changes }) => hideDefects(shares.update(id, changes)),
    DeleteRevenueShare: ({ id }) => hideDefects(shares.remove(id))
  })
}))
