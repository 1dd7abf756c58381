/**
 * Webhook delivery end to end: the service's own events (a paid payment, test events, resends) reach a
 * local receiver signed by the Standard Webhooks scheme and verifiable with the `standardwebhooks`
 * package; failures are retried on the (here shortened) schedule, in order per endpoint; 410 disables;
 * timeouts and redirects fail an attempt; a slow endpoint does not hold back another; rotation signs
 * with both secrets for the overlap, then with the new one only.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Either, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { WebhookDeliveryId } from "../../domain/Ids.ts"
import type { ListParams } from "../../domain/Lists.ts"
import type { Store } from "../../domain/Stores.ts"
import type { WebhookEndpoint, WebhookEventType } from "../../domain/Webhooks.ts"
import { WebhookDeliverySettings } from "../../src/webhooks/Dispatcher.ts"
import { signUp } from "../support/Accounts.ts"
import { clientAs, expectFailure, listParams } from "../support/Client.ts"
import { paidPayment, storeWithKey } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"
import { type Behaviour, type ReceivedRequest, TestReceiver } from "./Receiver.ts"

const RETRY_MS = 300
const TIMEOUT_MS = 1500

/** The production timing scaled down: three retries 300 ms apart, a 1.5 s answer timeout, a 50 ms poll. */
const fastDelivery = WebhookDeliverySettings.layer({
  retrySchedule: [Duration.millis(RETRY_MS), Duration.millis(RETRY_MS), Duration.millis(RETRY_MS)],
  jitter: 0,
  requestTimeout: Duration.millis(TIMEOUT_MS),
  pollInterval: Duration.millis(50)
})

const suiteLayer = (allowPrivateNetworks: boolean) =>
  Layer.merge(
    testAppLayer({ webhookAllowPrivateNetworks: allowPrivateNetworks }).pipe(Layer.provide(fastDelivery)),
    TestReceiver.layer
  )

/** An owner with a store (and a test-mode API key of it). */
const merchant = (app: TestAppShape) =>
  Effect.flatMap(Effect.promise(() => signUp(app)), (owner) =>
    Effect.map(storeWithKey(app, owner), ({ key, storeId }) => ({ ...owner, storeId, key })))

type EventSelector = WebhookEventType | "*"

const register = (
  app: TestAppShape,
  token: string,
  storeId: Store["id"],
  url: string,
  events: ReadonlyArray<EventSelector> = ["*"]
) => Effect.flatMap(clientAs(app, token), (api) => api.webhooks.create({ payload: { store_id: storeId, url, events } }))

/** A merchant with one endpoint on the receiver answering as `behaviour` says. */
const endpointOn = (behaviour?: Behaviour, events: ReadonlyArray<EventSelector> = ["*"]) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const receiver = yield* TestReceiver
    const owner = yield* merchant(app)
    const route = receiver.route(behaviour)
    const endpoint = yield* register(app, owner.token, owner.storeId, route.url, events)
    return { app, receiver, owner, route, endpoint, token: owner.token }
  })

type EndpointId = WebhookEndpoint["id"]

const sendTest = (app: TestAppShape, token: string, endpointId: EndpointId) =>
  Effect.flatMap(clientAs(app, token), (api) => api.webhooks.sendTest({ path: { id: endpointId } }))

const deliveries = (app: TestAppShape, token: string, endpointId: EndpointId, urlParams: Partial<ListParams> = {}) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.webhooks.deliveries({ path: { id: endpointId }, urlParams: listParams(urlParams) }))

const resend = (app: TestAppShape, token: string, deliveryId: WebhookDeliveryId) =>
  Effect.flatMap(clientAs(app, token), (api) => api.webhooks.resend({ path: { deliveryId } }))

/** Waits until the endpoint has `count` delivery records (newest first). */
const waitForDeliveries = (app: TestAppShape, token: string, endpointId: EndpointId, count: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 15_000
    while (true) {
      const page = yield* deliveries(app, token, endpointId, { limit: 100 })
      if (page.data.length >= count) return page.data
      if (Date.now() > deadline) return yield* Effect.dieMessage(`expected ${count} deliveries, got ${page.data.length}`)
      yield* Effect.sleep("50 millis")
    }
  })

const headersOf = (request: ReceivedRequest) => request.headers as Record<string, string>

const verify = (secret: string, request: ReceivedRequest) => new Webhook(secret).verify(request.body, headersOf(request))

const signatureCount = (request: ReceivedRequest) => headersOf(request)["webhook-signature"]!.split(" ").length

describe("Webhook delivery", () => {
  layer(suiteLayer(true), { timeout: 120_000, excludeTestServices: true })("to a local receiver", (it) => {
    it.effect("delivers a paid payment's event, signed and verifiable, with the payment's reference_id", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token, owner } = yield* endpointOn(undefined, ["payment.completed"])
        const payment = yield* paidPayment(app, owner.key, { amount: "12.50", reference_id: "order-42" })

        const [request] = yield* receiver.waitFor(route.path, 1)
        const event = verify(endpoint.secret, request!) as any
        expect(event).toMatchObject({
          object: "event",
          type: "payment.completed",
          livemode: false,
          data: { object: { id: payment.id, object: "payment", status: "paid", reference_id: "order-42", amount: "12.50" } }
        })
        expect(event.id).toMatch(/^evt_/)
        const headers = headersOf(request!)
        expect(headers["webhook-id"]).toBe(event.id)
        expect(headers["content-type"]).toBe("application/json")
        expect(Math.abs(Number(headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30)
        expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)

        const [record] = yield* waitForDeliveries(app, token, endpoint.id, 1)
        expect(record).toMatchObject({
          object: "webhook_delivery",
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: "payment.completed",
          attempt: 1,
          status_code: 200,
          error: null
        })
        expect(record!.id).toMatch(/^whd_/)
        expect(record!.duration_ms).toBeGreaterThanOrEqual(0)
        // Only the subscribed type: the scan before the payment was not delivered.
        yield* Effect.sleep("300 millis")
        expect(receiver.requests(route.path)).toHaveLength(1)
      }))

    it.effect("retries a failing receiver: 2 failures then success are 3 attempts with the same webhook-id", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token } = yield* endpointOn((n) => ({ status: n <= 2 ? 500 : 200 }))
        const event = yield* sendTest(app, token, endpoint.id)
        const requests = yield* receiver.waitFor(route.path, 3)
        expect(requests.map((r) => headersOf(r)["webhook-id"])).toEqual([event.id, event.id, event.id])
        expect(new Set(requests.map((r) => r.body)).size).toBe(1)
        for (const request of requests) expect(verify(endpoint.secret, request)).toMatchObject({ id: event.id })
        // The waits between attempts follow the schedule.
        expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(RETRY_MS - 50)

        const records = yield* waitForDeliveries(app, token, endpoint.id, 3)
        expect(records.map((d) => [d.attempt, d.status_code])).toEqual([[3, 200], [2, 500], [1, 500]])
        expect(records[1]!.error).toContain("500")
        expect(records[0]!.error).toBeNull()
        yield* Effect.sleep(`${RETRY_MS * 2} millis`)
        expect(receiver.requests(route.path)).toHaveLength(3)
      }))

    it.effect("gives up after the last retry of the schedule", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token } = yield* endpointOn(() => ({ status: 503 }))
        yield* sendTest(app, token, endpoint.id)
        yield* receiver.waitFor(route.path, 4)
        yield* Effect.sleep(`${RETRY_MS * 3} millis`)
        expect(receiver.requests(route.path)).toHaveLength(4)
        const records = yield* waitForDeliveries(app, token, endpoint.id, 4)
        expect(records.map((d) => d.attempt)).toEqual([4, 3, 2, 1])
        // Given up, the endpoint stays enabled and takes the next event.
        yield* sendTest(app, token, endpoint.id)
        yield* receiver.waitFor(route.path, 5)
      }))

    it.effect("delivers an endpoint's events in order: a later event waits behind one being retried", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token } = yield* endpointOn((n) => ({ status: n === 1 ? 500 : 200 }))
        const first = yield* sendTest(app, token, endpoint.id)
        const second = yield* sendTest(app, token, endpoint.id)
        const requests = yield* receiver.waitFor(route.path, 3)
        expect(requests.map((r) => headersOf(r)["webhook-id"])).toEqual([first.id, first.id, second.id])
      }))

    it.effect("disables an endpoint that answers 410 Gone and sends it nothing more", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token, owner } = yield* endpointOn(() => ({ status: 410 }))
        yield* sendTest(app, token, endpoint.id)
        // Queued behind the first, or refused if the endpoint is already disabled: never delivered either way.
        const second = yield* Effect.either(sendTest(app, token, endpoint.id))
        if (Either.isLeft(second)) yield* expectFailure(Effect.fail(second.left), "InvalidState")
        yield* receiver.waitFor(route.path, 1)
        const records = yield* waitForDeliveries(app, token, endpoint.id, 1)
        expect(records[0]).toMatchObject({ attempt: 1, status_code: 410 })

        const listed = yield* (yield* clientAs(app, token)).webhooks.list({ urlParams: listParams({ store_id: owner.storeId }) })
        expect(listed.data[0]).toMatchObject({ id: endpoint.id, enabled: false })
        yield* Effect.sleep(`${RETRY_MS * 3} millis`)
        expect(receiver.requests(route.path)).toHaveLength(1)
        expect((yield* deliveries(app, token, endpoint.id)).data).toHaveLength(1)

        yield* expectFailure(sendTest(app, token, endpoint.id), "InvalidState")
        yield* expectFailure(resend(app, token, records[0]!.id), "InvalidState")
      }))

    it.effect("records a receiver that does not answer in time as a failed attempt with its duration", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token } = yield* endpointOn((n) =>
          n === 1 ? { delayMs: TIMEOUT_MS * 3 } : {}
        )
        yield* sendTest(app, token, endpoint.id)
        const records = yield* waitForDeliveries(app, token, endpoint.id, 2)
        const slow = records[1]!
        expect(slow).toMatchObject({ attempt: 1, status_code: null })
        expect(slow.error).toContain("no answer within")
        expect(slow.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
        expect(slow.duration_ms).toBeLessThan(TIMEOUT_MS * 2)
        expect(records[0]).toMatchObject({ attempt: 2, status_code: 200, error: null })
        expect(receiver.requests(route.path)).toHaveLength(2)
      }))

    it.effect("does not let a slow endpoint hold back another endpoint's delivery", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const owner = yield* merchant(app)
        const slowRoute = receiver.route(() => ({ delayMs: TIMEOUT_MS * 3 }))
        const fastRoute = receiver.route()
        const slow = yield* register(app, owner.token, owner.storeId, slowRoute.url, ["payment.completed", "payment.scanned"])
        const fast = yield* register(app, owner.token, owner.storeId, fastRoute.url, ["payment.completed", "payment.scanned"])
        yield* paidPayment(app, owner.key, { amount: "1.00" })

        // Both events reach the healthy endpoint while the slow one is still on its first, unanswered attempt.
        const fastRequests = yield* receiver.waitFor(fastRoute.path, 2, TIMEOUT_MS)
        expect(fastRequests.map((r) => (JSON.parse(r.body) as any).type)).toEqual(["payment.scanned", "payment.completed"])
        expect(receiver.requests(slowRoute.path)).toHaveLength(1)
        expect(receiver.inFlight(slowRoute.path)).toBe(1)
        expect((yield* deliveries(app, owner.token, slow.id)).data).toHaveLength(0)
        expect((yield* waitForDeliveries(app, owner.token, fast.id, 2)).map((d) => d.status_code)).toEqual([200, 200])
      }))

    it.effect("does not follow redirects: a 3xx is a failed attempt and its target is never called", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const target = receiver.route()
        const { route, endpoint, token } = yield* endpointOn(() => ({ status: 302, headers: { location: target.url } }))
        yield* sendTest(app, token, endpoint.id)
        yield* receiver.waitFor(route.path, 2)
        const records = yield* waitForDeliveries(app, token, endpoint.id, 1)
        expect(records.at(-1)).toMatchObject({ attempt: 1, status_code: 302 })
        expect(records.at(-1)!.error).toContain("redirects are not followed")
        expect(receiver.requests(target.path)).toHaveLength(0)
      }))

    it.effect("signs with both secrets for the overlap after a rotation, then with the new one only", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token } = yield* endpointOn()
        const sql = yield* SqlClient.SqlClient
        const rotated = yield* (yield* clientAs(app, token)).webhooks.rotateSecret({ path: { id: endpoint.id } })
        const oldSecret = endpoint.secret
        const newSecret = rotated.secret

        yield* sendTest(app, token, endpoint.id)
        const [during] = yield* receiver.waitFor(route.path, 1)
        expect(signatureCount(during!)).toBe(2)
        expect(verify(newSecret, during!)).toMatchObject({ type: "test.event" })
        expect(verify(oldSecret, during!)).toMatchObject({ type: "test.event" })

        // The old secret's 24 hours are over.
        yield* sql`
          UPDATE webhook_endpoint_secrets SET expires_at = now() - interval '1 second'
          WHERE endpoint_id = ${endpoint.id} AND expires_at IS NOT NULL`
        yield* sendTest(app, token, endpoint.id)
        const after = (yield* receiver.waitFor(route.path, 2))[1]!
        expect(signatureCount(after)).toBe(1)
        expect(verify(newSecret, after)).toMatchObject({ type: "test.event" })
        expect(() => verify(oldSecret, after)).toThrow(/signature/i)
      }))

    it.effect("sends a test event to that endpoint only", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token, owner } = yield* endpointOn(undefined, ["payment.completed"])
        const other = receiver.route()
        yield* register(app, token, owner.storeId, other.url, ["*"])
        const event = yield* sendTest(app, token, endpoint.id)
        expect(event).toMatchObject({ object: "event", type: "test.event", livemode: false })
        expect(event.id).toMatch(/^evt_/)
        const [request] = yield* receiver.waitFor(route.path, 1)
        expect(verify(endpoint.secret, request!)).toEqual({ ...event })
        yield* Effect.sleep("300 millis")
        expect(receiver.requests(other.path)).toHaveLength(0)
      }))

    it.effect("resends a delivery's event as a new attempt with the same webhook-id and body", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token } = yield* endpointOn()
        const event = yield* sendTest(app, token, endpoint.id)
        yield* receiver.waitFor(route.path, 1)
        const [first] = yield* waitForDeliveries(app, token, endpoint.id, 1)

        const resent = yield* resend(app, token, first!.id)
        expect(resent).toMatchObject({ id: event.id, type: "test.event" })
        const requests = yield* receiver.waitFor(route.path, 2)
        expect(headersOf(requests[1]!)["webhook-id"]).toBe(event.id)
        expect(requests[1]!.body).toBe(requests[0]!.body)
        expect(verify(endpoint.secret, requests[1]!)).toMatchObject({ id: event.id })

        const records = yield* waitForDeliveries(app, token, endpoint.id, 2)
        expect(records.map((d) => [d.event_id, d.attempt])).toEqual([[event.id, 2], [event.id, 1]])
        expect(records[0]!.id).not.toBe(first!.id)

        const missing = yield* expectFailure(resend(app, token, WebhookDeliveryId.make("whd_doesnotexist")), "NotFound")
        // Another tenant's delivery answers exactly as a missing one: naming neither its endpoint nor its store.
        const stranger = yield* Effect.promise(() => signUp(app))
        const foreign = yield* expectFailure(resend(app, stranger.token, first!.id), "NotFound")
        expect({ message: foreign.message, param: foreign.param })
          .toEqual({ message: missing.message.replace("whd_doesnotexist", first!.id), param: missing.param })
      }))

    it.effect("lists deliveries newest first, in pages", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token } = yield* endpointOn()
        for (let i = 0; i < 3; i++) yield* sendTest(app, token, endpoint.id)
        yield* receiver.waitFor(route.path, 3)
        const all = yield* waitForDeliveries(app, token, endpoint.id, 3)
        const sentOrder = receiver.requests(route.path).map((r) => headersOf(r)["webhook-id"])
        expect(all.map((d) => d.event_id)).toEqual([...sentOrder].reverse())

        const first = yield* deliveries(app, token, endpoint.id, { limit: 2 })
        expect(first.data.map((d) => d.id)).toEqual(all.slice(0, 2).map((d) => d.id))
        expect(first.has_more).toBe(true)
        expect(first.next_cursor).not.toBeNull()
        const second = yield* deliveries(app, token, endpoint.id, { limit: 2, cursor: first.next_cursor! })
        expect(second.data.map((d) => d.id)).toEqual([all[2]!.id])
        expect(second.has_more).toBe(false)
        expect(second.next_cursor).toBeNull()
      }))

    it.effect("stops delivering to an endpoint once it is disabled, and drops what waited for it", () =>
      Effect.gen(function*() {
        const { app, receiver, route, endpoint, token } = yield* endpointOn(() => ({ status: 500 }))
        yield* sendTest(app, token, endpoint.id)
        yield* receiver.waitFor(route.path, 1)
        const disabled = yield* (yield* clientAs(app, token)).webhooks.update({ path: { id: endpoint.id }, payload: { enabled: false } })
        expect(disabled.enabled).toBe(false)
        const seen = receiver.requests(route.path).length
        yield* Effect.sleep(`${RETRY_MS * 4} millis`)
        // An attempt already under way when it was disabled may still land; nothing after it.
        expect(receiver.requests(route.path).length).toBeLessThanOrEqual(seen + 1)
      }))
  })

  layer(suiteLayer(false), { timeout: 120_000, excludeTestServices: true })("without private networks", (it) => {
    it.effect("checks the address again at delivery time and sends nothing to a refused one", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const sql = yield* SqlClient.SqlClient
        const owner = yield* merchant(app)
        const endpoint = yield* register(app, owner.token, owner.storeId, "https://93.184.215.14/hook")
        // As if the host's DNS now answered with a loopback address (rebinding).
        const route = receiver.route()
        const rebound = route.url.replace("http://", "https://")
        yield* sql`UPDATE webhook_endpoints SET url = ${rebound} WHERE id = ${endpoint.id}`
        yield* sendTest(app, owner.token, endpoint.id)
        const [record] = yield* waitForDeliveries(app, owner.token, endpoint.id, 1)
        expect(record).toMatchObject({ attempt: 1, status_code: null })
        expect(record!.error).toBe("not sent: url is a loopback address; webhooks go to the public internet only; a service started with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true accepts http:// and local or private addresses")
        expect(receiver.requests(route.path)).toHaveLength(0)
      }))
  })
})
