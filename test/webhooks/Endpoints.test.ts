/**
 * Webhook endpoints over HTTP: create, list, update, delete, reveal and rotate; where a secret may
 * appear and how it is kept; roles and tenancy; which URLs are accepted with and without
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { StoreId, WebhookDeliveryId } from "../../domain/Ids.ts"
import { DEFAULT_LIST_LIMIT, type ListParams } from "../../domain/Lists.ts"
import type { CreateWebhookEndpoint } from "../../domain/Webhooks.ts"
import { addMember, createStore, signUp } from "../support/Accounts.ts"
import { type AnyCallError, expectFailure, makeClientAs, wireJson } from "../support/Client.ts"
import { type CallResult, makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

/** Every response body of the suite, to check where secrets appear. */
const responses: Array<string> = []
const clientAs = makeClientAs(responses)
// Raw calls only for input the typed client would refuse to send (outside the request schemas).
const call = makeCall(responses)
const occurrences = (needle: string) => responses.filter((text) => text.includes(needle)).length

const owner = (app: TestAppShape) =>
  Effect.promise(async () => {
    const account = await signUp(app)
    const store = await createStore(app, account.token)
    return { ...account, storeId: store.id }
  })

const HOOK = "http://127.0.0.1:9/hooks/endpoint-tests"

const createEndpoint = (
  app: TestAppShape,
  token: string,
  storeId: StoreId,
  extra: Partial<typeof CreateWebhookEndpoint.Type> = {}
) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    api.webhooks.create({ payload: { store_id: storeId, url: HOOK, events: ["payment.completed"], ...extra } }))

/** A list's query; the typed client always sends `limit`. */
const page = (urlParams: Partial<ListParams> = {}): ListParams => ({ limit: DEFAULT_LIST_LIMIT, ...urlParams })

const listEndpoints = (app: TestAppShape, token: string, storeId: StoreId, urlParams: Partial<ListParams> = {}) =>
  Effect.flatMap(clientAs(app, token), (api) => api.webhooks.list({ urlParams: { store_id: storeId, ...page(urlParams) } }))

const expectRawError = (response: CallResult, status: number, param: string) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status)
  expect(response.body.error).toMatchObject({ code: "invalid_request", param })
}

describe("Webhook endpoints", () => {
  layer(testAppLayer({ webhookAllowPrivateNetworks: true }), { timeout: 120_000, excludeTestServices: true })(
    "over HTTP",
    (it) => {
      it.effect("registers an endpoint and shows its signing secret once, in the Standard Webhooks format", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const created = yield* createEndpoint(app, token, storeId, { events: ["payment.completed", "payment.refunded"] })
          expect(created).toMatchObject({
            object: "webhook_endpoint",
            store_id: storeId,
            url: HOOK,
            events: ["payment.completed", "payment.refunded"],
            enabled: true
          })
          expect(created.id).toMatch(/^we_[0-9A-Za-z]{24}$/)
          expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
          expect(Buffer.from(created.secret.slice("whsec_".length), "base64")).toHaveLength(32)
          expect(new Date(created.created_at).toISOString()).toBe(created.created_at)
          expect(created.updated_at).toBe(created.created_at)

          const disabled = yield* createEndpoint(app, token, storeId, { enabled: false, events: ["*"] })
          expect(disabled).toMatchObject({ enabled: false, events: ["*"] })

          const api = yield* clientAs(app, token)
          const [listed, response] = yield* api.webhooks.list({ urlParams: { store_id: storeId, ...page() }, withResponse: true })
          expect(listed).toMatchObject({ object: "list", has_more: false, next_cursor: null })
          expect(listed.data.map((e) => e.id)).toEqual([disabled.id, created.id])
          // On the wire, not in the decoded list (whose class has no secret whatever was sent).
          const wire = (yield* wireJson(response)) as { readonly data: ReadonlyArray<object> }
          expect(wire.data).toHaveLength(2)
          for (const endpoint of wire.data) expect(endpoint).not.toHaveProperty("secret")
          expect(occurrences(created.secret)).toBe(1)
        }))

      it.effect("keeps secrets sealed under the master key, never in plain text in the database", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const sql = yield* SqlClient.SqlClient
          const { token, storeId } = yield* owner(app)
          const created = yield* createEndpoint(app, token, storeId)
          const rotated = yield* (yield* clientAs(app, token)).webhooks.rotateSecret({ path: { id: created.id } })
          const rows = yield* sql<{ secret_sealed: string }>`
            SELECT secret_sealed FROM webhook_endpoint_secrets WHERE endpoint_id = ${created.id}`
          expect(rows).toHaveLength(2)
          const dump = JSON.stringify(yield* sql`SELECT * FROM webhook_endpoint_secrets`) +
            JSON.stringify(yield* sql`SELECT * FROM webhook_endpoints`)
          for (const secret of [created.secret, rotated.secret]) {
            expect(dump).not.toContain(secret)
            expect(dump).not.toContain(secret.slice("whsec_".length))
          }
          for (const row of rows) expect(row.secret_sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
        }))

      it.effect("lists endpoints newest first in pages", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const ids: Array<string> = []
          for (let i = 0; i < 3; i++) ids.push((yield* createEndpoint(app, token, storeId)).id)
          const first = yield* listEndpoints(app, token, storeId, { limit: 2 })
          expect(first.data.map((e) => e.id)).toEqual([ids[2], ids[1]])
          expect(first.has_more).toBe(true)
          expect(first.next_cursor).not.toBeNull()
          const second = yield* listEndpoints(app, token, storeId, { limit: 2, cursor: first.next_cursor ?? "" })
          expect(second.data.map((e) => e.id)).toEqual([ids[0]])
          expect(second.has_more).toBe(false)
        }))

      it.effect("updates the url, events and enabled flag, only the fields sent", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const created = yield* createEndpoint(app, token, storeId)
          const api = yield* clientAs(app, token)
          const path = { id: created.id }
          const url = "http://127.0.0.1:9/hooks/moved"
          const [moved, movedResponse] = yield* api.webhooks.update({ path, payload: { url }, withResponse: true })
          expect(moved).toMatchObject({ id: created.id, url, events: ["payment.completed"], enabled: true })
          expect(yield* wireJson(movedResponse)).not.toHaveProperty("secret")
          expect(moved.updated_at >= created.updated_at).toBe(true)

          const changed = yield* api.webhooks.update({ path, payload: { events: ["payment.failed", "payment.expired"], enabled: false } })
          expect(changed).toMatchObject({ url, events: ["payment.failed", "payment.expired"], enabled: false })

          const everything = yield* api.webhooks.update({ path, payload: { events: ["payment.failed", "*"], enabled: true } })
          expect(everything).toMatchObject({ events: ["*"], enabled: true })
        }))

      it.effect("deletes an endpoint; afterwards it is not found", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const created = yield* createEndpoint(app, token, storeId)
          const api = yield* clientAs(app, token)
          const path = { id: created.id }
          expect(yield* api.webhooks.delete({ path })).toEqual({ id: created.id, object: "webhook_endpoint", deleted: true })
          const afterwards: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
            ["DELETE", api.webhooks.delete({ path })],
            ["GET secret", api.webhooks.revealSecret({ path })],
            ["PATCH", api.webhooks.update({ path, payload: { enabled: true } })],
            ["GET deliveries", api.webhooks.deliveries({ path, urlParams: page() })]
          ]
          for (const [route, request] of afterwards) yield* expectFailure(request, "NotFound", undefined, route)
          expect((yield* listEndpoints(app, token, storeId)).data).toEqual([])
        }))

      it.effect("reveals the active secret, and after a rotation the new one", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const created = yield* createEndpoint(app, token, storeId)
          const api = yield* clientAs(app, token)
          const path = { id: created.id }
          const revealed = yield* api.webhooks.revealSecret({ path })
          expect(revealed).toMatchObject({ id: created.id, object: "webhook_endpoint", secret: created.secret })

          const rotated = yield* api.webhooks.rotateSecret({ path })
          expect(rotated.id).toBe(created.id)
          expect(rotated.secret).toMatch(/^whsec_/)
          expect(rotated.secret).not.toBe(created.secret)
          const afterwards = yield* api.webhooks.revealSecret({ path })
          expect(afterwards.secret).toBe(rotated.secret)
        }))

      it.effect("follows the roles: an analyst may read but not change; a developer may manage", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, organizationId, storeId } = yield* owner(app)
          const endpoint = yield* createEndpoint(app, token, storeId)
          const analyst = yield* Effect.promise(() => addMember(app, token, organizationId, "analyst"))
          const developer = yield* Effect.promise(() => addMember(app, token, organizationId, "developer"))
          const api = yield* clientAs(app, analyst.token)
          const path = { id: endpoint.id }

          const listed = yield* listEndpoints(app, analyst.token, storeId)
          expect(listed.data).toHaveLength(1)
          yield* api.webhooks.deliveries({ path, urlParams: page() })
          const refused: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
            ["create", createEndpoint(app, analyst.token, storeId)],
            ["update", api.webhooks.update({ path, payload: { enabled: false } })],
            ["delete", api.webhooks.delete({ path })],
            ["revealSecret", api.webhooks.revealSecret({ path })],
            ["rotateSecret", api.webhooks.rotateSecret({ path })],
            ["sendTest", api.webhooks.sendTest({ path })]
          ]
          for (const [route, request] of refused) yield* expectFailure(request, "Forbidden", undefined, route)
          expect(occurrences(endpoint.secret)).toBe(1)

          yield* createEndpoint(app, developer.token, storeId)
          const revealed = yield* (yield* clientAs(app, developer.token)).webhooks.revealSecret({ path })
          expect(revealed.secret).toBe(endpoint.secret)
        }))

      it.effect("treats another tenant's endpoints and stores as missing (404)", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const victim = yield* owner(app)
          const endpoint = yield* createEndpoint(app, victim.token, victim.storeId)
          const intruder = yield* owner(app)
          const api = yield* clientAs(app, intruder.token)
          const path = { id: endpoint.id }
          yield* expectFailure(listEndpoints(app, intruder.token, victim.storeId), "NotFound", "store_id")
          yield* expectFailure(createEndpoint(app, intruder.token, victim.storeId), "NotFound", "store_id")
          // Addressed by the endpoint's id: the answer must not give away which store it belongs to.
          const attempts: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
            ["update", api.webhooks.update({ path, payload: { url: HOOK + "/stolen" } })],
            ["delete", api.webhooks.delete({ path })],
            ["revealSecret", api.webhooks.revealSecret({ path })],
            ["rotateSecret", api.webhooks.rotateSecret({ path })],
            ["deliveries", api.webhooks.deliveries({ path, urlParams: page() })],
            ["sendTest", api.webhooks.sendTest({ path })],
            ["resend", api.webhooks.resend({ path: { deliveryId: WebhookDeliveryId.make("whd_doesnotexist") } })]
          ]
          for (const [route, request] of attempts) {
            const error = yield* expectFailure(request, "NotFound", undefined, route)
            expect(error.message).not.toContain(victim.storeId)
          }
          const untouched = yield* (yield* clientAs(app, victim.token)).webhooks.revealSecret({ path })
          expect(untouched).toMatchObject({ url: HOOK, secret: endpoint.secret })
        }))

      it.effect("manages endpoints from a user session only: an API key is refused", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const endpoint = yield* createEndpoint(app, token, storeId)
          const key = yield* (yield* clientAs(app, token)).apiKeys.create({ payload: { store_id: storeId, mode: "test" } })
          const api = yield* clientAs(app, key.secret)
          yield* expectFailure(createEndpoint(app, key.secret, storeId), "Forbidden")
          yield* expectFailure(listEndpoints(app, key.secret, storeId), "Forbidden")
          yield* expectFailure(api.webhooks.revealSecret({ path: { id: endpoint.id } }), "Forbidden")
          yield* expectFailure(api.webhooks.resend({ path: { deliveryId: WebhookDeliveryId.make("whd_x") } }), "Forbidden")
          yield* expectFailure(listEndpoints(app, "", storeId), "Unauthorized")
        }))

      it.effect("rejects bad input with 400 and the offending parameter", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          // Raw: every one of these is outside the request schema, which the typed client would not send.
          const cases: Array<{ body: Record<string, unknown>; param: string }> = [
            { body: { events: ["payment.unknown"] }, param: "events.0" },
            { body: { events: [] }, param: "events" },
            { body: { events: ["payment.completed", "payment.completed"] }, param: "events" },
            { body: { events: "payment.completed" }, param: "events" },
            { body: { url: "ftp://127.0.0.1/hook" }, param: "url" },
            { body: { url: "not a url" }, param: "url" },
            { body: { url: "https://user:secret@127.0.0.1/hook" }, param: "url" },
            { body: { url: "https://" + "a".repeat(2050) + ".example" }, param: "url" },
            { body: { enabled: "yes" }, param: "enabled" }
          ]
          const createRaw = (body: Record<string, unknown>) =>
            call(app, "POST", "/webhook-endpoints", {
              token,
              body: { store_id: storeId, url: HOOK, events: ["payment.completed"], ...body }
            })
          for (const { body, param } of cases) expectRawError(yield* createRaw(body), 400, param)
          const unknown = yield* createRaw({ events: ["payment.unknown"] })
          expect(unknown.body.error.message).toContain('"payment.completed"')
          const noStore = yield* call(app, "POST", "/webhook-endpoints", { token, body: { url: HOOK, events: ["*"] } })
          expectRawError(noStore, 400, "store_id")
          yield* expectFailure(createEndpoint(app, token, StoreId.make("str_doesnotexist")), "NotFound")

          const endpoint = yield* createEndpoint(app, token, storeId)
          // Raw: an event type outside the request schema.
          const badPatch = yield* call(app, "PATCH", `/webhook-endpoints/${endpoint.id}`, { token, body: { events: ["nope"] } })
          expectRawError(badPatch, 400, "events.0")
          yield* expectFailure(
            Effect.flatMap(clientAs(app, token), (api) =>
              api.webhooks.deliveries({ path: { id: endpoint.id }, urlParams: page({ cursor: "nope" }) })),
            "InvalidRequest",
            "cursor"
          )
        }))

      it.effect("documents every route with its success status", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          // The OpenAPI document is not an operation of the API: read raw.
          const doc = (yield* call(app, "GET", "/openapi.json")).body
          const expected: Array<[string, string, string]> = [
            ["/webhook-endpoints", "post", "201"],
            ["/webhook-endpoints", "get", "200"],
            ["/webhook-endpoints/{id}", "patch", "200"],
            ["/webhook-endpoints/{id}", "delete", "200"],
            ["/webhook-endpoints/{id}/secret", "get", "200"],
            ["/webhook-endpoints/{id}/rotate-secret", "post", "201"],
            ["/webhook-endpoints/{id}/deliveries", "get", "200"],
            ["/webhook-endpoints/{id}/test", "post", "201"],
            ["/webhook-endpoints/deliveries/{deliveryId}/resend", "post", "201"]
          ]
          for (const [path, method, status] of expected) {
            expect(doc.paths[path]?.[method]?.responses?.[status], `${method} ${path}`).toBeDefined()
          }
        }))
    }
  )

  layer(testAppLayer({ webhookAllowPrivateNetworks: false }), { timeout: 120_000, excludeTestServices: true })(
    "without WEBHOOK_ALLOW_PRIVATE_NETWORKS",
    (it) => {
      it.effect("accepts only https URLs on public addresses", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const refused: Array<[string, string]> = [
            ["http://93.184.215.14/hook", "must be an https:// URL; a service started with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true accepts http:// and local or private addresses"],
            ["https://127.0.0.1/hook", "loopback"],
            ["https://127.1/hook", "loopback"],
            ["https://localhost/hook", "loopback"],
            ["https://10.1.2.3/hook", "private"],
            ["https://172.20.0.1/hook", "private"],
            ["https://192.168.1.1/hook", "private"],
            ["https://169.254.169.254/latest/meta-data", "link-local"],
            ["https://0.0.0.0/hook", "unspecified"],
            ["https://[::1]/hook", "loopback"],
            ["https://[::ffff:10.0.0.1]/hook", "private"],
            ["https://[fd12:3456::1]/hook", "private"],
            ["https://[fe80::1]/hook", "link-local"],
            ["https://[::]/hook", "unspecified"]
          ]
          for (const [url, reason] of refused) {
            const error = yield* expectFailure(createEndpoint(app, token, storeId, { url }), "InvalidRequest", "url", url)
            expect(error.message, url).toContain(reason)
          }

          const accepted = yield* createEndpoint(app, token, storeId, { url: "https://93.184.215.14/hook" })
          yield* expectFailure(
            Effect.flatMap(clientAs(app, token), (api) =>
              api.webhooks.update({ path: { id: accepted.id }, payload: { url: "https://192.168.0.10/hook" } })),
            "InvalidRequest",
            "url"
          )
        }))
    }
  )
})
