/**
 * Who is calling: a user with a session token (the console), or an API key acting for its one store
 * and mode (the merchant API). Every protected group declares the `Authentication` middleware (most
 * through `authenticated` below), which reads `Authorization: Bearer <credential>` and provides the
 * `CurrentPrincipal`.
 */
import { type HttpApiEndpoint, type HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context } from "effect"
import { ForbiddenResponse, UnauthorizedResponse } from "./Errors.ts"
import type { ApiKeyId, OrganizationId, SessionId, StoreId, UserId } from "./Ids.ts"

export interface UserPrincipal {
  readonly _tag: "User"
  readonly userId: UserId
  readonly email: string
  readonly sessionId: SessionId
  readonly platformAdmin: boolean
}

export interface ApiKeyPrincipal {
  readonly _tag: "ApiKey"
  readonly keyId: ApiKeyId
  readonly storeId: StoreId
  readonly organizationId: OrganizationId
  readonly livemode: boolean
}

export type Principal = UserPrincipal | ApiKeyPrincipal

export class CurrentPrincipal extends Context.Tag("domain/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  provides: CurrentPrincipal,
  failure: UnauthorizedResponse,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "A session token from /auth/login (console routes), or an API key `sk_test_…` / `sk_live_…` (merchant API)."
      )
    )
  }
}) {}

/**
 * The credentials the service tells apart, as the OpenAPI document names them: all three travel as
 * `Authorization: Bearer …`, and which one an operation takes is part of its contract.
 */
export const SecuritySchemes = {
  apiKey: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "sk_test_… / sk_live_…",
    description: "An API key of one store and one mode (`sk_test_…` or `sk_live_…`), made with `POST /api-keys`. " +
      "It acts for its store only; a test key never sees live data. Merchant backends use it for the `/v1` routes."
  },
  session: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "session token",
    description: "The `access_token` answered by `POST /auth/register` or `POST /auth/login`: a user acting across " +
      "their organizations, as the console does. Routes under `/admin` and `/dashboard/admin` also need the user " +
      "to be a platform administrator."
  },
  metricsToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "METRICS_TOKEN",
    description: "The `METRICS_TOKEN` configured on the service, for a Prometheus scraper of `GET /metrics`."
  }
} as const

export type Credential = keyof typeof SecuritySchemes

/**
 * The credentials an operation takes (any one of them), for the OpenAPI document. Declared on a group by
 * `authenticated`, and on an endpoint where it differs from its group's.
 */
export class Credentials extends Context.Tag("domain/Credentials")<Credentials, ReadonlyArray<Credential>>() {}

/**
 * Puts `group` behind `Authentication`, taking `credentials`, with the two answers every such route can
 * give: 401 (no or a bad credential) and 403 (a credential not allowed to do this). Used as
 * `.pipe(authenticated("session"))` after the group's endpoints; the errors particular to a group follow it.
 */
export const authenticated = (...credentials: readonly [Credential, ...Array<Credential>]) =>
<
  Id extends string,
  Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any,
  Error,
  R,
  TopLevel extends true | false
>(group: HttpApiGroup.HttpApiGroup<Id, Endpoints, Error, R, TopLevel>) =>
  group.middleware(Authentication).addError(UnauthorizedResponse).addError(ForbiddenResponse).annotate(
    Credentials,
    credentials
  )
