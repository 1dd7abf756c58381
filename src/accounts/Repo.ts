/**
 * SQL of accounts: users, sessions, organizations and memberships, password resets, MFA state,
 * the login throttle and outgoing mail.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { Role } from "../../domain/Access.ts"
import { keysetAfter, newestFirst, type PagePosition } from "../platform/Pagination.ts"

export const UserRow = Schema.Struct({
  id: Schema.String,
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
  organization_id: Schema.String,
  name: Schema.String,
  role: Schema.Literal("owner", "admin", "developer", "analyst"),
  created_at: Schema.DateFromSelf
})
export type MembershipRow = typeof MembershipRow.Type

export const MemberRow = Schema.Struct({
  organization_id: Schema.String,
  user_id: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  role: Schema.Literal("owner", "admin", "developer", "analyst"),
  created_at: Schema.DateFromSelf
})
export type MemberRow = typeof MemberRow.Type

const SessionUserRow = Schema.Struct({
  session_id: Schema.String,
  user_id: Schema.String,
  email: Schema.String,
  email_verified_at: Schema.NullOr(Schema.DateFromSelf)
})

const decodeRows = <A, I>(schema: Schema.Schema<A, I>) => (rows: ReadonlyArray<unknown>) =>
  Schema.decodeUnknown(Schema.Array(schema))(rows)

const first = <A>(rows: ReadonlyArray<A>): Option.Option<A> => Option.fromNullable(rows[0])

export class AccountsRepo extends Effect.Service<AccountsRepo>()("accounts/AccountsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const users = decodeRows(UserRow)

    const createAccount = (input: {
      readonly userId: string
      readonly email: string
      readonly name: string | null
      readonly passwordHash: string
      readonly organizationId: string
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

    const emailTaken = (email: string) =>
      sql`SELECT 1 FROM users WHERE lower(email) = lower(${email})`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const findUserByEmail = (email: string) =>
      sql`SELECT * FROM users WHERE lower(email) = lower(${email})`.pipe(
        Effect.flatMap(users),
        Effect.map(first),
        Effect.orDie
      )

    const findUserById = (id: string) =>
      sql`SELECT * FROM users WHERE id = ${id}`.pipe(Effect.flatMap(users), Effect.map(first), Effect.orDie)

    const membershipsOf = (userId: string) =>
      sql`
        SELECT m.organization_id, o.name, m.role, o.created_at
        FROM memberships m JOIN organizations o ON o.id = m.organization_id
        WHERE m.user_id = ${userId}
        ORDER BY m.created_at, m.organization_id`.pipe(Effect.flatMap(decodeRows(MembershipRow)), Effect.orDie)

    const insertSession = (input: {
      readonly id: string
      readonly userId: string
      readonly tokenHash: string
      readonly expiresAt: Date
    }) =>
      sql`
        INSERT INTO sessions (id, user_id, token_hash, expires_at)
        VALUES (${input.id}, ${input.userId}, ${input.tokenHash}, ${input.expiresAt})`.pipe(Effect.asVoid, Effect.orDie)

    /** The live session with this token hash: not revoked, not expired. */
    // now() here is the database's clock, not Effect's Clock: the one clock every process shares for these rows;
    // moving it to a parameter (for TestClock) belongs with the SqlSchema rewrite of this repo.
    const findLiveSession = (tokenHash: string) =>
      sql`
        SELECT s.id AS session_id, u.id AS user_id, u.email, u.email_verified_at
        FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = ${tokenHash} AND s.revoked_at IS NULL AND s.expires_at > now()`.pipe(
        Effect.flatMap(decodeRows(SessionUserRow)),
        Effect.map(first),
        Effect.orDie
      )

    /**
     * Sets a new password and revokes what the old one gave: the user's other sessions, and every reset
     * token still outstanding (a reset link from before must not undo this password).
     */
    const updatePasswordAndRevokeSessions = (userId: string, passwordHash: string, keepSessionId: string | null) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE users SET password_hash = ${passwordHash}, updated_at = now() WHERE id = ${userId}`
        yield* sql`
          UPDATE sessions SET revoked_at = now()
          WHERE user_id = ${userId} AND revoked_at IS NULL AND id IS DISTINCT FROM ${keepSessionId}`
        yield* sql`UPDATE password_resets SET used_at = now() WHERE user_id = ${userId} AND used_at IS NULL`
      })).pipe(Effect.orDie)

    const insertPasswordReset = (userId: string, tokenHash: string, expiresAt: Date) =>
      sql`
        INSERT INTO password_resets (token_hash, user_id, expires_at)
        VALUES (${tokenHash}, ${userId}, ${expiresAt})`.pipe(Effect.asVoid, Effect.orDie)

    /** Marks the reset token used, atomically: of two concurrent uses only one gets the user id. */
    const consumePasswordReset = (tokenHash: string) =>
      sql<{ user_id: string }>`
        UPDATE password_resets SET used_at = now()
        WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now()
        RETURNING user_id`.pipe(Effect.map((rows) => Option.map(first(rows), (row) => row.user_id)), Effect.orDie)

    const insertEmailVerification = (userId: string, tokenHash: string, expiresAt: Date) =>
      sql`
        INSERT INTO email_verifications (token_hash, user_id, expires_at)
        VALUES (${tokenHash}, ${userId}, ${expiresAt})`.pipe(Effect.asVoid, Effect.orDie)

    /**
     * Spends the verification token and marks its user's address verified, in one statement: of two
     * concurrent uses only one gets the user id. None for an unknown, used or expired token.
     */
    const consumeEmailVerification = (tokenHash: string) =>
      sql<{ id: string }>`
        WITH spent AS (
          UPDATE email_verifications SET used_at = now()
          WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now()
          RETURNING user_id
        )
        UPDATE users SET email_verified_at = COALESCE(email_verified_at, now()), updated_at = now()
        FROM spent WHERE users.id = spent.user_id
        RETURNING users.id`.pipe(Effect.map((rows) => Option.map(first(rows), (row) => row.id)), Effect.orDie)

    const setPendingMfaSecret = (userId: string, sealedSecret: string) =>
      sql`UPDATE users SET mfa_pending_secret = ${sealedSecret}, updated_at = now() WHERE id = ${userId}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const enableMfa = (userId: string, timeStep: number) =>
      sql`
        UPDATE users
        SET mfa_enabled = true, mfa_secret = mfa_pending_secret, mfa_pending_secret = NULL,
            mfa_last_time_step = ${timeStep}, updated_at = now()
        WHERE id = ${userId} AND mfa_pending_secret IS NOT NULL`.pipe(Effect.asVoid, Effect.orDie)

    const disableMfa = (userId: string) =>
      sql`
        UPDATE users
        SET mfa_enabled = false, mfa_secret = NULL, mfa_pending_secret = NULL, updated_at = now()
        WHERE id = ${userId}`.pipe(Effect.asVoid, Effect.orDie)

    /**
     * Records that the code of `timeStep` was used; false when that step (or a later one) was used
     * before. The conditional update makes a replayed code fail even when two requests race.
     */
    const claimTimeStep = (userId: string, timeStep: number) =>
      sql`
        UPDATE users SET mfa_last_time_step = ${timeStep}
        WHERE id = ${userId} AND (mfa_last_time_step IS NULL OR mfa_last_time_step < ${timeStep})
        RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)

    /** When a throttle key is blocked, how many seconds remain; None when it is not blocked. */
    // now() here is the database's clock, not Effect's Clock: the one clock every process shares for these rows;
    // moving it to a parameter (for TestClock) belongs with the SqlSchema rewrite of this repo.
    const blockedFor = (key: string) =>
      sql<{ seconds: number }>`
        SELECT ceil(extract(epoch FROM blocked_until - now()))::int AS seconds
        FROM auth_throttle WHERE key = ${key} AND blocked_until > now()`.pipe(
        Effect.map((rows) => Option.map(first(rows), (row) => Math.max(1, Number(row.seconds)))),
        Effect.orDie
      )

    /** Counts one failure in the key's window; blocks the key when the window's count reaches `limit`. */
    const recordFailure = (key: string, limit: number, windowSeconds: number, blockSeconds: number) =>
      sql`
        INSERT INTO auth_throttle AS t (key, failures, window_started)
        VALUES (${key}, 1, now())
        ON CONFLICT (key) DO UPDATE SET
          failures = CASE WHEN t.window_started < now() - make_interval(secs => ${windowSeconds}) THEN 1 ELSE t.failures + 1 END,
          window_started = CASE WHEN t.window_started < now() - make_interval(secs => ${windowSeconds}) THEN now() ELSE t.window_started END
        RETURNING failures`.pipe(
        Effect.flatMap((rows) => {
          const failures = Number((rows[0] as { failures: number } | undefined)?.failures ?? 0)
          return failures >= limit
            ? Effect.asVoid(sql`
                UPDATE auth_throttle SET blocked_until = now() + make_interval(secs => ${blockSeconds}), failures = 0,
                  window_started = now()
                WHERE key = ${key}`)
            : Effect.void
        }),
        Effect.asVoid,
        Effect.orDie
      )

    /** Failures counted under the key in its current window; 0 once the window is over. */
    const failuresInWindow = (key: string, windowSeconds: number) =>
      sql<{ failures: number }>`
        SELECT failures FROM auth_throttle
        WHERE key = ${key} AND window_started >= now() - make_interval(secs => ${windowSeconds})`.pipe(
        Effect.map((rows) => Number(rows[0]?.failures ?? 0)),
        Effect.orDie
      )

    const clearFailures = (key: string) => sql`DELETE FROM auth_throttle WHERE key = ${key}`.pipe(Effect.asVoid, Effect.orDie)

    const insertMail = (recipient: string, subject: string, sealedBody: string) =>
      sql`INSERT INTO outgoing_mail (recipient, subject, body_sealed) VALUES (${recipient}, ${subject}, ${sealedBody})`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const memberColumns = { createdAt: "m.created_at", id: "m.user_id" }

    /** One page of members, newest first, after `position`; fetches `limit + 1` to tell if more follow. */
    const members = (organizationId: string, limit: number, position: PagePosition | undefined) =>
      sql`
        SELECT m.organization_id, u.id AS user_id, u.email, u.name, m.role, m.created_at
        FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = ${organizationId} AND ${keysetAfter(sql, position, memberColumns)}
        ORDER BY ${newestFirst(sql, memberColumns)}
        LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeRows(MemberRow)), Effect.orDie)

    const findMember = (organizationId: string, userId: string) =>
      sql`
        SELECT m.organization_id, u.id AS user_id, u.email, u.name, m.role, m.created_at
        FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = ${organizationId} AND m.user_id = ${userId}`.pipe(
        Effect.flatMap(decodeRows(MemberRow)),
        Effect.map(first),
        Effect.orDie
      )

    /** Adds a membership; false when the user already belongs to the organization. */
    const addMember = (organizationId: string, userId: string, role: Role) =>
      sql`
        INSERT INTO memberships (organization_id, user_id, role) VALUES (${organizationId}, ${userId}, ${role})
        ON CONFLICT DO NOTHING
        RETURNING user_id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)

    return {
      createAccount,
      emailTaken,
      findUserByEmail,
      findUserById,
      membershipsOf,
      insertSession,
      findLiveSession,
      updatePasswordAndRevokeSessions,
      insertPasswordReset,
      consumePasswordReset,
      insertEmailVerification,
      consumeEmailVerification,
      setPendingMfaSecret,
      enableMfa,
      disableMfa,
      claimTimeStep,
      blockedFor,
      recordFailure,
      failuresInWindow,
      clearFailures,
      insertMail,
      members,
      findMember,
      addMember
    } as const
  })
}) {}
