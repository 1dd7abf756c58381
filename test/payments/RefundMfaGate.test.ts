/**
 * The high-value refund gate counts the payment's refunded total, this refund included: refunds just
 * below the threshold cannot add up past it without MFA, one after the other or racing.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { clientAs, expectFailure } from "../support/Client.ts"
import { newMerchant, paidPayment, refund, retrievePayment } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

describe("high-value refunds", () => {
  layer(testAppLayer({ refundMfaThreshold: Option.some("1000") }), { timeout: 120_000, excludeTestServices: true })(
    "with a threshold of 1000",
    (it) => {
      it.effect("gates the second of two 999.99 refunds of a 2,000.00 payment behind MFA", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { key, owner } = yield* newMerchant(app)
          const { id } = yield* paidPayment(app, key, { amount: "2000.00" })

          expect((yield* refund(app, key, id, { amount: "999.99" })).amount).toBe("999.99")
          // 999.99 + 999.99 = 1,999.98 refunded: at or above 1,000, so an API key may not.
          yield* expectFailure(refund(app, key, id, { amount: "999.99" }), "Forbidden")
          // Nor may the Owner without MFA …
          yield* expectFailure(refund(app, owner.token, id, { amount: "999.99" }), "MfaRequired")
          expect((yield* retrievePayment(app, key, id)).amount_refunded).toBe("999.99")

          // … but with MFA and a fresh code the Owner can.
          const ownerApi = yield* clientAs(app, owner.token)
          const { secret } = yield* ownerApi.session.mfaSetup()
          yield* ownerApi.session.mfaEnable({ payload: { code: yield* currentTotp(secret) } })
          const fresh = yield* currentTotp(secret, Math.floor(Date.now() / 1000) + 30)
          expect((yield* refund(app, owner.token, id, { amount: "999.99", mfa_code: fresh })).amount).toBe("999.99")
          expect((yield* retrievePayment(app, key, id)).amount_refunded).toBe("1999.98")
        }))

      it.effect("lets at most the refunds below the threshold through when they race", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { key } = yield* newMerchant(app)
          const { id } = yield* paidPayment(app, key, { amount: "2000.00" })
          // Each is below 1,000 alone; any three of them reach it.
          const answers = yield* Effect.all(
            Array.from({ length: 8 }, () => Effect.either(refund(app, key, id, { amount: "400.00" }))),
            { concurrency: "unbounded" }
          )
          const outcomes = answers.map(Either.match({ onLeft: (error) => error._tag, onRight: () => "refunded" }))
          expect(outcomes.filter((outcome) => outcome === "refunded")).toHaveLength(2)
          expect(outcomes.filter((outcome) => outcome === "Forbidden")).toHaveLength(6)
          expect((yield* retrievePayment(app, key, id)).amount_refunded).toBe("800.00")
        }))
    }
  )
})
