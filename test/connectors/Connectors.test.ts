/**
 * Connectors over HTTP against PostgreSQL and a local receiver: the marketplace, install / update /
 * remove / test, deliveries through the webhook dispatcher (signed, verified here with the
 * `standardwebhooks` package; failures retried on the shortened schedule and recorded), secrets sealed
 * at rest and masked in answers, the URL guard, tenancy, roles and bad input.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import type { Connector } from "../../domain/Connectors.ts"
import { SecretBox } from "../../src/platform/Crypto.ts"
import { WebhookDeliverySettings } from "../../src/webhooks/Dispatcher.ts"
import { addMember, signUp } from "../support/Accounts.ts"
import { allPages, clientAs, expectFailure, listParams } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { type Merchant, paidPayment, storeWithKey } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"
import { type ReceivedRequest, TestReceiver } from "../webhooks/Receiver.ts"

const call = makeCall()

const RETRY_MS = 300

/** The production timing scaled down: three retries 300 ms apart, a 1.5 s answer timeout, a 50 ms poll. */
const fastDelivery = WebhookDeliverySettings.layer({
  retrySchedule: [Duration.millis(RETRY_MS), Duration.millis(RETRY_MS), Duration.millis(RETRY_MS)],
  jitter: 0,
  requestTimeout: Duration.millis(1500),
  pollInterval: Duration.millis(50)
})

const suiteLayer = (allowPrivateNetworks: boolean) =>
  Layer.merge(
    testAppLayer({ webhookAllowPrivateNetworks: allowPrivateNetworks }).pipe(Layer.provide(fastDelivery)),
    TestReceiver.layer
  )

const merchant = (app: TestAppShape) =>
  Effect.flatMap(Effect.promise(() => signUp(app)), (owner) => storeWithKey(app, owner))

const install = (app: TestAppShape, m: Merchant, body: unknown) =>
  call(app, "POST", `/dashboard/stores/${m.storeId}/connectors`, { token: m.owner.token, body })

const verify = (secret: string, request: ReceivedRequest) =>
  new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as {
    id: string
    type: string
    data: { object: Record<string, unknown> }
  }

describe("connectors", () => {
  layer(suiteLayer(true), { timeout: 120_000, excludeTestServices: true })("with private networks allowed (tests)", (it) => {
    it.effect("lists the marketplace: each item's key, category and config fields", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const m = yield* merchant(app)
        const market = yield* Effect.flatMap(clientAs(app, m.owner.token), (api) => api.connectors.marketplace({ urlParams: listParams() }))
        expect(market.data.map((i) => i.key)).toEqual(["webhook", "google_sheets", "slack_webhook", "shopify_orders", "accounting_export"])
        const shopify = market.data.find((i) => i.key === "shopify_orders")!
        expect(shopify.config_fields.find((f) => f.key === "access_token")).toMatchObject({ secret: true, required: true })
        const api = yield* clientAs(app, m.owner.token)
        const paged = yield* allPages(2, (urlParams) => api.connectors.marketplace({ urlParams }))
        expect(paged.map((i) => i.key)).toEqual(market.data.map((i) => i.key))
        expect((yield* call(app, "GET", "/dashboard/marketplace?cursor=nope", { token: m.owner.token })).status).toBe(400)
        expect((yield* call(app, "GET", "/dashboard/marketplace")).status).toBe(401)
        expect((yield* call(app, "GET", "/dashboard/marketplace", { token: m.key })).status).toBe(403)
      }))

    it.effect("delivers a paid payment to a connector, signed with its secret and verifiable with standardwebhooks", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const m = yield* merchant(app)
        const route = receiver.route()
        const installed = yield* install(app, m, {
          type: "shopify_orders",
          config: { url: route.url, shop_domain: "shop.example.test", access_token: "shpat_0123456789abcdef" },
          events: ["payment.completed"]
        })
        expect(installed.status).toBe(201)
        const connector = installed.body as Connector
        expect(connector).toMatchObject({
          object: "connector",
          store_id: m.storeId,
          type: "shopify_orders",
          name: "Store order sync",
          events: ["payment.completed"],
          enabled: true
        })
        expect(connector.id).toMatch(/^con_/)
        expect(connector.config.access_token).not.toContain("shpat_0123")
        expect(connector.config.access_token).toMatch(/cdef$/)
        expect(connector.config.shop_domain).toBe("shop.example.test")
        expect(connector.signing_secret).toMatch(/^whsec_/)

        // Sealed at rest: the stored config holds no plain secret.
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ config_sealed: string }>`SELECT config_sealed FROM connectors WHERE id = ${connector.id}`
        expect(stored!.config_sealed).not.toContain("shpat_")
        // Listed without the signing secret; not listed among the store's webhook endpoints.
        const listed = (yield* call(app, "GET", `/dashboard/stores/${m.storeId}/connectors`, { token: m.owner.token })).body
        expect(listed.data.map((c: Connector) => c.id)).toEqual([connector.id])
        expect(listed.data[0].signing_secret).toBeUndefined()
        expect(listed.data[0].config.access_token).toBe(connector.config.access_token)
        const endpoints = (yield* call(app, "GET", `/webhook-endpoints?store_id=${m.storeId}`, { token: m.owner.token })).body
        expect(endpoints.data ?? []).toHaveLength(0)

        const payment = yield* paidPayment(app, m.key, { reference_id: "order-77" })
        const [request] = yield* receiver.waitFor(route.path, 1)
        const event = verify(connector.signing_secret!, request!)
        expect(event.type).toBe("payment.completed")
        expect(event.data.object).toMatchObject({ id: payment.id, reference_id: "order-77", status: "paid" })
        expect(() => new Webhook("whsec_" + Buffer.from("another secret of enough length").toString("base64")).verify(
          request!.body,
          request!.headers as Record<string, string>
        )).toThrow()
      }))

    it.effect("test answers the delivery record; a failing URL is recorded and retried on the schedule", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const m = yield* merchant(app)
        const good = receiver.route()
        const connector = (yield* install(app, m, { type: "slack_webhook", name: "Ops chat", config: { url: good.url, channel: "#sales" } })).body as Connector
        expect(connector.events).toEqual(["*"])
        const tested = yield* call(app, "POST", `/dashboard/connectors/${connector.id}/test`, { token: m.owner.token })
        expect(tested.status).toBe(201)
        expect(tested.body).toMatchObject({
          object: "connector_delivery",
          connector_id: connector.id,
          event_type: "test.event",
          status: "delivered",
          status_code: 200,
          error: null
        })
        expect(tested.body.id).toMatch(/^whd_/)
        const [request] = yield* receiver.waitFor(good.path, 1)
        expect(verify(connector.signing_secret!, request!)).toMatchObject({ type: "test.event", id: tested.body.event_id })

        const bad = receiver.route(() => ({ status: 500 }))
        const updated = yield* call(app, "PUT", `/dashboard/connectors/${connector.id}`, {
          token: m.owner.token,
          body: { config: { url: bad.url } }
        })
        expect(updated.status).toBe(200)
        expect(updated.body.config).toEqual({ url: bad.url, channel: "#sales" })
        const failed = yield* call(app, "POST", `/dashboard/connectors/${connector.id}/test`, { token: m.owner.token })
        expect(failed.body).toMatchObject({ status: "failed", status_code: 500 })
        // The first attempt and three retries, 300 ms apart, each signed with the same event id.
        const attempts = yield* receiver.waitFor(bad.path, 4)
        expect(new Set(attempts.map((a) => a.headers["webhook-id"]))).toEqual(new Set([failed.body.event_id]))
        const sql = yield* SqlClient.SqlClient
        const recordsOf = sql<{ attempt: number; status_code: number }>`
          SELECT d.attempt, d.status_code FROM webhook_deliveries d JOIN connectors c ON c.endpoint_id = d.endpoint_id
          WHERE c.id = ${connector.id} AND d.event_id = ${failed.body.event_id} ORDER BY d.attempt`
        let records = yield* recordsOf
        for (let i = 0; i < 50 && records.length < 4; i++) {
          yield* Effect.sleep("100 millis")
          records = yield* recordsOf
        }
        expect(records.map((r) => [r.attempt, r.status_code])).toEqual([[1, 500], [2, 500], [3, 500], [4, 500]])
      }))

    it.effect("updates events, name and enabled; a disabled connector's test is 409; remove deletes it", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const m = yield* merchant(app)
        const route = receiver.route()
        const connector = (yield* install(app, m, {
          type: "accounting_export",
          config: { url: route.url, api_key: "acct-secret-key-1234" }
        })).body as Connector
        const api = yield* clientAs(app, m.owner.token)
        const updated = yield* api.connectors.update({
          path: { connectorId: connector.id },
          payload: { name: "Books", events: ["payment.refunded"], enabled: false, config: { api_key: "acct-new-key-9876" } }
        })
        expect(updated).toMatchObject({ name: "Books", events: ["payment.refunded"], enabled: false })
        expect(updated.config.api_key).toMatch(/9876$/)
        expect(updated.config.api_key).not.toContain("acct-new")
        // Sending back the config as read (the secret masked) keeps the secret.
        const resent = yield* api.connectors.update({ path: { connectorId: connector.id }, payload: { config: updated.config } })
        expect(resent.config.api_key).toBe(updated.config.api_key)
        const sql = yield* SqlClient.SqlClient
        const [sealed] = yield* sql<{ config_sealed: string }>`SELECT config_sealed FROM connectors WHERE id = ${connector.id}`
        const opened = yield* Effect.flatMap(SecretBox, (box) => box.open(sealed!.config_sealed)).pipe(Effect.provide(SecretBox.Default))
        expect(JSON.parse(opened)).toMatchObject({ api_key: "acct-new-key-9876" })
        const disabled = yield* call(app, "POST", `/dashboard/connectors/${connector.id}/test`, { token: m.owner.token })
        expect(disabled.status).toBe(409)
        expect(disabled.body.error.code).toBe("invalid_state")
        // Disabled: a paid payment is not delivered.
        yield* paidPayment(app, m.key)
        yield* Effect.sleep("500 millis")
        expect(receiver.requests(route.path)).toHaveLength(0)

        // Paged newest first.
        const more = [] as Array<string>
        for (let i = 0; i < 3; i++) more.push(((yield* install(app, m, { type: "webhook", config: { url: route.url } })).body as Connector).id)
        const paged = yield* allPages(2, (urlParams) => api.connectors.list({ path: { storeId: m.storeId }, urlParams }))
        expect(paged.map((c) => c.id)).toEqual([...more.reverse(), connector.id])
        for (const id of more) yield* api.connectors.remove({ path: { connectorId: id as Connector["id"] } })

        const removed = yield* api.connectors.remove({ path: { connectorId: connector.id } })
        expect(removed).toEqual({ id: connector.id, object: "connector", deleted: true })
        expect((yield* api.connectors.list({ path: { storeId: m.storeId }, urlParams: listParams() })).data).toHaveLength(0)
        yield* expectFailure(api.connectors.remove({ path: { connectorId: connector.id } }), "NotFound")
        expect((yield* call(app, "POST", `/dashboard/connectors/${connector.id}/test`, { token: m.owner.token })).status).toBe(404)
      }))

    it.effect("answers bad input, other tenants and roles with the error shape", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const m = yield* merchant(app)
        const url = receiver.route().url
        const expectError = (answer: { status: number; body: any }, status: number, code: string, param?: string) => {
          expect(answer.status, JSON.stringify(answer.body)).toBe(status)
          expect(answer.body.error.code).toBe(code)
          if (param !== undefined) expect(answer.body.error.param).toBe(param)
        }
        expectError(yield* install(app, m, { type: "carrier_pigeon", config: { url } }), 400, "invalid_request", "type")
        expectError(yield* install(app, m, { type: "webhook", config: { url, colour: "red" } }), 400, "invalid_request", "config.colour")
        expectError(yield* install(app, m, { type: "shopify_orders", config: { url, access_token: "t" } }), 400, "invalid_request", "config.shop_domain")
        expectError(yield* install(app, m, { type: "webhook", config: {} }), 400, "invalid_request", "config.url")
        expectError(yield* install(app, m, { type: "webhook", config: { url: "ftp://example.test/x" } }), 400, "invalid_request", "config.url")
        expectError(yield* install(app, m, { type: "webhook", config: { url }, events: ["payment.teleported"] }), 400, "invalid_request")
        expectError(yield* install(app, m, { type: "webhook", config: { url }, surprise: 1 }), 400, "invalid_request")
        expectError(yield* install(app, m, { config: { url } }), 400, "invalid_request")
        const malformed = yield* call(app, "POST", `/dashboard/stores/${m.storeId}/connectors`, { token: m.owner.token, raw: "{" })
        expectError(malformed, 400, "invalid_request")

        const connector = (yield* install(app, m, { type: "webhook", config: { url } })).body as Connector
        expectError(
          yield* call(app, "PUT", `/dashboard/connectors/${connector.id}`, { token: m.owner.token, body: { config: { url: "not a url" } } }),
          400,
          "invalid_request",
          "config.url"
        )
        const stranger = yield* merchant(app)
        expectError(yield* install(app, { ...m, owner: stranger.owner }, { type: "webhook", config: { url } }), 404, "not_found")
        expectError(yield* call(app, "PUT", `/dashboard/connectors/${connector.id}`, { token: stranger.owner.token, body: { name: "x" } }), 404, "not_found")
        expectError(yield* call(app, "DELETE", `/dashboard/connectors/${connector.id}`, { token: stranger.owner.token }), 404, "not_found")
        expectError(yield* call(app, "POST", `/dashboard/connectors/${connector.id}/test`, { token: stranger.owner.token }), 404, "not_found")
        expectError(yield* call(app, "GET", `/dashboard/stores/${m.storeId}/connectors`, { token: stranger.owner.token }), 404, "not_found")
        expectError(yield* call(app, "GET", `/dashboard/stores/${m.storeId}/connectors`, { token: m.key }), 403, "forbidden")
        expectError(yield* call(app, "DELETE", "/dashboard/connectors/con_000000000000000000000000", { token: m.owner.token }), 404, "not_found")

        const analyst = yield* Effect.promise(() => addMember(app, m.owner.token, m.owner.organizationId, "analyst"))
        expect((yield* call(app, "GET", `/dashboard/stores/${m.storeId}/connectors`, { token: analyst.token })).status).toBe(200)
        expectError(yield* call(app, "POST", `/dashboard/stores/${m.storeId}/connectors`, { token: analyst.token, body: { type: "webhook", config: { url } } }), 403, "forbidden")
        expectError(yield* call(app, "DELETE", `/dashboard/connectors/${connector.id}`, { token: analyst.token }), 403, "forbidden")
      }))
  })

  layer(suiteLayer(false), { timeout: 120_000, excludeTestServices: true })("with private networks refused (production default)", (it) => {
    it.effect("refuses a connector URL on a private network or loopback (400)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const m = yield* merchant(app)
        for (const url of ["http://127.0.0.1:9/hook", "http://10.1.2.3/hook", "http://192.168.0.10/hook", "http://[::1]/hook", "http://localhost/hook"]) {
          const refused = yield* install(app, m, { type: "webhook", config: { url } })
          expect(refused.status, url).toBe(400)
          expect(refused.body.error).toMatchObject({ code: "invalid_request", param: "config.url" })
        }
        const ok = yield* install(app, m, { type: "webhook", config: { url: "https://93.184.215.14/hook" } })
        expect(ok.status).toBe(201)
        const moved = yield* call(app, "PUT", `/dashboard/connectors/${ok.body.id}`, {
          token: m.owner.token,
          body: { config: { url: "http://169.254.169.254/latest" } }
        })
        expect(moved.status).toBe(400)
      }))
  })
})
