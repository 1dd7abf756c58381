/**
 * Accounts over HTTP: registration, login, sessions, password change and reset, MFA, throttling,
 * members, and the shared error shape for bad input on these routes.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { addMember, signUp, TEST_PASSWORD, uniqueEmail } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const logs: Array<string> = []

/** Every response body of the suite, to check that no secret ever appears in one. */
const responses: Array<string> = []

const call = makeCall(responses)

const login = (app: TestAppShape, email: string, password: string, extra: Record<string, unknown> = {}) =>
  call(app, "POST", "/auth/login", { body: { email, password, ...extra } })

describe("accounts", () => {
  layer(testAppLayer({ platformAdminEmails: ["admin@example.test"] }, { logs }), {
    timeout: 120_000,
    excludeTestServices: true
  })("over HTTP", (it) => {
    it.effect("registers a user with an organization they own, and signs them in", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const email = uniqueEmail()
        const registered = yield* call(app, "POST", "/auth/register", {
          body: { email, password: TEST_PASSWORD, name: "Sok Dara", organization_name: "Dara Coffee" }
        })
        expect(registered.status).toBe(201)
        expect(registered.body.user).toMatchObject({ object: "user", email, name: "Sok Dara", mfa_enabled: false })
        expect(registered.body.user.id).toMatch(/^usr_/)
        expect(registered.body.organization).toMatchObject({ object: "organization", name: "Dara Coffee", role: "owner" })
        expect(registered.body.token_type).toBe("Bearer")
        expect(new Date(registered.body.expires_at).getTime()).toBeGreaterThan(Date.now())

        const me = yield* call(app, "GET", "/auth/me", { token: registered.body.access_token })
        expect(me.status).toBe(200)
        expect(me.body.user.email).toBe(email)
        expect(me.body.organizations).toEqual([registered.body.organization])

        const loggedIn = yield* login(app, email.toUpperCase(), TEST_PASSWORD)
        expect(loggedIn.status).toBe(201)
        expect(loggedIn.body.access_token).not.toBe(registered.body.access_token)
      }))

    it.effect("rejects bad registrations with 400 in the shared shape", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const existing = yield* Effect.promise(() => signUp(app))
        const cases = [
          { body: { email: existing.email, password: TEST_PASSWORD }, param: "email" },
          { body: { email: "not-an-email", password: TEST_PASSWORD }, param: "email" },
          { body: { email: uniqueEmail(), password: "short" }, param: "password" },
          { body: { email: 42, password: TEST_PASSWORD }, param: "email" },
          { body: { password: TEST_PASSWORD }, param: "email" }
        ]
        for (const { body, param } of cases) {
          const response = yield* call(app, "POST", "/auth/register", { body })
          expect(response.status).toBe(400)
          expect(response.body.error.code).toBe("invalid_request")
          expect(response.body.error.param).toBe(param)
          expect(typeof response.body.error.message).toBe("string")
        }
        const malformed = yield* call(app, "POST", "/auth/register", { raw: "{\"email\": " })
        expect(malformed.status).toBe(400)
        expect(malformed.body).toEqual({
          error: { code: "invalid_request", message: "The request body could not be read as JSON" }
        })
        const notAnObject = yield* call(app, "POST", "/auth/register", { raw: "[1, 2]" })
        expect(notAnObject.status).toBe(400)
        expect(notAnObject.body.error.code).toBe("invalid_request")
      }))

    it.effect("answers a wrong password and an unknown e-mail alike", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        const wrongPassword = yield* login(app, user.email, "not the password at all")
        const unknownEmail = yield* login(app, uniqueEmail("nobody"), "not the password at all")
        expect(wrongPassword.status).toBe(401)
        expect(unknownEmail.status).toBe(401)
        expect(wrongPassword.body).toEqual(unknownEmail.body)
        expect(wrongPassword.body.error.code).toBe("unauthorized")
      }))

    it.effect("refuses requests without, or with an unknown, credential", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const none = yield* call(app, "GET", "/auth/me")
        expect(none.status).toBe(401)
        expect(none.body.error.code).toBe("unauthorized")
        const unknown = yield* call(app, "GET", "/auth/me", { token: "mst_doesnotexist" })
        expect(unknown.status).toBe(401)
        const whoami = yield* call(app, "GET", "/v1/whoami", { token: "sk_test_doesnotexist" })
        expect(whoami.status).toBe(401)
      }))

    it.effect("changes the password only with the current one, and signs out the other sessions", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        const other = (yield* login(app, user.email, user.password)).body.access_token
        const wrong = yield* call(app, "POST", "/auth/change-password", {
          token: user.token,
          body: { current_password: "wrong password!", new_password: "a brand new password" }
        })
        expect(wrong.status).toBe(400)
        expect(wrong.body.error.param).toBe("current_password")

        const changed = yield* call(app, "POST", "/auth/change-password", {
          token: user.token,
          body: { current_password: user.password, new_password: "a brand new password" }
        })
        expect(changed.status).toBe(201)
        expect((yield* call(app, "GET", "/auth/me", { token: user.token })).status).toBe(200)
        expect((yield* call(app, "GET", "/auth/me", { token: other })).status).toBe(401)
        expect((yield* login(app, user.email, user.password)).status).toBe(401)
        expect((yield* login(app, user.email, "a brand new password")).status).toBe(201)
      }))

    it.effect("resets a forgotten password with a single-use token that expires", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.promise(() => signUp(app))

        const known = yield* call(app, "POST", "/auth/forgot-password", { body: { email: user.email } })
        const unknown = yield* call(app, "POST", "/auth/forgot-password", { body: { email: uniqueEmail("ghost") } })
        expect(known.status).toBe(201)
        expect(unknown.status).toBe(201)
        expect(known.body).toEqual(unknown.body)

        // The mail is written in the background, after the answer.
        const token = yield* Effect.gen(function*() {
          const rows = yield* sql<{ body: string }>`SELECT body FROM outgoing_mail WHERE recipient = ${user.email}`
          const match = rows[0]?.body.match(/Reset token: (\S+)/)
          if (!match?.[1]) return yield* Effect.fail("no mail yet")
          return match[1]
        }).pipe(
          Effect.retry(Schedule.intersect(Schedule.spaced("50 millis"), Schedule.recurs(60))),
          Effect.orElse(() => Effect.dieMessage("no reset mail"))
        )
        const session = user.token

        const reset = yield* call(app, "POST", "/auth/reset-password", { body: { token, password: "reset password 123" } })
        expect(reset.status).toBe(201)
        expect((yield* login(app, user.email, "reset password 123")).status).toBe(201)
        // Resetting signs out every session.
        expect((yield* call(app, "GET", "/auth/me", { token: session })).status).toBe(401)

        const reused = yield* call(app, "POST", "/auth/reset-password", { body: { token, password: "another password 1" } })
        expect(reused.status).toBe(401)
        expect(reused.body.error.param).toBe("token")

        yield* call(app, "POST", "/auth/forgot-password", { body: { email: user.email } })
        yield* Effect.sleep("300 millis")
        const rows = yield* sql<{ body: string }>`
          SELECT body FROM outgoing_mail WHERE recipient = ${user.email} ORDER BY id DESC LIMIT 1`
        const second = rows[0]!.body.match(/Reset token: (\S+)/)![1]!
        yield* sql`UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`
        const expired = yield* call(app, "POST", "/auth/reset-password", { body: { token: second, password: "late password 123" } })
        expect(expired.status).toBe(401)
      }))

    it.effect("enrols TOTP, requires it at login, and refuses a replayed code", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.promise(() => signUp(app))

        const setup = yield* call(app, "POST", "/auth/mfa/setup", { token: user.token })
        expect(setup.status).toBe(201)
        expect(setup.body.otpauth_url).toContain("otpauth://totp/")
        expect(setup.body.otpauth_url).toContain("issuer=KHQR")
        const secret: string = setup.body.secret

        const bad = yield* call(app, "POST", "/auth/mfa/enable", { token: user.token, body: { code: "000000" } })
        expect(bad.status).toBe(400)
        const enabled = yield* call(app, "POST", "/auth/mfa/enable", {
          token: user.token,
          body: { code: yield* currentTotp(secret) }
        })
        expect(enabled.status).toBe(201)
        expect(enabled.body.mfa_enabled).toBe(true)

        const withoutCode = yield* login(app, user.email, user.password)
        expect(withoutCode.status).toBe(401)
        expect(withoutCode.body.error.code).toBe("mfa_required")

        // The enabling code's time step is spent; the next step's code is valid (clock drift allowance).
        const nextCode = yield* currentTotp(secret, Math.floor(Date.now() / 1000) + 30)
        const withCode = yield* login(app, user.email, user.password, { mfa_code: nextCode })
        expect(withCode.status).toBe(201)
        const replayed = yield* login(app, user.email, user.password, { mfa_code: nextCode })
        expect(replayed.status).toBe(401)
        expect(replayed.body.error.code).toBe("unauthorized")

        const replayedDisable = yield* call(app, "POST", "/auth/mfa/disable", { token: user.token, body: { code: nextCode } })
        expect(replayedDisable.status).toBe(400)
        // Time passes (in the database's memory of used steps), so the current code is fresh again.
        yield* sql`UPDATE users SET mfa_last_time_step = mfa_last_time_step - 10 WHERE id = ${user.userId}`
        const disabled = yield* call(app, "POST", "/auth/mfa/disable", {
          token: user.token,
          body: { code: yield* currentTotp(secret) }
        })
        expect(disabled.status).toBe(201)
        expect(disabled.body.mfa_enabled).toBe(false)
        expect((yield* login(app, user.email, user.password)).status).toBe(201)

        // The TOTP secret is stored encrypted, never in the clear.
        const stored = yield* sql<{ mfa_secret: string | null; mfa_pending_secret: string | null }>`
          SELECT mfa_secret, mfa_pending_secret FROM users WHERE id = ${user.userId}`
        expect(JSON.stringify(stored)).not.toContain(secret)
      }))

    it.effect("throttles repeated failures for one e-mail, whether or not it exists", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        const ghost = uniqueEmail("ghost")
        for (let attempt = 0; attempt < 5; attempt++) {
          expect((yield* login(app, user.email, "wrong password 000")).status).toBe(401)
          expect((yield* login(app, ghost, "wrong password 000")).status).toBe(401)
        }
        const blocked = yield* login(app, user.email, user.password)
        expect(blocked.status).toBe(429)
        expect(blocked.body.error.code).toBe("rate_limited")
        expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0)
        const blockedGhost = yield* login(app, ghost, user.password)
        expect(blockedGhost.status).toBe(429)
        expect(blockedGhost.body.error.code).toBe("rate_limited")
      }))

    it.effect("adds members with roles; an Analyst cannot add members; other organizations are 404", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const owner = yield* Effect.promise(() => signUp(app))
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const list = yield* call(app, "GET", `/dashboard/orgs/${owner.organizationId}/members`, { token: analyst.token })
        expect(list.status).toBe(200)
        expect(list.body.object).toBe("list")
        expect(list.body.data.map((m: any) => [m.email, m.role])).toEqual([[analyst.email, "analyst"], [owner.email, "owner"]])

        const stranger = yield* Effect.promise(() => signUp(app))
        const refused = yield* call(app, "POST", `/dashboard/orgs/${owner.organizationId}/members`, {
          token: analyst.token,
          body: { email: stranger.email, role: "admin" }
        })
        expect(refused.status).toBe(403)
        expect(refused.body.error.code).toBe("forbidden")

        const otherTenant = yield* call(app, "GET", `/dashboard/orgs/${owner.organizationId}/members`, { token: stranger.token })
        expect(otherTenant.status).toBe(404)
        expect(otherTenant.body.error.code).toBe("not_found")

        const page = yield* call(app, "GET", `/dashboard/orgs/${owner.organizationId}/members?limit=1`, { token: owner.token })
        expect(page.body.data).toHaveLength(1)
        expect(page.body.has_more).toBe(true)
        const next = yield* call(
          app,
          "GET",
          `/dashboard/orgs/${owner.organizationId}/members?limit=1&cursor=${page.body.next_cursor}`,
          { token: owner.token }
        )
        expect(next.body.data[0].email).toBe(owner.email)
        expect(next.body.has_more).toBe(false)
      }))

    it.effect("marks platform administrators", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const admin = yield* Effect.promise(() => signUp(app, { email: "admin@example.test" }))
        const me = yield* call(app, "GET", "/auth/me", { token: admin.token })
        expect(me.body.user.platform_admin).toBe(true)
      }))

    it.effect("never shows a password, token or TOTP secret in a log line", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        yield* login(app, user.email, "a wrong password 999")
        const secrets = [TEST_PASSWORD, user.token, "a wrong password 999"]
        const joined = logs.join("\n")
        expect(joined.length).toBeGreaterThan(0)
        for (const secret of secrets) expect(joined).not.toContain(secret)
        // Passwords never come back in any response either.
        for (const body of responses) expect(body).not.toContain(TEST_PASSWORD)
      }))
  })
})
