/**
 * Security posture and monitoring (platform administrators only) against PostgreSQL: each posture check
 * flips when the state it reads changes (MFA of owners and admins, API key age, webhook URLs without
 * HTTPS, live stores without approved verification, provider base URLs on loopback, link-local or private
 * addresses; the configuration's own checks in a production-like
 * configuration), and the monitoring figures move under load (payments and requests in the last minute,
 * failed webhook deliveries, the outbox and webhook backlog).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { SecurityPosture } from "../../domain/Security.ts"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { signUp } from "../support/Accounts.ts"
import { clientAs } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { createPayment, storeWithKey } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"
import { TestReceiver } from "../webhooks/Receiver.ts"

const call = makeCall()
const ADMIN_EMAIL = "posture-admin@example.test"

let adminToken: string | undefined
const admin = (app: TestAppShape) =>
  Effect.promise(async () => (adminToken ??= (await signUp(app, { email: ADMIN_EMAIL })).token))

const posture = (app: TestAppShape) =>
  Effect.flatMap(admin(app), (token) => Effect.flatMap(clientAs(app, token), (api) => api.security.posture()))

const monitoring = (app: TestAppShape) =>
  Effect.flatMap(admin(app), (token) => Effect.flatMap(clientAs(app, token), (api) => api.security.monitoring()))

const statusOf = (p: SecurityPosture, id: string) => {
  const check = p.checks.find((c) => c.id === id)
  expect(check, id).toBeDefined()
  return check!.status
}

describe("security", () => {
  layer(Layer.merge(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), TestReceiver.layer), {
    timeout: 120_000,
    excludeTestServices: true
  })("in the test configuration", (it) => {
    it.effect("is for platform administrators only", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const owner = yield* Effect.promise(() => signUp(app))
        const merchant = yield* storeWithKey(app, owner)
        for (const path of ["/admin/security/posture", "/admin/security/monitoring"]) {
          expect((yield* call(app, "GET", path)).status).toBe(401)
          const refused = yield* call(app, "GET", path, { token: owner.token })
          expect(refused.status).toBe(403)
          expect(refused.body.error.code).toBe("forbidden")
          expect((yield* call(app, "GET", path, { token: merchant.key })).status).toBe(403)
          expect((yield* call(app, "GET", path, { token: yield* admin(app) })).status).toBe(200)
        }
      }))

    it.effect("flips each state check as the state it reads changes", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const sql = yield* SqlClient.SqlClient
        const initial = yield* posture(app)
        expect(initial.object).toBe("security_posture")
        expect(initial.checks.map((c) => c.id)).toEqual([
          "master_key",
          "production_mode",
          "private_webhooks",
          "mail_delivery",
          "admin_mfa",
          "api_key_age",
          "webhook_https",
          "live_store_kyc",
          "integration_addresses"
        ])
        expect(statusOf(initial, "master_key")).toBe("pass")
        expect(statusOf(initial, "production_mode")).toBe("warn")
        expect(statusOf(initial, "private_webhooks")).toBe("fail")
        // No SMTP_URL outside production: mail goes to the log, which is fine for development only.
        expect(statusOf(initial, "mail_delivery")).toBe("warn")
        // Owners without MFA (every signed-up user owns an organization).
        expect(statusOf(initial, "admin_mfa")).toBe("fail")

        // MFA: everyone else through SQL, the administrator through the API; then the check passes.
        const adminApi = yield* clientAs(app, yield* admin(app))
        const adminUser = yield* adminApi.session.me()
        yield* sql`UPDATE users SET mfa_enabled = true WHERE id <> ${adminUser.user.id}`
        expect(statusOf(yield* posture(app), "admin_mfa")).toBe("fail")
        const setup = yield* adminApi.session.mfaSetup()
        yield* adminApi.session.mfaEnable({ payload: { code: yield* currentTotp(setup.secret) } })
        const mfa = yield* posture(app)
        expect(statusOf(mfa, "admin_mfa")).toBe("pass")
        expect(mfa.score).toBeGreaterThan(initial.score)
        // A new owner without MFA turns it back.
        const owner = yield* Effect.promise(() => signUp(app))
        const afterSignUp = yield* posture(app)
        expect(statusOf(afterSignUp, "admin_mfa")).toBe("fail")
        expect(afterSignUp.checks.find((c) => c.id === "admin_mfa")!.detail).toMatch(/^1 /)
        yield* sql`UPDATE users SET mfa_enabled = true`

        // API key age: a key older than 90 days warns until it is revoked.
        const merchant = yield* storeWithKey(app, owner)
        expect(statusOf(yield* posture(app), "api_key_age")).toBe("pass")
        const api = yield* clientAs(app, owner.token)
        yield* sql`UPDATE api_keys SET created_at = now() - interval '91 days' WHERE store_id = ${merchant.storeId}`
        expect(statusOf(yield* posture(app), "api_key_age")).toBe("warn")
        yield* sql`UPDATE api_keys SET revoked_at = now() WHERE store_id = ${merchant.storeId}`
        expect(statusOf(yield* posture(app), "api_key_age")).toBe("pass")

        // Webhook URLs without HTTPS warn until the endpoint goes.
        expect(statusOf(yield* posture(app), "webhook_https")).toBe("pass")
        const endpoint = yield* api.webhooks.create({ payload: { store_id: merchant.storeId, url: receiver.route().url, events: ["*"] } })
        expect(statusOf(yield* posture(app), "webhook_https")).toBe("warn")
        yield* api.webhooks.delete({ path: { id: endpoint.id } })
        expect(statusOf(yield* posture(app), "webhook_https")).toBe("pass")

        // A live store without approved verification fails until its organization is approved.
        expect(statusOf(yield* posture(app), "live_store_kyc")).toBe("pass")
        yield* sql`UPDATE stores SET live_mode = true WHERE id = ${merchant.storeId}`
        expect(statusOf(yield* posture(app), "live_store_kyc")).toBe("fail")
        yield* sql`UPDATE stores SET live_mode = false WHERE id = ${merchant.storeId}`
        const final = yield* posture(app)
        expect(statusOf(final, "live_store_kyc")).toBe("pass")
        // Scored: pass 1, warn ½, fail 0 over nine checks (production and mail warn, private networks fail here).
        expect(final.score).toBe(Math.round((100 * 7) / 9))
      }))

    it.effect("warns when a provider's base URL, stored or from the environment, is not a public address", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const api = yield* clientAs(app, yield* admin(app))
        const checkOf = (p: SecurityPosture) => p.checks.find((c) => c.id === "integration_addresses")!
        expect(checkOf(yield* posture(app)).status).toBe("pass")
        const set = (key: string, value: string) => api.settings.set({ path: { key }, payload: { value } })

        for (const [value, reason] of [
          ["http://127.0.0.1:9/v1", "loopback"],
          ["http://localhost:8080", "loopback"],
          ["http://[::1]:8080", "loopback"],
          ["http://169.254.169.254/latest", "link-local"],
          ["http://[fe80::1]/", "link-local"],
          ["https://10.1.2.3", "private"],
          ["https://192.168.0.10:8443", "private"],
          ["https://[fd00::5]/", "private"]
        ] as const) {
          yield* set("ai_base_url", value)
          const check = checkOf(yield* posture(app))
          expect({ value, status: check.status }).toEqual({ value, status: "warn" })
          expect(check.detail).toContain("ai_base_url")
          expect(check.detail).toContain(reason)
        }
        yield* set("ai_base_url", "https://api.example.com/v1")
        expect(checkOf(yield* posture(app)).status).toBe("pass")
        yield* api.settings.clear({ path: { key: "ai_base_url" } })

        // An address from the environment is checked too (it is not validated on the way in).
        process.env["SIGNAL_API_BASE_URL"] = "http://172.16.0.9:8080"
        const fromEnvironment = yield* posture(app).pipe(Effect.ensuring(Effect.sync(() => delete process.env["SIGNAL_API_BASE_URL"])))
        expect(checkOf(fromEnvironment)).toMatchObject({ status: "warn", detail: "signal_api_base_url (172.16.0.9:8080): private" })
        expect(checkOf(yield* posture(app)).status).toBe("pass")
      }))

    it.effect("moves the monitoring figures under load", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const owner = yield* Effect.promise(() => signUp(app))
        const merchant = yield* storeWithKey(app, owner)
        const before = yield* monitoring(app)
        expect(before).toMatchObject({ object: "monitoring", database: { ok: true } })
        expect(before.database.latency_ms).toBeGreaterThanOrEqual(0)
        expect(before.process.uptime_seconds).toBeGreaterThanOrEqual(0)
        expect(before.process.rss_bytes).toBeGreaterThan(10_000_000)
        expect(before.cluster.runners).toBeGreaterThanOrEqual(1)

        // 40 payments (and as many requests), and three webhook endpoints that answer 500 to every event.
        const failing = [0, 1, 2].map(() => receiver.route(() => ({ status: 500 })))
        const api = yield* clientAs(app, owner.token)
        for (const route of failing) {
          yield* api.webhooks.create({ payload: { store_id: merchant.storeId, url: route.url, events: ["payment.scanned"] } })
        }
        const created = yield* Effect.all(Array.from({ length: 40 }, (_, i) => createPayment(app, merchant.key, { reference_id: `load-${i}` })), {
          concurrency: 8
        })
        yield* Effect.flatMap(clientAs(app, merchant.key), (keyApi) =>
          keyApi.payments.simulate({ path: { id: created[0]!.id }, payload: { status: "scanned" } }))
        for (const route of failing) yield* receiver.waitFor(route.path, 1)
        yield* Effect.sleep("300 millis")
        const after = yield* monitoring(app)
        expect(after.throughput.payments_last_minute - before.throughput.payments_last_minute).toBe(40)
        // The process's own count of the last 60 s: it holds these 41 requests, while what other suites in
        // this test process asked before may have left the window since `before` (a difference could be less).
        expect(after.throughput.requests_last_minute).toBeGreaterThanOrEqual(41)
        expect(after.webhooks.failed_last_hour - before.webhooks.failed_last_hour).toBe(3)
        // The failed deliveries wait for their retry (seconds to hours away on the production schedule).
        expect(after.webhooks.pending).toBeGreaterThanOrEqual(3)
        expect(after.outbox.pending).toBeGreaterThanOrEqual(0)
        expect(after.outbox.oldest_age_seconds).toBeGreaterThanOrEqual(0)
      }))
  })

  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL], production: true, webhookAllowPrivateNetworks: false }), {
    timeout: 120_000,
    excludeTestServices: true
  })("in a production-like configuration", (it) => {
    it.effect("passes the configuration's own checks", () =>
      Effect.gen(function*() {
        adminToken = undefined
        const app = yield* TestApp
        const p = yield* posture(app)
        expect(statusOf(p, "production_mode")).toBe("pass")
        expect(statusOf(p, "private_webhooks")).toBe("pass")
        expect(statusOf(p, "master_key")).toBe("pass")
        // In production, mail that cannot leave is a failure: nobody can verify an address or reset a password.
        expect(statusOf(p, "mail_delivery")).toBe("fail")
      }))
  })
})
