import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Whoami } from "../../domain/Accounts.ts"
import { Api } from "../../domain/Api.ts"
import { CurrentPrincipal } from "../../domain/Auth.ts"
import type { RateLimited } from "../../domain/Errors.ts"
import { AccountsService } from "./Service.ts"

/** A throttled answer carries Retry-After, which the error body cannot set. */
const withRetryAfter = <A, E, R>(effect: Effect.Effect<A, E | RateLimited, R>) =>
  Effect.tapErrorTag(effect as Effect.Effect<A, RateLimited, R>, "RateLimited", (error) =>
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(error.retryAfterSeconds ?? 60)))
    )) as Effect.Effect<A, E | RateLimited, R>

export const AuthHttpLive = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    return handlers
      .handle("register", ({ payload }) => accounts.register(payload))
      .handle("login", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* withRetryAfter(accounts.login(payload, request.remoteAddress))
        }))
      .handle("forgotPassword", ({ payload }) => accounts.forgotPassword(payload))
      .handle("resetPassword", ({ payload }) => accounts.resetPassword(payload))
  }))

export const SessionHttpLive = HttpApiBuilder.group(Api, "session", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    return handlers
      .handle("me", () => accounts.me())
      .handle("changePassword", ({ payload }) => accounts.changePassword(payload))
      .handle("mfaSetup", () => accounts.mfaSetup())
      .handle("mfaEnable", ({ payload }) => accounts.mfaEnable(payload))
      .handle("mfaDisable", ({ payload }) => accounts.mfaDisable(payload))
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

export const MembersHttpLive = HttpApiBuilder.group(Api, "members", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    return handlers
      .handle("list", ({ path, urlParams }) => accounts.listMembers(path.orgId, urlParams))
      .handle("add", ({ path, payload }) => accounts.addMember(path.orgId, payload))
  }))

