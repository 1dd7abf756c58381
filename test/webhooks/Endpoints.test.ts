/**
 * Webhook endpoints over HTTP: create, list, update, delete, reveal and rotate; where a secret may
 * appear and how it is kept; roles and tenancy; which URLs are accepted with and without
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { addMember, createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

/** Every response body of the suite, to check where secrets appear. */
const responses: Array<string> = []
const call = makeCall(responses)
const occurrences = (needle: string) => responses.filter((text) => text.includes(needle)).length

const owner = (app: TestAppShape) =>
  Effect.promise(async () => {
    const account = await signUp(app)
    const store = await createStore(app, account.token)
    return { ...account, storeId: store.id }
  })

const HOOK = "http://127.0.0.1:9/hooks/endpoint-tests"

const createEndpoint = (app: TestAppShape, token: string, storeId: string, extra: Record<string, unknown> = {}) =>
  call(app, "POST", "/webhook-endpoints", {
    token,
    body: { store_id: storeId, url: HOOK, events: ["payment.completed"], ...extra }
  })

describe("Webhook endpoints", () => {
  layer(testAppLayer({ webhookAllowPrivateNetworks: true }), { timeout: 120_000, excludeTestServices: true })(
    "over HTTP",
    (it) => {
      it.effect("registers an endpoint and shows its signing secret once, in the Standard Webhooks format", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const created = yield* createEndpoint(app, token, storeId, { events: ["payment.completed", "payment.refunded"] })
          expect(created.status).toBe(201)
          expect(created.body).toMatchObject({
            object: "webhook_endpoint",
            store_id: storeId,
            url: HOOK,
            events: ["payment.completed", "payment.refunded"],
            enabled: true
          })
          expect(created.body.id).toMatch(/^we_[0-9A-Za-z]{24}$/)
          expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
          expect(Buffer.from(created.body.secret.slice("whsec_".length), "base64")).toHaveLength(32)
          expect(new Date(created.body.created_at).toISOString()).toBe(created.body.created_at)
          expect(created.body.updated_at).toBe(created.body.created_at)

          const disabled = yield* createEndpoint(app, token, storeId, { enabled: false, events: ["*"] })
          expect(disabled.status).toBe(201)
          expect(disabled.body).toMatchObject({ enabled: false, events: ["*"] })

          const listed = yield* call(app, "GET", `/webhook-endpoints?store_id=${storeId}`, { token })
          expect(listed.status).toBe(200)
          expect(listed.body).toMatchObject({ object: "list", has_more: false, next_cursor: null })
          expect(listed.body.data.map((e: any) => e.id)).toEqual([disabled.body.id, created.body.id])
          for (const endpoint of listed.body.data) expect(endpoint).not.toHaveProperty("secret")
          expect(occurrences(created.body.secret)).toBe(1)
        }))

      it.effect("keeps secrets sealed under the master key, never in plain text in the database", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const sql = yield* SqlClient.SqlClient
          const { token, storeId } = yield* owner(app)
          const created = (yield* createEndpoint(app, token, storeId)).body
          const rotated = (yield* call(app, "POST", `/webhook-endpoints/${created.id}/rotate-secret`, { token })).body
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
          for (let i = 0; i < 3; i++) ids.push((yield* createEndpoint(app, token, storeId)).body.id)
          const first = yield* call(app, "GET", `/webhook-endpoints?store_id=${storeId}&limit=2`, { token })
          expect(first.body.data.map((e: any) => e.id)).toEqual([ids[2], ids[1]])
          expect(first.body.has_more).toBe(true)
          const second = yield* call(
            app,
            "GET",
            `/webhook-endpoints?store_id=${storeId}&limit=2&cursor=${first.body.next_cursor}`,
            { token }
          )
          expect(second.body.data.map((e: any) => e.id)).toEqual([ids[0]])
          expect(second.body.has_more).toBe(false)
        }))

      it.effect("updates the url, events and enabled flag, only the fields sent", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const created = (yield* createEndpoint(app, token, storeId)).body
          const url = "http://127.0.0.1:9/hooks/moved"
          const moved = yield* call(app, "PATCH", `/webhook-endpoints/${created.id}`, { token, body: { url } })
          expect(moved.status).toBe(200)
          expect(moved.body).toMatchObject({ id: created.id, url, events: ["payment.completed"], enabled: true })
          expect(moved.body).not.toHaveProperty("secret")
          expect(moved.body.updated_at >= created.updated_at).toBe(true)

          const changed = yield* call(app, "PATCH", `/webhook-endpoints/${created.id}`, {
            token,
            body: { events: ["payment.failed", "payment.expired"], enabled: false }
          })
          expect(changed.body).toMatchObject({ url, events: ["payment.failed", "payment.expired"], enabled: false })

          const everything = yield* call(app, "PATCH", `/webhook-endpoints/${created.id}`, {
            token,
            body: { events: ["payment.failed", "*"], enabled: true }
          })
          expect(everything.body).toMatchObject({ events: ["*"], enabled: true })
        }))

      it.effect("deletes an endpoint; afterwards it is not found", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const created = (yield* createEndpoint(app, token, storeId)).body
          const deleted = yield* call(app, "DELETE", `/webhook-endpoints/${created.id}`, { token })
          expect(deleted.status).toBe(200)
          expect(deleted.body).toEqual({ id: created.id, object: "webhook_endpoint", deleted: true })
          for (const [method, path] of [
            ["DELETE", `/webhook-endpoints/${created.id}`],
            ["GET", `/webhook-endpoints/${created.id}/secret`],
            ["PATCH", `/webhook-endpoints/${created.id}`],
            ["GET", `/webhook-endpoints/${created.id}/deliveries`]
          ] as const) {
            const response = yield* call(app, method, path, { token, ...(method === "PATCH" ? { body: { enabled: true } } : {}) })
            expect(response.status).toBe(404)
            expect(response.body.error.code).toBe("not_found")
          }
          const listed = yield* call(app, "GET", `/webhook-endpoints?store_id=${storeId}`, { token })
          expect(listed.body.data).toEqual([])
        }))

      it.effect("reveals the active secret, and after a rotation the new one", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const created = (yield* createEndpoint(app, token, storeId)).body
          const revealed = yield* call(app, "GET", `/webhook-endpoints/${created.id}/secret`, { token })
          expect(revealed.status).toBe(200)
          expect(revealed.body).toMatchObject({ id: created.id, object: "webhook_endpoint", secret: created.secret })

          const rotated = yield* call(app, "POST", `/webhook-endpoints/${created.id}/rotate-secret`, { token })
          expect(rotated.status).toBe(201)
          expect(rotated.body.id).toBe(created.id)
          expect(rotated.body.secret).toMatch(/^whsec_/)
          expect(rotated.body.secret).not.toBe(created.secret)
          const afterwards = yield* call(app, "GET", `/webhook-endpoints/${created.id}/secret`, { token })
          expect(afterwards.body.secret).toBe(rotated.body.secret)
        }))

      it.effect("follows the roles: an analyst may read but not change; a developer may manage", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, organizationId, storeId } = yield* owner(app)
          const endpoint = (yield* createEndpoint(app, token, storeId)).body
          const analyst = yield* Effect.promise(() => addMember(app, token, organizationId, "analyst"))
          const developer = yield* Effect.promise(() => addMember(app, token, organizationId, "developer"))
          const as = { token: analyst.token }

          const listed = yield* call(app, "GET", `/webhook-endpoints?store_id=${storeId}`, as)
          expect(listed.status).toBe(200)
          expect(listed.body.data).toHaveLength(1)
          expect((yield* call(app, "GET", `/webhook-endpoints/${endpoint.id}/deliveries`, as)).status).toBe(200)
          const refused = [
            yield* createEndpoint(app, analyst.token, storeId),
            yield* call(app, "PATCH", `/webhook-endpoints/${endpoint.id}`, { ...as, body: { enabled: false } }),
            yield* call(app, "DELETE", `/webhook-endpoints/${endpoint.id}`, as),
            yield* call(app, "GET", `/webhook-endpoints/${endpoint.id}/secret`, as),
            yield* call(app, "POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`, as),
            yield* call(app, "POST", `/webhook-endpoints/${endpoint.id}/test`, as)
          ]
          for (const response of refused) {
            expect(response.status).toBe(403)
            expect(response.body.error.code).toBe("forbidden")
          }
          expect(occurrences(endpoint.secret)).toBe(1)

          expect((yield* createEndpoint(app, developer.token, storeId)).status).toBe(201)
          const revealed = yield* call(app, "GET", `/webhook-endpoints/${endpoint.id}/secret`, { token: developer.token })
          expect(revealed.body.secret).toBe(endpoint.secret)
        }))

      it.effect("treats another tenant's endpoints and stores as missing (404)", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const victim = yield* owner(app)
          const endpoint = (yield* createEndpoint(app, victim.token, victim.storeId)).body
          const intruder = yield* owner(app)
          const as = { token: intruder.token }
          for (const byStore of [
            yield* call(app, "GET", `/webhook-endpoints?store_id=${victim.storeId}`, as),
            yield* createEndpoint(app, intruder.token, victim.storeId)
          ]) {
            expect(byStore.status).toBe(404)
            expect(byStore.body.error).toMatchObject({ code: "not_found", param: "store_id" })
          }
          // Addressed by the endpoint's id: the answer must not give away which store it belongs to.
          const attempts = [
            yield* call(app, "PATCH", `/webhook-endpoints/${endpoint.id}`, { ...as, body: { url: HOOK + "/stolen" } }),
            yield* call(app, "DELETE", `/webhook-endpoints/${endpoint.id}`, as),
            yield* call(app, "GET", `/webhook-endpoints/${endpoint.id}/secret`, as),
            yield* call(app, "POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`, as),
            yield* call(app, "GET", `/webhook-endpoints/${endpoint.id}/deliveries`, as),
            yield* call(app, "POST", `/webhook-endpoints/${endpoint.id}/test`, as),
            yield* call(app, "POST", `/webhook-endpoints/deliveries/whd_doesnotexist/resend`, as)
          ]
          for (const response of attempts) {
            expect(response.status).toBe(404)
            expect(response.body.error.code).toBe("not_found")
            expect(response.body.error.message).not.toContain(victim.storeId)
          }
          const untouched = yield* call(app, "GET", `/webhook-endpoints/${endpoint.id}/secret`, { token: victim.token })
          expect(untouched.body).toMatchObject({ url: HOOK, secret: endpoint.secret })
        }))

      it.effect("manages endpoints from a user session only: an API key is refused", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
          const endpoint = (yield* createEndpoint(app, token, storeId)).body
          const key = (yield* call(app, "POST", "/api-keys", { token, body: { store_id: storeId, mode: "test" } })).body
          const asKey = { token: key.secret }
          expect((yield* createEndpoint(app, key.secret, storeId)).status).toBe(403)
          expect((yield* call(app, "GET", `/webhook-endpoints?store_id=${storeId}`, asKey)).status).toBe(403)
          expect((yield* call(app, "GET", `/webhook-endpoints/${endpoint.id}/secret`, asKey)).status).toBe(403)
          expect((yield* call(app, "POST", `/webhook-endpoints/deliveries/whd_x/resend`, asKey)).status).toBe(403)
          expect((yield* call(app, "GET", `/webhook-endpoints?store_id=${storeId}`)).status).toBe(401)
        }))

      it.effect("rejects bad input with 400 and the offending parameter", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const { token, storeId } = yield* owner(app)
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
          for (const { body, param } of cases) {
            const response = yield* createEndpoint(app, token, storeId, body)
            expect(response.status, JSON.stringify(body)).toBe(400)
            expect(response.body.error).toMatchObject({ code: "invalid_request", param })
          }
          const unknown = yield* createEndpoint(app, token, storeId, { events: ["payment.unknown"] })
          expect(unknown.body.error.message).toContain('"payment.completed"')
          const noStore = yield* call(app, "POST", "/webhook-endpoints", { token, body: { url: HOOK, events: ["*"] } })
          expect(noStore.body.error.param).toBe("store_id")
          const missingStore = yield* createEndpoint(app, token, "str_doesnotexist")
          expect(missingStore.status).toBe(404)

          const endpoint = (yield* createEndpoint(app, token, storeId)).body
          const badPatch = yield* call(app, "PATCH", `/webhook-endpoints/${endpoint.id}`, { token, body: { events: ["nope"] } })
          expect(badPatch.status).toBe(400)
          const badCursor = yield* call(app, "GET", `/webhook-endpoints/${endpoint.id}/deliveries?cursor=nope`, { token })
          expect(badCursor.status).toBe(400)
          expect(badCursor.body.error.param).toBe("cursor")
        }))

      it.effect("documents every route with its success status", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
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
            ["http://93.184.215.14/hook", "must be an https:// URL"],
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
            const response = yield* createEndpoint(app, token, storeId, { url })
            expect(response.status, url).toBe(400)
            expect(response.body.error.param).toBe("url")
            expect(response.body.error.message, url).toContain(reason)
          }

          const accepted = yield* createEndpoint(app, token, storeId, { url: "https://93.184.215.14/hook" })
          expect(accepted.status).toBe(201)
          const moved = yield* call(app, "PATCH", `/webhook-endpoints/${accepted.body.id}`, {
            token,
            body: { url: "https://192.168.0.10/hook" }
          })
          expect(moved.status).toBe(400)
          expect(moved.body.error.param).toBe("url")
        }))
    }
  )
})
