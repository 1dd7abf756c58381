/**
 * Invitations and e-mail changes through the mail, against a local SMTP server: an invited e-mail without
 * an account signs up from the mailed link (verified by it, joining with the invited role, no organization
 * of its own); an existing user accepts after signing in, only as the invited address; a link works once
 * and not after a revocation or a newer invitation; the plan's member limit holds at invitation and at
 * acceptance; an e-mail change happens only when the link mailed to the new address is followed, and the
 * old address hears of it. Every mailed link lands on a served console page.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { addMember, signUp, TEST_PASSWORD, uniqueEmail } from "../support/Accounts.ts"
import { clientAs } from "../support/Client.ts"
import { fastMail, linksIn, receivedBy, TestSmtp } from "../support/Smtp.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const appWithSmtp = Layer.unwrapEffect(Effect.map(TestSmtp, (smtp) => testAppLayer({ mail: fastMail(smtp.url) })))
  .pipe(Layer.provideMerge(TestSmtp.layer))

const consoleFor = (app: TestAppShape, sessionToken: string) =>
  makeConsoleClient({ baseUrl: app.baseUrl, sessionToken }).pipe(Effect.provide(FetchHttpClient.layer))

/** A console route the page of a link calls, from the console's own origin. */
const post = (app: TestAppShape, path: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await app.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", origin: app.baseUrl },
      body: JSON.stringify(body)
    })
    return { status: response.status, cookie: response.headers.get("set-cookie"), body: await response.json() as Record<string, any> }
  })

const failureTag = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (result) => Either.isLeft(result) ? result.left._tag : "succeeded")

/** The mailed link whose path is `path`, checked to open a served console page; answers its token. */
const linkedToken = (app: TestAppShape, text: string, path: string) =>
  Effect.gen(function*() {
    const link = linksIn(text).map((url) => new URL(url)).find((url) => url.pathname === path)
    expect(link, `a ${path} link in:\n${text}`).toBeDefined()
    const page = yield* Effect.promise(() => app.fetch(link!.pathname + link!.search))
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    return link!.searchParams.get("token")!
  })

describe("invitations and e-mail changes", () => {
  layer(appWithSmtp, { timeout: 120_000, excludeTestServices: true })("over SMTP", (it) => {
    it.scoped("an invited e-mail without an account signs up from the link and joins with the role", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const smtp = yield* TestSmtp
        const owner = yield* Effect.promise(() => signUp(app, { organization_name: "Riverside Cafe" }))
        const ownerConsole = yield* consoleFor(app, owner.token)
        const invitee = uniqueEmail("invitee")

        const invitation = yield* ownerConsole.InviteMember({ organization_id: owner.organizationId, email: invitee, role: "developer" })
        expect(invitation).toMatchObject({ object: "invitation", email: invitee, role: "developer", status: "pending", invited_by: owner.email })
        const team = yield* ownerConsole.Team({ organization_id: owner.organizationId })
        expect(team.members.map((member) => member.email)).toEqual([owner.email])
        expect(team.invitations.map((pending) => pending.id)).toEqual([invitation.id])

        const [mail] = yield* receivedBy(smtp, invitee)
        expect(mail!.subject).toBe("You are invited to join Riverside Cafe")
        expect(mail!.text).toContain(`${owner.email} invited you to the organization Riverside Cafe as developer`)
        const token = yield* linkedToken(app, mail!.text, "/console/invitation")

        const preview = yield* post(app, "/console/invitation", { token })
        expect(preview.status).toBe(200)
        expect(preview.body).toMatchObject({ organization_name: "Riverside Cafe", email: invitee, role: "developer", account_exists: false })

        const short = yield* post(app, "/console/invitation/sign-up", { token, name: "Dara", password: "short" })
        expect(short.status).toBe(400)
        expect(short.body.error.param).toBe("password")

        const joined = yield* post(app, "/console/invitation/sign-up", { token, name: "Dara", password: TEST_PASSWORD })
        expect(joined.status).toBe(200)
        expect(joined.cookie).toMatch(/^console_session=mst_/)
        expect(joined.body.user).toMatchObject({ email: invitee, name: "Dara", email_verified: true })

        // Signed in as a member of the inviting organization only, with the invited role.
        const login = yield* app.client.auth.login({ payload: { email: invitee, password: TEST_PASSWORD } })
        const me = yield* (yield* clientAs(app, login.access_token)).session.me()
        expect(me.organizations.map((organization) => [organization.id, organization.role])).toEqual([[owner.organizationId, "developer"]])

        // The link worked once; the team lists the member, the invitation is gone.
        expect((yield* post(app, "/console/invitation", { token })).status).toBe(401)
        expect((yield* post(app, "/console/invitation/sign-up", { token, name: "Again", password: TEST_PASSWORD })).status).toBe(401)
        const after = yield* ownerConsole.Team({ organization_id: owner.organizationId })
        expect(after.members.map((member) => member.email).sort()).toEqual([owner.email, invitee].sort())
        expect(after.invitations).toEqual([])

        // The routes of the links answer the console's own origin only.
        const foreign = yield* Effect.promise(() =>
          app.fetch("/console/invitation", { method: "POST", headers: { "content-type": "application/json", origin: "https://evil.example" }, body: JSON.stringify({ token }) }))
        expect(foreign.status).toBe(403)
      }))

    it.scoped("an existing user accepts after signing in, only as the invited address; revoked and replaced links stop working", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const smtp = yield* TestSmtp
        const owner = yield* Effect.promise(() => signUp(app, { organization_name: "Lotus Shop" }))
        const ownerConsole = yield* consoleFor(app, owner.token)
        const existing = yield* Effect.promise(() => signUp(app))
        const stranger = yield* Effect.promise(() => signUp(app))

        yield* ownerConsole.InviteMember({ organization_id: owner.organizationId, email: existing.email.toUpperCase(), role: "analyst" })
        const invitationTo = (count: number) =>
          Effect.map(receivedBy(smtp, existing.email, count), (mails) => mails.filter((mail) => mail.subject.includes("Lotus Shop")))
        const [first] = yield* invitationTo(2)
        const firstToken = yield* linkedToken(app, first!.text, "/console/invitation")
        // A second invitation of the same address replaces the first.
        yield* ownerConsole.InviteMember({ organization_id: owner.organizationId, email: existing.email, role: "admin" })
        const second = (yield* invitationTo(3))[1]!
        const token = yield* linkedToken(app, second.text, "/console/invitation")
        expect((yield* post(app, "/console/invitation", { token: firstToken })).status).toBe(401)
        expect((yield* ownerConsole.Team({ organization_id: owner.organizationId })).invitations.map((pending) => pending.role)).toEqual(["admin"])

        const preview = yield* post(app, "/console/invitation", { token })
        expect(preview.body).toMatchObject({ account_exists: true, role: "admin" })
        // Signing up is for new addresses: the owner of the account signs in instead.
        const signUpAgain = yield* post(app, "/console/invitation/sign-up", { token, name: "Twin", password: TEST_PASSWORD })
        expect(signUpAgain.status).toBe(409)

        expect(yield* failureTag((yield* consoleFor(app, stranger.token)).AcceptInvitation({ token }))).toBe("Forbidden")
        const membership = yield* (yield* consoleFor(app, existing.token)).AcceptInvitation({ token })
        expect(membership).toMatchObject({ id: owner.organizationId, name: "Lotus Shop", role: "admin" })
        expect(yield* failureTag((yield* consoleFor(app, existing.token)).AcceptInvitation({ token }))).toBe("Unauthorized")

        // A revoked invitation's link no longer works; only managers revoke, and a member is not invited again.
        const later = uniqueEmail("later")
        const pending = yield* ownerConsole.InviteMember({ organization_id: owner.organizationId, email: later, role: "analyst" })
        const laterToken = yield* linkedToken(app, (yield* receivedBy(smtp, later))[0]!.text, "/console/invitation")
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const analystConsole = yield* consoleFor(app, analyst.token)
        expect(yield* failureTag(analystConsole.RevokeInvitation({ organization_id: owner.organizationId, id: pending.id }))).toBe("Forbidden")
        expect(yield* failureTag(analystConsole.InviteMember({ organization_id: owner.organizationId, email: uniqueEmail(), role: "admin" })))
          .toBe("Forbidden")
        expect((yield* ownerConsole.RevokeInvitation({ organization_id: owner.organizationId, id: pending.id })).id).toBe(pending.id)
        expect((yield* post(app, "/console/invitation", { token: laterToken })).status).toBe(401)
        expect(yield* failureTag(ownerConsole.RevokeInvitation({ organization_id: owner.organizationId, id: pending.id }))).toBe("NotFound")
        expect(yield* failureTag(ownerConsole.InviteMember({ organization_id: owner.organizationId, email: existing.email, role: "analyst" })))
          .toBe("InvalidState")
        // Another tenant's organization is not found.
        expect(yield* failureTag((yield* consoleFor(app, stranger.token)).Team({ organization_id: owner.organizationId }))).toBe("NotFound")
      }))

    it.scoped("the plan's member limit holds when inviting and again when the invitation is accepted", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const owner = yield* Effect.promise(() => signUp(app))
        const ownerConsole = yield* consoleFor(app, owner.token)
        const smtp = yield* TestSmtp
        // The free plan has room for 5 members: the owner, 3 added, and one invited.
        for (let added = 0; added < 3; added++) yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const invitee = uniqueEmail("late")
        yield* ownerConsole.InviteMember({ organization_id: owner.organizationId, email: invitee, role: "developer" })
        const token = yield* linkedToken(app, (yield* receivedBy(smtp, invitee))[0]!.text, "/console/invitation")
        yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))

        expect(yield* failureTag(ownerConsole.InviteMember({ organization_id: owner.organizationId, email: uniqueEmail(), role: "analyst" })))
          .toBe("Forbidden")
        const refused = yield* post(app, "/console/invitation/sign-up", { token, name: "Late", password: TEST_PASSWORD })
        expect(refused.status).toBe(403)
        expect(refused.body.error.message).toMatch(/team members/)
        // Nothing was left behind: no account, and the link still works once there is room.
        expect(yield* failureTag(app.client.auth.login({ payload: { email: invitee, password: TEST_PASSWORD } }))).toBe("Unauthorized")
        expect((yield* post(app, "/console/invitation", { token })).status).toBe(200)
      }))

    it.scoped("an e-mail change happens only through the link mailed to the new address; the old one hears of it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const smtp = yield* TestSmtp
        const user = yield* Effect.promise(() => signUp(app))
        const other = yield* Effect.promise(() => signUp(app))
        const userConsole = yield* consoleFor(app, user.token)
        const newEmail = uniqueEmail("moved")

        expect(yield* failureTag(userConsole.RequestEmailChange({ new_email: newEmail, password: "not the password" }))).toBe("Unauthorized")
        expect(yield* failureTag(userConsole.RequestEmailChange({ new_email: other.email, password: user.password }))).toBe("InvalidRequest")
        expect(yield* failureTag(userConsole.RequestEmailChange({ new_email: user.email, password: user.password }))).toBe("InvalidRequest")
        const answer = yield* userConsole.RequestEmailChange({ new_email: newEmail, password: user.password })
        expect(answer.message).toContain(newEmail)

        const [confirmation] = yield* receivedBy(smtp, newEmail)
        expect(confirmation!.subject).toBe("Confirm your new e-mail address")
        const notice = (yield* receivedBy(smtp, user.email, 2)).find((mail) => mail.subject === "A change of your e-mail address was requested")
        expect(notice?.text).toContain(newEmail)
        expect(linksIn(notice!.text)).toEqual([])
        const token = yield* linkedToken(app, confirmation!.text, "/console/confirm-email")

        // Nothing changed yet.
        expect((yield* userConsole.Context()).me.user.email).toBe(user.email)
        const confirmed = yield* post(app, "/console/email-change", { token })
        expect(confirmed.status).toBe(200)
        expect(confirmed.body.message).toBe(`Your e-mail address is now ${newEmail}`)
        const me = (yield* userConsole.Context()).me.user
        expect(me).toMatchObject({ email: newEmail, email_verified: true })
        expect((yield* app.client.auth.login({ payload: { email: newEmail, password: user.password } })).user.id).toBe(user.userId)
        expect(yield* failureTag(app.client.auth.login({ payload: { email: user.email, password: user.password } }))).toBe("Unauthorized")
        expect((yield* post(app, "/console/email-change", { token })).status).toBe(401)
      }))
  })
})
