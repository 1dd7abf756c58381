/**
 * Secrets leave the service once — in the answer that creates them — and never again: not in a list, a
 * retrieval, an error message, nor a log line. One suite drives every kind of secret through the
 * service and greps everything it said.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { signUp, TEST_PASSWORD } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const logs: Array<string> = []
const responses: Array<string> = []
const call = makeCall(responses)

describe("secrets", () => {
  layer(testAppLayer({ platformAdminEmails: ["admin@example.test"] }, { logs }), {
    timeout: 120_000,
    excludeTestServices: true
  })("stay secret", (it) => {
    it.effect("never appear in lists, retrievals, errors or logs", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const admin = yield* Effect.promise(() => signUp(app, { email: "admin@example.test" }))

        // Secrets that are shown once, in their creating answer; those answers are not graded.
        const mfa = yield* call(app, "POST", "/auth/mfa/setup", { token: admin.token })
        const store = yield* call(app, "POST", "/stores", { token: admin.token, body: { name: "Secret Shop" } })
        const key = yield* call(app, "POST", "/api-keys", {
          token: admin.token,
          body: { store_id: store.body.id, mode: "test", name: "backend" }
        })
        const bakongAccountId = "secretshop@aclb"
        const settingValue = "bot-token-1234567890-very-secret"
        const shownOnce = [mfa.body.secret as string, key.body.secret as string, admin.token]
        const neverShown = [TEST_PASSWORD, bakongAccountId, settingValue]
        responses.length = 0

        // Everything below may show a secret only masked.
        const credentials = yield* call(app, "PUT", `/stores/${store.body.id}/credentials`, {
          token: admin.token,
          body: {
            bakong_account_id: bakongAccountId,
            merchant_name: "SECRET SHOP",
            merchant_city: "Phnom Penh",
            acquiring_bank: "ACLEDA Bank"
          }
        })
        const setting = yield* call(app, "PUT", "/admin/settings/telegram_bot_token", {
          token: admin.token,
          body: { value: settingValue }
        })
        expect(credentials.status).toBe(200)
        expect(credentials.body.credentials.configured).toBe(true)
        expect(setting.status).toBe(200)
        expect(setting.body.source).toBe("database")
        yield* call(app, "GET", `/stores/${store.body.id}`, { token: admin.token })
        yield* call(app, "GET", "/stores", { token: admin.token })
        yield* call(app, "GET", `/api-keys?store_id=${store.body.id}`, { token: admin.token })
        yield* call(app, "GET", "/admin/settings", { token: admin.token })
        expect((yield* call(app, "GET", "/v1/whoami", { token: key.body.secret })).status).toBe(200)
        yield* call(app, "GET", "/auth/me", { token: admin.token })
        // Failures that carry a secret in the request must not echo it.
        yield* call(app, "GET", "/v1/whoami", { token: `${key.body.secret}x` })
        yield* call(app, "POST", "/auth/login", { body: { email: admin.email, password: `${TEST_PASSWORD}!` } })
        yield* call(app, "POST", "/auth/mfa/enable", { token: admin.token, body: { code: "12345" } })
        yield* call(app, "POST", "/auth/reset-password", { body: { token: settingValue, password: TEST_PASSWORD } })

        expect(responses.length).toBeGreaterThan(10)
        for (const body of responses) {
          for (const secret of [...shownOnce, ...neverShown]) expect(body).not.toContain(secret)
        }
        const logText = logs.join("\n")
        expect(logText).toContain("/stores")
        for (const secret of [...shownOnce, ...neverShown]) expect(logText).not.toContain(secret)
      }))
  })
})
