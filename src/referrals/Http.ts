import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { prefersHtml } from "../platform/Html.ts"
import { AppConfig } from "../platform/Config.ts"
import { idempotentResponse } from "../platform/IdempotentResponse.ts"
import { RateLimiter, type RateLimitRule } from "../platform/RateLimit.ts"
import { withRetryAfter } from "../platform/RetryAfter.ts"
import { renderHostedPage } from "../platform/pages/Document.tsx"
import { invitePage } from "./Page.tsx"
import { ReferralsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const ReferralsHttpLive = apiGroup(Api, "referrals", (handlers) =>
  Effect.gen(function*() {
    const referrals = yield* ReferralsService
    return handlers
      .handle("code", ({ path }) => referrals.code(path.id))
      .handle("qr", ({ path }) => referrals.qr(path.id))
  }))

export const ReferralsConsoleHttpLive = apiGroup(Api, "referralsConsole", (handlers) =>
  Effect.gen(function*() {
    const referrals = yield* ReferralsService
    return handlers
      .handle("qr", ({ path }) => referrals.qrForUser(path.customerId))
      .handle("program", ({ path }) => referrals.program(path.storeId))
      .handle("configure", ({ path, payload }) => referrals.configure(path.storeId, payload))
      .handle("list", ({ path, urlParams }) => referrals.list(path.storeId, urlParams))
      .handle("commissions", ({ path, urlParams }) => referrals.commissions(path.storeId, urlParams))
      .handle("summary", ({ path, urlParams }) => referrals.summary(path.storeId, urlParams))
      .handle("payout", ({ headers, path, payload }) =>
        referrals.payout(path.storeId, payload, headers["idempotency-key"]).pipe(Effect.map(idempotentResponse)))
      .handle("report", ({ path, urlParams }) => referrals.report(path.storeId, urlParams))
      .handle("flagged", ({ path, urlParams }) => referrals.flagged(path.storeId, urlParams))
      .handle("review", ({ path, payload }) => referrals.review(path.storeId, path.referralId, payload))
  }))

const acceptHeader = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.headers["accept"])

export const ReferralLinkHttpLive = apiGroup(Api, "referralLink", (handlers) =>
  Effect.gen(function*() {
    const referrals = yield* ReferralsService
    const limiter = yield* RateLimiter
    const { rateLimits } = yield* AppConfig
    // A visit is usually two requests (the share link, then the join page it redirects to); both count.
    const visitsPerAddress: RateLimitRule = {
      name: "referral-visit:address",
      limit: rateLimits.referralVisitsPerAddressPerMinute,
      windowSeconds: 60
    }
    const visitsPerCode: RateLimitRule = {
      name: "referral-visit:code",
      limit: rateLimits.referralVisitsPerCodePerMinute,
      windowSeconds: 60
    }
    // Codes are case-insensitive, and so is their count; an unknown code counts against the address all the same.
    const admitVisit = (code: string) => limiter.admitClient(visitsPerAddress, [[visitsPerCode, code.toUpperCase()]])
    return handlers
      .handle("share", ({ path }) =>
        withRetryAfter(Effect.zipRight(
          admitVisit(path.code),
          Effect.map(referrals.joinPath(path.code), (location) =>
            HttpServerResponse.empty({ status: 302, headers: { location, "cache-control": "no-store" } }))
        )))
      .handle("join", ({ path }) =>
        withRetryAfter(Effect.zipRight(
          admitVisit(path.code),
          Effect.gen(function*() {
            const invite = yield* referrals.invite(path.code)
            return prefersHtml(yield* acceptHeader) ? yield* renderHostedPage(invitePage(invite)) : invite
          })
        )))
  }))
