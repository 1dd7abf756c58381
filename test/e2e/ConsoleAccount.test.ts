/**
 * The account pages of the console in a real browser, from the links the mails carry: an Owner invites a
 * colleague from the Team page (and revokes a mistaken invitation, whose link then fails), the colleague
 * opens the mailed link, creates their account there and lands in the console as a member of the
 * organization (its store in the switcher); a new user's verification link verifies the address, and an
 * invitation to that address is accepted by signing in on the link's page, and another organization's with
 * one button by the same user already signed in (a colleague signed in as someone else is told whose
 * invitation it is, and may sign out); a change of e-mail asked for on
 * the Profile page happens from the link mailed to the new address. axe-core at every screen; screenshots
 * at 1280 and 390 px in test-output/console/account/.
 *
 * Needs /usr/bin/chromium (`apt-get install chromium`); without it the suite is skipped.
 */
import { describe, expect, layer } from "@effect/vitest"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { createStore, mailedLink, signUp, TEST_PASSWORD, uniqueEmail } from "../support/Accounts.ts"
import { CHROMIUM, HAS_CHROMIUM } from "../support/Browser.ts"
import { captureAt, ConsoleBrowser, consoleBrowserLayer, openConsolePage, screenshotOnFailure, step } from "../support/ConsoleBrowser.ts"
import { clientAs } from "../support/Client.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/console/account/", import.meta.url))
const capture = (page: Page, name: string) => captureAt(OUTPUT_DIR, page, name)

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "console account pages in Chromium" : `console account pages in Chromium (SKIPPED: no ${CHROMIUM})`,
  () => {
    layer(Layer.merge(testAppLayer(), consoleBrowserLayer), { timeout: 180_000, excludeTestServices: true })("from the mails", (it) => {
      it.scoped("invite, sign up from the link as a member, verify an address, change an e-mail", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const browser = yield* ConsoleBrowser
          const owner = yield* Effect.promise(() => signUp(app, { organization_name: "Riverside Coffee" }))
          yield* Effect.promise(() => createStore(app, owner.token, "Riverside Cafe"))

          // The Owner signs in and invites a colleague from the Team page.
          const { page, problems } = yield* openConsolePage(browser)
          yield* step(() => page.goto(`${app.baseUrl}/console/settings/team`))
          yield* step(() => page.getByLabel("Email").fill(owner.email))
          yield* step(() => page.getByLabel("Password").fill(owner.password))
          yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
          yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Team" }).click())
          yield* step(() => page.getByRole("heading", { name: "Team", exact: true }).waitFor())
          yield* step(() => page.getByText("No pending invitations").waitFor())
          yield* capture(page, "team-empty")
          const invitee = uniqueEmail("colleague")
          yield* step(() => page.getByLabel("E-mail").fill("not an address"))
          yield* step(() => page.getByRole("button", { name: "Send invitation" }).click())
          yield* step(() => page.locator(".field-invalid").getByLabel("E-mail").waitFor())
          yield* step(() => page.getByLabel("E-mail").fill(invitee))
          yield* step(() => page.getByLabel("Role", { exact: true }).selectOption("developer"))
          yield* step(() => page.getByRole("button", { name: "Send invitation" }).click())
          yield* step(() => page.getByText(`Invitation sent to ${invitee}`).waitFor())
          yield* step(() => page.getByRole("row", { name: new RegExp(`^${invitee.replace(/[.]/g, "\\.")} Developer`) }).waitFor())
          yield* capture(page, "team-invited")
          // An invitation sent to the wrong address is revoked: it leaves the list and its link stops working.
          const mistaken = uniqueEmail("mistaken")
          yield* step(() => page.getByLabel("E-mail").fill(mistaken))
          yield* step(() => page.getByRole("button", { name: "Send invitation" }).click())
          yield* step(() => page.getByRole("button", { name: `Revoke the invitation of ${mistaken}` }).click())
          yield* step(() => page.getByRole("button", { name: `Revoke the invitation of ${mistaken}` }).waitFor({ state: "detached" }))
          const revokedLink = yield* Effect.promise(() => mailedLink(app, mistaken, "/console/invitation"))

          // The colleague opens the mailed link in their own browser and creates their account there.
          const guest = yield* openConsolePage(browser)
          const invitationLink = yield* Effect.promise(() => mailedLink(app, invitee, "/console/invitation"))
          yield* step(() => guest.page.goto(invitationLink))
          yield* step(() => guest.page.getByRole("heading", { name: "Join Riverside Coffee" }).waitFor())
          expect(yield* step(() => guest.page.locator("[data-invited-email]").textContent())).toBe(invitee)
          yield* capture(guest.page, "invitation")
          yield* step(() => guest.page.getByLabel("Your name").fill("Dara Kim"))
          yield* step(() => guest.page.getByLabel("Password").fill(TEST_PASSWORD))
          yield* step(() => guest.page.getByRole("button", { name: "Create account and join" }).click())
          // Signed in as a member: the organization's store in the switcher, their name in the menu.
          yield* step(() => guest.page.getByRole("heading", { name: "Home" }).waitFor())
          yield* step(() => guest.page.getByLabel("Store").locator("option", { hasText: "Riverside Cafe" }).waitFor({ state: "attached" }))
          yield* step(() => guest.page.locator(".topbar .user-email").getByText("Dara Kim").waitFor())
          const member = yield* app.client.auth.login({ payload: { email: invitee, password: TEST_PASSWORD } })
          expect(member.user.email_verified).toBe(true)
          expect(member.organization).toMatchObject({ id: owner.organizationId, role: "developer" })
          // The link worked once.
          yield* step(() => guest.page.goto(invitationLink))
          yield* step(() => guest.page.getByRole("heading", { name: "This invitation cannot be used" }).waitFor())
          yield* capture(guest.page, "invitation-used")
          yield* step(() => guest.page.goto(revokedLink))
          yield* step(() => guest.page.getByRole("heading", { name: "This invitation cannot be used" }).waitFor())

          // A new user's verification link verifies the address (opened signed out).
          const newcomer = uniqueEmail("newcomer")
          const grant = yield* app.client.auth.register({ payload: { email: newcomer, password: TEST_PASSWORD } })
          const verifyLink = yield* Effect.promise(() => mailedLink(app, newcomer, "/console/verify-email"))
          const visitor = yield* openConsolePage(browser)
          yield* step(() => visitor.page.goto(verifyLink))
          yield* step(() => visitor.page.getByRole("heading", { name: "Your e-mail address is verified" }).waitFor())
          yield* capture(visitor.page, "verify-email")
          expect((yield* (yield* clientAs(app, grant.access_token)).session.me()).user.email_verified).toBe(true)

          // An invitation to an address that has an account: its owner signs in on the link's page and joins.
          const ownerConsole = yield* makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: owner.token }).pipe(Effect.provide(FetchHttpClient.layer))
          yield* ownerConsole.InviteMember({ organization_id: owner.organizationId, email: newcomer, role: "analyst" })
          const existingLink = yield* Effect.promise(() => mailedLink(app, newcomer, "/console/invitation"))
          yield* step(() => visitor.page.goto(existingLink))
          yield* step(() => visitor.page.getByRole("heading", { name: "Sign in to accept" }).waitFor())
          yield* capture(visitor.page, "invitation-sign-in")
          yield* step(() => visitor.page.getByLabel("Password").fill(TEST_PASSWORD))
          yield* step(() => visitor.page.getByRole("button", { name: "Sign in and join" }).click())
          yield* step(() => visitor.page.getByRole("heading", { name: "Home" }).waitFor())
          yield* step(() => visitor.page.getByLabel("Store").locator("option", { hasText: "Riverside Cafe" }).waitFor({ state: "attached" }))

          // Another organization invites the same address: its owner, already signed in, joins from the link's
          // page with one button; a colleague signed in as someone else is told whose invitation it is.
          const bookshop = yield* Effect.promise(() => signUp(app, { organization_name: "Mekong Books" }))
          yield* Effect.promise(() => createStore(app, bookshop.token, "Mekong Books Riverside"))
          const bookshopConsole = yield* makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: bookshop.token }).pipe(
            Effect.provide(FetchHttpClient.layer)
          )
          yield* bookshopConsole.InviteMember({ organization_id: bookshop.organizationId, email: newcomer, role: "analyst" })
          const signedInLink = yield* Effect.promise(() => mailedLink(app, newcomer, "/console/invitation"))
          yield* step(() => guest.page.goto(signedInLink))
          yield* step(() => guest.page.getByRole("heading", { name: "Join Mekong Books" }).waitFor())
          yield* step(() => guest.page.getByRole("note").getByText(`You are signed in as ${invitee}. This invitation is for ${newcomer}`).waitFor())
          yield* capture(guest.page, "invitation-other-account")
          yield* step(() => visitor.page.goto(signedInLink))
          yield* step(() => visitor.page.getByRole("heading", { name: "Join Mekong Books" }).waitFor())
          yield* capture(visitor.page, "invitation-signed-in")
          yield* step(() => visitor.page.getByRole("button", { name: "Join Mekong Books" }).click())
          yield* step(() => visitor.page.getByRole("heading", { name: "Home" }).waitFor())
          yield* step(() => visitor.page.getByLabel("Store").locator("option", { hasText: "Mekong Books Riverside" }).waitFor({ state: "attached" }))
          // Joined once: the link is used up, and the first organization's store is still theirs.
          yield* step(() => visitor.page.getByLabel("Store").locator("option", { hasText: "Riverside Cafe" }).waitFor({ state: "attached" }))
          yield* step(() => visitor.page.goto(signedInLink))
          yield* step(() => visitor.page.getByRole("heading", { name: "This invitation cannot be used" }).waitFor())

          // The Owner asks to change their address; it changes once the link mailed to the new one is followed.
          const moved = uniqueEmail("moved")
          yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Profile" }).click())
          yield* step(() => page.getByRole("heading", { name: "Change your e-mail address" }).waitFor())
          yield* step(() => page.getByLabel("New e-mail").fill(moved))
          yield* step(() => page.getByLabel("Current password").fill("not my password"))
          yield* step(() => page.getByRole("button", { name: "Send confirmation link" }).click())
          yield* step(() => page.locator(".field-invalid").getByLabel("Current password").waitFor())
          yield* step(() => page.getByLabel("Current password").fill(owner.password))
          yield* step(() => page.getByRole("button", { name: "Send confirmation link" }).click())
          yield* step(() => page.getByText(`A confirmation link is on its way to ${moved}`).waitFor())
          yield* capture(page, "profile")
          const confirmLink = yield* Effect.promise(() => mailedLink(app, moved, "/console/confirm-email"))
          yield* step(() => page.goto(confirmLink))
          yield* step(() => page.getByRole("heading", { name: "Confirm your new e-mail address" }).waitFor())
          yield* capture(page, "confirm-email")
          yield* step(() => page.getByRole("button", { name: "Confirm my new address" }).click())
          yield* step(() => page.getByText(`Your e-mail address is now ${moved}`).waitFor())
          yield* capture(page, "email-changed")
          yield* step(() => page.getByRole("link", { name: "Continue to the console" }).click())
          yield* step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Profile" }).click())
          yield* step(() => page.locator("[data-user-email]").getByText(moved).waitFor())

          expect([...problems, ...guest.problems, ...visitor.problems]).toEqual([])
        }).pipe(screenshotOnFailure(OUTPUT_DIR)))

      it.scoped("a forgotten password: the link asked for from the sign-in page, a new password, signed in with it", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const browser = yield* ConsoleBrowser
          const owner = yield* Effect.promise(() => signUp(app, { organization_name: "Forgetful Fruit" }))
          const { page, problems } = yield* openConsolePage(browser)
          yield* step(() => page.goto(`${app.baseUrl}/console`))
          yield* step(() => page.getByRole("link", { name: "Forgot your password?" }).click())
          yield* step(() => page.getByRole("heading", { name: "Reset your password" }).waitFor())
          yield* capture(page, "forgot-password")
          yield* step(() => page.getByLabel("Email").fill("not an address"))
          yield* step(() => page.getByRole("button", { name: "Send the link" }).click())
          yield* step(() => page.locator(".field-invalid").getByLabel("Email").waitFor())
          yield* step(() => page.getByLabel("Email").fill(owner.email))
          yield* step(() => page.getByRole("button", { name: "Send the link" }).click())
          yield* step(() => page.getByRole("heading", { name: "Check your e-mail" }).waitFor())
          yield* step(() => page.getByRole("status").getByText(owner.email).waitFor())
          yield* capture(page, "forgot-password-sent")

          const resetLink = yield* Effect.promise(() => mailedLink(app, owner.email, "/reset-password"))
          yield* step(() => page.goto(resetLink))
          const newPassword = "a brand new password 42"
          yield* step(() => page.getByLabel(/^New password/).fill(newPassword))
          yield* step(() => page.getByLabel("The same again").fill(newPassword))
          yield* step(() => page.getByRole("button", { name: "Set the new password" }).click())
          yield* step(() => page.getByText("Your password was changed.").waitFor())
          yield* step(() => page.getByRole("link", { name: "Sign in with it" }).click())
          yield* step(() => page.getByLabel("Email").fill(owner.email))
          yield* step(() => page.getByLabel("Password").fill(owner.password))
          yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
          yield* step(() => page.locator(".field-invalid").getByLabel("Password").or(page.getByRole("alert")).first().waitFor())
          yield* step(() => page.getByLabel("Password").fill(newPassword))
          yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
          yield* step(() => page.getByRole("navigation", { name: "Main" }).waitFor())

          expect(problems).toEqual([])
        }).pipe(screenshotOnFailure(OUTPUT_DIR)))
    })
  }
)
