/**
 * The rules of merchant accounts: registration, login (throttled, with MFA), sessions, password change
 * and reset, TOTP enrolment, and organization members.
 */
import { Effect, Option } from "effect"
import type { Role } from "../../domain/Access.ts"
import {
  Acknowledgement,
  Me,
  Member,
  MemberList,
  MfaSetup,
  OrganizationMembership,
  SessionGrant,
  User
} from "../../domain/Accounts.ts"
import type { UserPrincipal } from "../../domain/Auth.ts"
import { ACCOUNT_LINK_PAGES, Invitation, InvitationPreview, Team } from "../../domain/console/Account.ts"
import { Forbidden, InvalidRequest, InvalidState, MfaRequired, NotFound, RateLimited, Unauthorized } from "../../domain/Errors.ts"
import type { OrganizationId, UserId } from "../../domain/Ids.ts"
import { AppConfig, type AppConfigShape } from "../platform/Config.ts"
import { AccessService, storeData } from "../access/Service.ts"
import { PlanLimits } from "../limits/Service.ts"
import { hashToken, randomToken, SecretBox } from "../platform/Crypto.ts"
import { newId } from "../platform/Ids.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { emailSubject, type RateLimitHit, RateLimiter, type RateLimitRule } from "../platform/RateLimit.ts"
import { addMillis, currentDate } from "../platform/Time.ts"
import { decodeCursor, type ListParams, toPage } from "../platform/Pagination.ts"
import { MAX_LIST_LIMIT } from "../../domain/Lists.ts"
import { MailQueue } from "../mail/Queue.ts"
import * as Templates from "../mail/Templates.ts"
import { DECOY_PASSWORD_HASH, hashPassword, verifyPassword } from "./Passwords.ts"
import { AccountsRepo, type InvitationRow, type MemberRow, type MembershipRow, type UserRow } from "./Repo.ts"
import { matchTotp, newTotpSecret, otpauthUrl } from "./Totp.ts"
import { traced } from "../platform/Traced.ts"

/** How long a session token is valid. Long enough for a working day in the console, short enough to limit a leak. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000
export const PASSWORD_RESET_LIFETIME_MS = 60 * 60 * 1000
/** A verification link may sit in an inbox for a day. */
export const EMAIL_VERIFICATION_LIFETIME_MS = 24 * 60 * 60 * 1000
/** An invitation's link works for a week, as long as a colleague may take to get to it. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000
/** Session tokens carry a recognizable prefix so a leaked one is easy to spot and to tell from an API key. */
const SESSION_TOKEN_PREFIX = "mst_"

/** How often a session with an idle limit records that it was used. */
const SESSION_TOUCH_INTERVAL_MS = 60 * 1000

/** A session's own rules: an idle limit (seconds without use after which it ends), or none. */
export interface SessionOptions {
  readonly idleTimeoutSeconds?: number | undefined
}

/**
 * Sign-in limits, counted on failures only, alike for every e-mail typed whether or not an account has
 * it (the counters key on the hashed e-mail, so they cannot tell which e-mails have accounts):
 * - one address guessing one e-mail is blocked for that e-mail there (the owner elsewhere, or a colleague
 *   behind the same office address signing in to another account, is not);
 * - one address failing on many e-mails (credential stuffing) is blocked for every e-mail, at a ceiling far
 *   above what the people behind one office address mistype;
 * - many addresses guessing one e-mail block it everywhere, far beyond what its owner mistypes.
 * Nothing waits: an answer comes as soon as the password is checked (a delay on wrong answers only would
 * be skipped by a client that gives up waiting, and one on every answer made the owner wait too).
 */
export const loginLimits = (limits: AppConfigShape["rateLimits"]) => ({
  perEmailAndAddress: {
    name: "login:email-address",
    limit: limits.loginFailuresPerEmailAndAddress,
    windowSeconds: 15 * 60,
    blockSeconds: 15 * 60
  },
  perAddress: { name: "login:address", limit: limits.loginFailuresPerAddress, windowSeconds: 15 * 60, blockSeconds: 15 * 60 },
  perEmail: { name: "login:email", limit: limits.loginFailuresPerEmail, windowSeconds: 60 * 60, blockSeconds: 15 * 60 }
}) satisfies Record<string, RateLimitRule>

const INVALID_LOGIN = "Invalid e-mail or password"

export class AccountsService extends Effect.Service<AccountsService>()("accounts/AccountsService", {
  effect: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    /**
     * An organization's members, read and written under the proof of an organization check. The rest of
     * the repo is the signed-in user's own account (or a sign-in), which the session itself scopes.
     */
    const memberData = storeData({ members: repo.members, findMember: repo.findMember, addMember: repo.addMember })
    const secrets = yield* SecretBox
    const mail = yield* MailQueue
    const access = yield* AccessService
    const limits = yield* PlanLimits
    const config = yield* AppConfig
    const publicUrl = yield* PublicBaseUrl
    const rateLimiter = yield* RateLimiter
    const signInLimits = loginLimits(config.rateLimits)
    const addressOf = (clientAddress: Option.Option<string>) => Option.getOrElse(clientAddress, () => "unknown")

    const passwordResetLimits = {
      perAddress: { name: "password-reset:address", limit: config.rateLimits.passwordResetsPerAddressPerHour, windowSeconds: 60 * 60 },
      perEmail: { name: "password-reset:email", limit: config.rateLimits.passwordResetsPerEmailPerHour, windowSeconds: 60 * 60 }
    } satisfies Record<string, RateLimitRule>
    const verificationResendLimits = {
      perAddress: {
        name: "verification-resend:address",
        limit: config.rateLimits.verificationResendsPerAddressPerHour,
        windowSeconds: 60 * 60
      },
      perEmail: {
        name: "verification-resend:email",
        limit: config.rateLimits.verificationResendsPerEmailPerHour,
        windowSeconds: 60 * 60
      }
    } satisfies Record<string, RateLimitRule>

    /**
     * A listed e-mail makes a platform administrator only once its owner proved it is theirs: anyone can
     * register any address, so the list alone would hand admin to whoever registered it first.
     */
    const isPlatformAdmin = (email: string, emailVerifiedAt: Date | null) =>
      emailVerifiedAt !== null && config.platformAdminEmails.includes(email.toLowerCase())

    const toUser = (row: UserRow) =>
      new User({
        id: row.id,
        object: "user",
        email: row.email,
        name: row.name,
        mfa_enabled: row.mfa_enabled,
        email_verified: row.email_verified_at !== null,
        platform_admin: isPlatformAdmin(row.email, row.email_verified_at),
        created_at: row.created_at.toISOString()
      })

    const toOrganization = (row: MembershipRow) =>
      new OrganizationMembership({
        id: row.organization_id,
        object: "organization",
        name: row.name,
        role: row.role,
        created_at: row.created_at.toISOString()
      })

    const toMember = (row: MemberRow) =>
      new Member({
        id: row.user_id,
        object: "member",
        organization_id: row.organization_id,
        user_id: row.user_id,
        email: row.email,
        name: row.name,
        role: row.role,
        created_at: row.created_at.toISOString()
      })

    const requireUserRow = (userId: UserId) =>
      Effect.flatMap(
        repo.findUserById(userId),
        Option.match({
          onNone: () => Effect.fail(new Unauthorized({ message: "The session's user no longer exists" })),
          onSome: Effect.succeed
        })
      )

    const issueSession = traced("Accounts.issueSession")(function*(user: UserRow, options: SessionOptions = {}) {
      const token = SESSION_TOKEN_PREFIX + randomToken(32)
      const now = yield* currentDate
      const expiresAt = addMillis(now, SESSION_LIFETIME_MS)
      yield* repo.insertSession({
        id: newId("sess"),
        userId: user.id,
        tokenHash: hashToken(token),
        expiresAt,
        idleTimeoutSeconds: options.idleTimeoutSeconds ?? null,
        now
      })
      const organizations = yield* repo.membershipsOf(user.id)
      const primary = organizations[0]
      if (primary === undefined) return yield* Effect.dieMessage(`user ${user.id} has no organization`)
      return new SessionGrant({
        user: toUser(user),
        organization: toOrganization(primary),
        access_token: token,
        token_type: "Bearer",
        expires_at: expiresAt.toISOString()
      })
    })

    /**
     * Registration is throttled per client address like login: each attempt counts (a successful one
     * too, since accounts made in bulk are the abuse), and past the limit the address waits until the hour
     * that began with its first counted attempt is over.
     */
    const registrationsPerAddress: RateLimitRule = {
      name: "register:address",
      limit: config.registrationsPerAddressPerHour,
      windowSeconds: 60 * 60
    }
    const throttleRegistration = (clientAddress: Option.Option<string>) =>
      rateLimiter.admit([[registrationsPerAddress, addressOf(clientAddress)]]).pipe(
        Effect.mapError((refused) =>
          new RateLimited({
            message: `Too many registrations from this address; try again in ${refused.retryAfterSeconds} seconds`,
            retryAfterSeconds: refused.retryAfterSeconds
          })
        )
      )

    const sendEmailVerification = traced("Accounts.sendEmailVerification")(function*(user: UserRow) {
      const token = randomToken(32)
      const expiresAt = addMillis(yield* currentDate, EMAIL_VERIFICATION_LIFETIME_MS)
      yield* repo.insertEmailVerification(user.id, hashToken(token), expiresAt)
      const link = `${yield* publicUrl.get}${ACCOUNT_LINK_PAGES.verifyEmail}?token=${token}`
      yield* mail.enqueue({ to: user.email, kind: "verification", content: Templates.emailVerification({ link }) })
    })

    /**
     * Registration with an address that has an account: its owner hears of it by mail (at most once an
     * hour), pointed to sign-in and reset, so the attempt is never silent.
     */
    const noticeExistingAccount = traced("Accounts.noticeExistingAccount")(function*(email: string) {
      const found = yield* repo.findUserByEmail(email.trim())
      if (Option.isNone(found)) return
      const now = yield* currentDate
      yield* mail.enqueue({
        to: found.value.email,
        kind: "registration_attempt",
        content: Templates.registrationAttempt({ signInUrl: `${yield* publicUrl.get}/console`, at: now }),
        dedupeKey: `registration_attempt:${found.value.id}:${Math.floor(now.getTime() / 3_600_000)}`
      })
    })

    const register = traced("Accounts.register")(function*(
      input: {
        readonly email: string
        readonly password: string
        readonly name?: string | undefined
        readonly organization_name?: string | undefined
      },
      clientAddress: Option.Option<string>,
      options: SessionOptions = {}
    ) {
      yield* throttleRegistration(clientAddress)
      const alreadyRegistered = new InvalidRequest({ message: "An account with this e-mail already exists", param: "email" })
      if (yield* repo.emailTaken(input.email)) {
        yield* noticeExistingAccount(input.email)
        return yield* alreadyRegistered
      }
      const userId = newId("usr")
      const passwordHash = yield* hashPassword(input.password)
      yield* repo.createAccount({
        userId,
        email: input.email,
        name: input.name ?? null,
        passwordHash,
        organizationId: newId("org"),
        organizationName: input.organization_name ?? input.name ?? input.email.split("@")[0] ?? input.email
      }).pipe(
        // Two registrations of one e-mail at once: the unique index lets one through.
        Effect.catchTag("SqlError", (error) =>
          Effect.flatMap(repo.emailTaken(input.email), (taken) => taken ? Effect.fail(alreadyRegistered) : Effect.die(error)))
      )
      const user = yield* requireUserRow(userId).pipe(Effect.orDie)
      yield* sendEmailVerification(user)
      return yield* issueSession(user, options)
    })

    const verifyEmail = traced("Accounts.verifyEmail")(function*(input: { readonly token: string }) {
      const verified = yield* repo.consumeEmailVerification(hashToken(input.token), yield* currentDate)
      if (Option.isNone(verified)) {
        return yield* new Unauthorized({ message: "The verification link is invalid, expired or already used", param: "token" })
      }
      return new Acknowledgement({ object: "acknowledgement", message: "Your e-mail address is verified" })
    })

    const resendVerification = traced("Accounts.resendVerification")(function*(clientAddress: Option.Option<string>) {
      const principal = yield* access.currentUser
      const user = yield* requireUserRow(principal.userId)
      if (user.email_verified_at !== null) {
        return yield* new InvalidState({ message: "This e-mail address is verified already" })
      }
      yield* rateLimiter.admit([
        [verificationResendLimits.perAddress, addressOf(clientAddress)],
        [verificationResendLimits.perEmail, emailSubject(user.email)]
      ])
      yield* sendEmailVerification(user)
      return new Acknowledgement({ object: "acknowledgement", message: "A new verification link is on its way" })
    })

    /** The sign-in counters of a login: the e-mail typed (hashed) and the client's address. */
    const loginCounters = (email: string, clientAddress: Option.Option<string>) => {
      const emailKey = emailSubject(email)
      const address = addressOf(clientAddress)
      return {
        emailAndAddress: [signInLimits.perEmailAndAddress, `${emailKey}:${address}`],
        address: [signInLimits.perAddress, address],
        email: [signInLimits.perEmail, emailKey]
      } as const satisfies Record<string, RateLimitHit>
    }
    type LoginCounters = ReturnType<typeof loginCounters>

    const refuseIfBlocked = (counters: LoginCounters) =>
      Effect.gen(function*() {
        const blocked = yield* rateLimiter.blockedFor([counters.emailAndAddress, counters.address, counters.email])
        if (Option.isSome(blocked)) {
          return yield* new RateLimited({
            message: `Too many failed logins; try again in ${blocked.value} seconds`,
            retryAfterSeconds: blocked.value
          })
        }
      })

    const countFailure = (counters: LoginCounters) =>
      rateLimiter.countFailure([counters.emailAndAddress, counters.address, counters.email])

    /** Whether `code` is a current TOTP code of the user's enabled secret that was never used before. */
    const acceptMfaCode = traced("Accounts.acceptMfaCode")(function*(user: UserRow, code: string) {
      if (!user.mfa_enabled || user.mfa_secret === null) return false
      const secret = yield* secrets.open(user.mfa_secret)
      const step = yield* matchTotp(secret, code)
      if (Option.isNone(step)) return false
      return yield* repo.claimTimeStep(user.id, step.value)
    })

    const login = traced("Accounts.login")(function*(
      input: { readonly email: string; readonly password: string; readonly mfa_code?: string | undefined },
      clientAddress: Option.Option<string>,
      options: SessionOptions = {}
    ) {
      const counters = loginCounters(input.email, clientAddress)
      yield* refuseIfBlocked(counters)
      const found = yield* repo.findUserByEmail(input.email.trim())
      // The decoy keeps an unknown e-mail exactly as slow as a wrong password.
      const passwordHash = Option.isSome(found) ? found.value.password_hash : DECOY_PASSWORD_HASH
      const passwordMatches = yield* verifyPassword(passwordHash, input.password)
      if (Option.isNone(found) || !passwordMatches) {
        yield* countFailure(counters)
        return yield* new Unauthorized({ message: INVALID_LOGIN })
      }
      const user = found.value
      if (user.mfa_enabled) {
        if (input.mfa_code === undefined) {
          return yield* new MfaRequired({ message: "This account uses MFA: send mfa_code with the login", param: "mfa_code" })
        }
        if (!(yield* acceptMfaCode(user, input.mfa_code))) {
          yield* countFailure(counters)
          return yield* new Unauthorized({ message: "Invalid or already used MFA code", param: "mfa_code" })
        }
      }
      // The owner is in: what was counted against this account is forgotten. The address's count stays,
      // so one valid account does not reset a credential-stuffing address.
      yield* rateLimiter.forget([counters.emailAndAddress, counters.email])
      return yield* issueSession(user, options)
    })

    /** The principal behind a session token; None for an unknown, revoked or expired one. */
    const authenticateSession = traced("Accounts.authenticateSession")(function*(token: string) {
      if (!token.startsWith(SESSION_TOKEN_PREFIX)) return Option.none<UserPrincipal>()
      const now = yield* currentDate
      const session = yield* repo.findLiveSession(hashToken(token), now)
      // An idle limit counts from the last use; moved forward at most once a minute, not on every request.
      if (
        Option.isSome(session) && session.value.idle_timeout_seconds !== null &&
        now.getTime() - session.value.last_seen_at.getTime() >= SESSION_TOUCH_INTERVAL_MS
      ) yield* repo.touchSession(session.value.session_id, now)
      return Option.map(session, (row): UserPrincipal => ({
        _tag: "User",
        userId: row.user_id,
        email: row.email,
        sessionId: row.session_id,
        platformAdmin: isPlatformAdmin(row.email, row.email_verified_at)
      }))
    })

    /** Signs the session with this token out; an unknown or already revoked token changes nothing. */
    const signOut = traced("Accounts.signOut")(function*(token: string) {
      yield* repo.revokeSessionByToken(hashToken(token))
    })

    const me = traced("Accounts.me")(function*() {
      const principal = yield* access.currentUser
      const user = yield* requireUserRow(principal.userId)
      const organizations = yield* repo.membershipsOf(user.id)
      return new Me({ user: toUser(user), organizations: organizations.map(toOrganization) })
    })

    const changePassword = traced("Accounts.changePassword")(function*(input: {
      readonly current_password: string
      readonly new_password: string
    }) {
      const principal = yield* access.currentUser
      const user = yield* requireUserRow(principal.userId)
      if (!(yield* verifyPassword(user.password_hash, input.current_password))) {
        // A wrong credential is 401 like a failed login (API.md "Errors"), not a malformed request.
        return yield* new Unauthorized({ message: "The current password is not correct", param: "current_password" })
      }
      const passwordHash = yield* hashPassword(input.new_password)
      yield* repo.updatePasswordAndRevokeSessions(user.id, passwordHash, principal.sessionId)
      return new Acknowledgement({ object: "acknowledgement", message: "Password changed; other sessions were signed out" })
    })

    const sendPasswordReset = (email: string) =>
      Effect.gen(function*() {
        const found = yield* repo.findUserByEmail(email.trim())
        if (Option.isNone(found)) return
        const token = randomToken(32)
        const expiresAt = addMillis(yield* currentDate, PASSWORD_RESET_LIFETIME_MS)
        yield* repo.insertPasswordReset(found.value.id, hashToken(token), expiresAt)
        const link = `${yield* publicUrl.get}/reset-password?token=${token}`
        yield* mail.enqueue({ to: found.value.email, kind: "password_reset", content: Templates.passwordReset({ link, token }) })
      })

    const forgotPassword = traced("Accounts.forgotPassword")(function*(
      input: { readonly email: string },
      clientAddress: Option.Option<string>
    ) {
      // Counted for any e-mail typed, so a refusal says nothing about whether the account exists either.
      yield* rateLimiter.admit([
        [passwordResetLimits.perAddress, addressOf(clientAddress)],
        [passwordResetLimits.perEmail, emailSubject(input.email)]
      ])
      // The answer must not depend on whether the account exists, in content or in time: the lookup and
      // the mail happen after the answer, in the background.
      yield* Effect.forkDaemon(
        sendPasswordReset(input.email).pipe(
          Effect.catchAllCause((cause) => Effect.logError("password reset mail failed", cause))
        )
      )
      return new Acknowledgement({
        object: "acknowledgement",
        message: "If an account exists for this e-mail, a reset link is on its way"
      })
    })

    const resetPassword = traced("Accounts.resetPassword")(function*(input: {
      readonly token: string
      readonly password: string
    }) {
      const userId = yield* repo.consumePasswordReset(hashToken(input.token), yield* currentDate)
      if (Option.isNone(userId)) {
        return yield* new Unauthorized({ message: "The reset token is invalid, expired or already used", param: "token" })
      }
      const passwordHash = yield* hashPassword(input.password)
      yield* repo.updatePasswordAndRevokeSessions(userId.value, passwordHash, null)
      return new Acknowledgement({ object: "acknowledgement", message: "Password changed; sign in with the new password" })
    })

    const mfaSetup = traced("Accounts.mfaSetup")(function*() {
      const principal = yield* access.currentUser
      const user = yield* requireUserRow(principal.userId)
      if (user.mfa_enabled) {
        return yield* new InvalidState({ message: "MFA is already enabled; disable it first to enrol a new device" })
      }
      const secret = newTotpSecret()
      yield* repo.setPendingMfaSecret(user.id, yield* secrets.seal(secret))
      return new MfaSetup({ object: "mfa_setup", secret, otpauth_url: otpauthUrl(secret, user.email) })
    })

    const mfaEnable = traced("Accounts.mfaEnable")(function*(input: { readonly code: string }) {
      const principal = yield* access.currentUser
      const user = yield* requireUserRow(principal.userId)
      if (user.mfa_enabled) return yield* new InvalidState({ message: "MFA is already enabled" })
      if (user.mfa_pending_secret === null) {
        return yield* new InvalidState({ message: "Start with POST /auth/mfa/setup" })
      }
      const step = yield* matchTotp(yield* secrets.open(user.mfa_pending_secret), input.code)
      if (Option.isNone(step)) return yield* new Unauthorized({ message: "The code is not valid", param: "code" })
      yield* repo.enableMfa(user.id, step.value)
      yield* mail.enqueue({ to: user.email, kind: "mfa_changed", content: Templates.mfaChanged({ enabled: true, at: yield* currentDate }) })
      return toUser(yield* requireUserRow(user.id))
    })

    const mfaDisable = traced("Accounts.mfaDisable")(function*(input: { readonly code: string }) {
      const principal = yield* access.currentUser
      const user = yield* requireUserRow(principal.userId)
      if (!user.mfa_enabled) return yield* new InvalidState({ message: "MFA is not enabled" })
      if (!(yield* acceptMfaCode(user, input.code))) {
        return yield* new Unauthorized({ message: "The code is not valid or was already used", param: "code" })
      }
      yield* repo.disableMfa(user.id)
      yield* mail.enqueue({ to: user.email, kind: "mfa_changed", content: Templates.mfaChanged({ enabled: false, at: yield* currentDate }) })
      return toUser(yield* requireUserRow(user.id))
    })

    /**
     * For operations gated behind MFA (high-value refunds): the user must have MFA enabled and send a
     * fresh, never-used code.
     */
    const requireFreshMfa = traced("Accounts.requireFreshMfa")(function*(userId: UserId, code: string | undefined) {
      const user = yield* requireUserRow(userId)
      if (!user.mfa_enabled) {
        return yield* new MfaRequired({ message: "This operation needs MFA enabled on the account" })
      }
      if (code === undefined) return yield* new MfaRequired({ message: "Send a fresh mfa_code", param: "mfa_code" })
      if (!(yield* acceptMfaCode(user, code))) {
        return yield* new MfaRequired({ message: "The MFA code is not valid or was already used", param: "mfa_code" })
      }
    })

    const listMembers = traced("Accounts.listMembers")(function*(organizationId: OrganizationId, params: ListParams) {
      return yield* access.withOrganization(access.organization(organizationId, "organization.read"), () =>
        Effect.gen(function*() {
          const position = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
          const rows = yield* memberData.members(organizationId, params.limit, position)
          const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.user_id }))
          return new MemberList({ ...page, data: page.data.map(toMember) })
        }))
    })

    const addMember = traced("Accounts.addMember")(function*(
      organizationId: OrganizationId,
      input: { readonly email: string; readonly role: Exclude<Role, "owner"> }
    ) {
      return yield* access.withOrganization(access.organization(organizationId, "member.manage"), (granted) =>
        Effect.gen(function*() {
          const user = yield* repo.findUserByEmail(input.email)
          if (Option.isNone(user)) {
            return yield* new NotFound({
              message: "No user with this e-mail: invite them from the console's Team page, which mails them a link to sign up",
              param: "email"
            })
          }
          if (!(yield* limits.withRoom(organizationId, "team_members", memberData.addMember(organizationId, user.value.id, input.role)))) {
            return yield* new InvalidState({ message: "This user is already a member of the organization" })
          }
          const added = yield* memberData.findMember(organizationId, user.value.id)
          if (Option.isNone(added)) return yield* Effect.dieMessage("membership vanished after insert")
          const organization = (yield* repo.membershipsOf(user.value.id)).find((row) => row.organization_id === organizationId)
          yield* mail.enqueue({
            to: user.value.email,
            kind: "member_added",
            content: Templates.memberAdded({
              organizationName: organization?.name ?? organizationId,
              role: input.role,
              invitedBy: granted.principal.email,
              link: `${yield* publicUrl.get}/console`
            })
          })
          return toMember(added.value)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Invitations: an e-mail invited with a role joins from the mailed link, signing up or signing in
    // ---------------------------------------------------------------------------------------------

    const invitationNotUsable = new Unauthorized({
      message: "This invitation link is invalid, expired, revoked or already used; ask for a new invitation",
      param: "token"
    })

    const toInvitation = (row: InvitationRow, now: Date) =>
      new Invitation({
        id: row.id,
        object: "invitation",
        organization_id: row.organization_id,
        email: row.email,
        role: row.role,
        status: row.expires_at > now ? "pending" : "expired",
        invited_by: row.invited_by,
        created_at: row.created_at.toISOString(),
        expires_at: row.expires_at.toISOString()
      })

    const team = traced("Accounts.team")(function*(organizationId: OrganizationId) {
      return yield* access.withOrganization(access.organization(organizationId, "organization.read"), () =>
        Effect.gen(function*() {
          const members = yield* memberData.members(organizationId, MAX_LIST_LIMIT, undefined)
          const invitations = yield* repo.openInvitations(organizationId)
          const now = yield* currentDate
          return new Team({
            organization_id: organizationId,
            members: members.slice(0, MAX_LIST_LIMIT).map(toMember),
            invitations: invitations.map((row) => toInvitation(row, now))
          })
        }))
    })

    /**
     * Invites an e-mail, with or without an account: the plan must have room for one more member now
     * (checked again when the invitation is accepted), and a member already is refused.
     */
    const inviteMember = traced("Accounts.inviteMember")(function*(
      organizationId: OrganizationId,
      input: { readonly email: string; readonly role: Exclude<Role, "owner"> }
    ) {
      const granted = yield* access.organization(organizationId, "member.manage")
      const existing = yield* repo.findUserByEmail(input.email)
      if (Option.isSome(existing) && Option.isSome(yield* repo.findMember(organizationId, existing.value.id))) {
        return yield* new InvalidState({ message: "This e-mail is already a member of the organization", param: "email" })
      }
      yield* limits.requireRoom(organizationId, "team_members")
      const token = randomToken(32)
      const now = yield* currentDate
      const id = newId("ivt")
      yield* repo.insertInvitation({
        id,
        organizationId,
        email: input.email,
        role: input.role,
        tokenHash: hashToken(token),
        invitedBy: granted.principal.userId,
        now,
        expiresAt: addMillis(now, INVITATION_LIFETIME_MS)
      })
      const created = (yield* repo.openInvitations(organizationId)).find((row) => row.id === id)
      if (created === undefined) return yield* Effect.dieMessage("invitation vanished after insert")
      yield* mail.enqueue({
        to: input.email,
        kind: "invitation",
        content: Templates.invitation({
          organizationName: created.organization_name,
          role: input.role,
          invitedBy: granted.principal.email,
          link: `${yield* publicUrl.get}${ACCOUNT_LINK_PAGES.invitation}?token=${token}`,
          expiresAt: created.expires_at
        })
      })
      return toInvitation(created, now)
    })

    const revokeInvitation = traced("Accounts.revokeInvitation")(function*(organizationId: OrganizationId, id: string) {
      yield* access.organization(organizationId, "member.manage")
      const now = yield* currentDate
      const revoked = yield* repo.revokeInvitation(organizationId, id, now)
      if (Option.isNone(revoked)) return yield* new NotFound({ message: `No pending invitation ${id}`, param: "id" })
      return toInvitation(revoked.value, now)
    })

    const usableInvitation = (token: string) =>
      Effect.gen(function*() {
        const found = yield* repo.findUsableInvitation(hashToken(token), yield* currentDate)
        if (Option.isNone(found)) return yield* invitationNotUsable
        return found.value
      })

    /** What the link's page shows: to whom, where, as what, and whether the invitee signs up or in. */
    const previewInvitation = traced("Accounts.previewInvitation")(function*(input: { readonly token: string }) {
      const invitation = yield* usableInvitation(input.token)
      return new InvitationPreview({
        object: "invitation_preview",
        organization_name: invitation.organization_name,
        email: invitation.email,
        role: invitation.role,
        invited_by: invitation.invited_by,
        expires_at: invitation.expires_at.toISOString(),
        account_exists: yield* repo.emailTaken(invitation.email)
      })
    })

    /** Spends the invitation for the user and adds them with its role, if the plan still has room. */
    const joinByInvitation = (token: string, userId: UserId, now: Date) =>
      Effect.gen(function*() {
        const accepted = yield* repo.acceptInvitation(hashToken(token), userId, now)
        if (Option.isNone(accepted)) return yield* invitationNotUsable
        yield* repo.addMember(accepted.value.organization_id, userId, accepted.value.role)
        return accepted.value
      })

    /**
     * Signs up from an invitation: the account has the invited e-mail, already verified (the link proves
     * it), no organization of its own, and joins the inviting one. An e-mail with an account signs in
     * instead. Everything happens in one transaction, so a refused plan limit or a used link leaves no
     * account behind.
     */
    const signUpFromInvitation = traced("Accounts.signUpFromInvitation")(function*(
      input: { readonly token: string; readonly name: string; readonly password: string },
      options: SessionOptions = {}
    ) {
      const invitation = yield* usableInvitation(input.token)
      const accountExists = new InvalidState({
        message: "An account with this e-mail exists already: sign in to accept the invitation",
        param: "email"
      })
      if (yield* repo.emailTaken(invitation.email)) return yield* accountExists
      const userId = newId("usr")
      const passwordHash = yield* hashPassword(input.password)
      const now = yield* currentDate
      yield* limits.withRoom(
        invitation.organization_id,
        "team_members",
        Effect.zipRight(
          repo.createInvitedUser({ userId, email: invitation.email, name: input.name.trim(), passwordHash, now }).pipe(
            Effect.catchTag("SqlError", (error) =>
              Effect.flatMap(repo.emailTaken(invitation.email), (taken) => taken ? Effect.fail(accountExists) : Effect.die(error)))
          ),
          joinByInvitation(input.token, userId, now)
        )
      )
      return yield* issueSession(yield* requireUserRow(userId).pipe(Effect.orDie), options)
    })

    /** Accepts an invitation as the signed-in user, whose address must be the invited one. */
    const acceptInvitation = traced("Accounts.acceptInvitation")(function*(input: { readonly token: string }) {
      const principal = yield* access.currentUser
      const user = yield* requireUserRow(principal.userId)
      const invitation = yield* usableInvitation(input.token)
      if (invitation.email.toLowerCase() !== user.email.toLowerCase()) {
        return yield* new Forbidden({
          message: `This invitation is for ${invitation.email}; sign in with that address to accept it`,
          param: "token"
        })
      }
      const now = yield* currentDate
      const joined = yield* limits.withRoom(invitation.organization_id, "team_members", joinByInvitation(input.token, user.id, now))
      const membership = (yield* repo.membershipsOf(user.id)).find((row) => row.organization_id === joined.organization_id)
      if (membership === undefined) return yield* Effect.dieMessage("membership vanished after accepting an invitation")
      return toOrganization(membership)
    })

    // ---------------------------------------------------------------------------------------------
    // Changing the e-mail address: it changes once the new address is proven by the mailed link
    // ---------------------------------------------------------------------------------------------

    /** Signed in, so limited per account (the verification resends' per-e-mail limit), not per address. */
    const requestEmailChange = traced("Accounts.requestEmailChange")(function*(
      input: { readonly new_email: string; readonly password: string }
    ) {
      const principal = yield* access.currentUser
      const user = yield* requireUserRow(principal.userId)
      if (!(yield* verifyPassword(user.password_hash, input.password))) {
        return yield* new Unauthorized({ message: "The password is not correct", param: "password" })
      }
      if (input.new_email.toLowerCase() === user.email.toLowerCase()) {
        return yield* new InvalidRequest({ message: "This is your current e-mail address already", param: "new_email" })
      }
      if (yield* repo.emailTaken(input.new_email)) {
        return yield* new InvalidRequest({ message: "Another account uses this e-mail address", param: "new_email" })
      }
      yield* rateLimiter.admit([[verificationResendLimits.perEmail, emailSubject(user.email)]])
      const token = randomToken(32)
      const now = yield* currentDate
      yield* repo.insertEmailChange({
        userId: user.id,
        newEmail: input.new_email,
        tokenHash: hashToken(token),
        expiresAt: addMillis(now, EMAIL_VERIFICATION_LIFETIME_MS)
      })
      const link = `${yield* publicUrl.get}${ACCOUNT_LINK_PAGES.emailChange}?token=${token}`
      yield* mail.enqueue({
        to: input.new_email,
        kind: "email_change",
        content: Templates.emailChangeVerification({ link, newEmail: input.new_email })
      })
      yield* mail.enqueue({
        to: user.email,
        kind: "email_change_notice",
        content: Templates.emailChangeRequested({ newEmail: input.new_email, at: now })
      })
      return new Acknowledgement({
        object: "acknowledgement",
        message: `A confirmation link is on its way to ${input.new_email}; your address changes when you open it`
      })
    })

    const confirmEmailChange = traced("Accounts.confirmEmailChange")(function*(input: { readonly token: string }) {
      const changed = yield* repo.consumeEmailChange(hashToken(input.token), yield* currentDate).pipe(
        Effect.catchTag("SqlError", () =>
          new InvalidState({ message: "Another account took this e-mail address meanwhile; ask for the change again with another address" })),
        Effect.catchTag("ParseError", Effect.die)
      )
      if (Option.isNone(changed)) {
        return yield* new Unauthorized({ message: "The confirmation link is invalid, expired or already used", param: "token" })
      }
      return new Acknowledgement({ object: "acknowledgement", message: `Your e-mail address is now ${changed.value.new_email}` })
    })

    /**
     * The member of an organization whose role or membership another member changes: not the caller
     * (nobody locks themselves out) and not the owner (whose role this cannot take or give).
     */
    const changeableMember = traced("Accounts.changeableMember")(function*(
      organizationId: OrganizationId,
      userId: UserId,
      change: "change the role of" | "remove"
    ) {
      const granted = yield* access.organization(organizationId, "member.manage")
      const member = yield* repo.findMember(organizationId, userId)
      if (Option.isNone(member)) {
        return yield* new NotFound({ message: `No such member of this organization: ${userId}`, param: "user_id" })
      }
      if (member.value.user_id === granted.principal.userId) {
        return yield* new InvalidState({ message: `You cannot ${change} yourself; ask another owner or admin`, param: "user_id" })
      }
      if (member.value.role === "owner") {
        return yield* new InvalidState({ message: `You cannot ${change} the organization's owner`, param: "user_id" })
      }
      return member.value
    })

    const changeMemberRole = traced("Accounts.changeMemberRole")(function*(
      organizationId: OrganizationId,
      input: { readonly user_id: UserId; readonly role: Exclude<Role, "owner"> }
    ) {
      const member = yield* changeableMember(organizationId, input.user_id, "change the role of")
      yield* repo.setMemberRole(organizationId, member.user_id, input.role)
      return toMember({ ...member, role: input.role })
    })

    const removeMember = traced("Accounts.removeMember")(function*(organizationId: OrganizationId, userId: UserId) {
      const member = yield* changeableMember(organizationId, userId, "remove")
      yield* repo.removeMember(organizationId, member.user_id)
      return toMember(member)
    })

    return {
      register,
      login,
      authenticateSession,
      signOut,
      me,
      changePassword,
      forgotPassword,
      resetPassword,
      verifyEmail,
      resendVerification,
      mfaSetup,
      mfaEnable,
      mfaDisable,
      requireFreshMfa,
      listMembers,
      addMember,
      team,
      inviteMember,
      revokeInvitation,
      previewInvitation,
      signUpFromInvitation,
      acceptInvitation,
      requestEmailChange,
      confirmEmailChange,
      changeMemberRole,
      removeMember
    } as const
  }),
  dependencies: [
    AccountsRepo.Default,
    MailQueue.Default,
    SecretBox.Default,
    AccessService.Default,
    PlanLimits.Default,
    RateLimiter.Default
  ]
}) {}
