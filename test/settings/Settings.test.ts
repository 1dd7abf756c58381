/**
 * Platform settings over HTTP: admin only; values sealed at rest and only ever answered masked;
 * clearing falls back to the environment (known keys only); the `get` other areas call.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { PlatformSetting } from "../../domain/Settings.ts"
import { SettingsService } from "../../src/settings/Service.ts"
import { signUp } from "../support/Accounts.ts"
import { allPages, expectFailure, listParams, makeClientAs } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const ADMIN_EMAIL = "admin@example.test"

/** Every response body of the suite, to check that no raw value ever appears in one. */
const responses: Array<string> = []

const clientAs = makeClientAs(responses)
// Raw calls only for keys and values outside the request schemas.
const call = makeCall(responses)

let adminToken: string | undefined
const signedInAdmin = (app: TestAppShape) =>
  Effect.promise(async () => {
    adminToken ??= (await signUp(app, { email: ADMIN_EMAIL })).token
    return adminToken
  })

/** The settings routes as the platform administrator. */
const asAdmin = (app: TestAppShape) =>
  Effect.map(Effect.flatMap(signedInAdmin(app), (token) => clientAs(app, token)), (api) => api.settings)

const settingIn = (list: { readonly data: ReadonlyArray<PlatformSetting> }, key: string) =>
  list.data.find((setting) => setting.key === key)

/** The service other areas call, built against the suite's database and master key. */
const getSetting = (key: string) =>
  Effect.flatMap(SettingsService, (settings) => settings.get(key)).pipe(
    Effect.map(Option.map(Redacted.value)),
    Effect.provide(SettingsService.Default)
  )

const masked = (value: string) => "*".repeat(value.length - 4) + value.slice(-4)

describe("platform settings", () => {
  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), { timeout: 120_000, excludeTestServices: true })(
    "over HTTP",
    (it) => {
      it.effect("lists the known keys, unset, to an administrator", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const settings = yield* asAdmin(app)
          // Every known key fits one page of the largest size.
          const list = yield* settings.list({ urlParams: listParams({ limit: 100 }) })
          expect(list).toMatchObject({ object: "list", has_more: false, next_cursor: null })
          const keys = list.data.map((setting) => setting.key)
          expect(keys).toEqual([...keys].sort())
          for (const key of ["telegram_bot_token", "bakong_api_token", "bakong_base_url", "ai_api_key"]) {
            expect(keys).toContain(key)
          }
          expect(settingIn(list, "bakong_api_token")).toMatchObject({
            object: "platform_setting",
            source: "unset",
            value_masked: null,
            updated_at: null
          })
          expect(typeof settingIn(list, "bakong_api_token")?.description).toBe("string")
        }))

      it.effect("sets a value sealed at rest and answers it only masked", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const settings = yield* asAdmin(app)
          const path = { key: "telegram_bot_token" }
          const raw = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ"
          const set = yield* settings.set({ path, payload: { value: raw } })
          expect(set).toMatchObject({ object: "platform_setting", key: "telegram_bot_token", source: "database" })
          expect(set.value_masked).toBe(masked(raw))
          expect(new Date(set.updated_at!).toISOString()).toBe(set.updated_at)

          const list = yield* settings.list({ urlParams: listParams({ limit: 100 }) })
          expect(settingIn(list, "telegram_bot_token")).toEqual(set)

          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ value: string }>`SELECT value FROM platform_settings WHERE key = 'telegram_bot_token'`
          expect(rows[0]?.value).toMatch(/^v1\./)
          expect(rows[0]?.value).not.toContain(raw)

          expect(yield* getSetting("telegram_bot_token")).toEqual(Option.some(raw))

          // Setting again replaces the value.
          const replaced = yield* settings.set({ path, payload: { value: `${raw}-v2` } })
          expect(replaced.value_masked?.endsWith("-v2")).toBe(true)
          expect(yield* getSetting("telegram_bot_token")).toEqual(Option.some(`${raw}-v2`))

          expect(responses.length).toBeGreaterThan(0)
          expect(responses.filter((text) => text.includes(raw))).toEqual([])
        }))

      it.effect("falls back to the environment variable of a known key, read at call time", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const settings = yield* asAdmin(app)
          const path = { key: "ai_api_key" }
          const fromEnvironment = "env-ai-key-0123456789abcdefWXYZ"
          const stored = "db-ai-key-9876543210zyxwvuABCD"
          process.env["AI_API_KEY"] = fromEnvironment
          try {
            const before = yield* settings.list({ urlParams: listParams({ limit: 100 }) })
            expect(settingIn(before, "ai_api_key")).toMatchObject({
              source: "environment",
              value_masked: masked(fromEnvironment),
              updated_at: null
            })
            expect(yield* getSetting("ai_api_key")).toEqual(Option.some(fromEnvironment))

            const set = yield* settings.set({ path, payload: { value: stored } })
            expect(set.source).toBe("database")
            expect(yield* getSetting("ai_api_key")).toEqual(Option.some(stored))

            const cleared = yield* settings.clear({ path })
            expect(cleared).toMatchObject({ key: "ai_api_key", source: "environment", updated_at: null })
            expect(cleared.value_masked?.endsWith("WXYZ")).toBe(true)
            expect(yield* getSetting("ai_api_key")).toEqual(Option.some(fromEnvironment))

            delete process.env["AI_API_KEY"]
            const unset = yield* settings.list({ urlParams: listParams({ limit: 100 }) })
            expect(settingIn(unset, "ai_api_key")).toMatchObject({ source: "unset", value_masked: null })
            expect(yield* getSetting("ai_api_key")).toEqual(Option.none())

            // Clearing an unset key is not an error.
            expect(yield* settings.clear({ path })).toMatchObject({ key: "ai_api_key", source: "unset" })
          } finally {
            delete process.env["AI_API_KEY"]
          }
          expect(responses.filter((text) => text.includes(fromEnvironment) || text.includes(stored))).toEqual([])
        }))

      it.effect("stores other keys too, listed while stored; they never read the environment", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const settings = yield* asAdmin(app)
          const path = { key: "custom_partner_token" }
          // Were any key to fall back, these routes would reveal any variable of the process.
          process.env["CUSTOM_PARTNER_TOKEN"] = "process-environment-secret-value"
          try {
            const set = yield* settings.set({ path, payload: { value: "short" } })
            expect(set).toMatchObject({ key: "custom_partner_token", source: "database", value_masked: "*****", description: null })
            const listed = yield* settings.list({ urlParams: listParams({ limit: 100 }) })
            expect(settingIn(listed, "custom_partner_token")).toMatchObject({ source: "database" })

            const cleared = yield* settings.clear({ path })
            expect(cleared).toMatchObject({ source: "unset", value_masked: null })
            const after = yield* settings.list({ urlParams: listParams({ limit: 100 }) })
            expect(settingIn(after, "custom_partner_token")).toBeUndefined()
            expect(yield* getSetting("custom_partner_token")).toEqual(Option.none())
            expect((yield* settings.clear({ path: { key: "master_key" } })).source).toBe("unset")
            for (const key of ["constructor", "__proto__"]) {
              const odd = yield* settings.set({ path: { key }, payload: { value: "value" } })
              expect(odd).toMatchObject({ key, description: null, source: "database" })
              expect(yield* settings.clear({ path: { key } })).toMatchObject({ source: "unset" })
            }
          } finally {
            delete process.env["CUSTOM_PARTNER_TOKEN"]
          }
        }))

      it.effect("pages through the settings by key", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const settings = yield* asAdmin(app)
          const all = (yield* settings.list({ urlParams: listParams({ limit: 100 }) })).data.map((setting) => setting.key)
          const seen = yield* allPages(2, (urlParams) => settings.list({ urlParams }))
          expect(seen.map((setting) => setting.key)).toEqual(all)
          yield* expectFailure(settings.list({ urlParams: listParams({ cursor: "!!" }) }), "InvalidRequest", "cursor")
        }))

      it.effect("rejects bad keys and values with 400", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const token = yield* signedInAdmin(app)
          // Raw: every key and value here is outside the request schema.
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
          const settings = yield* asAdmin(app)
          const path = { key: "bakong_api_token" }
          expect((yield* settings.set({ path, payload: { value: "v".repeat(4096) } })).source).toBe("database")
          yield* settings.clear({ path })
        }))

      it.effect("takes only absolute http(s) URLs for the providers' base URLs", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const settings = yield* asAdmin(app)
          const keys = ["ai_base_url", "telegram_api_base_url", "whatsapp_api_base_url", "sms_api_base_url", "signal_api_base_url", "bakong_base_url"]
          for (const key of keys) {
            for (const value of ["ftp://files.example.com", "file:///etc/passwd", "javascript:alert(1)", "api.example.com", "https://user:secret@api.example.com"]) {
              yield* expectFailure(settings.set({ path: { key }, payload: { value } }), "InvalidRequest", "value", `${key} = ${value}`)
            }
            expect((yield* getSetting(key))).toEqual(Option.none())
            for (const value of ["https://api.example.com/v1", "http://10.0.0.5:8080"]) {
              expect((yield* settings.set({ path: { key }, payload: { value } })).source).toBe("database")
            }
            yield* settings.clear({ path: { key } })
          }
          // Other settings are free text.
          expect((yield* settings.set({ path: { key: "ai_model" }, payload: { value: "ftp-model" } })).source).toBe("database")
          yield* settings.clear({ path: { key: "ai_model" } })
        }))

      it.effect("refuses everyone but platform administrators", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* Effect.promise(() => signUp(app))
          const { settings } = yield* clientAs(app, owner.token)
          const path = { key: "telegram_bot_token" }
          yield* expectFailure(settings.list({ urlParams: listParams({ limit: 100 }) }), "Forbidden")
          yield* expectFailure(settings.set({ path, payload: { value: "hijacked-token-value" } }), "Forbidden")
          yield* expectFailure(settings.clear({ path }), "Forbidden")
          yield* expectFailure(Effect.flatMap(clientAs(app), (api) => api.settings.list({ urlParams: listParams({ limit: 100 }) })), "Unauthorized")
          expect(Option.getOrNull(yield* getSetting("telegram_bot_token"))).not.toBe("hijacked-token-value")
        }))
    }
  )
})
