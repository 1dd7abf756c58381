/**
 * Payments taken at a branch: `branch_id` on payment creation is checked against the API key's store,
 * kept on the payment, and makes DELETE of that branch deactivate it rather than delete it.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

const merchant = (app: TestAppShape) =>
  Effect.gen(function*() {
    const owner = yield* Effect.promise(() => signUp(app))
    const store = yield* Effect.promise(() => createStore(app, owner.token))
    const key = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
    expect(key.status).toBe(201)
    return { token: owner.token, storeId: store.id, key: key.body.secret as string }
  })

const createBranch = (app: TestAppShape, token: string, storeId: string, name: string) =>
  Effect.map(call(app, "POST", `/stores/${storeId}/branches`, { token, body: { name } }), (response) => {
    expect(response.status).toBe(201)
    return response.body.id as string
  })

const createPayment = (app: TestAppShape, key: string, extra: Record<string, unknown> = {}) =>
  call(app, "POST", "/v1/payments", { token: key, body: { amount: "4.00", currency: "USD", ...extra } })

describe("branches and payments", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("stores and returns the branch of a payment, and refuses branches that are not the store's", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const mine = yield* merchant(app)
        const other = yield* merchant(app)
        const branch = yield* createBranch(app, mine.token, mine.storeId, "Riverside")
        const othersBranch = yield* createBranch(app, other.token, other.storeId, "Elsewhere")

        const created = yield* createPayment(app, mine.key, { branch_id: branch })
        expect(created.status).toBe(201)
        expect(created.body.branch_id).toBe(branch)
        const retrieved = yield* call(app, "GET", `/v1/payments/${created.body.id}`, { token: mine.key })
        expect(retrieved.body.branch_id).toBe(branch)
        const withoutBranch = yield* createPayment(app, mine.key)
        expect(withoutBranch.body.branch_id).toBeNull()

        for (const branchId of ["br_doesnotexist", othersBranch]) {
          const refused = yield* createPayment(app, mine.key, { branch_id: branchId })
          expect(refused.status).toBe(400)
          expect(refused.body.error).toMatchObject({ code: "invalid_request", param: "branch_id" })
        }
        const deactivated = yield* createBranch(app, mine.token, mine.storeId, "Closed for winter")
        expect((yield* call(app, "PATCH", `/branches/${deactivated}`, { token: mine.token, body: { active: false } })).status)
          .toBe(200)
        const toInactive = yield* createPayment(app, mine.key, { branch_id: deactivated })
        expect(toInactive.status).toBe(400)
        expect(toInactive.body.error.param).toBe("branch_id")
      }))

    it.effect("deactivates a branch that has payments instead of deleting it, and deletes one without", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, storeId, token } = yield* merchant(app)
        const used = yield* createBranch(app, token, storeId, "Market stall")
        const unused = yield* createBranch(app, token, storeId, "Never opened")
        const payment = yield* createPayment(app, key, { branch_id: used })
        expect(payment.status).toBe(201)

        const deletedUsed = yield* call(app, "DELETE", `/branches/${used}`, { token })
        expect(deletedUsed.status).toBe(200)
        expect(deletedUsed.body).toMatchObject({ id: used, object: "branch", active: false })
        expect(deletedUsed.body.deleted).toBeUndefined()
        const listed = yield* call(app, "GET", `/stores/${storeId}/branches`, { token })
        expect(listed.body.data.map((branch: any) => [branch.id, branch.active])).toContainEqual([used, false])
        // The payment still names its branch, which still resolves.
        expect((yield* call(app, "GET", `/v1/payments/${payment.body.id}`, { token: key })).body.branch_id).toBe(used)

        const deletedUnused = yield* call(app, "DELETE", `/branches/${unused}`, { token })
        expect(deletedUnused.status).toBe(200)
        expect(deletedUnused.body).toEqual({ id: unused, object: "branch", deleted: true })
      }))

    it.effect("never fails a payment or a delete when the two race", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, storeId, token } = yield* merchant(app)
        for (let round = 0; round < 5; round++) {
          const branch = yield* createBranch(app, token, storeId, `Pop-up ${round}`)
          const [paid, deleted] = yield* Effect.all(
            [createPayment(app, key, { branch_id: branch }), call(app, "DELETE", `/branches/${branch}`, { token })],
            { concurrency: "unbounded" }
          )
          expect(deleted.status).toBe(200)
          if (paid.status === 201) {
            // The payment won: the branch had history by the time the delete looked, so it stays, inactive.
            expect(deleted.body).toMatchObject({ id: branch, active: false })
          } else {
            expect(paid.status).toBe(400)
            expect(paid.body.error.param).toBe("branch_id")
          }
        }
      }))
  })
})
