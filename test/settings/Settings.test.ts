/**
 * Platform settings over HTTP: admin only; values sealed at rest and only ever answered masked;
 * clearing falls back to the environment (known keys only); the `get` other areas call.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { SettingsService } from "../../src/settings/Service.ts"
import { signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const ADMIN_EMAIL = "admin@example.test"

/** Every response body of the suite, to check that no raw value ever appears in one. */
const responses: Array<string> = []

const call = makeCall(responses)

let adminToken: string | undefined
const admin = (app: TestAppShape) =>
  Effect.promise(async () => {
    adminToken ??= (await signUp(app, { email: ADMIN_EMAIL })).token
    return adminToken
  })

const settingIn = (list: any, key: string) => list.data.find((setting: any) => setting.key === key)

/** The service other areas call, built against the suite's database and master key. */
const getSetting = (key: string) =>
  Effect.flatMap(SettingsService, (settings) => settings.get(key)).pipe(
    Effect.map(Option.map(Redacted.value)),
    Effect.provide(SettingsService.Default)
  )

describe("platform settings", () => {
  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), { timeout: 120_000, excludeTestServices: true })(
    "over HTTP",
    (it) => {
      it.effect("lists the known keys, unset, to an administrator", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const token = yield* admin(app)
          const list = yield* call(app, "GET", "/admin/settings", { token })
          expect(list.status).toBe(200)
          expect(list.body).toMatchObject({ object: "list", has_more: false, next_cursor: null })
          const keys = list.body.data.map((setting: any) => setting.key)
          expect(keys).toEqual([...keys].sort())
          for (const key of ["telegram_bot_token", "bakong_api_token", "bakong_base_url", "ai_api_key"]) {
            expect(keys).toContain(key)
          }
          expect(settingIn(list.body, "bakong_api_token")).toMatchObject({
            object: "platform_setting",
            source: "unset",
            value_masked: null,
            updated_at: null
          })
          expect(typeof settingIn(list.body, "bakong_api_token").description).toBe("string")
        }))

      it.effect("sets a value sealed at rest and answers it only masked", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const token = yield* admin(app)
          const raw = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ"
          const set = yield* call(app, "PUT", "/admin/settings/telegram_bot_token", { token, body: { value: raw } })
          expect(set.status).toBe(200)
          expect(set.body).toMatchObject({ object: "platform_setting", key: "telegram_bot_token", source: "database" })
          expect(set.body.value_masked).toBe("*".repeat(raw.length - 4) + raw.slice(-4))
          expect(new Date(set.body.updated_at).toISOString()).toBe(set.body.updated_at)

          const list = yield* call(app, "GET", "/admin/settings", { token })
          expect(settingIn(list.body, "telegram_bot_token")).toEqual(set.body)

          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ value: string }>`SELECT value FROM platform_settings WHERE key = 'telegram_bot_token'`
          expect(rows[0]?.value).toMatch(/^v1\./)
          expect(rows[0]?.value).not.toContain(raw)

          expect(yield* getSetting("telegram_bot_token")).toEqual(Option.some(raw))

          // Setting again replaces the value.
          const replaced = yield* call(app, "PUT", "/admin/settings/telegram_bot_token", { token, body: { value: `${raw}-v2` } })
          expect(replaced.body.value_masked.endsWith("-v2")).toBe(true)
          expect(yield* getSetting("telegram_bot_token")).toEqual(Option.some(`${raw}-v2`))

          expect(responses.filter((text) => text.includes(raw))).toEqual([])
        }))

      it.effect("falls back to the environment variable of a known key, read at call time", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const token = yield* admin(app)
          const fromEnvironment = "env-ai-key-0123456789abcdefWXYZ"
          const stored = "db-ai-key-9876543210zyxwvuABCD"
          process.env["AI_API_KEY"] = fromEnvironment
          try {
            const before = yield* call(app, "GET", "/admin/settings", { token })
            expect(settingIn(before.body, "ai_api_key")).toMatchObject({
              source: "environment",
              value_masked: "*".repeat(fromEnvironment.length - 4) + "WXYZ",
              updated_at: null
            })
            expect(yield* getSetting("ai_api_key")).toEqual(Option.some(fromEnvironment))

            const set = yield* call(app, "PUT", "/admin/settings/ai_api_key", { token, body: { value: stored } })
            expect(set.body.source).toBe("database")
            expect(yield* getSetting("ai_api_key")).toEqual(Option.some(stored))

            const cleared = yield* call(app, "DELETE", "/admin/settings/ai_api_key", { token })
            expect(cleared.status).toBe(200)
            expect(cleared.body).toMatchObject({ key: "ai_api_key", source: "environment", updated_at: null })
            expect(cleared.body.value_masked.endsWith("WXYZ")).toBe(true)
            expect(yield* getSetting("ai_api_key")).toEqual(Option.some(fromEnvironment))

            delete process.env["AI_API_KEY"]
            const unset = yield* call(app, "GET", "/admin/settings", { token })
            expect(settingIn(unset.body, "ai_api_key")).toMatchObject({ source: "unset", value_masked: null })
            expect(yield* getSetting("ai_api_key")).toEqual(Option.none())

            // Clearing an unset key is not an error.
            expect((yield* call(app, "DELETE", "/admin/settings/ai_api_key", { token })).status).toBe(200)
          } finally {
            delete process.env["AI_API_KEY"]
          }
          expect(responses.filter((text) => text.includes(fromEnvironment) || text.includes(stored))).toEqual([])
        }))

      it.effect("stores other keys too, listed while stored; they never read the environment", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const token = yield* admin(app)
          // Were any key to fall back, these routes would reveal any variable of the process.
          process.env["CUSTOM_PARTNER_TOKEN"] = "process-environment-secret-value"
          try {
            const set = yield* call(app, "PUT", "/admin/settings/custom_partner_token", { token, body: { value: "short" } })
            expect(set.body).toMatchObject({ key: "custom_partner_token", source: "database", value_masked: "*****", description: null })
            const listed = yield* call(app, "GET", "/admin/settings", { token })
            expect(settingIn(listed.body, "custom_partner_token")).toMatchObject({ source: "database" })

            const cleared = yield* call(app, "DELETE", "/admin/settings/custom_partner_token", { token })
            expect(cleared.body).toMatchObject({ source: "unset", value_masked: null })
            const after = yield* call(app, "GET", "/admin/settings", { token })
            expect(settingIn(after.body, "custom_partner_token")).toBeUndefined()
            expect(yield* getSetting("custom_partner_token")).toEqual(Option.none())
            expect((yield* call(app, "DELETE", "/admin/settings/master_key", { token })).body.source).toBe("unset")
            for (const key of ["constructor", "__proto__"]) {
              const odd = yield* call(app, "PUT", `/admin/settings/${key}`, { token, body: { value: "value" } })
              expect(odd.status).toBe(200)
              expect(odd.body).toMatchObject({ key, description: null, source: "database" })
              expect((yield* call(app, "DELETE", `/admin/settings/${key}`, { token })).body).toMatchObject({ source: "unset" })
            }
          } finally {
            delete process.env["CUSTOM_PARTNER_TOKEN"]
          }
        }))

      it.effect("pages through the settings by key", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const token = yield* admin(app)
          const all = (yield* call(app, "GET", "/admin/settings?limit=100", { token })).body.data.map((s: any) => s.key)
          const seen: Array<string> = []
          let cursor: string | null = null
          do {
            const query: string = cursor === null ? "limit=2" : `limit=2&cursor=${cursor}`
            const page: any = (yield* call(app, "GET", `/admin/settings?${query}`, { token })).body
            expect(page.data.length).toBeLessThanOrEqual(2)
            seen.push(...page.data.map((s: any) => s.key))
            cursor = page.next_cursor
          } while (cursor !== null)
          expect(seen).toEqual(all)
          const bad = yield* call(app, "GET", "/admin/settings?cursor=!!", { token })
          expect(bad.status).toBe(400)
          expect(bad.body.error.param).toBe("cursor")
        }))

      it.effect("rejects bad keys and values with 400", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const token = yield* admin(app)
          for (const key of ["Telegram", "bad-key", "x".repeat(65)]) {
            const response = yield* call(app, "PUT", `/admin/settings/${key}`, { token, body: { value: "v" } })
            expect(response.status).toBe(400)
            expect(response.body.error).toMatchObject({ code: "invalid_request", param: "key" })
          }
          for (const value of ["", "v".repeat(4097), 42]) {
            const response = yield* call(app, "PUT", "/admin/settings/bakong_base_url", { token, body: { value } })
            expect(response.status).toBe(400)
            expect(response.body.error).toMatchObject({ code: "invalid_request", param: "value" })
          }
          expect((yield* call(app, "PUT", "/admin/settings/bakong_base_url", { token, body: { value: "v".repeat(4096) } })).status)
            .toBe(200)
          expect((yield* call(app, "DELETE", "/admin/settings/bakong_base_url", { token })).status).toBe(200)
        }))

      it.effect("refuses everyone but platform administrators", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* Effect.promise(() => signUp(app))
          const attempts = [
            call(app, "GET", "/admin/settings", { token: owner.token }),
            call(app, "PUT", "/admin/settings/telegram_bot_token", { token: owner.token, body: { value: "hijacked-token-value" } }),
            call(app, "DELETE", "/admin/settings/telegram_bot_token", { token: owner.token })
          ]
          for (const attempt of attempts) {
            const response = yield* attempt
            expect(response.status).toBe(403)
            expect(response.body.error.code).toBe("forbidden")
          }
          expect((yield* call(app, "GET", "/admin/settings")).status).toBe(401)
          expect(Option.getOrNull(yield* getSetting("telegram_bot_token"))).not.toBe("hijacked-token-value")
        }))
    }
  )
})
