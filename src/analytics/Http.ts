import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { LedgerService } from "../ledger/Service.ts"
import { RevenueSharesService } from "../revenue-shares/Service.ts"
import { RiskService } from "../risk/Service.ts"
import { AnalyticsService } from "./Service.ts"

export const AnalyticsHttpLive = HttpApiBuilder.group(Api, "analytics", (handlers) =>
  Effect.gen(function*() {
    const analytics = yield* AnalyticsService
    return handlers
      .handle("timeseries", ({ path, urlParams }) => analytics.timeseries(path.storeId, urlParams))
      .handle("forecast", ({ path, urlParams }) => analytics.forecast(path.storeId, urlParams))
      .handle("executive", ({ path, urlParams }) => analytics.executive(path.orgId, urlParams))
  }))

export const LedgerHttpLive = HttpApiBuilder.group(Api, "ledger", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* LedgerService
    return handlers
      .handle("trialBalance", ({ path, urlParams }) => ledger.trialBalance(path.storeId, urlParams.livemode))
      .handle("journals", ({ path, urlParams }) => ledger.journals(path.storeId, urlParams))
      .handle("reconcile", ({ path }) => ledger.reconcile(path.storeId))
      .handle("ledger", ({ path, urlParams }) => ledger.ledger(path.storeId, urlParams))
      .handle("platformTrialBalance", ({ urlParams }) => ledger.platformTrialBalance(urlParams.livemode))
      .handle("platformReconcile", () => ledger.platformReconcile())
      .handle("backfill", () => ledger.backfill())
  }))

export const RevenueSharesHttpLive = HttpApiBuilder.group(Api, "revenueShares", (handlers) =>
  Effect.gen(function*() {
    const shares = yield* RevenueSharesService
    return handlers
      .handle("list", ({ path, urlParams }) => shares.list(path.storeId, urlParams))
      .handle("create", ({ path, payload }) => shares.create(path.storeId, payload))
      .handle("update", ({ path, payload }) => shares.update(path.shareId, payload))
      .handle("delete", ({ path }) => shares.remove(path.shareId))
  }))

export const RiskHttpLive = HttpApiBuilder.group(Api, "risk", (handlers) =>
  Effect.gen(function*() {
    const risk = yield* RiskService
    return handlers
      .handle("cases", ({ path, urlParams }) => risk.cases(path.storeId, urlParams))
      .handle("summary", ({ path, urlParams }) => risk.summary(path.storeId, urlParams.livemode))
      .handle("update", ({ path, payload }) => risk.update(path.caseId, payload))
  }))
