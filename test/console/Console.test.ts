/**
 * The console RPC through its typed client (domain/ConsoleClient.ts) against the running service:
 * payments listed, read and refunded under the same rules as REST, a store's summary, the live payment
 * feed, and who is refused.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import { PaymentChanged, type PaymentFeedFrame } from "../../domain/Console.ts"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { PaymentId, StoreId } from "../../domain/Ids.ts"
import type { CreatePayment } from "../../domain/Payments.ts"
import { addMember, createStore, signUp } from "../support/Accounts.ts"
import { clientAs, listParams } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

// Raw only for a method the REST contract does not have on /rpc.
const call = makeCall()

const consoleFor = (app: TestAppShape, sessionToken: string) =>
  makeConsoleClient({ baseUrl: app.baseUrl, sessionToken }).pipe(Effect.provide(FetchHttpClient.layer))

/** A test API key of the store (made over REST). */
const testKey = (app: TestAppShape, token: string, storeId: StoreId) =>
  Effect.flatMap(clientAs(app, token), (api) => api.apiKeys.create({ payload: { store_id: storeId, mode: "test" } }))
    .pipe(Effect.map((key) => key.secret))

/** An owner with a store and a test API key (made over REST). */
const merchant = (app: TestAppShape) =>
  Effect.gen(function*() {
    const owner = yield* Effect.promise(() => signUp(app))
    const store = yield* Effect.promise(() => createStore(app, owner.token, "Console Cafe"))
    return { owner, storeId: store.id, key: yield* testKey(app, owner.token, store.id) }
  })

/** A payment over REST, 12.50 USD unless `payload` says otherwise; the typed client checks the 201. */
const createPayment = (app: TestAppShape, key: string, payload: Partial<CreatePayment> = {}) =>
  Effect.flatMap(clientAs(app, key), (api) => api.payments.create({ payload: { amount: "12.50", currency: "USD", ...payload }, headers: {} }))

const simulate = (app: TestAppShape, key: string, id: PaymentId, status: "scanned" | "paid") =>
  Effect.flatMap(clientAs(app, key), (api) => api.payments.simulate({ path: { id }, payload: { status } }))

const failureTag = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (result) => Either.isLeft(result) ? result.left._tag : "succeeded")

describe("console RPC", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("typed client", (it) => {
    it.scoped("lists, reads and refunds a store's payments under the REST rules", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        const first = yield* createPayment(app, key, { reference_id: "order-1" })
        const second = yield* createPayment(app, key, { reference_id: "order-2", amount: "30.00" })
        const client = yield* consoleFor(app, owner.token)

        const page = yield* client.ListPayments({ store_id: storeId, livemode: false })
        expect(page.object).toBe("list")
        expect(page.data.map((payment) => payment.id)).toEqual([second.id, first.id])
        expect(page.has_more).toBe(false)
        // The same page as REST.
        const rest = yield* (yield* clientAs(app, key)).payments.list({ urlParams: listParams() })
        expect(rest.data.map((payment) => payment.id)).toEqual([second.id, first.id])
        // Live mode is another set of payments; test mode is the default.
        expect((yield* client.ListPayments({ store_id: storeId, livemode: true })).data).toEqual([])
        expect((yield* client.ListPayments({ store_id: storeId })).data).toHaveLength(2)
        // Pages and filters as REST has them.
        const head = yield* client.ListPayments({ store_id: storeId, limit: 1 })
        expect(head.data.map((payment) => payment.id)).toEqual([second.id])
        expect(head.has_more).toBe(true)
        const rest2 = yield* client.ListPayments({ store_id: storeId, limit: 1, cursor: head.next_cursor! })
        expect(rest2.data.map((payment) => payment.id)).toEqual([first.id])
        expect(yield* failureTag(client.ListPayments({ store_id: storeId, cursor: "not-a-cursor" }))).toBe("InvalidRequest")

        const payment = yield* client.GetPayment({ id: first.id })
        expect(payment).toMatchObject({ id: first.id, object: "payment", status: "pending", amount: "12.50", reference_id: "order-1" })
        expect(yield* failureTag(client.GetPayment({ id: PaymentId.make("pay_doesnotexist0000000000000") }))).toBe("NotFound")

        // A pending payment cannot be refunded.
        expect(yield* failureTag(client.RefundPayment({ id: first.id }))).toBe("InvalidState")
        yield* simulate(app, key, first.id, "scanned")
        yield* simulate(app, key, first.id, "paid")

        // An Analyst reads but may not refund (payment.refund is not an Analyst permission).
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const analystClient = yield* consoleFor(app, analyst.token)
        expect((yield* analystClient.ListPayments({ store_id: storeId })).data).toHaveLength(2)
        expect(yield* failureTag(analystClient.RefundPayment({ id: first.id, amount: "1.00" }))).toBe("Forbidden")

        const refund = yield* client.RefundPayment({ id: first.id, amount: "2.50", reason: "spilled", idempotency_key: "refund-1" })
        expect(refund).toMatchObject({ object: "refund", payment_id: first.id, amount: "2.50", currency: "USD", reason: "spilled" })
        // The same key answers the same refund, decoded back from the remembered answer.
        const replayed = yield* client.RefundPayment({ id: first.id, amount: "2.50", reason: "spilled", idempotency_key: "refund-1" })
        expect(replayed.id).toBe(refund.id)
        expect(yield* failureTag(client.RefundPayment({ id: first.id, amount: "3.00", idempotency_key: "refund-1" })))
          .toBe("IdempotencyConflict")
        // More than is left is refused as REST refuses it; with a key, the refusal is remembered and replayed.
        expect(yield* failureTag(client.RefundPayment({ id: first.id, amount: "20.00" }))).toBe("InvalidRequest")
        for (let attempt = 0; attempt < 2; attempt++) {
          expect(yield* failureTag(client.RefundPayment({ id: first.id, amount: "20.00", idempotency_key: "refund-2" })))
            .toBe("InvalidRequest")
        }
        // REST and RPC share keys: the same request over REST answers the same refund.
        const [overRest, overRestResponse] = yield* (yield* clientAs(app, owner.token)).payments.refund({
          path: { id: first.id },
          headers: { "idempotency-key": "refund-1" },
          payload: { amount: "2.50", reason: "spilled" },
          withResponse: true
        })
        expect(overRestResponse.headers["idempotent-replayed"]).toBe("true")
        expect(overRest.id).toBe(refund.id)

        const asKey = yield* clientAs(app, key)
        const afterRefund = yield* asKey.payments.retrieve({ path: { id: first.id } })
        expect(afterRefund).toMatchObject({ status: "partially_refunded", amount_refunded: "2.50" })
        const refunds = yield* asKey.payments.refunds({ path: { id: first.id }, urlParams: listParams() })
        expect(refunds.data.map((one) => one.id)).toEqual([refund.id])

        const summary = yield* client.StoreSummary({ store_id: storeId })
        expect(summary).toMatchObject({
          store_id: storeId,
          livemode: false,
          payments: {
            total: 2,
            by_status: { pending: 1, scanned: 0, paid: 0, partially_refunded: 1, refunded: 0, expired: 0, failed: 0, cancelled: 0 }
          },
          volume: { USD: { paid: "12.50", refunded: "2.50" } }
        })
        expect(summary.volume.KHR).toBeUndefined()
        expect(summary.last_payment_at).toBe(afterRefund.paid_at)
        const live = yield* client.StoreSummary({ store_id: storeId, livemode: true })
        expect(live).toMatchObject({ payments: { total: 0 }, volume: {}, last_payment_at: null })
      }))

    it.scoped("streams the live changes of a store's payments", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        // Another store of the same owner, whose changes the feed must not carry.
        const otherStore = yield* Effect.promise(() => createStore(app, owner.token, "Elsewhere"))
        const otherKey = yield* testKey(app, owner.token, otherStore.id)
        const elsewhere = yield* createPayment(app, otherKey)
        const payment = yield* createPayment(app, key, { amount: "7.25" })
        const client = yield* consoleFor(app, owner.token)

        const seen: Array<PaymentFeedFrame> = []
        const frames = yield* client.PaymentFeed({ store_id: storeId }).pipe(
          Stream.tap((frame) =>
            Effect.sync(() => seen.push(frame)).pipe(
              Effect.zipRight(
                frame._tag === "PaymentFeedSynced"
                  ? Effect.gen(function*() {
                    yield* simulate(app, otherKey, elsewhere.id, "scanned")
                    yield* simulate(app, key, payment.id, "scanned")
                    yield* simulate(app, key, payment.id, "paid")
                  })
                  : Effect.void
              )
            )
          ),
          Stream.filter((frame): frame is PaymentChanged => frame._tag === "PaymentChanged"),
          // The creation's own notice is sent once its transaction committed, and on a busy machine it may
          // reach the feed after it subscribed: a frame of what the page read already (version 1).
          Stream.filter((frame) => !(frame.id === payment.id && frame.version === 1)),
          Stream.takeUntil((frame) => frame.status === "paid"),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.timeout("30 seconds")
        )
        expect(seen[0]).toMatchObject({ _tag: "PaymentFeedSynced", reason: "subscribed" })
        expect(frames).toEqual([
          new PaymentChanged({
            id: payment.id,
            status: "scanned",
            amount: "7.25",
            currency: "USD",
            amount_refunded: "0.00",
            version: 2
          }),
          new PaymentChanged({ id: payment.id, status: "paid", amount: "7.25", currency: "USD", amount_refunded: "0.00", version: 3 })
        ])

        // A refund over RPC shows on an open feed too; an Analyst may follow it.
        const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
        const analystClient = yield* consoleFor(app, analyst.token)
        const second = yield* createPayment(app, key, { amount: "5.00" })
        const refunded = yield* analystClient.PaymentFeed({ store_id: storeId }).pipe(
          Stream.tap((frame) =>
            frame._tag === "PaymentFeedSynced"
              ? Effect.gen(function*() {
                yield* simulate(app, key, second.id, "scanned")
                yield* simulate(app, key, second.id, "paid")
                yield* client.RefundPayment({ id: second.id }).pipe(Effect.orDie)
              })
              : Effect.void
          ),
          // The payment's own creation notice may reach a feed opened right after it: only its changes count.
          Stream.filter((frame): frame is PaymentChanged =>
            frame._tag === "PaymentChanged" && frame.id === second.id && frame.status !== "pending"
          ),
          Stream.takeUntil((frame) => frame.status === "refunded"),
          Stream.runCollect,
          Effect.map((chunk) => Chunk.toReadonlyArray(chunk).map((frame) => [frame.status, frame.amount_refunded])),
          Effect.timeout("30 seconds")
        )
        expect(refunded).toEqual([["scanned", "0.00"], ["paid", "0.00"], ["refunded", "5.00"]])

      }))

    it.scoped("refuses other tenants, missing and bad tokens, and API keys", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key, owner, storeId } = yield* merchant(app)
        const payment = yield* createPayment(app, key)

        // Another tenant's store and payment do not exist for them.
        const stranger = yield* Effect.promise(() => signUp(app))
        const strangerClient = yield* consoleFor(app, stranger.token)
        expect(yield* failureTag(strangerClient.ListPayments({ store_id: storeId }))).toBe("NotFound")
        expect(yield* failureTag(strangerClient.GetPayment({ id: payment.id }))).toBe("NotFound")
        expect(yield* failureTag(strangerClient.RefundPayment({ id: payment.id }))).toBe("NotFound")
        expect(yield* failureTag(strangerClient.StoreSummary({ store_id: storeId }))).toBe("NotFound")
        expect(yield* failureTag(Stream.runHead(strangerClient.PaymentFeed({ store_id: storeId })))).toBe("NotFound")
        expect(yield* failureTag(strangerClient.ListPayments({ store_id: StoreId.make("sto_doesnotexist") }))).toBe("NotFound")

        // Unknown tokens and API keys are not console credentials.
        for (const token of ["sess_unknown", "garbage", key]) {
          const client = yield* consoleFor(app, token)
          expect(yield* failureTag(client.ListPayments({ store_id: storeId }))).toBe("Unauthorized")
          expect(yield* failureTag(client.GetPayment({ id: payment.id }))).toBe("Unauthorized")
          expect(yield* failureTag(Stream.runHead(client.PaymentFeed({ store_id: storeId })))).toBe("Unauthorized")
        }
        const asKey = yield* consoleFor(app, key)
        const refused = yield* Effect.flip(asKey.ListPayments({ store_id: storeId }))
        expect(refused.message).toContain("session token")

        // On the wire: POST /rpc, one JSON message a line; without a token the answer is Unauthorized.
        const request = { _tag: "Request", id: "1", tag: "GetPayment", payload: { id: payment.id }, headers: [] }
        const response = yield* Effect.promise(() =>
          app.fetch("/rpc", {
            method: "POST",
            headers: { "content-type": "application/ndjson", "x-request-id": "console-test-1" },
            body: JSON.stringify(request) + "\n"
          })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("application/ndjson")
        expect(response.headers.get("x-request-id")).toBe("console-test-1")
        const lines = (yield* Effect.promise(() => response.text())).trim().split("\n").map((line) => JSON.parse(line))
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatchObject({
          _tag: "Exit",
          requestId: "1",
          exit: { _tag: "Failure", cause: { _tag: "Fail", error: { _tag: "Unauthorized" } } }
        })
        // The owner's own token works on the wire too.
        const authorized = yield* Effect.promise(() =>
          app.fetch("/rpc", {
            method: "POST",
            headers: { "content-type": "application/ndjson", authorization: `Bearer ${owner.token}` },
            body: JSON.stringify(request) + "\n"
          }).then((r) => r.text())
        )
        expect(JSON.parse(authorized.trim())).toMatchObject({
          _tag: "Exit",
          exit: { _tag: "Success", value: { id: payment.id, object: "payment" } }
        })

        // Other methods on /rpc are told to POST.
        const get = yield* call(app, "GET", "/rpc")
        expect(get.status).toBe(405)
        expect(get.headers.get("allow")).toBe("POST")
      }))
  })
})
