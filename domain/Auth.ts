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
 * Puts the endpoints added so far to `group` behind `Authentication`, with the two answers every such
 * route can give: 401 (no or a bad credential) and 403 (a credential not allowed to do this). Used as
 * `.pipe(authenticated)` after the group's endpoints; the errors particular to a group follow it.
 */
export const authenticated = <
  Id extends string,
  Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any,
  Error,
  R,
  TopLevel extends true | false
>(group: HttpApiGroup.HttpApiGroup<Id, Endpoints, Error, R, TopLevel>) =>
  group.middleware(Authentication).addError(UnauthorizedResponse).addError(ForbiddenResponse)
