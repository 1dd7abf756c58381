/**
 * The console's settings, team, links and billing in a real browser (Debian's Chromium driven by
 * playwright-core) against the service on PostgreSQL: an owner brands the checkout and sees the preview
 * follow the form, sets the provider credentials (masked once saved), adds and deactivates a branch, submits
 * the verification, invites a user who has an account, creates a payment link and copies it, edits a webhook
 * endpoint and rotates its secret, sees the webhooks a payment set off on its page, and changes plan, paying
 * the invoice's KHQR. The invited user then accepts from the mailed link and works with fewer rights: the
 * actions their role may not take are disabled with the reason, and the server refuses them anyway. axe-core
 * checks every page; screenshots at 1280 and 390 px wide go to test-output/console/settings/.
 *
 * Needs /usr/bin/chromium (`apt-get install chromium`); without it the suite is skipped.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { mailedLink, signUp, TEST_PASSWORD } from "../support/Accounts.ts"
import { CHROMIUM, HAS_CHROMIUM } from "../support/Browser.ts"
import { captureAt, ConsoleBrowser, consoleBrowserLayer, openConsolePage, screenshotOnFailure, step, eventReceiver } from "../support/ConsoleBrowser.ts"
import { clientAs } from "../support/Client.ts"
import { createPayment, simulate, storeWithKey } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const OUTPUT_DIR = fileURLToPath(new URL("../../test-output/console/settings/", import.meta.url))
/** From the top of the page: the sticky top bar would otherwise be drawn where the page was scrolled to. */
const capture = (page: Page, name: string) =>
  Effect.zipRight(step(() => page.evaluate(() => window.scrollTo(0, 0))), captureAt(OUTPUT_DIR, page, name))

const webhookReceiver = eventReceiver("/hooks/khqr")

const signIn = (page: Page, email: string) =>
  Effect.gen(function*() {
    yield* step(() => page.getByRole("heading", { name: "Sign in to your account" }).waitFor())
    yield* step(() => page.getByLabel("Email").fill(email))
    yield* step(() => page.getByLabel("Password").fill(TEST_PASSWORD))
    yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
    yield* step(() => page.getByRole("heading", { name: "Home" }).waitFor())
  })

const menu = (page: Page, name: string) => step(() => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true }).click())

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM ? "console settings in Chromium" : `console settings in Chromium (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`,
  () => {
    layer(Layer.merge(testAppLayer({ webhookAllowPrivateNetworks: true }), consoleBrowserLayer), { timeout: 180_000, excludeTestServices: true })("settings", (it) => {
      it.scoped("brand the checkout, invite a member with fewer rights, a payment link, a webhook edit, a plan change", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          // The owner's store, with a webhook endpoint and a paid payment made through REST.
          const owner = yield* Effect.promise(() => signUp(app, { organization_name: "Riverside Coffee" }))
          const { key, storeId } = yield* storeWithKey(app, owner, "Riverside Cafe")
          const receiver = yield* webhookReceiver
          const ownerApi = yield* clientAs(app, owner.token)
          const endpoint = yield* ownerApi.webhooks.create({ payload: { store_id: storeId, url: receiver.url, events: ["*"] } })
          const payment = yield* createPayment(app, key, { amount: "8.00", reference_id: "order-2001" })
          yield* simulate(app, key, payment.id, "scanned")
          yield* simulate(app, key, payment.id, "paid")
          const analyst = yield* Effect.promise(() => signUp(app, { organization_name: "Analyst's own organization" }))

          const { page, problems } = yield* openConsolePage(yield* ConsoleBrowser)
          yield* step(() => page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.baseUrl }))
          yield* step(() => page.goto(`${app.baseUrl}/console`))
          yield* signIn(page, owner.email)

          // Branding: the preview (the hosted checkout page itself) follows the form before it is saved.
          yield* menu(page, "Store")
          yield* step(() => page.getByRole("heading", { name: "Checkout branding" }).waitFor())
          const preview = page.frameLocator("iframe[title='Checkout page preview']")
          yield* step(() => preview.getByRole("heading", { name: "Riverside Cafe" }).waitFor())
          yield* step(() => page.getByLabel("Display name").fill("Riverside Roasters"))
          yield* step(() => page.getByLabel("Primary color", { exact: true }).fill("#0f766e"))
          yield* step(() => preview.getByRole("heading", { name: "Riverside Roasters" }).waitFor())
          expect(yield* step(() => preview.locator(".amount").evaluate((element) => getComputedStyle(element).color))).toBe("rgb(15, 118, 110)")
          yield* step(() => page.getByRole("button", { name: "Save branding" }).click())
          yield* step(() => page.getByText("Branding saved.").waitFor())
          const saved = yield* ownerApi.stores.retrieve({ path: { id: storeId } })
          expect(saved.branding).toMatchObject({ display_name: "Riverside Roasters", primary_color: "#0f766e" })

          // Provider credentials: written, then shown masked only.
          yield* step(() => page.getByLabel("Bakong account id").fill("riverside_cafe@aclb"))
          yield* step(() => page.getByLabel("Merchant name").fill("Riverside Cafe"))
          yield* step(() => page.getByLabel("Merchant city").fill("Phnom Penh"))
          yield* step(() => page.getByLabel("Acquiring bank").fill("ACLEDA"))
          yield* step(() => page.getByRole("button", { name: "Save credentials" }).click())
          yield* step(() => page.getByText("Credentials saved.").waitFor())
          const credentials = (yield* step(() => page.getByTestId("credentials-status").textContent())) ?? ""
          expect(credentials).toContain("@aclb")
          expect(credentials).not.toContain("riverside_cafe")
          expect(yield* step(() => page.getByLabel("Bakong account id").inputValue())).toBe("")
          yield* capture(page, "store-settings")

          // Branches: add one, deactivate it.
          yield* menu(page, "Branches")
          yield* step(() => page.getByText("No branches yet").waitFor())
          yield* step(() => page.getByRole("button", { name: "Add branch" }).click())
          const branchDialog = page.getByRole("dialog", { name: "Add a branch" })
          yield* step(() => branchDialog.getByLabel("Name").fill("Riverside"))
          yield* step(() => branchDialog.getByLabel("Phone (optional)").fill("+855 12 345 678"))
          yield* step(() => branchDialog.getByRole("button", { name: "Add branch" }).click())
          yield* step(() => page.getByRole("cell", { name: "Riverside", exact: true }).waitFor())
          yield* step(() => page.getByRole("button", { name: "Deactivate Riverside" }).click())
          yield* step(() => page.getByText("Inactive", { exact: true }).waitFor())
          yield* capture(page, "branches")

          // Verification (KYC): submitted, then in review.
          yield* menu(page, "Verification")
          yield* step(() => page.getByTestId("verification-status").filter({ hasText: "Not submitted" }).waitFor())
          yield* step(() => page.getByLabel("Registered business name").fill("Riverside Coffee Co., Ltd."))
          yield* step(() => page.getByLabel("Registration number").fill("KH-00012345"))
          yield* step(() => page.getByLabel("Contact name").fill("Sokha Chan"))
          yield* step(() => page.getByLabel("Contact e-mail").fill(owner.email))
          yield* step(() => page.getByLabel("Document link").fill("https://files.example.com/registration.pdf"))
          yield* step(() => page.getByRole("button", { name: "Submit for review" }).click())
          yield* step(() => page.getByTestId("verification-status").filter({ hasText: "In review" }).waitFor())
          yield* capture(page, "verification")

          // Team: a user who has an account is invited as an Analyst; the role table says what each role may do.
          yield* menu(page, "Team")
          yield* step(() => page.getByRole("heading", { name: "What each role may do" }).waitFor())
          yield* step(() => page.getByLabel("E-mail").fill(analyst.email))
          yield* step(() => page.getByLabel("Role", { exact: true }).selectOption("analyst"))
          yield* step(() => page.getByRole("button", { name: "Send invitation" }).click())
          yield* step(() => page.getByText(`Invitation sent to ${analyst.email}`).waitFor())
          yield* step(() => page.getByRole("button", { name: `Revoke the invitation of ${analyst.email}` }).waitFor())
          yield* capture(page, "team")

          // A payment link: created, then its public link copied.
          yield* menu(page, "Payment links")
          yield* step(() => page.getByText("No test links yet").waitFor())
          yield* step(() => page.getByRole("button", { name: "Create link" }).click())
          const linkDialog = page.getByRole("dialog", { name: "Create a payment link" })
          yield* step(() => linkDialog.getByLabel("Title").fill("Iced latte"))
          yield* step(() => linkDialog.getByLabel("Amount (optional)").fill("2.5O"))
          yield* step(() => linkDialog.getByRole("button", { name: "Create link" }).click())
          yield* step(() => linkDialog.locator(".field-invalid").getByLabel("Amount (optional)").waitFor())
          yield* step(() => linkDialog.getByLabel("Amount (optional)").fill("2.50"))
          yield* step(() => linkDialog.getByRole("button", { name: "Create link" }).click())
          yield* step(() => page.getByRole("button", { name: "Copy link Iced latte" }).click())
          yield* step(() => page.getByRole("button", { name: "Copied Iced latte" }).waitFor())
          const copied = yield* step(() => page.evaluate(() => navigator.clipboard.readText()))
          const links = yield* ownerApi.links.list({ path: { storeId }, urlParams: { limit: 10 } })
          expect(copied).toBe(links.data[0]!.url)
          yield* capture(page, "payment-links")

          // The webhook endpoint: its URL and events edited, its secret rotated with the grace window said.
          yield* menu(page, "Webhooks")
          yield* step(() => page.getByRole("link", { name: receiver.url }).click())
          yield* step(() => page.getByRole("button", { name: "Edit endpoint" }).click())
          const editDialog = page.getByRole("dialog", { name: "Edit webhook endpoint" })
          const newUrl = receiver.url.replace("/hooks/khqr", "/hooks/khqr-v2")
          yield* step(() => editDialog.getByLabel("Endpoint URL").fill(newUrl))
          yield* step(() => editDialog.getByLabel("All events").uncheck())
          yield* step(() => editDialog.getByRole("button", { name: "Save changes" }).click())
          yield* step(() => page.getByTestId("endpoint-url").filter({ hasText: newUrl }).waitFor())
          const listed = yield* ownerApi.webhooks.list({ urlParams: { store_id: storeId, limit: 10 } })
          expect(listed.data.find((candidate) => candidate.id === endpoint.id)).toMatchObject({ url: newUrl, events: ["payment.completed", "payment.refunded"] })
          yield* step(() => page.getByRole("button", { name: "Rotate secret" }).click())
          const rotateDialog = page.getByRole("dialog", { name: "Rotate signing secret" })
          yield* step(() => rotateDialog.getByText("For the next 24 hours").waitFor())
          yield* step(() => rotateDialog.getByRole("button", { name: "Rotate secret" }).click())
          const rotated = page.getByRole("dialog", { name: "New signing secret" })
          expect(yield* step(() => rotated.getByLabel("Secret").inputValue())).toMatch(/^whsec_/)
          yield* step(() => rotated.getByText("The previous secret keeps verifying deliveries until").waitFor())
          yield* capture(page, "webhook-rotated")
          yield* step(() => rotated.getByRole("button", { name: "Done" }).click())
          yield* capture(page, "webhook-endpoint")

          // The payment's page lists the webhooks it set off, with their outcome.
          yield* menu(page, "Payments")
          yield* step(() => page.locator(`tr[data-payment-id="${payment.id}"] a`).click())
          const sent = page.locator("tr[data-delivery-id]").filter({ hasText: "payment.completed" })
          yield* step(() => sent.first().getByText("200 OK").waitFor({ timeout: 15_000 }))
          yield* capture(page, "payment-webhooks")

          // Billing: usage against the plan; a paid plan's invoice shown as its KHQR until it is paid.
          yield* menu(page, "Billing")
          yield* step(() => page.getByRole("heading", { name: "Free plan" }).waitFor())
          yield* step(() => page.getByRole("button", { name: "Switch to Starter" }).click())
          const invoice = page.locator(".invoice-card")
          yield* step(() => invoice.getByText("Waiting for payment").waitFor())
          yield* step(() => invoice.getByRole("img", { name: /KHQR code of invoice/ }).waitFor())
          yield* capture(page, "billing-invoice")
          yield* step(() => invoice.getByRole("button", { name: "Simulate payment (test)" }).click())
          yield* step(() => invoice.getByText("Paid", { exact: true }).waitFor({ timeout: 10_000 }))
          yield* step(() => page.getByRole("heading", { name: "Starter plan" }).waitFor({ timeout: 10_000 }))
          yield* capture(page, "billing")

          // The invited user accepts from the mailed link, signing in there, and works with fewer rights: what an
          // Analyst may not do is disabled with the reason.
          yield* step(() => page.getByRole("button", { name: "Sign out" }).click())
          yield* step(() => page.getByRole("heading", { name: "Sign in to your account" }).waitFor())
          yield* step(async () => page.goto(await mailedLink(app, analyst.email, "/console/invitation")))
          yield* step(() => page.getByRole("heading", { name: "Sign in to accept" }).waitFor())
          yield* step(() => page.getByLabel("Password").fill(TEST_PASSWORD))
          yield* step(() => page.getByRole("button", { name: "Sign in and join" }).click())
          yield* step(() => page.getByRole("heading", { name: "Home" }).waitFor())
          yield* menu(page, "Payment links")
          const createLink = page.getByRole("button", { name: "Create link" })
          yield* step(() => createLink.waitFor())
          expect(yield* step(() => createLink.isDisabled())).toBe(true)
          expect(yield* step(() => createLink.getAttribute("title"))).toMatch(/^Your role \(Analyst\) does not allow this: create and cancel payments and payment links\./)
          yield* capture(page, "payment-links-analyst")
          yield* menu(page, "Team")
          yield* step(() => page.getByRole("note").filter({ hasText: "Your role (Analyst) does not allow this" }).waitFor())
          expect(yield* step(() => page.getByRole("button", { name: "Send invitation" }).count())).toBe(0)
          yield* capture(page, "team-analyst")

          // The server refuses the same calls from the member's session, whatever the page shows.
          const memberConsole = yield* makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: analyst.token }).pipe(Effect.provide(FetchHttpClient.layer))
          const refusedLink = yield* Effect.either(memberConsole.CreateLink({ store_id: storeId, kind: "link", title: "Not allowed", currency: "USD" }))
          expect(Either.isLeft(refusedLink) && refusedLink.left._tag).toBe("Forbidden")
          const refusedRemoval = yield* Effect.either(memberConsole.RemoveMember({ organization_id: owner.organizationId, user_id: analyst.userId }))
          expect(Either.isLeft(refusedRemoval) && refusedRemoval.left._tag).toBe("Forbidden")

          expect(yield* step(() => page.evaluate(`window.__cspViolations`))).toEqual([])
          expect(problems).toEqual([])
        }).pipe(screenshotOnFailure(OUTPUT_DIR)))
    })
  }
)
