/**
 * Merchant accounts: registration, login and sessions, passwords, MFA (TOTP), organization members.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListParams } from "./Lists.ts"
import { authenticated, Authentication, Credentials } from "./Auth.ts"
import {
  InvalidRequestResponse,
  InvalidStateResponse,
  MfaRequiredResponse,
  NotFoundResponse,
  RateLimitedResponse,
  UnauthorizedResponse
} from "./Errors.ts"
import { OrganizationId, StoreId, UserId } from "./Ids.ts"
import {
  closed,
  MAX_EMAIL_LENGTH,
  MAX_NAME_LENGTH,
  MAX_PASSWORD_LENGTH,
  MAX_TOKEN_LENGTH,
  maxText,
  oneOf
} from "./Text.ts"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const Email = Schema.String.pipe(
  Schema.trimmed({ message: () => "must not start or end with spaces" }),
  Schema.maxLength(MAX_EMAIL_LENGTH, { message: () => `must be at most ${MAX_EMAIL_LENGTH} characters` }),
  Schema.pattern(EMAIL, { message: () => "must be an e-mail address" })
).annotations({ examples: ["owner@example.com"] })

export const Password = Schema.String.pipe(
  Schema.minLength(10, { message: () => "must be at least 10 characters" }),
  Schema.maxLength(MAX_PASSWORD_LENGTH, { message: () => `must be at most ${MAX_PASSWORD_LENGTH} characters` })
).annotations({ description: `10 to ${MAX_PASSWORD_LENGTH} characters` })

export const TotpCode = Schema.String.pipe(
  Schema.pattern(/^\d{6}$/, { message: () => "must be the 6-digit code from the authenticator app" })
)

const Name = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MAX_NAME_LENGTH, { message: () => `must be at most ${MAX_NAME_LENGTH} characters` })
)

/** What a login or reset form sends: bounded, but not judged, so that a mistyped address is just a failed login. */
const TypedEmail = maxText(MAX_EMAIL_LENGTH)
const TypedPassword = maxText(MAX_PASSWORD_LENGTH)
const TypedCode = maxText(16)
const OrgPath = Schema.Struct({ orgId: OrganizationId })

export const RegisterDto = closed(
  Schema.Struct({
    email: Email,
    password: Password,
    name: Schema.optional(Name),
    organization_name: Schema.optional(Name)
  }),
  "RegisterDto"
)

export const LoginDto = closed(
  Schema.Struct({
    email: TypedEmail,
    password: TypedPassword,
    mfa_code: Schema.optional(TypedCode.annotations({ description: "The current TOTP code, for a user with MFA" }))
  }),
  "LoginDto"
)

export const ForgotPasswordDto = closed(Schema.Struct({ email: TypedEmail }), "ForgotPasswordDto")

export const ResetPasswordDto = closed(
  Schema.Struct({ token: maxText(MAX_TOKEN_LENGTH), password: Password }),
  "ResetPasswordDto"
)

export const ChangePasswordDto = closed(
  Schema.Struct({ current_password: TypedPassword, new_password: Password }),
  "ChangePasswordDto"
)

export const MfaCodeDto = closed(Schema.Struct({ code: TotpCode }), "MfaCodeDto")

export const AddMemberDto = closed(
  Schema.Struct({ email: Email, role: oneOf("admin", "developer", "analyst") }),
  "AddMemberDto"
)

export const RoleName = Schema.Literal("owner", "admin", "developer", "analyst")

export class User extends Schema.Class<User>("User")({
  id: UserId,
  object: Schema.Literal("user"),
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  mfa_enabled: Schema.Boolean,
  email_verified: Schema.Boolean.annotations({
    description: "Whether the user opened the verification link sent to their e-mail address"
  }),
  platform_admin: Schema.Boolean.annotations({
    description: "A user whose e-mail is in PLATFORM_ADMIN_EMAILS, once that address is verified"
  }),
  created_at: Schema.String
}) {}

export class OrganizationMembership extends Schema.Class<OrganizationMembership>("OrganizationMembership")({
  id: OrganizationId,
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
  id: UserId.annotations({
    description: "The member's user id: a user is a member of an organization at most once"
  }),
  object: Schema.Literal("member"),
  organization_id: OrganizationId,
  user_id: UserId,
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
  user_id: Schema.NullOr(UserId),
  store_id: Schema.NullOr(StoreId),
  livemode: Schema.NullOr(Schema.Boolean)
}) {}

/** A success answered with 201 Created. */
export const created = <A, I>(schema: Schema.Schema<A, I>) => schema.annotations(HttpApiSchema.annotations({ status: 201 }))

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("register", "/auth/register")
      .setPayload(RegisterDto)
      .addSuccess(created(SessionGrant))
      .addError(RateLimitedResponse)
      .annotate(OpenApi.Summary, "Create a merchant account and an organization (the user is its Owner)")
      .annotate(
        OpenApi.Description,
        "Creates the user, an organization (named `organization_name`, else the name or the e-mail's local part) with the user as Owner, and a session. A verification link is e-mailed. An e-mail already registered is 400; one client address may register REGISTRATIONS_PER_ADDRESS_PER_HOUR accounts an hour (429 beyond)."
      )
  )
  .add(
    HttpApiEndpoint.post("login", "/auth/login")
      .setPayload(LoginDto)
      .addSuccess(created(SessionGrant))
      .annotate(OpenApi.Summary, "Log in with e-mail and password (and a TOTP code with MFA)")
      .addError(UnauthorizedResponse)
      .addError(MfaRequiredResponse)
      .addError(RateLimitedResponse)
      .annotate(
        OpenApi.Description,
        "Failures are counted per e-mail and client address, per address and per e-mail, alike whether or not " +
          "an account has the e-mail; past a limit the answer is 429 with Retry-After (README \"Rate limits\"). " +
          "A user with MFA must send `mfa_code`; without it the answer is 401 `mfa_required`."
      )
  )
  .add(
    HttpApiEndpoint.post("forgotPassword", "/auth/forgot-password")
      .setPayload(ForgotPasswordDto)
      .addSuccess(created(Acknowledgement))
      .addError(RateLimitedResponse)
      .annotate(OpenApi.Summary, "Request a password-reset e-mail")
      .annotate(
        OpenApi.Description,
        "Answers the same, in the same time, whether or not the account exists. One e-mail (in any case) may " +
          "ask PASSWORD_RESETS_PER_EMAIL_PER_HOUR times an hour and one client address " +
          "PASSWORD_RESETS_PER_ADDRESS_PER_HOUR times, whether or not an account has the e-mail (429 with " +
          "Retry-After beyond)."
      )
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/auth/reset-password")
      .setPayload(ResetPasswordDto)
      .addSuccess(created(Acknowledgement))
      .annotate(OpenApi.Summary, "Set a new password with a reset token")
      .addError(UnauthorizedResponse)
      .addError(RateLimitedResponse)
      .annotate(OpenApi.Description, "A reset token is single-use and expires one hour after it was sent.")
  )
  .add(
    HttpApiEndpoint.get("resetPasswordPage", "/reset-password")
      .setUrlParams(Schema.Struct({ token: Schema.optional(maxText(MAX_TOKEN_LENGTH)) }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }).annotations({ description: "The reset page" }))
      .addError(RateLimitedResponse)
      .annotate(OpenApi.Summary, "The page the password-reset e-mail links to")
      .annotate(
        OpenApi.Description,
        "An HTML page with a form for the new password; it sends `{ token, password }` to " +
          "`POST /auth/reset-password` and shows the outcome. Never cached; sends no Referer."
      )
  )
  .add(
    HttpApiEndpoint.get("verifyEmail", "/auth/verify-email")
      .setUrlParams(Schema.Struct({ token: maxText(MAX_TOKEN_LENGTH) }))
      .addSuccess(Acknowledgement)
      .addError(UnauthorizedResponse)
      .addError(RateLimitedResponse)
      .annotate(OpenApi.Summary, "Verify an e-mail address with the link sent to it")
      .annotate(
        OpenApi.Description,
        "The link e-mailed at registration (and by `POST /auth/verify-email/resend`) points here. A token is " +
          "single-use and expires 24 hours after it was sent; an unknown, used or expired one is 401. A user " +
          "listed in PLATFORM_ADMIN_EMAILS becomes a platform administrator only once their address is verified."
      )
  )
  .annotate(OpenApi.Title, "Authentication")
  .annotate(OpenApi.Description, "Registration, login, password reset and e-mail verification; the routes that hand out a session token.")
{}

export class SessionGroup extends HttpApiGroup.make("session")
  .add(
    HttpApiEndpoint.get("me", "/auth/me")
      .addSuccess(Me)
      .annotate(OpenApi.Summary, "The signed-in user and their organizations")
      .annotate(OpenApi.Description, "The user (with `mfa_enabled` and `email_verified`) and every organization they belong to, with their role in it.")
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/auth/change-password")
      .setPayload(ChangePasswordDto)
      .addSuccess(created(Acknowledgement))
      .annotate(OpenApi.Summary, "Change the password (needs the current one)")
      .annotate(OpenApi.Description, "Needs the current password; every other session of the user is revoked.")
  )
  .add(
    HttpApiEndpoint.post("mfaSetup", "/auth/mfa/setup")
      .addSuccess(created(MfaSetup))
      .addError(InvalidStateResponse)
      .annotate(OpenApi.Summary, "Begin MFA setup: a TOTP secret and its otpauth URL")
      .annotate(OpenApi.Description, "Shows a new secret (and an `otpauth://` URL for a QR code) to enrol in an authenticator app; MFA is on only after `POST /auth/mfa/enable` with a code from it. 409 when MFA is already enabled.")
  )
  .add(
    HttpApiEndpoint.post("mfaEnable", "/auth/mfa/enable")
      .setPayload(MfaCodeDto)
      .annotate(OpenApi.Summary, "Confirm the setup with a TOTP code and enable MFA")
      .annotate(OpenApi.Description, "A wrong code is 401 `unauthorized`; a code that is not six digits is 400. From then on login needs `mfa_code`.")
      .addSuccess(created(User))
      .addError(InvalidStateResponse)
  )
  .add(
    HttpApiEndpoint.post("mfaDisable", "/auth/mfa/disable")
      .setPayload(MfaCodeDto)
      .annotate(OpenApi.Summary, "Disable MFA with a current TOTP code")
      .annotate(OpenApi.Description, "A wrong or already used code is 401 `unauthorized`; 409 when MFA is not enabled.")
      .addSuccess(created(User))
      .addError(InvalidStateResponse)
  )
  .add(
    HttpApiEndpoint.post("resendVerification", "/auth/verify-email/resend")
      .addSuccess(created(Acknowledgement))
      .addError(InvalidStateResponse)
      .addError(RateLimitedResponse)
      .annotate(OpenApi.Summary, "Send a new e-mail verification link to the signed-in user")
      .annotate(
        OpenApi.Description,
        "409 `invalid_state` when the address is verified already. One e-mail may be sent " +
          "VERIFICATION_RESENDS_PER_EMAIL_PER_HOUR links an hour and one client address may ask " +
          "VERIFICATION_RESENDS_PER_ADDRESS_PER_HOUR times (429 with Retry-After beyond)."
      )
  )
  .add(
    HttpApiEndpoint.get("whoami", "/v1/whoami")
      .annotate(Credentials, ["apiKey", "session"])
      .addSuccess(Whoami)
      .annotate(OpenApi.Summary, "The credential this request was made with (an API key or a user session)")
      .annotate(
        OpenApi.Description,
        "For an API key: its store and mode. For a session: the user. Useful to check a key before using it."
      )
  )
  .pipe(authenticated("session"))
  .annotate(OpenApi.Title, "Session")
  .annotate(OpenApi.Description, "The signed-in user: profile, password, two-factor authentication (TOTP), and who a credential is.")
{}

export class MembersGroup extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/orgs/:orgId/members")
      .setPath(OrgPath)
      .annotate(OpenApi.Summary, "List the organization's members, newest first")
      .annotate(OpenApi.Description, "Every member with their role; any member of the organization may read it (404 for anyone else).")
      .setUrlParams(ListParams)
      .addSuccess(MemberList)
  )
  .add(
    HttpApiEndpoint.post("add", "/dashboard/orgs/:orgId/members")
      .setPath(OrgPath)
      .setPayload(AddMemberDto)
      .addSuccess(created(Member))
      .annotate(OpenApi.Summary, "Add a member with a role")
      .addError(InvalidStateResponse)
      .annotate(
        OpenApi.Description,
        "Adds an existing user (by e-mail) to the organization with a role. Owners and Admins only."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Organization members")
  .annotate(OpenApi.Description, "The users of an organization and their roles (owner, admin, developer, analyst).")
{}
