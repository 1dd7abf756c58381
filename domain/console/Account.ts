/**
 * The console's account procedures: an organization's team (members and pending invitations), inviting
 * by e-mail, accepting an invitation while signed in, and changing one's e-mail address. The signed-out
 * steps of the mailed links (seeing an invitation, signing up from it, confirming a new address) are
 * plain routes beside the console's session routes (CONSOLE_INVITATION_PATH …), since signing up sets
 * the session cookie and the reader of a link is not signed in yet.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { Acknowledgement, Email, Member, OrganizationMembership, Password, RoleName } from "../Accounts.ts"
import { ConsoleAuthentication } from "./Core.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound, RateLimited, Unauthorized } from "../Errors.ts"
import { IdOf, OrganizationId } from "../Ids.ts"
import { closed, MAX_NAME_LENGTH, MAX_PASSWORD_LENGTH, MAX_TOKEN_LENGTH, maxText, oneOf } from "../Text.ts"

export const InvitationId = IdOf("ivt")
export type InvitationId = typeof InvitationId.Type

/** The signed-out page that shows an invitation (POST `{ token }`) and the one that signs up from it. */
export const CONSOLE_INVITATION_PATH = "/console/invitation"
export const CONSOLE_INVITATION_SIGN_UP_PATH = "/console/invitation/sign-up"
/** Confirms a change of e-mail address with the token mailed to the new address (POST `{ token }`). */
export const CONSOLE_EMAIL_CHANGE_PATH = "/console/email-change"

/** The pages of the console the account mails link to, each with `?token=`. */
export const ACCOUNT_LINK_PAGES = {
  verifyEmail: "/console/verify-email",
  invitation: "/console/invitation",
  emailChange: "/console/confirm-email"
} as const

export const InvitedRole = oneOf("admin", "developer", "analyst")

/** An invitation as the team list shows it: never its token. */
export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: InvitationId,
  object: Schema.Literal("invitation"),
  organization_id: OrganizationId,
  email: Schema.String,
  role: RoleName,
  /** `pending` until accepted or revoked; `expired` once its link no longer works (invite again). */
  status: Schema.Literal("pending", "expired"),
  invited_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  expires_at: Schema.String
}) {}

/** An organization's members and its invitations not yet accepted or revoked, newest first. */
export class Team extends Schema.Class<Team>("Team")({
  organization_id: OrganizationId,
  members: Schema.Array(Member),
  invitations: Schema.Array(Invitation)
}) {}

/** What the invitation page shows to the holder of the link, signed in or not. */
export class InvitationPreview extends Schema.Class<InvitationPreview>("InvitationPreview")({
  object: Schema.Literal("invitation_preview"),
  organization_name: Schema.String,
  email: Schema.String,
  role: RoleName,
  invited_by: Schema.NullOr(Schema.String),
  expires_at: Schema.String,
  /** Whether an account has the invited e-mail: then the invitee signs in to accept, else signs up. */
  account_exists: Schema.Boolean
}) {}

const Token = maxText(MAX_TOKEN_LENGTH)

export const InvitationToken = closed(Schema.Struct({ token: Token }), "InvitationToken")

/** Signing up from an invitation: the address is the invited one, proven by the link. */
export const InvitationSignUp = closed(
  Schema.Struct({
    token: Token,
    name: Schema.String.pipe(
      Schema.minLength(1, { message: () => "must not be empty" }),
      Schema.maxLength(MAX_NAME_LENGTH, { message: () => `must be at most ${MAX_NAME_LENGTH} characters` })
    ),
    password: Password
  }),
  "InvitationSignUp"
)

export const EmailChangeToken = closed(Schema.Struct({ token: Token }), "EmailChangeToken")

export class AccountRpcs extends RpcGroup.make(
  /** The organization's members and pending invitations; any member may read it. */
  Rpc.make("Team", {
    payload: { organization_id: OrganizationId },
    success: Team,
    error: Schema.Union(Forbidden, NotFound, InvalidRequest)
  }),
  /**
   * Invites an e-mail with a role (Owners and Admins): whether or not it has an account, an invitation is
   * mailed with a single-use link valid 7 days; a second invitation of the same e-mail replaces the first.
   * A member already is `InvalidState`; a plan without room for another member is `Forbidden`.
   */
  Rpc.make("InviteMember", {
    payload: { organization_id: OrganizationId, email: Email, role: InvitedRole },
    success: Invitation,
    error: Schema.Union(Forbidden, NotFound, InvalidRequest, InvalidState)
  }),
  Rpc.make("RevokeInvitation", {
    payload: { organization_id: OrganizationId, id: InvitationId },
    success: Invitation,
    error: Schema.Union(Forbidden, NotFound, InvalidRequest)
  }),
  /** Joins the invitation's organization as the signed-in user, whose e-mail must be the invited one. */
  Rpc.make("AcceptInvitation", {
    payload: InvitationToken.fields,
    success: OrganizationMembership,
    error: Schema.Union(Unauthorized, Forbidden, InvalidRequest, InvalidState)
  }),
  /**
   * Asks to change the signed-in user's e-mail (the current password proves it is them): a link goes to
   * the new address and a notice to the current one; the address changes when the link is followed.
   */
  Rpc.make("RequestEmailChange", {
    payload: { new_email: Email, password: maxText(MAX_PASSWORD_LENGTH) },
    success: Acknowledgement,
    error: Schema.Union(Unauthorized, Forbidden, InvalidRequest, RateLimited)
  })
).middleware(ConsoleAuthentication) {}
