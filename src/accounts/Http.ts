import { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { Whoami } from "../../domain/Accounts.ts"
import { Api } from "../../domain/Api.ts"
import { CurrentPrincipal } from "../../domain/Auth.ts"
import { RateLimiter } from "../platform/RateLimit.ts"
import { withRetryAfter } from "../platform/RetryAfter.ts"
import { renderHostedPage } from "../platform/pages/Document.tsx"
import { resetPasswordPage } from "./ResetPage.tsx"
import { AccountsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const AuthHttpLive = apiGroup(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    const limiter = yield* RateLimiter
    return handlers
      .handle("register", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* withRetryAfter(accounts.register(payload, request.remoteAddress))
        }))
      .handle("login", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* withRetryAfter(accounts.login(payload, request.remoteAddress))
        }))
      .handle("forgotPassword", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* withRetryAfter(accounts.forgotPassword(payload, request.remoteAddress))
        }))
      // The routes that take a mailed token share the public pages' per-address limit.
      .handle("resetPassword", ({ payload }) => withRetryAfter(Effect.zipRight(limiter.admitPageView, accounts.resetPassword(payload))))
      .handle("verifyEmail", ({ urlParams }) => withRetryAfter(Effect.zipRight(limiter.admitPageView, accounts.verifyEmail(urlParams))))
      .handle("resetPasswordPage", ({ urlParams }) =>
        withRetryAfter(Effect.zipRight(limiter.admitPageView, renderHostedPage(resetPasswordPage(urlParams.token)))))
  }))

export const SessionHttpLive = apiGroup(Api, "session", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    return handlers
      .handle("me", () => accounts.me())
      .handle("changePassword", ({ payload }) => accounts.changePassword(payload))
      .handle("mfaSetup", () => accounts.mfaSetup())
      .handle("mfaEnable", ({ payload }) => accounts.mfaEnable(payload))
      .handle("mfaDisable", ({ payload }) => accounts.mfaDisable(payload))
      .handle("resendVerification", () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* withRetryAfter(accounts.resendVerification(request.remoteAddress))
        }))
      .handle("whoami", () =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          return principal._tag === "User"
            ? new Whoami({ object: "principal", type: "user", user_id: principal.userId, store_id: null, livemode: null })
            : new Whoami({
              object: "principal",
              type: "api_key",
              user_id: null,
              store_id: principal.storeId,
              livemode: principal.livemode
            })
        }))
  }))

export const MembersHttpLive = apiGroup(Api, "members", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    return handlers
      .handle("list", ({ path, urlParams }) => accounts.listMembers(path.orgId, urlParams))
      .handle("add", ({ path, payload }) => accounts.addMember(path.orgId, payload))
  }))

