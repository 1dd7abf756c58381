import { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { prefersHtml } from "../platform/Html.ts"
import { idempotentResponse } from "../platform/IdempotentResponse.ts"
import { RateLimiter } from "../platform/RateLimit.ts"
import { withRetryAfter } from "../platform/RetryAfter.ts"
import { renderHostedPage } from "../platform/pages/Document.tsx"
import { walletPage } from "./Page.tsx"
import { LoyaltyService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const LoyaltyHttpLive = apiGroup(Api, "loyalty", (handlers) =>
  Effect.gen(function*() {
    const loyalty = yield* LoyaltyService
    return handlers
      .handle("redeemPoints", ({ headers, payload }) =>
        loyalty.redeemPoints(payload, headers["idempotency-key"]).pipe(Effect.map(idempotentResponse)))
      .handle("rewards", ({ urlParams }) => loyalty.activeRewards(urlParams))
      .handle("redeemReward", ({ headers, payload }) =>
        loyalty.redeemReward(payload, headers["idempotency-key"]).pipe(Effect.map(idempotentResponse)))
      .handle("redemption", ({ path }) => loyalty.redemption(path.id))
  }))

export const LoyaltyConsoleHttpLive = apiGroup(Api, "loyaltyConsole", (handlers) =>
  Effect.gen(function*() {
    const loyalty = yield* LoyaltyService
    return handlers
      .handle("program", ({ path }) => loyalty.program(path.storeId))
      .handle("configure", ({ path, payload }) => loyalty.configure(path.storeId, payload))
      .handle("customerLoyalty", ({ path, urlParams }) => loyalty.customerLoyalty(path.id, urlParams))
      .handle("liability", ({ path, urlParams }) => loyalty.liability(path.storeId, urlParams))
      .handle("adjust", ({ path, payload }) => loyalty.adjust(path.id, payload))
      .handle("tiers", ({ path, urlParams }) => loyalty.tiers(path.storeId, urlParams))
      .handle("createTier", ({ path, payload }) => loyalty.createTier(path.storeId, payload))
      .handle("updateTier", ({ path, payload }) => loyalty.updateTier(path.id, payload))
      .handle("deleteTier", ({ path }) => loyalty.deleteTier(path.id))
      .handle("rewards", ({ path, urlParams }) => loyalty.rewards(path.storeId, urlParams))
      .handle("createReward", ({ path, payload }) => loyalty.createReward(path.storeId, payload))
      .handle("updateReward", ({ path, payload }) => loyalty.updateReward(path.id, payload))
      .handle("deleteReward", ({ path }) => loyalty.deleteReward(path.id))
      .handle("redemptions", ({ path, urlParams }) => loyalty.redemptions(path.storeId, urlParams))
      .handle("fulfill", ({ path }) => loyalty.fulfill(path.id))
      .handle("cancel", ({ path }) => loyalty.cancel(path.id))
  }))

const acceptHeader = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.headers["accept"])

export const WalletHttpLive = apiGroup(Api, "wallet", (handlers) =>
  Effect.gen(function*() {
    const loyalty = yield* LoyaltyService
    const limiter = yield* RateLimiter
    return handlers.handle("view", ({ path, urlParams }) =>
      Effect.gen(function*() {
        yield* withRetryAfter(limiter.admitPageView)
        const wallet = yield* loyalty.wallet(path.customerId, urlParams.t)
        return prefersHtml(yield* acceptHeader) ? yield* renderHostedPage(walletPage(wallet)) : wallet
      }))
  }))
