import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { LedgerService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const LedgerHttpLive = apiGroup(Api, "ledger", (handlers) =>
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
