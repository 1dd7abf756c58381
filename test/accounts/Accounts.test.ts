/**
 * Accounts over HTTP: registration, login, sessions, password change and reset, MFA, throttling,
 * members, and the shared error shape for bad input on these routes.
 */
import { HttpApiClient, HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import Undici from "@effect/platform-node/Undici"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Schedule } from "effect"
import { Api } from "../../domain/Api.ts"
import type { ApiClient } from "../../domain/Client.ts"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { addMember, signUp, TEST_PASSWORD, uniqueEmail, verificationToken, verifyEmail } from "../support/Accounts.ts"
import { allPages, expectFailure, listParams, makeClientAs } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const logs: Array<string> = []

/** Every response body of the suite, to check that no secret ever appears in one. */
const responses: Array<string> = []

const clientAs = makeClientAs(responses)
// Raw calls only for input outside the request schemas, and for the Retry-After header and mailed links.
const call = makeCall(responses)

const login = (app: TestAppShape, email: string, password: string, mfa_code?: string) =>
  Effect.flatMap(clientAs(app), (api) =>
    api.auth.login({ payload: mfa_code === undefined ? { email, password } : { email, password, mfa_code } }))

const me = (app: TestAppShape, token: string) => Effect.flatMap(clientAs(app, token), (api) => api.session.me())

const forgotPassword = (app: TestAppShape, email: string) =>
  Effect.flatMap(clientAs(app), (api) => api.auth.forgotPassword({ payload: { email } }))

const resetPassword = (app: TestAppShape, token: string, password: string) =>
  Effect.flatMap(clientAs(app), (api) => api.auth.resetPassword({ payload: { token, password } }))

/** What an error answer says: its code (which the tag stands for), message and param. */
const said = (error: { readonly _tag: string; readonly message: string; readonly param?: string | undefined }) => ({
  tag: error._tag,
  message: error.message,
  param: error.param
})

// One dispatcher per loopback address, kept for the suite: the throttle counts per client address.
const clientsFrom = new Map<string, ApiClient>()

/**
 * The typed client of `app` sending from another loopback address (127.0.0.0/8 all reaches the
 * service), as a client elsewhere would. Its first request opens the connection, so the timings of
 * later ones measure the service alone.
 */
const clientFrom = (app: TestAppShape, localAddress: string) =>
  Effect.suspend(() => {
    const key = `${app.baseUrl} ${localAddress}`
    const known = clientsFrom.get(key)
    if (known !== undefined) return Effect.succeed(known)
    const dispatcher = new Undici.Agent({ localAddress })
    return HttpApiClient.make(Api, { baseUrl: app.baseUrl }).pipe(
      Effect.provideService(HttpClient.HttpClient, NodeHttpClient.makeUndici(dispatcher)),
      Effect.tap((client) => client.system.health()),
      Effect.orDie,
      Effect.tap((client) => Effect.sync(() => clientsFrom.set(key, client)))
    )
  })

/** A login from `localAddress`: "SignedIn" or the tag of its failure, and how long the answer took. */
const loginFrom = (app: TestAppShape, localAddress: string, email: string, password: string) =>
  Effect.gen(function*() {
    const api = yield* clientFrom(app, localAddress)
    const started = performance.now()
    const result = yield* Effect.either(api.auth.login({ payload: { email, password } }))
    const millis = performance.now() - started
    return { outcome: Either.isRight(result) ? "SignedIn" : result.left._tag, millis }
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
        const registered = yield* (yield* clientAs(app)).auth.register({
          payload: { email, password: TEST_PASSWORD, name: "Sok Dara", organization_name: "Dara Coffee" }
        })
        expect(registered.user).toMatchObject({ object: "user", email, name: "Sok Dara", mfa_enabled: false })
        expect(registered.user.id).toMatch(/^usr_/)
        expect(registered.organization).toMatchObject({ object: "organization", name: "Dara Coffee", role: "owner" })
        expect(registered.token_type).toBe("Bearer")
        expect(new Date(registered.expires_at).getTime()).toBeGreaterThan(Date.now())

        const signedIn = yield* me(app, registered.access_token)
        expect(signedIn.user.email).toBe(email)
        expect(signedIn.organizations).toEqual([registered.organization])

        const loggedIn = yield* login(app, email.toUpperCase(), TEST_PASSWORD)
        expect(loggedIn.access_token).not.toBe(registered.access_token)
      }))

    it.effect("rejects bad registrations with 400 in the shared shape", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const existing = yield* Effect.promise(() => signUp(app))
        yield* expectFailure(
          Effect.flatMap(clientAs(app), (api) => api.auth.register({ payload: { email: existing.email, password: TEST_PASSWORD } })),
          "InvalidRequest",
          "email"
        )
        // Raw: every one of these is outside the request schema, or not JSON at all.
        const cases = [
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
        const wrongPassword = yield* expectFailure(login(app, user.email, "not the password at all"), "Unauthorized")
        const unknownEmail = yield* expectFailure(login(app, uniqueEmail("nobody"), "not the password at all"), "Unauthorized")
        expect(said(wrongPassword)).toEqual(said(unknownEmail))
      }))

    it.effect("refuses requests without, or with an unknown, credential", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        yield* expectFailure(me(app, ""), "Unauthorized")
        yield* expectFailure(me(app, "mst_doesnotexist"), "Unauthorized")
        yield* expectFailure(Effect.flatMap(clientAs(app, "sk_test_doesnotexist"), (api) => api.session.whoami()), "Unauthorized")
      }))

    it.effect("changes the password only with the current one, and signs out the other sessions", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        const other = (yield* login(app, user.email, user.password)).access_token
        const api = yield* clientAs(app, user.token)
        // A wrong credential is 401 unauthorized, as API.md lists it, not a malformed request.
        yield* expectFailure(
          api.session.changePassword({ payload: { current_password: "wrong password!", new_password: "a brand new password" } }),
          "Unauthorized",
          "current_password"
        )

        yield* api.session.changePassword({ payload: { current_password: user.password, new_password: "a brand new password" } })
        yield* me(app, user.token)
        yield* expectFailure(me(app, other), "Unauthorized")
        yield* expectFailure(login(app, user.email, user.password), "Unauthorized")
        yield* login(app, user.email, "a brand new password")
      }))

    it.effect("resets a forgotten password with a single-use token that expires", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.promise(() => signUp(app))

        const known = yield* forgotPassword(app, user.email)
        const unknown = yield* forgotPassword(app, uniqueEmail("ghost"))
        expect(known).toEqual(unknown)

        // The mail is written in the background, after the answer.
        const token = yield* resetTokens(app, user.email, 1).pipe(Effect.map((tokens) => tokens[0]!))
        const session = user.token
        // The service runs with PORT=0 and no PUBLIC_BASE_URL: the link names the port actually bound.
        const boundPort = new URL(app.baseUrl).port
        const mails = yield* Effect.promise(() => app.mailTo(user.email))
        const resetMail = mails.find((mail) => mail.body.includes(`Reset token: ${token}`))
        expect(resetMail?.body).toContain(`http://localhost:${boundPort}/reset-password?token=${token}`)

        yield* resetPassword(app, token, "reset password 123")
        yield* login(app, user.email, "reset password 123")
        // Resetting signs out every session.
        yield* expectFailure(me(app, session), "Unauthorized")

        yield* expectFailure(resetPassword(app, token, "another password 1"), "Unauthorized", "token")

        yield* forgotPassword(app, user.email)
        const second = (yield* resetTokens(app, user.email, 2))[1]!
        yield* sql`UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`
        yield* expectFailure(resetPassword(app, second, "late password 123"), "Unauthorized", "token")
      }))

    it.effect("enrols TOTP, requires it at login, and refuses a replayed code", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.promise(() => signUp(app))
        const api = yield* clientAs(app, user.token)

        const setup = yield* api.session.mfaSetup()
        expect(setup.otpauth_url).toContain("otpauth://totp/")
        expect(setup.otpauth_url).toContain("issuer=KHQR")
        const secret = setup.secret

        yield* expectFailure(api.session.mfaEnable({ payload: { code: "000000" } }), "Unauthorized", "code")
        // Raw: a code that is not six digits is outside the request schema.
        const malformed = yield* call(app, "POST", "/auth/mfa/enable", { token: user.token, body: { code: "12ab" } })
        expect(malformed.status).toBe(400)
        expect(malformed.body.error).toMatchObject({ code: "invalid_request", param: "code" })
        const enabled = yield* api.session.mfaEnable({ payload: { code: yield* currentTotp(secret) } })
        expect(enabled.mfa_enabled).toBe(true)

        yield* expectFailure(login(app, user.email, user.password), "MfaRequired")

        // The enabling code's time step is spent; the next step's code is valid (clock drift allowance).
        const nextCode = yield* currentTotp(secret, Math.floor(Date.now() / 1000) + 30)
        yield* login(app, user.email, user.password, nextCode)
        yield* expectFailure(login(app, user.email, user.password, nextCode), "Unauthorized")

        yield* expectFailure(api.session.mfaDisable({ payload: { code: nextCode } }), "Unauthorized")
        // Time passes (in the database's memory of used steps), so the current code is fresh again.
        yield* sql`UPDATE users SET mfa_last_time_step = mfa_last_time_step - 10 WHERE id = ${user.userId}`
        const disabled = yield* api.session.mfaDisable({ payload: { code: yield* currentTotp(secret) } })
        expect(disabled.mfa_enabled).toBe(false)
        yield* login(app, user.email, user.password)

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
          yield* expectFailure(login(app, user.email, "wrong password 000"), "Unauthorized")
          yield* expectFailure(login(app, ghost, "wrong password 000"), "Unauthorized")
        }
        // Raw: the typed client does not show the Retry-After header.
        const blocked = yield* call(app, "POST", "/auth/login", { body: { email: user.email, password: user.password } })
        expect(blocked.status).toBe(429)
        expect(blocked.body.error.code).toBe("rate_limited")
        expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0)
        yield* expectFailure(login(app, ghost, user.password), "RateLimited")
      }))

    it.effect("spends as long on an unknown e-mail as on a wrong password", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const rounds = 21
        const users = yield* Effect.forEach(Array.from({ length: rounds }), () => Effect.promise(() => signUp(app)), {
          concurrency: 5
        })
        const samples: Array<{ readonly known: number; readonly unknown: number }> = []
        // Fresh e-mails and addresses for every round, so no throttle or delay is part of what is measured.
        // Each round times the two kinds back to back, the first one alternating, so a burst of load on
        // the machine (other suites run beside this one) falls on both alike.
        for (let round = 0; round < rounds; round++) {
          const address = `127.0.3.${round + 1}`
          const wrongPassword = loginFrom(app, address, users[round]!.email, "not the password at all")
          const unknownEmail = loginFrom(app, address, uniqueEmail("nobody"), "not the password at all")
          const [known, unknown] = round % 2 === 0
            ? yield* Effect.all([wrongPassword, unknownEmail])
            : yield* Effect.map(Effect.all([unknownEmail, wrongPassword]), ([first, second]) => [second, first] as const)
          expect([known.outcome, unknown.outcome]).toEqual(["Unauthorized", "Unauthorized"])
          samples.push({ known: known.millis, unknown: unknown.millis })
        }
        // Both verify one Argon2id hash (an unknown e-mail a decoy's): tens of milliseconds, against about
        // a hundred times less for an unknown e-mail answered without hashing. Under load single samples
        // vary several-fold, but the median of the rounds' ratios stays near 1; the margin leaves room for
        // that noise and still catches a path that skips the hash (or, on a quiet machine, hashes twice).
        const ratio = median(samples.map((sample) => sample.unknown / sample.known))
        const seen = `median ratio ${ratio.toFixed(2)} of unknown/known ms: ` +
          samples.map((sample) => `${sample.unknown.toFixed(0)}/${sample.known.toFixed(0)}`).join(" ")
        expect(ratio, seen).toBeLessThan(1.75)
        expect(ratio, seen).toBeGreaterThan(1 / 1.75)
      }))

    it.effect("throttles one address's guesses without locking the owner out elsewhere, or colleagues behind it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        const colleague = yield* Effect.promise(() => signUp(app))
        for (let attempt = 0; attempt < 5; attempt++) {
          expect((yield* loginFrom(app, "127.0.1.1", user.email, "wrong password 000")).outcome).toBe("Unauthorized")
        }
        // The guessing address is blocked for this account, even with the right password …
        expect((yield* loginFrom(app, "127.0.1.1", user.email, user.password)).outcome).toBe("RateLimited")
        // … while the owner, elsewhere, signs in …
        expect((yield* loginFrom(app, "127.0.1.2", user.email, user.password)).outcome).toBe("SignedIn")
        // … and so does another account's owner behind the same (office) address, after 25 failures there:
        // the per-address ceiling is far higher.
        for (let attempt = 0; attempt < 20; attempt++) {
          expect((yield* loginFrom(app, "127.0.1.1", uniqueEmail("mistyped"), "wrong password 000")).outcome).toBe("Unauthorized")
        }
        expect((yield* loginFrom(app, "127.0.1.1", colleague.email, colleague.password)).outcome).toBe("SignedIn")
      }))

    it.effect("lets the owner in without waiting after guesses at the account from many addresses", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        // Eight failures from two addresses: under the per-address limits.
        for (const address of ["127.0.2.1", "127.0.2.2"]) {
          for (let attempt = 0; attempt < 4; attempt++) {
            expect((yield* loginFrom(app, address, user.email, "wrong password 000")).outcome).toBe("Unauthorized")
          }
        }
        // One password check (tens of milliseconds); the limits add no wait.
        const signedIn = yield* loginFrom(app, "127.0.2.3", user.email, user.password)
        expect(signedIn.outcome).toBe("SignedIn")
        expect(signedIn.millis).toBeLessThan(1000)
      }))

    it.effect("a reset revokes the user's other reset tokens, and mail keeps no token in clear", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.promise(() => signUp(app))
        yield* forgotPassword(app, user.email)
        yield* resetTokens(app, user.email, 1)
        yield* forgotPassword(app, user.email)
        const [first, second] = yield* resetTokens(app, user.email, 2)

        const stored = yield* sql<{ body_sealed: string }>`SELECT body_sealed FROM outgoing_mail WHERE recipient = ${user.email}`
        expect(stored.length).toBeGreaterThanOrEqual(2)
        for (const row of stored) {
          expect(row.body_sealed).not.toContain(first!)
          expect(row.body_sealed).not.toContain(second!)
          expect(row.body_sealed).toMatch(/^v1\./)
        }

        yield* resetPassword(app, second!, "reset password 456")
        yield* expectFailure(resetPassword(app, first!, "attacker password 1"), "Unauthorized", "token")
        yield* login(app, user.email, "reset password 456")
      }))

    it.effect("adds members with roles; an Analyst cannot add members; other organizations are 404", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const owner = yield* Effect.promise(() => signUp(app))
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const path = { orgId: owner.organizationId }
        const list = yield* (yield* clientAs(app, analyst.token)).members.list({ path, urlParams: listParams() })
        expect(list.object).toBe("list")
        expect(list.data.map((member) => [member.email, member.role])).toEqual([[analyst.email, "analyst"], [owner.email, "owner"]])

        const stranger = yield* Effect.promise(() => signUp(app))
        yield* expectFailure(
          Effect.flatMap(clientAs(app, analyst.token), (api) =>
            api.members.add({ path, payload: { email: stranger.email, role: "admin" } })),
          "Forbidden"
        )
        yield* expectFailure(
          Effect.flatMap(clientAs(app, stranger.token), (api) => api.members.list({ path, urlParams: listParams() })),
          "NotFound"
        )

        const api = yield* clientAs(app, owner.token)
        const first = yield* api.members.list({ path, urlParams: listParams({ limit: 1 }) })
        expect(first.data).toHaveLength(1)
        expect(first.has_more).toBe(true)
        const next = yield* api.members.list({ path, urlParams: listParams({ limit: 1, cursor: first.next_cursor! }) })
        expect(next.data[0]!.email).toBe(owner.email)
        expect(next.has_more).toBe(false)
        // Followed to the end, the pages hold every member once.
        const all = yield* allPages(1, (urlParams) => api.members.list({ path, urlParams }))
        expect(all.map((member) => member.email)).toEqual([analyst.email, owner.email])
      }))

    it.effect("makes a listed e-mail a platform administrator only once the address is verified", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const admin = yield* Effect.promise(() => signUp(app, { email: "admin@example.test", verifyEmail: false }))
        const api = yield* clientAs(app, admin.token)
        expect((yield* api.session.me()).user).toMatchObject({ email_verified: false, platform_admin: false })
        yield* expectFailure(api.settings.list({ urlParams: listParams() }), "Forbidden")

        // The link goes out through the mail sender, like every mail, sealed at rest.
        const mails = yield* Effect.promise(() => app.mailTo(admin.email))
        expect(mails.map((mail) => mail.subject)).toEqual(["Verify your e-mail address"])
        const link = mails[0]!.body.match(/(http:\/\/\S+\/console\/verify-email\?token=(\S+))/)!
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ body_sealed: string }>`SELECT body_sealed FROM outgoing_mail WHERE recipient = ${admin.email}`
        expect(stored[0]!.body_sealed).not.toContain(link[2]!)

        yield* expectFailure(api.auth.verifyEmail({ urlParams: { token: "not-a-token" } }), "Unauthorized", "token")
        // The link as mailed opens the console's page, which verifies with its token through the API.
        const page = yield* Effect.promise(() => fetch(link[1]!))
        expect(page.status).toBe(200)
        expect(page.headers.get("content-type")).toContain("text/html")
        const verify = `${app.baseUrl}/auth/verify-email?token=${link[2]!}`
        const verified = yield* Effect.promise(() => fetch(verify))
        expect(verified.status).toBe(200)
        expect(yield* Effect.promise(() => verified.json())).toMatchObject({ object: "acknowledgement" })

        expect((yield* api.session.me()).user).toMatchObject({ email_verified: true, platform_admin: true })
        yield* api.settings.list({ urlParams: listParams() })

        // Single use; nothing left to verify.
        expect((yield* Effect.promise(() => fetch(verify))).status).toBe(401)
        yield* expectFailure(api.session.resendVerification(), "InvalidState")

        // An unlisted user is verified, and still no administrator.
        const plain = yield* Effect.promise(() => signUp(app))
        expect((yield* me(app, plain.token)).user).toMatchObject({ email_verified: true, platform_admin: false })
      }))

    it.effect("sends a new verification link on request, and an expired link verifies nothing", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.promise(() => signUp(app, { verifyEmail: false }))
        yield* sql`UPDATE email_verifications SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`
        const expired = yield* Effect.promise(() => verificationToken(app, user.email))
        yield* expectFailure(
          Effect.flatMap(clientAs(app), (api) => api.auth.verifyEmail({ urlParams: { token: expired } })),
          "Unauthorized",
          "token"
        )
        yield* (yield* clientAs(app, user.token)).session.resendVerification()
        const fresh = yield* Effect.promise(() => verificationToken(app, user.email))
        expect(fresh).not.toBe(expired)
        yield* Effect.promise(() => verifyEmail(app, user.email))
        expect((yield* me(app, user.token)).user.email_verified).toBe(true)
      }))

    it.effect("never shows a password, token or TOTP secret in a log line", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        // From an address of its own: the suite's other failures from 127.0.0.1 may have it blocked already.
        expect((yield* loginFrom(app, "127.0.4.1", user.email, "a wrong password 999")).outcome).toBe("Unauthorized")
        const secrets = [TEST_PASSWORD, user.token, "a wrong password 999"]
        const joined = logs.join("\n")
        expect(joined.length).toBeGreaterThan(0)
        for (const secret of secrets) expect(joined).not.toContain(secret)
        // Passwords never come back in any response either.
        expect(responses.length).toBeGreaterThan(0)
        for (const body of responses) expect(body).not.toContain(TEST_PASSWORD)
      }))
  })
})
