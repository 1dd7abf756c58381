/**
 * The console's insights: revenue over time with its forecast and the organization's executive summary,
 * the ledger (trial balance, journals, reconciliation), risk cases, AI assistance, and the store's revenue
 * shares. Each procedure is the `/dashboard/…` route of the same name over the console RPC, answered by the
 * same service: analytics.read to read, risk.manage to move a case, marketing.manage to change shares.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { AiResult, AiUsage, AssistantQuestion, MarketingCopy } from "../Ai.ts"
import { Day, ExecutiveSummary, Forecast, MAX_FORECAST_DAYS, Timeseries } from "../Analytics.ts"
import { JournalEntry, Reconciliation, TrialBalance } from "../Ledger.ts"
import { CreateRevenueShare, DeletedRevenueShare, RevenueShare, UpdateRevenueShare } from "../RevenueShares.ts"
import { RiskCase, RiskStatus, RiskSummary, UpdateRiskCase } from "../Risk.ts"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound, RateLimited } from "../Errors.ts"
import { OrganizationId, RevenueShareId, RiskCaseId, StoreId } from "../Ids.ts"
import { ListOf, ListParams, MAX_LIST_LIMIT } from "../Lists.ts"

/** Test mode unless asked otherwise, so live figures are only ever shown on purpose. */
const Livemode = Schema.optionalWith(Schema.Boolean, { default: () => false })
const Limit = Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_LIST_LIMIT)))
const Failures = Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
/** AI calls are also refused once the store's monthly cost cap is reached. */
const AiFailures = Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState, RateLimited)

export const JournalList = ListOf(JournalEntry)
export const RiskCaseList = ListOf(RiskCase)
export const RevenueShareList = ListOf(RevenueShare)

export class ConsoleInsightsRpcs extends RpcGroup.make(
  // Analytics
  Rpc.make("RevenueTimeseries", {
    payload: { store_id: StoreId, from: Schema.optional(Day), to: Schema.optional(Day), livemode: Livemode },
    success: Timeseries,
    error: Failures
  }),
  Rpc.make("RevenueForecast", {
    payload: { store_id: StoreId, days: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_FORECAST_DAYS))), livemode: Livemode },
    success: Forecast,
    error: Failures
  }),
  Rpc.make("ExecutiveSummary", {
    payload: { organization_id: OrganizationId, livemode: Livemode },
    success: ExecutiveSummary,
    error: Failures
  }),
  // Ledger
  Rpc.make("TrialBalance", { payload: { store_id: StoreId, livemode: Livemode }, success: TrialBalance, error: Failures }),
  Rpc.make("LedgerJournals", {
    payload: { store_id: StoreId, livemode: Livemode, cursor: ListParams.fields.cursor, limit: Limit },
    success: JournalList,
    error: Failures
  }),
  Rpc.make("Reconcile", { payload: { store_id: StoreId }, success: Reconciliation, error: Failures }),
  // Risk
  Rpc.make("RiskCases", {
    payload: { store_id: StoreId, livemode: Livemode, status: Schema.optional(RiskStatus), cursor: ListParams.fields.cursor, limit: Limit },
    success: RiskCaseList,
    error: Failures
  }),
  Rpc.make("RiskSummary", { payload: { store_id: StoreId, livemode: Livemode }, success: RiskSummary, error: Failures }),
  Rpc.make("UpdateRiskCase", { payload: { id: RiskCaseId, ...UpdateRiskCase.fields }, success: RiskCase, error: Failures }),
  // AI
  Rpc.make("MarketingCopy", { payload: { store_id: StoreId, ...MarketingCopy.fields }, success: AiResult, error: AiFailures }),
  Rpc.make("AskAssistant", { payload: { store_id: StoreId, ...AssistantQuestion.fields }, success: AiResult, error: AiFailures }),
  Rpc.make("AiUsage", { payload: { store_id: StoreId }, success: AiUsage, error: Failures }),
  // Revenue shares
  Rpc.make("ListRevenueShares", {
    payload: { store_id: StoreId, cursor: ListParams.fields.cursor, limit: Limit },
    success: RevenueShareList,
    error: Failures
  }),
  Rpc.make("CreateRevenueShare", { payload: { store_id: StoreId, ...CreateRevenueShare.fields }, success: RevenueShare, error: Failures }),
  Rpc.make("UpdateRevenueShare", { payload: { id: RevenueShareId, ...UpdateRevenueShare.fields }, success: RevenueShare, error: Failures }),
  Rpc.make("DeleteRevenueShare", { payload: { id: RevenueShareId }, success: DeletedRevenueShare, error: Failures })
).middleware(ConsoleAuthentication) {}
