/**
 * Secrets leave the service once — in the answer that creates them — and never again: not in a list, a
 * retrieval, an error message, nor a log line. One suite drives every kind of secret through the
 * service and greps everything it said.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { signUp, TEST_PASSWORD } from "../support/Accounts.ts"
import { expectFailure, listParams, makeClientAs } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const logs: Array<string> = []
const responses: Array<string> = []
const clientAs = makeClientAs(responses)
// Raw only for the malformed MFA code, which the typed client would refuse to send.
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
        const api = yield* clientAs(app, admin.token)

        // Secrets that are shown once, in their creating answer; those answers are not graded.
        const mfa = yield* api.session.mfaSetup()
        const store = yield* api.stores.create({ payload: { name: "Secret Shop" } })
        const key = yield* api.apiKeys.create({ payload: { store_id: store.id, mode: "test", name: "backend" } })
        const bakongAccountId = "secretshop@aclb"
        const settingValue = "bot-token-1234567890-very-secret"
        const shownOnce = [mfa.secret, key.secret, admin.token]
        const neverShown = [TEST_PASSWORD, bakongAccountId, settingValue]
        responses.length = 0

        // Everything below may show a secret only masked.
        const credentials = yield* api.stores.setCredentials({
          path: { id: store.id },
          payload: {
            bakong_account_id: bakongAccountId,
            merchant_name: "SECRET SHOP",
            merchant_city: "Phnom Penh",
            acquiring_bank: "ACLEDA Bank"
          }
        })
        const setting = yield* api.settings.set({ path: { key: "telegram_bot_token" }, payload: { value: settingValue } })
        expect(credentials.credentials?.configured).toBe(true)
        expect(setting.source).toBe("database")
        yield* api.stores.retrieve({ path: { id: store.id } })
        yield* api.stores.list({ urlParams: listParams() })
        yield* api.apiKeys.list({ urlParams: listParams({ store_id: store.id }) })
        yield* api.settings.list({ urlParams: listParams() })
        expect((yield* (yield* clientAs(app, key.secret)).session.whoami()).type).toBe("api_key")
        yield* api.session.me()
        // Failures that carry a secret in the request must not echo it.
        yield* expectFailure(Effect.flatMap(clientAs(app, `${key.secret}x`), (wrong) => wrong.session.whoami()), "Unauthorized")
        yield* expectFailure(
          Effect.flatMap(clientAs(app), (anonymous) =>
            anonymous.auth.login({ payload: { email: admin.email, password: `${TEST_PASSWORD}!` } })),
          "Unauthorized"
        )
        expect((yield* call(app, "POST", "/auth/mfa/enable", { token: admin.token, body: { code: "12345" } })).status).toBe(400)
        yield* expectFailure(
          Effect.flatMap(clientAs(app), (anonymous) =>
            anonymous.auth.resetPassword({ payload: { token: settingValue, password: TEST_PASSWORD } })),
          "Unauthorized"
        )

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
