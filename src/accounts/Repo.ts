/**
 * SQL of accounts: users, sessions, organizations and memberships, invitations, password resets,
 * e-mail verification and changes, MFA state.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { type Role, RoleSchema } from "../../domain/Access.ts"
import { InvitationId } from "../../domain/console/Account.ts"
import { OrganizationId, SessionId, UserId } from "../../domain/Ids.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { addMillis } from "../platform/Time.ts"
import { traced } from "../platform/Traced.ts"

export const UserRow = Schema.Struct({
  id: UserId,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  password_hash: Schema.String,
  mfa_enabled: Schema.Boolean,
  mfa_secret: Schema.NullOr(Schema.String),
  mfa_pending_secret: Schema.NullOr(Schema.String),
  email_verified_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})
export type UserRow = typeof UserRow.Type

export const MembershipRow = Schema.Struct({
  organization_id: OrganizationId,
  name: Schema.String,
  role: Schema.Literal("owner", "admin", "developer", "analyst"),
  created_at: Schema.DateFromSelf
})
export type MembershipRow = typeof MembershipRow.Type

export const MemberRow = Schema.Struct({
  organization_id: OrganizationId,
  user_id: UserId,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  role: Schema.Literal("owner", "admin", "developer", "analyst"),
  created_at: Schema.DateFromSelf
})
export type MemberRow = typeof MemberRow.Type

export const InvitationRow = Schema.Struct({
  id: InvitationId,
  organization_id: OrganizationId,
  organization_name: Schema.String,
  email: Schema.String,
  role: Schema.Literal("admin", "developer", "analyst"),
  invited_by: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})
export type InvitationRow = typeof InvitationRow.Type

/** How many open invitations the team list shows: far more than a team invites at once. */
const MAX_OPEN_INVITATIONS_LISTED = 200

/** A token's hash and the time it is presented at. */
const TokenAt = Schema.Struct({ tokenHash: Schema.String, now: Schema.DateFromSelf })

const SessionUserRow = Schema.Struct({
  session_id: SessionId,
  user_id: UserId,
  email: Schema.String,
  email_verified_at: Schema.NullOr(Schema.DateFromSelf),
  idle_timeout_seconds: Schema.NullOr(Schema.Int),
  last_seen_at: Schema.DateFromSelf
})

export class AccountsRepo extends Effect.Service<AccountsRepo>()("accounts/AccountsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Three inserts that read nothing back, so they are plain statements. Unlike every other method, a
    // SqlError stays a failure: the service tells a registration that lost a race on the e-mail by it.
    const createAccount = traced("AccountsRepo.createAccount")((input: {
      readonly userId: UserId
      readonly email: string
      readonly name: string | null
      readonly passwordHash: string
      readonly organizationId: OrganizationId
      readonly organizationName: string
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO users (id, email, name, password_hash)
          VALUES (${input.userId}, ${input.email}, ${input.name}, ${input.passwordHash})`
        yield* sql`INSERT INTO organizations (id, name) VALUES (${input.organizationId}, ${input.organizationName})`
        yield* sql`
          INSERT INTO memberships (organization_id, user_id, role)
          VALUES (${input.organizationId}, ${input.userId}, 'owner')`
      }))
    )

    const findUserIdByEmail = SqlSchema.findOne({
      Request: Schema.String,
      // Only whether the row exists matters.
      Result: Schema.Unknown,
      execute: (email) => sql`SELECT 1 FROM users WHERE lower(email) = lower(${email})`
    })
    const emailTaken = traced("AccountsRepo.emailTaken")((email: string) =>
      findUserIdByEmail(email).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    const findUserByEmail = traced("AccountsRepo.findUserByEmail")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: UserRow,
        execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
      }),
      Effect.orDie
    )

    const findUserById = traced("AccountsRepo.findUserById")(
      SqlSchema.findOne({
        Request: UserId,
        Result: UserRow,
        execute: (id) => sql`SELECT * FROM users WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const membershipsOf = traced("AccountsRepo.membershipsOf")(
      SqlSchema.findAll({
        Request: UserId,
        Result: MembershipRow,
        execute: (userId) =>
          sql`
            SELECT m.organization_id, o.name, m.role, o.created_at
            FROM memberships m JOIN organizations o ON o.id = m.organization_id
            WHERE m.user_id = ${userId}
            ORDER BY m.created_at, m.organization_id`
      }),
      Effect.orDie
    )

    const insertSession = traced("AccountsRepo.insertSession")(
      SqlSchema.void({
        Request: Schema.Struct({
          id: SessionId,
          userId: UserId,
          tokenHash: Schema.String,
          expiresAt: Schema.DateFromSelf,
          idleTimeoutSeconds: Schema.NullOr(Schema.Int),
          now: Schema.DateFromSelf
        }),
        execute: (input) =>
          sql`
            INSERT INTO sessions (id, user_id, token_hash, expires_at, idle_timeout_seconds, last_seen_at)
            VALUES (${input.id}, ${input.userId}, ${input.tokenHash}, ${input.expiresAt}, ${input.idleTimeoutSeconds}, ${input.now})`
      }),
      Effect.orDie
    )

    // Rules with time compare against `now` from the service's Clock, passed in, never the database's
    // now(): so they are tested under TestClock. Nodes keep NTP time; the windows are minutes to days.
    const findSession = SqlSchema.findOne({
      Request: TokenAt,
      Result: SessionUserRow,
      execute: ({ now, tokenHash }) =>
        sql`
          SELECT s.id AS session_id, u.id AS user_id, u.email, u.email_verified_at, s.idle_timeout_seconds, s.last_seen_at
          FROM sessions s JOIN users u ON u.id = s.user_id
          WHERE s.token_hash = ${tokenHash} AND s.revoked_at IS NULL AND s.expires_at > ${now}
            AND (s.idle_timeout_seconds IS NULL
              OR s.last_seen_at > ${now}::timestamptz - make_interval(secs => s.idle_timeout_seconds))`
    })
    /** The live session with this token hash at `now`: not revoked, not expired, not idle past its limit. */
    const findLiveSession = traced("AccountsRepo.findLiveSession")((tokenHash: string, now: Date) =>
      findSession({ tokenHash, now }).pipe(Effect.orDie)
    )

    /** The session was used at `now`: its idle limit counts from there. */
    const touchSession = traced("AccountsRepo.touchSession")((sessionId: SessionId, now: Date) =>
      sql`UPDATE sessions SET last_seen_at = ${now} WHERE id = ${sessionId} AND last_seen_at < ${now}`.pipe(Effect.asVoid, Effect.orDie)
    )

    /** Signs a session out: its token is refused from now on. */
    const revokeSessionByToken = traced("AccountsRepo.revokeSessionByToken")((tokenHash: string) =>
      sql`UPDATE sessions SET revoked_at = now() WHERE token_hash = ${tokenHash} AND revoked_at IS NULL`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
    )

    /**
     * Sets a new password and revokes what the old one gave: the user's other sessions, and every reset
     * token still outstanding (a reset link from before must not undo this password).
     */
    const updatePasswordAndRevokeSessions = traced("AccountsRepo.updatePasswordAndRevokeSessions")(
      (userId: UserId, passwordHash: string, keepSessionId: SessionId | null) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE users SET password_hash = ${passwordHash}, updated_at = now() WHERE id = ${userId}`
          yield* sql`
            UPDATE sessions SET revoked_at = now()
            WHERE user_id = ${userId} AND revoked_at IS NULL AND id IS DISTINCT FROM ${keepSessionId}`
          yield* sql`UPDATE password_resets SET used_at = now() WHERE user_id = ${userId} AND used_at IS NULL`
        })).pipe(Effect.orDie)
    )

    // A reset or verification token as stored: only its hash, for one user, until it expires.
    const NewToken = Schema.Struct({ userId: UserId, tokenHash: Schema.String, expiresAt: Schema.DateFromSelf })

    const insertReset = SqlSchema.void({
      Request: NewToken,
      execute: ({ expiresAt, tokenHash, userId }) =>
        sql`
          INSERT INTO password_resets (token_hash, user_id, expires_at)
          VALUES (${tokenHash}, ${userId}, ${expiresAt})`
    })
    const insertPasswordReset = traced("AccountsRepo.insertPasswordReset")(
      (userId: UserId, tokenHash: string, expiresAt: Date) =>
        insertReset({ userId, tokenHash, expiresAt }).pipe(Effect.orDie)
    )

    const spendReset = SqlSchema.findOne({
      Request: TokenAt,
      Result: Schema.Struct({ user_id: UserId }),
      execute: ({ now, tokenHash }) =>
        sql`
          UPDATE password_resets SET used_at = ${now}
          WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}
          RETURNING user_id`
    })
    /**
     * Marks the reset token used if it is still valid at `now`, atomically: of two concurrent uses only
     * one gets the user id.
     */
    const consumePasswordReset = traced("AccountsRepo.consumePasswordReset")((tokenHash: string, now: Date) =>
      spendReset({ tokenHash, now }).pipe(Effect.map(Option.map((row) => row.user_id)), Effect.orDie)
    )

    const insertVerification = SqlSchema.void({
      Request: NewToken,
      execute: ({ expiresAt, tokenHash, userId }) =>
        sql`
          INSERT INTO email_verifications (token_hash, user_id, expires_at)
          VALUES (${tokenHash}, ${userId}, ${expiresAt})`
    })
    const insertEmailVerification = traced("AccountsRepo.insertEmailVerification")(
      (userId: UserId, tokenHash: string, expiresAt: Date) =>
        insertVerification({ userId, tokenHash, expiresAt }).pipe(Effect.orDie)
    )

    const spendVerification = SqlSchema.findOne({
      Request: TokenAt,
      Result: Schema.Struct({ id: UserId }),
      execute: ({ now, tokenHash }) =>
        sql`
          WITH spent AS (
            UPDATE email_verifications SET used_at = ${now}
            WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}
            RETURNING user_id
          )
          UPDATE users SET email_verified_at = COALESCE(email_verified_at, ${now}), updated_at = ${now}
          FROM spent WHERE users.id = spent.user_id
          RETURNING users.id`
    })
    /**
     * Spends the verification token and marks its user's address verified, in one statement: of two
     * concurrent uses only one gets the user id. None for an unknown, used or (at `now`) expired token.
     */
    const consumeEmailVerification = traced("AccountsRepo.consumeEmailVerification")((tokenHash: string, now: Date) =>
      spendVerification({ tokenHash, now }).pipe(Effect.map(Option.map((row) => row.id)), Effect.orDie)
    )

    const writePendingMfaSecret = SqlSchema.void({
      Request: Schema.Struct({ userId: UserId, sealedSecret: Schema.String }),
      execute: ({ sealedSecret, userId }) =>
        sql`UPDATE users SET mfa_pending_secret = ${sealedSecret}, updated_at = now() WHERE id = ${userId}`
    })
    const setPendingMfaSecret = traced("AccountsRepo.setPendingMfaSecret")((userId: UserId, sealedSecret: string) =>
      writePendingMfaSecret({ userId, sealedSecret }).pipe(Effect.orDie)
    )

    const UserTimeStep = Schema.Struct({ userId: UserId, timeStep: Schema.Number })

    const confirmPendingMfa = SqlSchema.void({
      Request: UserTimeStep,
      execute: ({ timeStep, userId }) =>
        sql`
          UPDATE users
          SET mfa_enabled = true, mfa_secret = mfa_pending_secret, mfa_pending_secret = NULL,
              mfa_last_time_step = ${timeStep}, updated_at = now()
          WHERE id = ${userId} AND mfa_pending_secret IS NOT NULL`
    })
    const enableMfa = traced("AccountsRepo.enableMfa")((userId: UserId, timeStep: number) =>
      confirmPendingMfa({ userId, timeStep }).pipe(Effect.orDie)
    )

    const disableMfa = traced("AccountsRepo.disableMfa")(
      SqlSchema.void({
        Request: UserId,
        execute: (userId) =>
          sql`
            UPDATE users
            SET mfa_enabled = false, mfa_secret = NULL, mfa_pending_secret = NULL, updated_at = now()
            WHERE id = ${userId}`
      }),
      Effect.orDie
    )

    const advanceTimeStep = SqlSchema.findOne({
      Request: UserTimeStep,
      Result: Schema.Struct({ id: UserId }),
      execute: ({ timeStep, userId }) =>
        sql`
          UPDATE users SET mfa_last_time_step = ${timeStep}
          WHERE id = ${userId} AND (mfa_last_time_step IS NULL OR mfa_last_time_step < ${timeStep})
          RETURNING id`
    })
    /**
     * Records that the code of `timeStep` was used; false when that step (or a later one) was used
     * before. The conditional update makes a replayed code fail even when two requests race.
     */
    const claimTimeStep = traced("AccountsRepo.claimTimeStep")((userId: UserId, timeStep: number) =>
      advanceTimeStep({ userId, timeStep }).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    const memberColumns = { createdAt: "m.created_at", id: "m.user_id" }

    const membersPage = SqlSchema.findAll({
      Request: Schema.Struct({ organizationId: OrganizationId, ...PageRequest.fields }),
      Result: MemberRow,
      execute: ({ limit, organizationId, position }) =>
        sql`
          SELECT m.organization_id, u.id AS user_id, u.email, u.name, m.role, m.created_at
          FROM memberships m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = ${organizationId} AND ${keysetAfter(sql, position, memberColumns)}
          ORDER BY ${newestFirst(sql, memberColumns)}
          LIMIT ${limit + 1}`
    })
    /** One page of members, newest first, after `position`; fetches `limit + 1` to tell if more follow. */
    const members = traced("AccountsRepo.members")(
      (organizationId: OrganizationId, limit: number, position: PagePosition | undefined) =>
        membersPage({ organizationId, limit, position }).pipe(Effect.orDie)
    )

    const Membership = Schema.Struct({ organizationId: OrganizationId, userId: UserId })

    const findMembership = SqlSchema.findOne({
      Request: Membership,
      Result: MemberRow,
      execute: ({ organizationId, userId }) =>
        sql`
          SELECT m.organization_id, u.id AS user_id, u.email, u.name, m.role, m.created_at
          FROM memberships m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = ${organizationId} AND m.user_id = ${userId}`
    })
    const findMember = traced("AccountsRepo.findMember")((organizationId: OrganizationId, userId: UserId) =>
      findMembership({ organizationId, userId }).pipe(Effect.orDie)
    )

    const insertMembership = SqlSchema.findOne({
      Request: Schema.Struct({ ...Membership.fields, role: RoleSchema }),
      Result: Schema.Struct({ user_id: UserId }),
      execute: ({ organizationId, role, userId }) =>
        sql`
          INSERT INTO memberships (organization_id, user_id, role) VALUES (${organizationId}, ${userId}, ${role})
          ON CONFLICT DO NOTHING
          RETURNING user_id`
    })
    /** Adds a membership; false when the user already belongs to the organization. */
    const addMember = traced("AccountsRepo.addMember")((organizationId: OrganizationId, userId: UserId, role: Role) =>
      insertMembership({ organizationId, userId, role }).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    // -------------------------------------------------------------------------------------------
    // Invitations
    // -------------------------------------------------------------------------------------------

    /**
     * Writes an invitation; an open one of the same organization and e-mail is revoked first, so a
     * second invitation replaces the first (its link stops working).
     */
    const insertInvitation = traced("AccountsRepo.insertInvitation")((input: {
      readonly id: string
      readonly organizationId: OrganizationId
      readonly email: string
      readonly role: Role
      readonly tokenHash: string
      readonly invitedBy: UserId
      readonly now: Date
      readonly expiresAt: Date
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          UPDATE invitations SET revoked_at = ${input.now}
          WHERE organization_id = ${input.organizationId} AND lower(email) = lower(${input.email})
            AND accepted_at IS NULL AND revoked_at IS NULL`
        yield* sql`
          INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, created_at, expires_at)
          VALUES (${input.id}, ${input.organizationId}, ${input.email}, ${input.role}, ${input.tokenHash},
                  ${input.invitedBy}, ${input.now}, ${input.expiresAt})`
      })).pipe(Effect.orDie)
    )

    const invitationColumns = sql`
      i.id, i.organization_id, o.name AS organization_name, i.email, i.role, u.email AS invited_by,
      i.created_at, i.expires_at`

    const openInvitationsOf = SqlSchema.findAll({
      Request: OrganizationId,
      Result: InvitationRow,
      execute: (organizationId) =>
        sql`
          SELECT ${invitationColumns}
          FROM invitations i JOIN organizations o ON o.id = i.organization_id LEFT JOIN users u ON u.id = i.invited_by
          WHERE i.organization_id = ${organizationId} AND i.accepted_at IS NULL AND i.revoked_at IS NULL
          ORDER BY i.created_at DESC, i.id DESC
          LIMIT ${MAX_OPEN_INVITATIONS_LISTED}`
    })
    /** The organization's invitations not accepted or revoked (expired ones too), newest first. */
    const openInvitations = traced("AccountsRepo.openInvitations")((organizationId: OrganizationId) =>
      openInvitationsOf(organizationId).pipe(Effect.orDie)
    )

    const revokeOpenInvitation = SqlSchema.findOne({
      Request: Schema.Struct({ organizationId: OrganizationId, id: Schema.String, now: Schema.DateFromSelf }),
      Result: InvitationRow,
      execute: ({ id, now, organizationId }) =>
        sql`
          WITH revoked AS (
            UPDATE invitations SET revoked_at = ${now}
            WHERE id = ${id} AND organization_id = ${organizationId} AND accepted_at IS NULL AND revoked_at IS NULL
            RETURNING *
          )
          SELECT ${invitationColumns}
          FROM revoked i JOIN organizations o ON o.id = i.organization_id LEFT JOIN users u ON u.id = i.invited_by`
    })
    /** Revokes an open invitation of the organization; None when there is no such open invitation. */
    const revokeInvitation = traced("AccountsRepo.revokeInvitation")((organizationId: OrganizationId, id: string, now: Date) =>
      revokeOpenInvitation({ organizationId, id, now }).pipe(Effect.orDie)
    )

    const usableInvitation = SqlSchema.findOne({
      Request: TokenAt,
      Result: InvitationRow,
      execute: ({ now, tokenHash }) =>
        sql`
          SELECT ${invitationColumns}
          FROM invitations i JOIN organizations o ON o.id = i.organization_id LEFT JOIN users u ON u.id = i.invited_by
          WHERE i.token_hash = ${tokenHash} AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > ${now}`
    })
    /** The invitation of a token while its link works (not accepted, revoked or expired at `now`). */
    const findUsableInvitation = traced("AccountsRepo.findUsableInvitation")((tokenHash: string, now: Date) =>
      usableInvitation({ tokenHash, now }).pipe(Effect.orDie)
    )

    const spendInvitation = SqlSchema.findOne({
      Request: Schema.Struct({ ...TokenAt.fields, userId: UserId }),
      Result: InvitationRow,
      execute: ({ now, tokenHash, userId }) =>
        sql`
          WITH spent AS (
            UPDATE invitations SET accepted_at = ${now}, accepted_by = ${userId}
            WHERE token_hash = ${tokenHash} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
            RETURNING *
          )
          SELECT ${invitationColumns}
          FROM spent i JOIN organizations o ON o.id = i.organization_id LEFT JOIN users u ON u.id = i.invited_by`
    })
    /**
     * Marks the invitation accepted by the user, atomically: of two uses of one link only one gets the
     * invitation. None for an unknown, used, revoked or (at `now`) expired token.
     */
    const acceptInvitation = traced("AccountsRepo.acceptInvitation")((tokenHash: string, userId: UserId, now: Date) =>
      spendInvitation({ tokenHash, now, userId }).pipe(Effect.orDie)
    )

    /**
     * A user who signed up from an invitation: no organization of their own, and the address verified,
     * since the link mailed to it was opened. A SqlError stays a failure (the e-mail taken meanwhile).
     */
    const createInvitedUser = traced("AccountsRepo.createInvitedUser")((input: {
      readonly userId: UserId
      readonly email: string
      readonly name: string
      readonly passwordHash: string
      readonly now: Date
    }) =>
      sql`
        INSERT INTO users (id, email, name, password_hash, email_verified_at)
        VALUES (${input.userId}, ${input.email}, ${input.name}, ${input.passwordHash}, ${input.now})`
    )

    // -------------------------------------------------------------------------------------------
    // E-mail changes
    // -------------------------------------------------------------------------------------------

    /** Records a requested change of address; the user's earlier requests stop working. */
    const insertEmailChange = traced("AccountsRepo.insertEmailChange")(
      (input: { readonly userId: UserId; readonly newEmail: string; readonly tokenHash: string; readonly expiresAt: Date }) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE email_changes SET used_at = now() WHERE user_id = ${input.userId} AND used_at IS NULL`
          yield* sql`
            INSERT INTO email_changes (token_hash, user_id, new_email, expires_at)
            VALUES (${input.tokenHash}, ${input.userId}, ${input.newEmail}, ${input.expiresAt})`
        })).pipe(Effect.orDie)
    )

    const spendEmailChange = SqlSchema.findOne({
      Request: TokenAt,
      Result: Schema.Struct({ user_id: UserId, old_email: Schema.String, new_email: Schema.String }),
      execute: ({ now, tokenHash }) =>
        sql`
          WITH spent AS (
            UPDATE email_changes SET used_at = ${now}
            WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}
            RETURNING user_id, new_email
          ), previous AS (
            SELECT u.id, u.email FROM users u JOIN spent ON spent.user_id = u.id
          )
          UPDATE users SET email = spent.new_email, email_verified_at = ${now}, updated_at = ${now}
          FROM spent, previous WHERE users.id = spent.user_id AND previous.id = users.id
          RETURNING users.id AS user_id, previous.email AS old_email, users.email AS new_email`
    })
    /**
     * Spends the token and moves its user to the new address (verified), in one statement. None for an
     * unknown, used or expired token. A SqlError stays a failure: the address was taken meanwhile.
     */
    const consumeEmailChange = traced("AccountsRepo.consumeEmailChange")((tokenHash: string, now: Date) =>
      spendEmailChange({ tokenHash, now })
    )

    const updateMembershipRole = SqlSchema.findOne({
      Request: Schema.Struct({ ...Membership.fields, role: RoleSchema }),
      Result: Schema.Struct({ user_id: UserId }),
      execute: ({ organizationId, role, userId }) =>
        sql`
          UPDATE memberships SET role = ${role}
          WHERE organization_id = ${organizationId} AND user_id = ${userId}
          RETURNING user_id`
    })
    /** Gives a member another role; false when the user is not a member. */
    const setMemberRole = traced("AccountsRepo.setMemberRole")((organizationId: OrganizationId, userId: UserId, role: Role) =>
      updateMembershipRole({ organizationId, userId, role }).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    const deleteMembership = SqlSchema.findOne({
      Request: Membership,
      Result: Schema.Struct({ user_id: UserId }),
      execute: ({ organizationId, userId }) =>
        sql`DELETE FROM memberships WHERE organization_id = ${organizationId} AND user_id = ${userId} RETURNING user_id`
    })
    /** Ends a membership; false when the user was not a member. */
    const removeMember = traced("AccountsRepo.removeMember")((organizationId: OrganizationId, userId: UserId) =>
      deleteMembership({ organizationId, userId }).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    return {
      createAccount,
      emailTaken,
      findUserByEmail,
      findUserById,
      membershipsOf,
      insertSession,
      findLiveSession,
      touchSession,
      revokeSessionByToken,
      updatePasswordAndRevokeSessions,
      insertPasswordReset,
      consumePasswordReset,
      insertEmailVerification,
      consumeEmailVerification,
      setPendingMfaSecret,
      enableMfa,
      disableMfa,
      claimTimeStep,
      members,
      findMember,
      addMember,
      insertInvitation,
      openInvitations,
      revokeInvitation,
      findUsableInvitation,
      acceptInvitation,
      createInvitedUser,
      insertEmailChange,
      consumeEmailChange,
      setMemberRole,
      removeMember
    } as const
  })
}) {}
