/**
 * Payments taken at a branch: `branch_id` on payment creation is checked against the API key's store,
 * kept on the payment, and makes DELETE of that branch deactivate it rather than delete it.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { BranchId } from "../../domain/Ids.ts"
import type { Store } from "../../domain/Stores.ts"
import { clientAs, expectFailure, listParams, wireJson } from "../support/Client.ts"
import { createPayment as createPaymentOf, newMerchant, retrievePayment } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const merchant = (app: TestAppShape) =>
  Effect.map(newMerchant(app), ({ key, owner, storeId }) => ({ token: owner.token, storeId, key }))

const createBranch = (app: TestAppShape, token: string, storeId: Store["id"], name: string) =>
  Effect.flatMap(clientAs(app, token), (api) => api.branches.create({ path: { storeId }, payload: { name } })).pipe(
    Effect.map((branch) => branch.id)
  )

const deleteBranch = (app: TestAppShape, token: string, id: BranchId) =>
  Effect.flatMap(clientAs(app, token), (api) => api.branches.delete({ path: { id }, withResponse: true }))

const createPayment = (app: TestAppShape, key: string, branchId?: BranchId) =>
  createPaymentOf(app, key, branchId === undefined ? { amount: "4.00" } : { amount: "4.00", branch_id: branchId })

describe("branches and payments", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("stores and returns the branch of a payment, and refuses branches that are not the store's", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const mine = yield* merchant(app)
        const other = yield* merchant(app)
        const branch = yield* createBranch(app, mine.token, mine.storeId, "Riverside")
        const othersBranch = yield* createBranch(app, other.token, other.storeId, "Elsewhere")

        const created = yield* createPayment(app, mine.key, branch)
        expect(created.branch_id).toBe(branch)
        const retrieved = yield* retrievePayment(app, mine.key, created.id)
        expect(retrieved.branch_id).toBe(branch)
        const withoutBranch = yield* createPayment(app, mine.key)
        expect(withoutBranch.branch_id).toBeNull()

        for (const branchId of [BranchId.make("br_doesnotexist"), othersBranch]) {
          yield* expectFailure(createPayment(app, mine.key, branchId), "InvalidRequest", "branch_id", branchId)
        }
        const deactivated = yield* createBranch(app, mine.token, mine.storeId, "Closed for winter")
        const updated = yield* (yield* clientAs(app, mine.token)).branches.update({
          path: { id: deactivated },
          payload: { active: false }
        })
        expect(updated.active).toBe(false)
        yield* expectFailure(createPayment(app, mine.key, deactivated), "InvalidRequest", "branch_id")
      }))

    it.effect("deactivates a branch that has payments instead of deleting it, and deletes one without", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, storeId, token } = yield* merchant(app)
        const used = yield* createBranch(app, token, storeId, "Market stall")
        const unused = yield* createBranch(app, token, storeId, "Never opened")
        const payment = yield* createPayment(app, key, used)

        const [deletedUsed, usedResponse] = yield* deleteBranch(app, token, used)
        expect(deletedUsed).toMatchObject({ id: used, object: "branch", active: false })
        // The wire, not the decoded union, says whether `deleted` was sent.
        expect(yield* wireJson(usedResponse)).not.toHaveProperty("deleted")
        const listed = yield* (yield* clientAs(app, token)).branches.list({ path: { storeId }, urlParams: listParams() })
        expect(listed.data.map((branch) => [branch.id, branch.active])).toContainEqual([used, false])
        // The payment still names its branch, which still resolves.
        expect((yield* retrievePayment(app, key, payment.id)).branch_id).toBe(used)

        const [deletedUnused, unusedResponse] = yield* deleteBranch(app, token, unused)
        expect(deletedUnused).toEqual({ id: unused, object: "branch", deleted: true })
        expect(yield* wireJson(unusedResponse)).toEqual({ id: unused, object: "branch", deleted: true })
      }))

    it.effect("never fails a payment or a delete when the two race", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, storeId, token } = yield* merchant(app)
        for (let round = 0; round < 5; round++) {
          const branch = yield* createBranch(app, token, storeId, `Pop-up ${round}`)
          const [paid, [deleted]] = yield* Effect.all(
            [Effect.either(createPayment(app, key, branch)), deleteBranch(app, token, branch)],
            { concurrency: "unbounded" }
          )
          if (Either.isRight(paid)) {
            // The payment won: the branch had history by the time the delete looked, so it stays, inactive.
            expect(deleted).toMatchObject({ id: branch, active: false })
          } else {
            yield* expectFailure(Effect.fail(paid.left), "InvalidRequest", "branch_id")
          }
        }
      }))
  })
})
