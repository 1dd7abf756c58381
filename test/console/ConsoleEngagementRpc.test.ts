/**
 * The engagement procedures of the console RPC through the typed client, on what the console adds to the
 * REST routes: a customer made in the store and mode the user works in, once per Idempotency-Key; a reward
 * redeemed at the counter, once per key; a promotion read by id; and the same roles and tenancy as the
 * routes (an Analyst may read but not write, another organization's objects do not exist, the submitter of
 * a promotion cannot approve it).
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { addMember, signUp } from "../support/Accounts.ts"
import { storeWithKey } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const consoleFor = (app: TestAppShape, sessionToken: string) =>
  makeConsoleClient({ baseUrl: app.baseUrl, sessionToken }).pipe(Effect.provide(FetchHttpClient.layer))

const failureTag = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (result) => Either.isLeft(result) ? result.left._tag : "succeeded")

describe("console RPC: engagement", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("typed client", (it) => {
    it.scoped("customers and counter redemptions once per key, under the roles and tenancy of the routes", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const owner = yield* Effect.promise(() => signUp(app))
        const { storeId } = yield* storeWithKey(app, owner, "Engagement Cafe")
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const stranger = yield* Effect.promise(() => signUp(app))
        const console = yield* consoleFor(app, owner.token)

        // Made once per key: the retry answers the same customer; the key with other values is a conflict.
        const input = { store_id: storeId, email: "sokha@example.test", name: "Sokha Chan", idempotency_key: "add-sokha" }
        const customer = yield* console.CreateCustomer(input)
        expect(customer.livemode).toBe(false)
        expect((yield* console.CreateCustomer(input)).id).toBe(customer.id)
        expect(yield* failureTag(console.CreateCustomer({ ...input, name: "Someone Else" }))).toBe("IdempotencyConflict")
        const duplicate = yield* Effect.flip(console.CreateCustomer({ ...input, idempotency_key: "add-sokha-again" }))
        expect(duplicate._tag).toBe("InvalidState")
        expect(duplicate.message).toContain(customer.id)
        const found = yield* console.SearchCustomers({ store_id: storeId, search: "SOKHA" })
        expect(found.data.map((row) => row.id)).toEqual([customer.id])
        expect((yield* console.SearchCustomers({ store_id: storeId, livemode: true })).data).toEqual([])

        // A reward redeemed at the counter, once per key; the points come back when it is cancelled.
        const reward = yield* console.CreateReward({ store_id: storeId, name: "Free iced latte", points_cost: 100, stock: 3 })
        yield* console.AdjustPoints({ id: customer.id, points: 250, reason: "Welcome gift" })
        const redeem = { customer_id: customer.id, reward_id: reward.id, idempotency_key: "latte-1" }
        const redemption = yield* console.RedeemReward(redeem)
        expect((yield* console.RedeemReward(redeem)).id).toBe(redemption.id)
        expect((yield* console.CustomerOverview({ id: customer.id })).points_balance).toBe(150)
        expect((yield* console.CancelRedemption({ id: redemption.id })).status).toBe("cancelled")
        expect((yield* console.CustomerPoints({ id: customer.id })).points_balance).toBe(250)
        expect((yield* console.CustomerPreferences({ id: customer.id })).marketing).toBe(false)

        // An Analyst reads, and is refused every change.
        const readOnly = yield* consoleFor(app, analyst.token)
        expect((yield* readOnly.CustomerOverview({ id: customer.id })).id).toBe(customer.id)
        expect(yield* failureTag(readOnly.CreateCustomer({ ...input, idempotency_key: "analyst" }))).toBe("Forbidden")
        expect(yield* failureTag(readOnly.RedeemReward({ ...redeem, idempotency_key: "analyst" }))).toBe("Forbidden")
        expect(yield* failureTag(readOnly.EraseCustomer({ id: customer.id }))).toBe("Forbidden")

        // Another organization's customer, reward and store do not exist.
        const outsider = yield* consoleFor(app, stranger.token)
        expect(yield* failureTag(outsider.CustomerOverview({ id: customer.id }))).toBe("NotFound")
        expect(yield* failureTag(outsider.RedeemReward({ ...redeem, idempotency_key: "outsider" }))).toBe("NotFound")
        expect(yield* failureTag(outsider.CreateCustomer({ ...input, idempotency_key: "outsider" }))).toBe("NotFound")
      }))

    it.scoped("a promotion is read by id in its own organization only, and its submitter cannot approve it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const owner = yield* Effect.promise(() => signUp(app))
        const { storeId } = yield* storeWithKey(app, owner, "Promotion Cafe")
        const stranger = yield* Effect.promise(() => signUp(app))
        const console = yield* consoleFor(app, owner.token)
        const now = Date.now()
        const draft = yield* console.CreatePromotion({
          store_id: storeId,
          name: "Double-up weekend",
          bonus_points: 50,
          starts_at: new Date(now),
          ends_at: new Date(now + 86_400_000)
        })
        const read = yield* console.GetPromotion({ id: draft.id })
        expect(read.audit.map((entry) => entry.action)).toEqual(["create"])
        expect(yield* failureTag((yield* consoleFor(app, stranger.token)).GetPromotion({ id: draft.id }))).toBe("NotFound")
        yield* console.SubmitPromotion({ id: draft.id })
        const refused = yield* Effect.flip(console.ApprovePromotion({ id: draft.id }))
        expect(refused._tag).toBe("Forbidden")
        expect(refused.message).toContain("submitted")
        const members = yield* console.MemberDirectory({ organization_id: owner.organizationId })
        expect(members.data.map((member) => member.user_id)).toContain(owner.userId)
      }))
  })
})
