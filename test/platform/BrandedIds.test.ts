/**
 * Branded ids: every kind of id is its own type, so handing a store's id to something that wants a
 * payment's is a compile error rather than a 404 at run time. The type assertions and the
 * `@ts-expect-error` lines are checked by `tsc` (npm run typecheck): should a brand disappear, the
 * expected errors vanish and the unused directives fail the typecheck. The functions holding them are
 * never called. The run-time checks show that the brand changes nothing on the wire.
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Schema } from "effect"
import type { ApiClient } from "../../domain/Client.ts"
import { type Id, PaymentId, StoreId } from "../../domain/Ids.ts"
import { Payment } from "../../domain/Payments.ts"
import { newId } from "../../src/platform/Ids.ts"
import type { PaymentsRepo } from "../../src/payments/Repo.ts"
import type { PaymentsService } from "../../src/payments/Service.ts"
import type { StoresService } from "../../src/stores/Service.ts"

describe("branded ids", () => {
  it("are distinct types per kind, and none is a plain string", () => {
    expectTypeOf<StoreId>().not.toEqualTypeOf<PaymentId>()
    expectTypeOf<StoreId>().not.toMatchTypeOf<PaymentId>()
    expectTypeOf<PaymentId>().not.toMatchTypeOf<StoreId>()
    expectTypeOf<string>().not.toMatchTypeOf<PaymentId>()
    // Every id is still a string wherever a string is wanted (messages, SQL, URLs).
    expectTypeOf<PaymentId>().toMatchTypeOf<string>()
    expectTypeOf(newId("pay")).toEqualTypeOf<Id<"pay">>()
    expectTypeOf(newId("str")).toEqualTypeOf<StoreId>()

    const storeId = newId("str")
    // @ts-expect-error a store id is not a payment id
    const asPayment: PaymentId = storeId
    // @ts-expect-error nor is any string
    const fromText: PaymentId = "pay_3kTMd92JxQeLp0aZ7yNcB1vW"
    void asPayment
    void fromText
  })

  it("make repo and service methods refuse an id of the wrong kind", () => {
    expectTypeOf<Parameters<PaymentsRepo["find"]>[0]>().toEqualTypeOf<PaymentId>()
    expectTypeOf<Parameters<PaymentsService["retrieve"]>[0]>().toEqualTypeOf<PaymentId>()
    expectTypeOf<Parameters<StoresService["retrieve"]>[0]>().toEqualTypeOf<StoreId>()

    const misuse = (repo: PaymentsRepo, payments: PaymentsService, stores: StoresService, storeId: StoreId) => {
      const paymentId = newId("pay")
      // @ts-expect-error the repo wants a payment id
      repo.find(storeId)
      // @ts-expect-error the service too
      payments.cancel(storeId)
      // @ts-expect-error and a store's method wants a store id
      stores.retrieve(paymentId)
      // @ts-expect-error arguments swapped: (storeId, livemode, …) takes the store first
      payments.summary(paymentId, false)
    }
    void misuse
  })

  it("make the typed client refuse an id of the wrong kind in a path", () => {
    const misuse = (client: ApiClient, storeId: StoreId) => {
      // @ts-expect-error a payment's route wants a payment id
      client.payments.retrieve({ path: { id: storeId } })
      // @ts-expect-error a store's route wants a store id, such as `payment.store_id`
      client.stores.retrieve({ path: { id: newId("pay") } })
    }
    void misuse
  })

  it("decode from the wire unchanged, leniently, and answer with the brand", () => {
    const decoded = Schema.decodeUnknownSync(PaymentId)("pay_unknown")
    expectTypeOf(decoded).toEqualTypeOf<PaymentId>()
    expect(decoded).toBe("pay_unknown")
    expect(StoreId.make("str_3kTMd92JxQeLp0aZ7yNcB1vW")).toBe("str_3kTMd92JxQeLp0aZ7yNcB1vW")
    expectTypeOf<Payment["store_id"]>().toEqualTypeOf<StoreId>()
    expectTypeOf<Payment["id"]>().toEqualTypeOf<PaymentId>()
  })
})
