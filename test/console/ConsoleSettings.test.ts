/**
 * The console's team, settings and links procedures through the typed client against the running service:
 * the rules the services own (who may change a membership, whose it may be), tenancy (another tenant's
 * organization, store or payment is 404), the access matrix in the context, a new payment on the live feed,
 * and the checkout preview page (escaped, framed by the console only).
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { CONSOLE_CHECKOUT_PREVIEW_PATH } from "../../domain/Console.ts"
import { addMember, signUp } from "../support/Accounts.ts"
import { createPayment, newMerchant } from "../support/Merchant.ts"
import { type TestAppShape, TestApp, testAppLayer } from "../support/TestApp.ts"

const consoleFor = (app: TestAppShape, sessionToken: string) =>
  makeConsoleClient({ baseUrl: app.baseUrl, sessionToken }).pipe(Effect.provide(FetchHttpClient.layer))

const failureTag = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (result) => Either.isLeft(result) ? result.left._tag : "succeeded")

describe("console settings RPC", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("typed client", (it) => {
    it.scoped("members: roles changed and members removed by owners and admins, never themselves or the owner", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, storeId } = yield* newMerchant(app, "Team Cafe")
        const admin = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "admin"))
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const asOwner = yield* consoleFor(app, owner.token)
        const asAdmin = yield* consoleFor(app, admin.token)
        const asAnalyst = yield* consoleFor(app, analyst.token)
        const org = owner.organizationId

        // The context carries the matrix the server enforces.
        const context = yield* asAnalyst.Context()
        expect(context.access.find((row) => row.permission === "member.manage")?.roles).toEqual({ owner: true, admin: true, developer: false, analyst: false })
        expect(context.me.organizations.find((membership) => membership.id === org)?.role).toBe("analyst")

        expect(yield* failureTag(asAnalyst.ChangeMemberRole({ organization_id: org, user_id: admin.userId, role: "analyst" }))).toBe("Forbidden")
        expect(yield* failureTag(asAnalyst.RemoveMember({ organization_id: org, user_id: admin.userId }))).toBe("Forbidden")
        expect(yield* failureTag(asAdmin.ChangeMemberRole({ organization_id: org, user_id: owner.userId, role: "analyst" }))).toBe("InvalidState")
        expect(yield* failureTag(asAdmin.RemoveMember({ organization_id: org, user_id: admin.userId }))).toBe("InvalidState")
        expect(yield* failureTag(asOwner.RemoveMember({ organization_id: org, user_id: owner.userId }))).toBe("InvalidState")

        const promoted = yield* asAdmin.ChangeMemberRole({ organization_id: org, user_id: analyst.userId, role: "developer" })
        expect(promoted.role).toBe("developer")
        const asDeveloper = yield* consoleFor(app, analyst.token)
        expect((yield* asDeveloper.Context()).me.organizations.find((membership) => membership.id === org)?.role).toBe("developer")
        yield* asOwner.RemoveMember({ organization_id: org, user_id: analyst.userId })
        const members = yield* asOwner.ListMembers({ organization_id: org })
        expect(members.data.map((member) => member.user_id).sort()).toEqual([admin.userId, owner.userId].sort())
        // Removed: the store is another tenant's now.
        expect(yield* failureTag(asDeveloper.ListLinks({ store_id: storeId }))).toBe("NotFound")

        // Another organization is 404, whoever asks.
        const stranger = yield* Effect.promise(() => signUp(app))
        const asStranger = yield* consoleFor(app, stranger.token)
        expect(yield* failureTag(asStranger.ListMembers({ organization_id: org }))).toBe("NotFound")
        expect(yield* failureTag(asStranger.RemoveMember({ organization_id: org, user_id: admin.userId }))).toBe("NotFound")
        expect(yield* failureTag(asStranger.GetBilling({ organization_id: org }))).toBe("NotFound")
      }))

    it.scoped("a new payment is on the store's feed; another tenant's payment has no deliveries to show", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* newMerchant(app, "Feed Cafe")
        const client = yield* consoleFor(app, owner.token)
        const frames = yield* Stream.runCollect(client.PaymentFeed({ store_id: storeId }).pipe(Stream.take(2))).pipe(
          Effect.fork
        )
        yield* Effect.sleep("300 millis")
        const payment = yield* createPayment(app, key, { amount: "7.25" })
        const [synced, created] = Chunk.toReadonlyArray(yield* frames.await.pipe(Effect.flatten))
        expect(synced?._tag).toBe("PaymentFeedSynced")
        expect(created).toMatchObject({ _tag: "PaymentChanged", id: payment.id, status: "pending", amount: "7.25", amount_refunded: "0.00" })

        expect(yield* client.PaymentWebhookDeliveries({ id: payment.id })).toEqual([])
        const other = yield* newMerchant(app, "Other Cafe")
        const theirs = yield* createPayment(app, other.key)
        expect(yield* failureTag(client.PaymentWebhookDeliveries({ id: theirs.id }))).toBe("NotFound")
      }))

    it.effect("the checkout preview escapes the branding it is given and may be framed by the console only", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const query = new URLSearchParams({ display_name: "<script>alert(1)</script>", primary_color: "red;}", logo_url: "javascript:alert(1)" })
        const response = yield* Effect.promise(() => app.fetch(`${CONSOLE_CHECKOUT_PREVIEW_PATH}?${query}`, { headers: { accept: "text/html" } }))
        const html = yield* Effect.promise(() => response.text())
        expect(response.status).toBe(200)
        expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'self'")
        expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
        expect(html).not.toContain("<script")
        expect(html).not.toContain("javascript:")
        expect(html).toContain("--primary: #0b5cad")
      }))
  })
})
