/**
 * Accounts over HTTP: registration, login, sessions, password change and reset, MFA, throttling,
 * members, and the shared error shape for bad input on these routes.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { request as httpRequest } from "node:http"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { addMember, signUp, TEST_PASSWORD, uniqueEmail, verifyEmail } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const logs: Array<string> = []

/** Every response body of the suite, to check that no secret ever appears in one. */
const responses: Array<string> = []

const call = makeCall(responses)

const login = (app: TestAppShape, email: string, password: string, extra: Record<string, unknown> = {}) =>
  call(app, "POST", "/auth/login", { body: { email, password, ...extra } })

/**
 * A login sent from another loopback address (127.0.0.0/8 all reaches the service), as a client
 * elsewhere would: the throttle counts per client address. Answers the status and how long it took.
 */
const loginFrom = (app: TestAppShape, localAddress: string, email: string, password: string) =>
  Effect.async<{ readonly status: number; readonly millis: number }>((resume) => {
    const url = new URL("/auth/login", app.baseUrl)
    const payload = JSON.stringify({ email, password })
    const started = performance.now()
    const request = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: "POST",
      localAddress,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
    }, (response) => {
      response.resume()
      response.on("end", () =>
        resume(Effect.succeed({ status: response.statusCode ?? 0, millis: performance.now() - started })))
    })
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(payload)
  })

/** The reset tokens mailed to `email`, oldest first, once `count` of them have been sent (in the background). */
const resetTokens = (app: TestAppShape, email: string, count: number) =>
  Effect.gen(function*() {
    const mails = yield* Effect.promise(() => app.mailTo(email))
    const tokens = mails.flatMap((mail) => {
      const token = mail.body.match(/Reset token: (\S+)/)?.[1]
      return token === undefined ? [] : [token]
    })
    if (tokens.length < count) return yield* Effect.fail("not sent yet")
    return tokens
  }).pipe(
    Effect.retry(Schedule.intersect(Schedule.spaced("50 millis"), Schedule.recurs(60))),
    Effect.orElse(() => Effect.dieMessage(`fewer than ${count} reset mails`))
  )

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

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
        // A wrong credential is 401 unauthorized, as API.md lists it, not a malformed request.
        expect(wrong.status).toBe(401)
        expect(wrong.body.error).toMatchObject({ code: "unauthorized", param: "current_password" })

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
        const token = yield* resetTokens(app, user.email, 1).pipe(Effect.map((tokens) => tokens[0]!))
        const session = user.token
        // The service runs with PORT=0 and no PUBLIC_BASE_URL: the link names the port actually bound.
        const boundPort = new URL(app.baseUrl).port
        const mails = yield* Effect.promise(() => app.mailTo(user.email))
        const resetMail = mails.find((mail) => mail.body.includes(`Reset token: ${token}`))
        expect(resetMail?.body).toContain(`http://localhost:${boundPort}/reset-password?token=${token}`)

        const reset = yield* call(app, "POST", "/auth/reset-password", { body: { token, password: "reset password 123" } })
        expect(reset.status).toBe(201)
        expect((yield* login(app, user.email, "reset password 123")).status).toBe(201)
        // Resetting signs out every session.
        expect((yield* call(app, "GET", "/auth/me", { token: session })).status).toBe(401)

        const reused = yield* call(app, "POST", "/auth/reset-password", { body: { token, password: "another password 1" } })
        expect(reused.status).toBe(401)
        expect(reused.body.error.param).toBe("token")

        yield* call(app, "POST", "/auth/forgot-password", { body: { email: user.email } })
        const second = (yield* resetTokens(app, user.email, 2))[1]!
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
        expect(bad.status).toBe(401)
        expect(bad.body.error).toMatchObject({ code: "unauthorized", param: "code" })
        const malformed = yield* call(app, "POST", "/auth/mfa/enable", { token: user.token, body: { code: "12ab" } })
        expect(malformed.status).toBe(400)
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
        expect(replayedDisable.status).toBe(401)
        expect(replayedDisable.body.error.code).toBe("unauthorized")
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

    it.effect("spends as long on an unknown e-mail as on a wrong password", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const rounds = 9
        const users = yield* Effect.promise(() => Promise.all(Array.from({ length: rounds }, () => signUp(app))))
        const known: Array<number> = []
        const unknown: Array<number> = []
        // Fresh e-mails and addresses for every sample, so no throttle or delay is part of what is measured;
        // the two kinds alternate, so load on the machine falls on both alike.
        for (let round = 0; round < rounds; round++) {
          const address = `127.0.3.${round + 1}`
          const wrong = yield* loginFrom(app, address, users[round]!.email, "not the password at all")
          const ghost = yield* loginFrom(app, address, uniqueEmail("nobody"), "not the password at all")
          expect([wrong.status, ghost.status]).toEqual([401, 401])
          known.push(wrong.millis)
          unknown.push(ghost.millis)
        }
        // Hashing a decoy on the unknown path made it about twice as slow as a wrong password.
        const ratio = median(unknown) / median(known)
        expect(ratio, `unknown ${median(unknown)} ms vs known ${median(known)} ms`).toBeLessThan(1.35)
        expect(ratio).toBeGreaterThan(1 / 1.35)
      }))

    it.effect("throttles one address's guesses without locking the owner out elsewhere", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        for (let attempt = 0; attempt < 5; attempt++) {
          expect((yield* loginFrom(app, "127.0.1.1", user.email, "wrong password 000")).status).toBe(401)
        }
        // The guessing address is blocked for this account, even with the right password …
        expect((yield* loginFrom(app, "127.0.1.1", user.email, user.password)).status).toBe(429)
        // … while the owner, elsewhere, signs in (after a short progressive delay at most).
        expect((yield* loginFrom(app, "127.0.1.2", user.email, user.password)).status).toBe(201)

        // One address trying many accounts is blocked for every account.
        for (let attempt = 0; attempt < 20; attempt++) {
          expect((yield* loginFrom(app, "127.0.1.3", uniqueEmail("stuffed"), "wrong password 000")).status).toBe(401)
        }
        expect((yield* loginFrom(app, "127.0.1.3", user.email, user.password)).status).toBe(429)
        expect((yield* loginFrom(app, "127.0.1.4", user.email, user.password)).status).toBe(201)
      }))

    it.effect("slows down guesses at one account from many addresses, and forgets them after the owner signs in", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        // Eight failures from two addresses: under the per-address limits, past the free failures.
        for (const address of ["127.0.2.1", "127.0.2.2"]) {
          for (let attempt = 0; attempt < 4; attempt++) {
            expect((yield* loginFrom(app, address, user.email, "wrong password 000")).status).toBe(401)
          }
        }
        const slowed = yield* loginFrom(app, "127.0.2.3", user.email, user.password)
        expect(slowed.status).toBe(201)
        expect(slowed.millis).toBeGreaterThanOrEqual(1900)
        const afterwards = yield* loginFrom(app, "127.0.2.3", user.email, user.password)
        expect(afterwards.status).toBe(201)
        expect(afterwards.millis).toBeLessThan(1500)
      }))

    it.effect("a reset revokes the user's other reset tokens, and mail keeps no token in clear", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.promise(() => signUp(app))
        yield* call(app, "POST", "/auth/forgot-password", { body: { email: user.email } })
        yield* resetTokens(app, user.email, 1)
        yield* call(app, "POST", "/auth/forgot-password", { body: { email: user.email } })
        const [first, second] = yield* resetTokens(app, user.email, 2)

        const stored = yield* sql<{ body_sealed: string }>`SELECT body_sealed FROM outgoing_mail WHERE recipient = ${user.email}`
        expect(stored.length).toBeGreaterThanOrEqual(2)
        for (const row of stored) {
          expect(row.body_sealed).not.toContain(first!)
          expect(row.body_sealed).not.toContain(second!)
          expect(row.body_sealed).toMatch(/^v1\./)
        }

        const reset = yield* call(app, "POST", "/auth/reset-password", { body: { token: second, password: "reset password 456" } })
        expect(reset.status).toBe(201)
        const older = yield* call(app, "POST", "/auth/reset-password", { body: { token: first, password: "attacker password 1" } })
        expect(older.status).toBe(401)
        expect(older.body.error.param).toBe("token")
        expect((yield* login(app, user.email, "reset password 456")).status).toBe(201)
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

    it.effect("makes a listed e-mail a platform administrator only once the address is verified", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const admin = yield* Effect.promise(() => signUp(app, { email: "admin@example.test", verifyEmail: false }))
        const before = yield* call(app, "GET", "/auth/me", { token: admin.token })
        expect(before.body.user).toMatchObject({ email_verified: false, platform_admin: false })
        expect((yield* call(app, "GET", "/admin/settings", { token: admin.token })).status).toBe(403)

        // The link goes out through the mail sender, like every mail, sealed at rest.
        const mails = yield* Effect.promise(() => app.mailTo(admin.email))
        expect(mails.map((mail) => mail.subject)).toEqual(["Verify your e-mail address"])
        const link = mails[0]!.body.match(/(http:\/\/\S+\/auth\/verify-email\?token=(\S+))/)!
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ body_sealed: string }>`SELECT body_sealed FROM outgoing_mail WHERE recipient = ${admin.email}`
        expect(stored[0]!.body_sealed).not.toContain(link[2]!)

        const wrong = yield* call(app, "GET", "/auth/verify-email?token=not-a-token")
        expect(wrong.status).toBe(401)
        expect(wrong.body.error).toMatchObject({ code: "unauthorized", param: "token" })
        const verified = yield* Effect.promise(() => fetch(link[1]!))
        expect(verified.status).toBe(200)
        expect(yield* Effect.promise(() => verified.json())).toMatchObject({ object: "acknowledgement" })

        const after = yield* call(app, "GET", "/auth/me", { token: admin.token })
        expect(after.body.user).toMatchObject({ email_verified: true, platform_admin: true })
        expect((yield* call(app, "GET", "/admin/settings", { token: admin.token })).status).toBe(200)

        // Single use; nothing left to verify.
        expect((yield* Effect.promise(() => fetch(link[1]!))).status).toBe(401)
        const resend = yield* call(app, "POST", "/auth/verify-email/resend", { token: admin.token })
        expect(resend.status).toBe(409)
        expect(resend.body.error.code).toBe("invalid_state")

        // An unlisted user is verified, and still no administrator.
        const plain = yield* Effect.promise(() => signUp(app))
        expect((yield* call(app, "GET", "/auth/me", { token: plain.token })).body.user).toMatchObject({
          email_verified: true,
          platform_admin: false
        })
      }))

    it.effect("sends a new verification link on request, and an expired link verifies nothing", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.promise(() => signUp(app, { verifyEmail: false }))
        yield* sql`UPDATE email_verifications SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`
        const expiredLink = (yield* Effect.promise(() => app.mailTo(user.email)))[0]!.body.match(/(\/auth\/verify-email\S+)/)![1]!
        expect((yield* call(app, "GET", expiredLink)).status).toBe(401)
        const resend = yield* call(app, "POST", "/auth/verify-email/resend", { token: user.token })
        expect(resend.status).toBe(201)
        yield* Effect.promise(() => verifyEmail(app, user.email))
        expect((yield* call(app, "GET", "/auth/me", { token: user.token })).body.user.email_verified).toBe(true)
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
