/**
 * Payment expiry under TestClock: a pending payment is expired by the sweep from the moment its
 * `expires_at` comes, and not a millisecond before; the expiry is a moment of the Clock that created the
 * payment. The clock moves; nothing sleeps.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import type { Payment } from "../../domain/Payments.ts"
import { ApiKeysService } from "../../src/apikeys/Service.ts"
import { makeExpirySweep } from "../../src/payments/Jobs.ts"
import { PaymentsService } from "../../src/payments/Service.ts"
import {
  actingAs,
  apiKeyPrincipal,
  FUTURE_START,
  servicesOnTestApp,
  type StoreOwner,
  withNewStoreOwner
} from "../support/Services.ts"

const EXPIRES_IN_SECONDS = 600

describe("payment expiry", () => {
  layer(servicesOnTestApp(), { timeout: 120_000, excludeTestServices: true })("with TestClock", (it) => {
    /**
     * A payment of the owner's store, created now with a test key, and what the test needs around it:
     * the payments service and the sweep, acting as that key.
     */
    const newPayment = ({ asOwner, store, user }: StoreOwner, amount: { amount: string; currency: "USD" | "KHR" }) =>
      Effect.gen(function*() {
        const key = yield* asOwner(Effect.flatMap(ApiKeysService, (apiKeys) => apiKeys.create({ store_id: store.id, mode: "test" })))
        const asMerchant = actingAs(apiKeyPrincipal(key, user.organizationId))
        const payments = yield* PaymentsService
        const created = yield* asMerchant(payments.create({ ...amount, expires_in: EXPIRES_IN_SECONDS }, undefined))
        if (created._tag !== "Fresh") return yield* Effect.dieMessage("a payment without a key is always fresh")
        const status = (id: Payment["id"]) => Effect.map(asMerchant(payments.retrieve(id)), (payment) => payment.status)
        return { payment: created.value, payments, asMerchant, status, sweep: yield* makeExpirySweep }
      })

    it.effect("a pending payment expires exactly at its expires_at, not before", () =>
      withNewStoreOwner((owner) =>
        Effect.gen(function*() {
          const { payment, status, sweep } = yield* newPayment(owner, { amount: "2.50", currency: "USD" })
          const expiresAt = FUTURE_START + EXPIRES_IN_SECONDS * 1000
          expect(Date.parse(payment.expires_at)).toBe(expiresAt)

          // A millisecond before its expiry the sweep leaves it alone…
          yield* TestClock.setTime(expiresAt - 1)
          expect(yield* sweep).toBe(0)
          expect(yield* status(payment.id)).toBe("pending")

          // …and at its expiry it is due and expired.
          yield* TestClock.setTime(expiresAt)
          expect(yield* sweep).toBe(1)
          expect(yield* status(payment.id)).toBe("expired")
          // Expired is terminal: the next sweep has nothing to do.
          expect(yield* sweep).toBe(0)
        })))

    it.effect("a payment paid before its expiry is not expired when the time comes", () =>
      withNewStoreOwner((owner) =>
        Effect.gen(function*() {
          const { asMerchant, payment, payments, status, sweep } = yield* newPayment(owner, { amount: "4000", currency: "KHR" })
          yield* TestClock.adjust(`${EXPIRES_IN_SECONDS - 1} seconds`)
          yield* asMerchant(payments.simulate(payment.id, "scanned"))
          yield* asMerchant(payments.simulate(payment.id, "paid"))

          yield* TestClock.adjust("1 hour")
          expect(yield* sweep).toBe(0)
          expect(yield* status(payment.id)).toBe("paid")
        })))
  })
})
