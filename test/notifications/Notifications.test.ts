/**
 * Notifications over HTTP against PostgreSQL and a local fake provider: Telegram's Bot API sendMessage
 * (bot token and base URL from platform settings) answering 200, 401 and 429 — each send recorded with
 * its outcome and retried on the schedule (moved on with TestClock), a 429's retry_after honoured — the
 * whatsapp, sms and signal channels through their provider API, messages rendered from paid payments
 * (the outbox consumer, once per event), configs, tenancy, roles and bad input.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AccessService } from "../../src/access/Service.ts"
import { NotificationsService } from "../../src/notifications/Service.ts"
import { addMember, signUp } from "../support/Accounts.ts"
import { allPages, clientAs, listParams } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { type Merchant, paidPayment, refund, storeWithKey } from "../support/Merchant.ts"
import { servicesOnTestApp } from "../support/Services.ts"
import { TestApp, type TestAppShape } from "../support/TestApp.ts"
import { withTestClockAt } from "../support/TestTime.ts"
import { FakeProvider } from "./FakeProvider.ts"

/** The retry job acts for the system, as `NotificationRetriesLive` does. */
const asRetryJob = AccessService.asSystem("the notification retry job")

const call = makeCall()
const ADMIN_EMAIL = "notifications-admin@example.test"
const BOT_TOKEN = "123456:TEST-bot-token"
const SMS_ACCOUNT_SID = "AC00000000000000000000000000000001"
const SMS_MESSAGES_PATH = `/sms/2010-04-01/Accounts/${SMS_ACCOUNT_SID}/Messages.json`

let adminToken: string | undefined
const admin = (app: TestAppShape) =>
  Effect.promise(async () => (adminToken ??= (await signUp(app, { email: ADMIN_EMAIL })).token))

const setSetting = (app: TestAppShape, key: string, value: string) =>
  Effect.gen(function*() {
    const token = yield* admin(app)
    const answer = yield* call(app, "PUT", `/admin/settings/${key}`, { token, body: { value } })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  })

/** Points every channel's provider at the fake, under its own path. */
const useFake = Effect.gen(function*() {
  const app = yield* TestApp
  const fake = yield* FakeProvider
  fake.reset()
  yield* setSetting(app, "telegram_bot_token", BOT_TOKEN)
  yield* setSetting(app, "telegram_api_base_url", `${fake.baseUrl}/telegram`)
  for (const channel of ["whatsapp", "sms", "signal"]) {
    yield* setSetting(app, `${channel}_api_base_url`, `${fake.baseUrl}/${channel}/`)
    yield* setSetting(app, `${channel}_api_token`, `${channel}-provider-token`)
  }
  yield* setSetting(app, "whatsapp_phone_number_id", "106540352242922")
  yield* setSetting(app, "sms_account_sid", SMS_ACCOUNT_SID)
  yield* setSetting(app, "sms_from_number", "+15017122661")
  yield* setSetting(app, "signal_sender_number", "+85510000001")
  return { app, fake }
})

const merchant = (app: TestAppShape) => Effect.flatMap(Effect.promise(() => signUp(app)), (owner) => storeWithKey(app, owner))

const putTelegram = (app: TestAppShape, m: Merchant, body: unknown) =>
  call(app, "PUT", `/dashboard/stores/${m.storeId}/telegram`, { token: m.owner.token, body })

const testTelegram = (app: TestAppShape, m: Merchant) =>
  call(app, "POST", `/dashboard/stores/${m.storeId}/telegram/test`, { token: m.owner.token })

const suite = Layer.merge(servicesOnTestApp({ platformAdminEmails: [ADMIN_EMAIL] }), FakeProvider.layer)

describe("notifications", () => {
  layer(suite, { timeout: 120_000, excludeTestServices: true })("through a local fake provider", (it) => {
    it.effect("configures Telegram: disabled until a chat id, events validated", () =>
      Effect.gen(function*() {
        const { app } = yield* useFake
        const m = yield* merchant(app)
        const api = yield* clientAs(app, m.owner.token)
        expect(yield* api.notifications.telegram({ path: { storeId: m.storeId } })).toMatchObject({
          object: "telegram_config",
          store_id: m.storeId,
          chat_id: null,
          enabled: false,
          events: ["payment.completed", "payment.refunded"]
        })
        const noChat = yield* putTelegram(app, m, { enabled: true })
        expect(noChat.status).toBe(400)
        expect(noChat.body.error).toMatchObject({ code: "invalid_request", param: "chat_id" })
        expect((yield* testTelegram(app, m)).status).toBe(409)
        expect((yield* putTelegram(app, m, { events: ["payment.teleported"] })).status).toBe(400)
        expect((yield* putTelegram(app, m, { chat_id: "" })).status).toBe(400)
        expect((yield* putTelegram(app, m, { chat_id: "1", colour: "red" })).status).toBe(400)
        const configured = yield* putTelegram(app, m, { chat_id: "-100200300", events: ["payment.completed", "risk.case_opened"] })
        expect(configured.status).toBe(200)
        expect(configured.body).toEqual({
          object: "telegram_config",
          store_id: m.storeId,
          chat_id: "-100200300",
          events: ["payment.completed", "risk.case_opened"],
          enabled: true
        })
        expect((yield* api.notifications.telegram({ path: { storeId: m.storeId } })).chat_id).toBe("-100200300")
        expect((yield* putTelegram(app, m, { enabled: false })).body.enabled).toBe(false)
      }))

    it.effect("sends a test message through the Bot API's sendMessage and answers its record", () =>
      Effect.gen(function*() {
        const { app, fake } = yield* useFake
        const m = yield* merchant(app)
        yield* putTelegram(app, m, { chat_id: "4242" })
        const sent = yield* testTelegram(app, m)
        expect(sent.status).toBe(201)
        expect(sent.body).toMatchObject({
          object: "notification",
          store_id: m.storeId,
          channel: "telegram",
          destination: "4242",
          event_type: "test.message",
          status: "sent",
          attempts: 1,
          last_status_code: 200,
          last_error: null,
          next_attempt_at: null
        })
        expect(sent.body.id).toMatch(/^ntf_/)
        expect(fake.requests).toHaveLength(1)
        expect(fake.requests[0]).toMatchObject({
          method: "POST",
          path: `/telegram/bot${BOT_TOKEN}/sendMessage`,
          body: { chat_id: "4242", text: sent.body.text }
        })
      }))

    it.effect("records a 401 and a 429, retries on the schedule (a 429's retry_after honoured), then sends", () =>
      Effect.gen(function*() {
        const { app, fake } = yield* useFake
        const m = yield* merchant(app)
        yield* putTelegram(app, m, { chat_id: "777" })
        fake.answer = (n) =>
          n === 1
            ? { status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } }
            : n === 2
            ? { status: 429, body: { ok: false, error_code: 429, description: "Too Many Requests: retry after 700", parameters: { retry_after: 700 } } }
            : { status: 200, body: { ok: true, result: { message_id: 1 } } }
        const first = yield* testTelegram(app, m)
        expect(first.status).toBe(201)
        expect(first.body).toMatchObject({ status: "pending", attempts: 1, last_status_code: 401 })
        expect(first.body.last_error).toMatch(/401/)
        const created = Date.parse(first.body.created_at)
        expect(Date.parse(first.body.next_attempt_at) - created).toBeGreaterThanOrEqual(29_000)
        expect(Date.parse(first.body.next_attempt_at) - created).toBeLessThanOrEqual(31_000)

        const notifications = yield* NotificationsService
        const sql = yield* SqlClient.SqlClient
        const record = () =>
          Effect.map(
            sql<{ status: string; attempts: number; last_status_code: number | null; next_attempt_at: Date | null }>`
              SELECT status, attempts, last_status_code, next_attempt_at FROM notification_messages WHERE id = ${first.body.id}`,
            (rows) => rows[0]!
          )
        // Not due yet 20 s on; due 31 s on: the second attempt meets the 429.
        yield* withTestClockAt(created + 20_000)(asRetryJob(notifications.retryDue))
        expect((yield* record()).attempts).toBe(1)
        yield* withTestClockAt(created + 31_000)(asRetryJob(notifications.retryDue))
        const second = yield* record()
        expect(second).toMatchObject({ status: "pending", attempts: 2, last_status_code: 429 })
        // The schedule says 120 s; Telegram asked for 700 s, which wins.
        const wait = second.next_attempt_at!.getTime() - (created + 31_000)
        expect(wait).toBeGreaterThanOrEqual(699_000)
        expect(wait).toBeLessThanOrEqual(701_000)
        yield* withTestClockAt(created + 31_000 + 200_000)(asRetryJob(notifications.retryDue))
        expect((yield* record()).attempts).toBe(2)
        yield* withTestClockAt(created + 31_000 + 701_000)(asRetryJob(notifications.retryDue))
        expect(yield* record()).toMatchObject({ status: "sent", attempts: 3, last_status_code: 200, next_attempt_at: null })
        expect(fake.requests).toHaveLength(3)
      }))

    it.effect("gives up after the last retry: the message stays recorded as failed", () =>
      Effect.gen(function*() {
        const { app, fake } = yield* useFake
        const m = yield* merchant(app)
        yield* putTelegram(app, m, { chat_id: "778" })
        fake.answer = () => ({ status: 500, body: { ok: false } })
        const first = (yield* testTelegram(app, m)).body
        const notifications = yield* NotificationsService
        let at = Date.parse(first.created_at)
        for (const wait of [30, 120, 600, 3600]) {
          at += (wait + 1) * 1000
          yield* withTestClockAt(at)(asRetryJob(notifications.retryDue))
        }
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ status: string; attempts: number }>`SELECT status, attempts FROM notification_messages WHERE id = ${first.id}`
        expect(row).toEqual({ status: "failed", attempts: 5 })
        yield* withTestClockAt(at + 86_400_000)(asRetryJob(notifications.retryDue))
        expect(fake.requests).toHaveLength(5)
      }))

    it.effect("tries a message its process recorded but never attempted, a minute on", () =>
      Effect.gen(function*() {
        const { app, fake } = yield* useFake
        const m = yield* merchant(app)
        const sql = yield* SqlClient.SqlClient
        const created = Date.now()
        yield* sql`
          INSERT INTO notification_messages (id, store_id, channel, destination, event_id, event_type, text, status, next_attempt_at, created_at)
          VALUES ('ntf_Unattempted000000000000', ${m.storeId}, 'telegram', '4243', 'evt_Unattempted000000000000',
            'payment.completed', 'left behind', 'pending', ${new Date(created)}, ${new Date(created)})`
        const notifications = yield* NotificationsService
        yield* withTestClockAt(created + 10_000)(asRetryJob(notifications.retryDue))
        expect(fake.requests).toHaveLength(0)
        yield* withTestClockAt(created + 61_000)(asRetryJob(notifications.retryDue))
        expect(fake.requests.map((r) => r.body)).toEqual([{ chat_id: "4243", text: "left behind" }])
        const [row] = yield* sql<{ status: string; attempts: number }>`
          SELECT status, attempts FROM notification_messages WHERE id = 'ntf_Unattempted000000000000'`
        expect(row).toEqual({ status: "sent", attempts: 1 })
      }))

    it.effect("records a send without a bot token as failed, with the reason", () =>
      Effect.gen(function*() {
        const { app } = yield* useFake
        const token = yield* admin(app)
        expect((yield* call(app, "DELETE", "/admin/settings/telegram_bot_token", { token })).status).toBe(200)
        const m = yield* merchant(app)
        yield* putTelegram(app, m, { chat_id: "779" })
        const sent = yield* testTelegram(app, m)
        expect(sent.body).toMatchObject({ status: "pending", last_status_code: null, last_error: "telegram_bot_token is not set" })
      }))

    it.effect("sends on whatsapp, sms and signal through each provider's API", () =>
      Effect.gen(function*() {
        const { app, fake } = yield* useFake
        const m = yield* merchant(app)
        const api = yield* clientAs(app, m.owner.token)
        const initial = yield* api.notifications.channels({ path: { storeId: m.storeId }, urlParams: listParams() })
        expect(initial.data.map((c) => [c.channel, c.enabled, c.destination])).toEqual([
          ["whatsapp", false, null],
          ["sms", false, null],
          ["signal", false, null]
        ])
        const paged = yield* allPages(1, (urlParams) => api.notifications.channels({ path: { storeId: m.storeId }, urlParams }))
        expect(paged.map((c) => c.channel)).toEqual(["whatsapp", "sms", "signal"])
        for (const [channel, destination] of [["whatsapp", "+85512000001"], ["sms", "+85512000002"], ["signal", "+85512000003"]] as const) {
          const configured = yield* api.notifications.updateChannel({ path: { storeId: m.storeId }, payload: { channel, destination } })
          expect(configured).toMatchObject({ object: "channel_config", channel, enabled: true, destination })
          const sent = yield* call(app, "POST", `/dashboard/stores/${m.storeId}/channels/${channel}/test`, { token: m.owner.token })
          expect(sent.status).toBe(201)
          expect(sent.body).toMatchObject({ object: "notification", channel, destination, status: "sent", last_status_code: 200 })
          // The providers' request shapes are checked in detail against faithful fakes in Providers.test.ts.
          const request = fake.requests.at(-1)!
          if (channel === "whatsapp") {
            expect(request).toMatchObject({
              path: "/whatsapp/106540352242922/messages",
              body: { messaging_product: "whatsapp", to: destination, type: "text", text: { body: sent.body.text } }
            })
            expect(request.headers.authorization).toBe("Bearer whatsapp-provider-token")
          } else if (channel === "sms") {
            expect(request.path).toBe(SMS_MESSAGES_PATH)
            expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({ To: destination, From: "+15017122661", Body: sent.body.text })
          } else {
            expect(request).toMatchObject({ path: "/signal/v2/send", body: { message: sent.body.text, number: "+85510000001", recipients: [destination] } })
          }
        }
        const unknown = yield* call(app, "POST", `/dashboard/stores/${m.storeId}/channels/pigeon/test`, { token: m.owner.token })
        expect(unknown.status).toBe(404)
        expect(unknown.body.error).toMatchObject({ code: "not_found", param: "channel" })
        const badPut = yield* call(app, "PUT", `/dashboard/stores/${m.storeId}/channels`, { token: m.owner.token, body: { channel: "pigeon", destination: "x" } })
        expect(badPut.status).toBe(400)
        const noDestination = yield* call(app, "PUT", `/dashboard/stores/${m.storeId}/channels`, { token: m.owner.token, body: { channel: "sms", destination: "" } })
        expect(noDestination.status).toBe(400)
        const other = yield* merchant(app)
        const unconfigured = yield* call(app, "POST", `/dashboard/stores/${other.storeId}/channels/sms/test`, { token: other.owner.token })
        expect(unconfigured.status).toBe(409)
        const enableBare = yield* call(app, "PUT", `/dashboard/stores/${other.storeId}/channels`, { token: other.owner.token, body: { channel: "sms", enabled: true } })
        expect(enableBare.status).toBe(400)
        expect(enableBare.body.error.param).toBe("destination")
      }))

    it.effect("messages a paid payment to every subscribed channel, once per event", () =>
      Effect.gen(function*() {
        const { app, fake } = yield* useFake
        const m = yield* merchant(app)
        yield* putTelegram(app, m, { chat_id: "555", events: ["payment.completed"] })
        const api = yield* clientAs(app, m.owner.token)
        yield* api.notifications.updateChannel({ path: { storeId: m.storeId }, payload: { channel: "sms", destination: "+85599000000", events: ["payment.refunded"] } })
        const payment = yield* paidPayment(app, m.key, { amount: "12.50", reference_id: "order-9" })
        const sql = yield* SqlClient.SqlClient
        const sentFor = () =>
          sql<{ channel: string; event_type: string; status: string; text: string }>`
            SELECT channel, event_type, status, text FROM notification_messages WHERE store_id = ${m.storeId} ORDER BY created_at`
        let rows = yield* sentFor()
        // Recorded first (pending), then attempted: wait for the outcome.
        for (let i = 0; i < 100 && rows[0]?.status !== "sent"; i++) {
          yield* Effect.sleep("100 millis")
          rows = yield* sentFor()
        }
        expect(rows).toHaveLength(1)
        expect(rows[0]).toMatchObject({ channel: "telegram", event_type: "payment.completed", status: "sent" })
        expect(rows[0]!.text).toBe(`Payment received: 12.50 USD (${payment.id}, order order-9)`)
        expect(fake.requests.filter((r) => r.path.startsWith("/telegram"))).toHaveLength(1)

        // The same event again (a replay) sends nothing more.
        const [event] = yield* sql<{ event_id: string; payload: { data: { object: unknown } } }>`
          SELECT event_id, payload FROM outbox WHERE store_id = ${m.storeId} AND type = 'payment.completed'`
        const notifications = yield* NotificationsService
        yield* notifications.notify(m.storeId, event!.event_id, "payment.completed", event!.payload.data.object).pipe(
          AccessService.asSystem("the notifications consumer")
        )
        expect(yield* sentFor()).toHaveLength(1)
        expect(fake.requests.filter((r) => r.path.startsWith("/telegram"))).toHaveLength(1)

        // A partial refund reaches the sms channel, the one subscribed to refunds.
        yield* refund(app, m.owner.token, payment.id, { amount: "2.50" })
        for (let i = 0; i < 100 && (rows.length < 2 || rows[1]!.status !== "sent"); i++) {
          yield* Effect.sleep("100 millis")
          rows = yield* sentFor()
        }
        expect(rows[1]).toMatchObject({ channel: "sms", event_type: "payment.refunded", status: "sent" })
        expect(rows[1]!.text).toBe(`Payment refunded: 2.50 USD of 12.50 USD (${payment.id}, order order-9)`)
        expect(fake.requests.filter((r) => r.path === SMS_MESSAGES_PATH).map((r) => new URLSearchParams(r.body).get("To")))
          .toEqual(["+85599000000"])
      }))

    it.effect("keeps configs to the store's members: others 404, analysts read only, API keys 403", () =>
      Effect.gen(function*() {
        const { app } = yield* useFake
        const m = yield* merchant(app)
        const stranger = yield* merchant(app)
        for (const [method, path, body] of [
          ["GET", `/dashboard/stores/${m.storeId}/telegram`, undefined],
          ["PUT", `/dashboard/stores/${m.storeId}/telegram`, { chat_id: "1" }],
          ["POST", `/dashboard/stores/${m.storeId}/telegram/test`, undefined],
          ["GET", `/dashboard/stores/${m.storeId}/channels`, undefined],
          ["PUT", `/dashboard/stores/${m.storeId}/channels`, { channel: "sms", destination: "+1" }],
          ["POST", `/dashboard/stores/${m.storeId}/channels/sms/test`, undefined]
        ] as const) {
          const answer = yield* call(app, method, path, { token: stranger.owner.token, body })
          expect(answer.status, `${method} ${path}`).toBe(404)
          expect((yield* call(app, method, path, { token: m.key, body })).status, `${method} ${path} with a key`).toBe(403)
        }
        const analyst = yield* Effect.promise(() => addMember(app, m.owner.token, m.owner.organizationId, "analyst"))
        expect((yield* call(app, "GET", `/dashboard/stores/${m.storeId}/telegram`, { token: analyst.token })).status).toBe(200)
        expect((yield* call(app, "PUT", `/dashboard/stores/${m.storeId}/telegram`, { token: analyst.token, body: { chat_id: "1" } })).status).toBe(403)
        expect((yield* call(app, "GET", `/dashboard/stores/${m.storeId}/telegram`)).status).toBe(401)
      }))
  })
})
