/**
 * Merchant accounts: registration, login and sessions, passwords, MFA (TOTP), organization members.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListParams } from "./Lists.ts"
import { Authentication } from "./Auth.ts"
import {
  ForbiddenResponse,
  InvalidRequestResponse,
  InvalidStateResponse,
  MfaRequiredResponse,
  NotFoundResponse,
  RateLimitedResponse,
  UnauthorizedResponse
} from "./Errors.ts"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const Email = Schema.String.pipe(
  Schema.trimmed({ message: () => "must not start or end with spaces" }),
  Schema.maxLength(254, { message: () => "must be at most 254 characters" }),
  Schema.pattern(EMAIL, { message: () => "must be an e-mail address" })
).annotations({ examples: ["owner@example.com"] })

export const Password = Schema.String.pipe(
  Schema.minLength(10, { message: () => "must be at least 10 characters" }),
  Schema.maxLength(256, { message: () => "must be at most 256 characters" })
).annotations({ description: "10 to 256 characters" })

export const TotpCode = Schema.String.pipe(
  Schema.pattern(/^\d{6}$/, { message: () => "must be the 6-digit code from the authenticator app" })
)

const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

export const RoleName = Schema.Literal("owner", "admin", "developer", "analyst")

export class User extends Schema.Class<User>("User")({
  id: Schema.String,
  object: Schema.Literal("user"),
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  mfa_enabled: Schema.Boolean,
  platform_admin: Schema.Boolean,
  created_at: Schema.String
}) {}

export class OrganizationMembership extends Schema.Class<OrganizationMembership>("OrganizationMembership")({
  id: Schema.String,
  object: Schema.Literal("organization"),
  name: Schema.String,
  role: RoleName,
  created_at: Schema.String
}) {}

export class SessionGrant extends Schema.Class<SessionGrant>("SessionGrant")({
  user: User,
  organization: OrganizationMembership,
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_at: Schema.String
}) {}

export class Me extends Schema.Class<Me>("Me")({
  user: User,
  organizations: Schema.Array(OrganizationMembership)
}) {}

export class Acknowledgement extends Schema.Class<Acknowledgement>("Acknowledgement")({
  object: Schema.Literal("acknowledgement"),
  message: Schema.String
}) {}

export class MfaSetup extends Schema.Class<MfaSetup>("MfaSetup")({
  object: Schema.Literal("mfa_setup"),
  secret: Schema.String,
  otpauth_url: Schema.String
}) {}

export class Member extends Schema.Class<Member>("Member")({
  object: Schema.Literal("member"),
  organization_id: Schema.String,
  user_id: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  role: RoleName,
  created_at: Schema.String
}) {}

export class MemberList extends Schema.Class<MemberList>("MemberList")({
  object: Schema.Literal("list"),
  data: Schema.Array(Member),
  has_more: Schema.Boolean,
  next_cursor: Schema.NullOr(Schema.String)
}) {}

export class Whoami extends Schema.Class<Whoami>("Whoami")({
  object: Schema.Literal("principal"),
  type: Schema.Literal("user", "api_key"),
  user_id: Schema.NullOr(Schema.String),
  store_id: Schema.NullOr(Schema.String),
  livemode: Schema.NullOr(Schema.Boolean)
}) {}

/** A success answered with 201 Created. */
export const created = <A, I>(schema: Schema.Schema<A, I>) => schema.annotations(HttpApiSchema.annotations({ status: 201 }))

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("register", "/auth/register")
      .setPayload(Schema.Struct({
        email: Email,
        password: Password,
        name: Schema.optional(Name),
        organization_name: Schema.optional(Name)
      }))
      .addSuccess(created(SessionGrant))
      .annotate(OpenApi.Summary, "Create a merchant account and an organization (the user is its Owner)")
  )
  .add(
    HttpApiEndpoint.post("login", "/auth/login")
      .setPayload(Schema.Struct({
        email: Schema.String,
        password: Schema.String,
        mfa_code: Schema.optional(Schema.String)
      }))
      .addSuccess(created(SessionGrant))
      .addError(UnauthorizedResponse)
      .addError(MfaRequiredResponse)
      .addError(RateLimitedResponse)
      .annotate(
        OpenApi.Description,
        "Repeated failures for one e-mail or one client address are throttled (429 with Retry-After). " +
          "A user with MFA must send `mfa_code`; without it the answer is 401 `mfa_required`."
      )
  )
  .add(
    HttpApiEndpoint.post("forgotPassword", "/auth/forgot-password")
      .setPayload(Schema.Struct({ email: Schema.String }))
      .addSuccess(created(Acknowledgement))
      .annotate(OpenApi.Description, "Always succeeds, in the same time, whether or not the account exists.")
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/auth/reset-password")
      .setPayload(Schema.Struct({ token: Schema.String, password: Password }))
      .addSuccess(created(Acknowledgement))
      .addError(UnauthorizedResponse)
      .annotate(OpenApi.Description, "A reset token is single-use and expires one hour after it was sent.")
  )
  .annotate(OpenApi.Title, "Authentication")
{}

export class SessionGroup extends HttpApiGroup.make("session")
  .add(HttpApiEndpoint.get("me", "/auth/me").addSuccess(Me))
  .add(
    HttpApiEndpoint.post("changePassword", "/auth/change-password")
      .setPayload(Schema.Struct({ current_password: Schema.String, new_password: Password }))
      .addSuccess(created(Acknowledgement))
      .annotate(OpenApi.Description, "Needs the current password; every other session of the user is revoked.")
  )
  .add(
    HttpApiEndpoint.post("mfaSetup", "/auth/mfa/setup")
      .addSuccess(created(MfaSetup))
      .addError(InvalidStateResponse)
  )
  .add(
    HttpApiEndpoint.post("mfaEnable", "/auth/mfa/enable")
      .setPayload(Schema.Struct({ code: TotpCode }))
      .addSuccess(created(User))
      .addError(InvalidStateResponse)
  )
  .add(
    HttpApiEndpoint.post("mfaDisable", "/auth/mfa/disable")
      .setPayload(Schema.Struct({ code: TotpCode }))
      .addSuccess(created(User))
      .addError(InvalidStateResponse)
  )
  .add(
    HttpApiEndpoint.get("whoami", "/v1/whoami")
      .addSuccess(Whoami)
      .annotate(OpenApi.Summary, "The credential this request was made with (an API key or a user session)")
  )
  .middleware(Authentication)
  .addError(UnauthorizedResponse)
  .addError(ForbiddenResponse)
  .annotate(OpenApi.Title, "Session")
{}

export class MembersGroup extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/orgs/:orgId/members")
      .setPath(Schema.Struct({ orgId: Schema.String }))
      .setUrlParams(ListParams)
      .addSuccess(MemberList)
  )
  .add(
    HttpApiEndpoint.post("add", "/dashboard/orgs/:orgId/members")
      .setPath(Schema.Struct({ orgId: Schema.String }))
      .setPayload(Schema.Struct({ email: Email, role: Schema.Literal("admin", "developer", "analyst") }))
      .addSuccess(created(Member))
      .addError(InvalidStateResponse)
      .annotate(
        OpenApi.Description,
        "Adds an existing user (by e-mail) to the organization with a role. Owners and Admins only."
      )
  )
  .middleware(Authentication)
  .addError(UnauthorizedResponse)
  .addError(ForbiddenResponse)
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Organization members")
{}
