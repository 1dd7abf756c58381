/**
 * Merchant fixtures through the typed client, for suites about what payments set off (webhooks, the
 * checkout, the ledger, metrics, retention): an owner with a store and a test-mode API key, and payments
 * created and moved as the mock provider moves them. A call that does not answer its 2xx fails the test
 * with its typed error.
 */
import { Effect } from "effect"
import type { CreatePayment, CreateRefund, Payment, SimulatePayment } from "../../domain/Payments.ts"
import type { Store } from "../../domain/Stores.ts"
import { type SignedUp, signUp } from "./Accounts.ts"
import { clientAs } from "./Client.ts"
import type { TestAppShape } from "./TestApp.ts"

export type SimulateStatus = typeof SimulatePayment.Type["status"]

export interface Merchant {
  readonly owner: SignedUp
  readonly storeId: Store["id"]
  /** A test-mode API key secret of the store. */
  readonly key: string
}

/** A test-mode API key of `storeId`, made with `token`; answers its secret. */
export const testKey = (app: TestAppShape, token: string, storeId: Store["id"]) =>
  Effect.flatMap(clientAs(app, token), (api) => api.apiKeys.create({ payload: { store_id: storeId, mode: "test" } })).pipe(
    Effect.map((key) => key.secret)
  )

/** A new store of `owner`, with a test-mode API key of it. */
export const storeWithKey = (app: TestAppShape, owner: SignedUp, storeName = "Test Store") =>
  Effect.gen(function*() {
    const store = yield* (yield* clientAs(app, owner.token)).stores.create({ payload: { name: storeName } })
    const key = yield* testKey(app, owner.token, store.id)
    return { owner, storeId: store.id, key } satisfies Merchant
  })

/** A newly registered owner with a store and a test-mode API key of it. */
export const newMerchant = (app: TestAppShape, storeName?: string) =>
  Effect.flatMap(Effect.promise(() => signUp(app)), (owner) => storeWithKey(app, owner, storeName))

/** Creates a payment with `key`: 12.50 USD unless `payload` says otherwise. */
export const createPayment = (
  app: TestAppShape,
  key: string,
  payload: Partial<CreatePayment> = {},
  idempotencyKey?: string
) =>
  Effect.flatMap(clientAs(app, key), (api) =>
    api.payments.create({
      payload: { amount: "12.50", currency: "USD", ...payload },
      headers: { "idempotency-key": idempotencyKey }
    }))

export const retrievePayment = (app: TestAppShape, token: string, id: Payment["id"]) =>
  Effect.flatMap(clientAs(app, token), (api) => api.payments.retrieve({ path: { id } }))

/** Moves a test payment as the mock provider would; answers the payment after the move. */
export const simulate = (app: TestAppShape, key: string, id: Payment["id"], status: SimulateStatus) =>
  Effect.flatMap(clientAs(app, key), (api) => api.payments.simulate({ path: { id }, payload: { status } }))

export const refund = (
  app: TestAppShape,
  token: string,
  id: Payment["id"],
  payload: CreateRefund = {},
  idempotencyKey?: string
) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.payments.refund({ path: { id }, payload, headers: { "idempotency-key": idempotencyKey } }))

/** Creates a payment and has it scanned and paid; answers the paid payment. */
export const paidPayment = (app: TestAppShape, key: string, payload: Partial<CreatePayment> = {}) =>
  Effect.gen(function*() {
    const created = yield* createPayment(app, key, payload)
    yield* simulate(app, key, created.id, "scanned")
    return yield* simulate(app, key, created.id, "paid")
  })
