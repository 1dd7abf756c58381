/**
 * The high-value refund gate counts the payment's refunded total, this refund included: refunds just
 * below the threshold cannot add up past it without MFA, one after the other or racing.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { currentTotp } from "../../src/accounts/Totp.ts"
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
    return { owner, key: key.body.secret as string }
  })

const paidPayment = (app: TestAppShape, key: string, amount: string) =>
  Effect.gen(function*() {
    const created = yield* call(app, "POST", "/v1/payments", { token: key, body: { amount, currency: "USD" } })
    expect(created.status).toBe(201)
    for (const status of ["scanned", "paid"]) {
      expect((yield* call(app, "POST", `/v1/payments/${created.body.id}/simulate`, { token: key, body: { status } })).status)
        .toBe(201)
    }
    return created.body.id as string
  })

const refund = (app: TestAppShape, token: string, id: string, body: Record<string, unknown>) =>
  call(app, "POST", `/v1/payments/${id}/refund`, { token, body })

describe("high-value refunds", () => {
  layer(testAppLayer({ refundMfaThreshold: Option.some("1000") }), { timeout: 120_000, excludeTestServices: true })(
    "with a threshold of 1000",
    (it) => {
      it.effect("gates the second of two 999.99 refunds of a 2,000.00 payment behind MFA", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { key, owner } = yield* merchant(app)
          const id = yield* paidPayment(app, key, "2000.00")

          const first = yield* refund(app, key, id, { amount: "999.99" })
          expect(first.status).toBe(201)
          // 999.99 + 999.99 = 1,999.98 refunded: at or above 1,000, so an API key may not.
          const second = yield* refund(app, key, id, { amount: "999.99" })
          expect(second.status).toBe(403)
          expect(second.body.error.code).toBe("forbidden")
          // Nor may the Owner without MFA …
          const withoutMfa = yield* refund(app, owner.token, id, { amount: "999.99" })
          expect(withoutMfa.status).toBe(401)
          expect(withoutMfa.body.error.code).toBe("mfa_required")
          expect((yield* call(app, "GET", `/v1/payments/${id}`, { token: key })).body.amount_refunded).toBe("999.99")

          // … but with MFA and a fresh code the Owner can.
          const setup = yield* call(app, "POST", "/auth/mfa/setup", { token: owner.token })
          const secret: string = setup.body.secret
          expect((yield* call(app, "POST", "/auth/mfa/enable", { token: owner.token, body: { code: yield* currentTotp(secret) } })).status)
            .toBe(201)
          const fresh = yield* currentTotp(secret, Math.floor(Date.now() / 1000) + 30)
          const cleared = yield* refund(app, owner.token, id, { amount: "999.99", mfa_code: fresh })
          expect(cleared.status).toBe(201)
          expect((yield* call(app, "GET", `/v1/payments/${id}`, { token: key })).body.amount_refunded).toBe("1999.98")
        }))

      it.effect("lets at most the refunds below the threshold through when they race", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { key } = yield* merchant(app)
          const id = yield* paidPayment(app, key, "2000.00")
          // Each is below 1,000 alone; any three of them reach it.
          const answers = yield* Effect.all(
            Array.from({ length: 8 }, () => refund(app, key, id, { amount: "400.00" })),
            { concurrency: "unbounded" }
          )
          const statuses = answers.map((answer) => answer.status).sort()
          expect(statuses.filter((status) => status === 201)).toHaveLength(2)
          expect(statuses.filter((status) => status === 403)).toHaveLength(6)
          expect((yield* call(app, "GET", `/v1/payments/${id}`, { token: key })).body.amount_refunded).toBe("800.00")
        }))
    }
  )
})
