import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { RevenueSharesService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const RevenueSharesHttpLive = apiGroup(Api, "revenueShares", (handlers) =>
  Effect.gen(function*() {
    const shares = yield* RevenueSharesService
    return handlers
      .handle("list", ({ path, urlParams }) => shares.list(path.storeId, urlParams))
      .handle("create", ({ path, payload }) => shares.create(path.storeId, payload))
      .handle("update", ({ path, payload }) => shares.update(path.shareId, payload))
      .handle("delete", ({ path }) => shares.remove(path.shareId))
  }))
