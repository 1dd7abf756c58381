import { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { prefersHtml } from "../platform/Html.ts"
import { AppConfig } from "../platform/Config.ts"
import { RateLimiter, type RateLimitRule } from "../platform/RateLimit.ts"
import { withRetryAfter } from "../platform/RetryAfter.ts"
import { renderHostedPage } from "../platform/pages/Document.tsx"
import { linkPage } from "./Page.tsx"
import { LinksService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

const acceptHeader = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.headers["accept"])

export const LinksHttpLive = apiGroup(Api, "links", (handlers) =>
  Effect.gen(function*() {
    const links = yield* LinksService
    return handlers
      .handle("create", ({ path, payload }) => links.create(path.storeId, payload))
      .handle("list", ({ path, urlParams }) => links.list(path.storeId, urlParams))
      .handle("update", ({ path, payload }) => links.update(path.linkId, payload))
      .handle("delete", ({ path }) => links.remove(path.linkId))
  }))

export const PublicLinksHttpLive = apiGroup(Api, "publicLinks", (handlers) =>
  Effect.gen(function*() {
    const links = yield* LinksService
    const limiter = yield* RateLimiter
    const { rateLimits } = yield* AppConfig
    const paymentsPerAddress: RateLimitRule = {
      name: "link-pay:address",
      limit: rateLimits.linkPaymentsPerAddressPerMinute,
      windowSeconds: 60
    }
    const paymentsPerLink: RateLimitRule = { name: "link-pay:link", limit: rateLimits.linkPaymentsPerLinkPerMinute, windowSeconds: 60 }
    return handlers
      .handle("view", ({ path }) =>
        Effect.gen(function*() {
          yield* withRetryAfter(limiter.admitPageView)
          const link = yield* links.publicView(path.id)
          return prefersHtml(yield* acceptHeader) ? yield* renderHostedPage(linkPage(link)) : link
        }))
      .handle("pay", ({ path, payload }) =>
        withRetryAfter(Effect.zipRight(
          limiter.admitClient(paymentsPerAddress, [[paymentsPerLink, path.id]]),
          links.pay(path.id, payload)
        )))
  }))
