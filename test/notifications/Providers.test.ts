/**
 * The whatsapp, sms and signal channels against local fakes of the real providers (ProviderFakes.ts):
 * the WhatsApp Cloud API, Twilio's Messages API and signal-cli-rest-api. Each fake refuses a request of
 * the wrong shape as the provider does, so a message recorded "sent" went out in the provider's own
 * format; the providers' refusals are recorded in their own words; a rate limit (429) is retried after
 * the provider's Retry-After when it gives one, else on the schedule; a missing setting is named.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { signUp } from "../support/Accounts.ts"
import { clientAs } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { type Merchant, storeWithKey } from "../support/Merchant.ts"
import { servicesOnTestApp } from "../support/Services.ts"
import { TestApp, type TestAppShape } from "../support/TestApp.ts"
import { ProviderFakes, SIGNAL, TWILIO, twilioError, WHATSAPP, whatsappError } from "./ProviderFakes.ts"

const call = makeCall()
const ADMIN_EMAIL = "providers-admin@example.test"

let adminToken: string | undefined
const admin = (app: TestAppShape) =>
  Effect.promise(async () => (adminToken ??= (await signUp(app, { email: ADMIN_EMAIL })).token))

const setSetting = (app: TestAppShape, key: string, value: string) =>
  Effect.gen(function*() {
    const answer = yield* call(app, "PUT", `/admin/settings/${key}`, { token: yield* admin(app), body: { value } })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  })

const deleteSetting = (app: TestAppShape, key: string) =>
  Effect.gen(function*() {
    expect((yield* call(app, "DELETE", `/admin/settings/${key}`, { token: yield* admin(app) })).status).toBe(200)
  })

/** Every provider set up as an operator would, pointing at the fakes. */
const configured = Effect.gen(function*() {
  const app = yield* TestApp
  const fakes = yield* ProviderFakes
  fakes.reset()
  const settings: Record<string, string> = {
    whatsapp_api_base_url: `${fakes.baseUrl}/whatsapp/${WHATSAPP.version}`,
    whatsapp_api_token: WHATSAPP.token,
    whatsapp_phone_number_id: WHATSAPP.phoneNumberId,
    sms_api_base_url: `${fakes.baseUrl}/twilio`,
    sms_account_sid: TWILIO.accountSid,
    sms_api_token: TWILIO.authToken,
    sms_from_number: TWILIO.from,
    signal_api_base_url: `${fakes.baseUrl}/signal`,
    signal_sender_number: SIGNAL.number
  }
  for (const [key, value] of Object.entries(settings)) yield* setSetting(app, key, value)
  return { app, fakes }
})

const merchantWith = (app: TestAppShape, channel: "whatsapp" | "sms" | "signal", destination: string) =>
  Effect.gen(function*() {
    const m: Merchant = yield* Effect.flatMap(Effect.promise(() => signUp(app)), (owner) => storeWithKey(app, owner))
    const api = yield* clientAs(app, m.owner.token)
    yield* api.notifications.updateChannel({ path: { storeId: m.storeId }, payload: { channel, destination } })
    return m
  })

const sendTest = (app: TestAppShape, m: Merchant, channel: string) =>
  Effect.map(call(app, "POST", `/dashboard/stores/${m.storeId}/channels/${channel}/test`, { token: m.owner.token }), (answer) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(201)
    return answer.body
  })

const secondsUntilNextAttempt = (record: any) => (Date.parse(record.next_attempt_at) - Date.parse(record.created_at)) / 1000

const suite = Layer.merge(servicesOnTestApp({ platformAdminEmails: [ADMIN_EMAIL] }), ProviderFakes.layer)

describe("messaging providers", () => {
  layer(suite, { timeout: 120_000, excludeTestServices: true })("against fakes of the real APIs", (it) => {
    it.effect("WhatsApp Cloud API: POST /{phone-number-id}/messages with a Bearer token and a text message", () =>
      Effect.gen(function*() {
        const { app, fakes } = yield* configured
        const m = yield* merchantWith(app, "whatsapp", "+85512000001")
        const sent = yield* sendTest(app, m, "whatsapp")
        expect(sent).toMatchObject({ channel: "whatsapp", status: "sent", last_status_code: 200, last_error: null })
        expect(fakes.calls).toHaveLength(1)
        expect(fakes.calls[0]).toMatchObject({
          path: `/whatsapp/${WHATSAPP.version}/${WHATSAPP.phoneNumberId}/messages`,
          body: { messaging_product: "whatsapp", recipient_type: "individual", to: "+85512000001", type: "text", text: { body: sent.text } }
        })
        expect(fakes.calls[0]!.headers.authorization).toBe(`Bearer ${WHATSAPP.token}`)
        expect(fakes.calls[0]!.headers["content-type"]).toBe("application/json")
      }))

    it.effect("Twilio: form-encoded To, From and Body to the account's Messages.json, with basic auth", () =>
      Effect.gen(function*() {
        const { app, fakes } = yield* configured
        const m = yield* merchantWith(app, "sms", "+85512000002")
        const sent = yield* sendTest(app, m, "sms")
        expect(sent).toMatchObject({ channel: "sms", status: "sent", last_status_code: 201, last_error: null })
        expect(fakes.calls[0]).toMatchObject({
          path: `/twilio/2010-04-01/Accounts/${TWILIO.accountSid}/Messages.json`,
          body: { To: "+85512000002", From: TWILIO.from, Body: sent.text }
        })
        expect(fakes.calls[0]!.headers["content-type"]).toContain("application/x-www-form-urlencoded")

        // A Messaging Service, where configured, sends instead of the number.
        yield* setSetting(app, "sms_messaging_service_sid", TWILIO.messagingServiceSid)
        expect(yield* sendTest(app, m, "sms")).toMatchObject({ status: "sent" })
        expect(fakes.calls[1]!.body).toEqual({ To: "+85512000002", MessagingServiceSid: TWILIO.messagingServiceSid, Body: sent.text })
        yield* deleteSetting(app, "sms_messaging_service_sid")
      }))

    it.effect("signal-cli-rest-api: POST /v2/send with the message, the sender number and the recipient", () =>
      Effect.gen(function*() {
        const { app, fakes } = yield* configured
        const m = yield* merchantWith(app, "signal", "+85512000003")
        const sent = yield* sendTest(app, m, "signal")
        expect(sent).toMatchObject({ channel: "signal", status: "sent", last_status_code: 201, last_error: null })
        expect(fakes.calls[0]).toMatchObject({
          path: "/signal/v2/send",
          body: { message: sent.text, number: SIGNAL.number, recipients: ["+85512000003"] }
        })
      }))

    it.effect("records each provider's refusal in its own words, and retries on the schedule", () =>
      Effect.gen(function*() {
        const { app, fakes } = yield* configured
        const whatsappMerchant = yield* merchantWith(app, "whatsapp", "+85512000004")
        fakes.next.push(whatsappError(
          400,
          131030,
          "Recipient phone number not in allowed list",
          "Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again."
        ))
        const refusedOnWhatsapp = yield* sendTest(app, whatsappMerchant, "whatsapp")
        expect(refusedOnWhatsapp).toMatchObject({ status: "pending", last_status_code: 400, attempts: 1 })
        expect(refusedOnWhatsapp.last_error).toBe(
          "answered 400: (#131030) Recipient phone number not in allowed list (Recipient phone number not in allowed list: " +
            "Add recipient phone number to recipient list and try again.)"
        )
        expect(secondsUntilNextAttempt(refusedOnWhatsapp)).toBeCloseTo(30, -1)

        const smsMerchant = yield* merchantWith(app, "sms", "+855 12")
        fakes.next.push(twilioError(400, 21211, "Invalid 'To' Phone Number: +855 12"))
        expect((yield* sendTest(app, smsMerchant, "sms")).last_error).toBe("answered 400: 21211 Invalid 'To' Phone Number: +855 12")

        // A wrong token is refused by the provider itself, not by a script.
        yield* setSetting(app, "sms_api_token", "not-the-token")
        expect((yield* sendTest(app, smsMerchant, "sms")).last_error).toBe("answered 401: 20003 Authenticate")

        const signalMerchant = yield* merchantWith(app, "signal", "+85512000006")
        yield* setSetting(app, "signal_sender_number", "+85599999999")
        expect((yield* sendTest(app, signalMerchant, "signal")).last_error).toBe("answered 400: User +85599999999 is not registered.")
      }))

    it.effect("a 429 waits as long as Retry-After says, and is recorded with the provider's reason", () =>
      Effect.gen(function*() {
        const { app, fakes } = yield* configured
        // Twilio's 20429 with a Retry-After of 300 s: longer than the schedule's 30 s, so it wins.
        const smsMerchant = yield* merchantWith(app, "sms", "+85512000007")
        fakes.next.push(twilioError(429, 20429, "Too Many Requests", { "retry-after": "300" }))
        const limited = yield* sendTest(app, smsMerchant, "sms")
        expect(limited).toMatchObject({ status: "pending", last_status_code: 429, last_error: "answered 429: 20429 Too Many Requests" })
        expect(secondsUntilNextAttempt(limited)).toBeGreaterThanOrEqual(299)
        expect(secondsUntilNextAttempt(limited)).toBeLessThanOrEqual(302)

        // Meta's throughput limit (130429) carries no Retry-After: the schedule's wait applies.
        const whatsappMerchant = yield* merchantWith(app, "whatsapp", "+85512000008")
        fakes.next.push(whatsappError(
          429,
          130429,
          "Rate limit hit",
          "Message failed to send because there were too many messages sent from this phone number in a short period of time"
        ))
        const throttled = yield* sendTest(app, whatsappMerchant, "whatsapp")
        expect(throttled).toMatchObject({ status: "pending", last_status_code: 429 })
        expect(throttled.last_error).toMatch(/^answered 429: \(#130429\) Rate limit hit/)
        expect(secondsUntilNextAttempt(throttled)).toBeCloseTo(30, -1)

        // signal-cli-rest-api's rate limit: 429 with the challenge tokens that lift it.
        const signalMerchant = yield* merchantWith(app, "signal", "+85512000009")
        fakes.next.push({
          status: 429,
          headers: { "retry-after": "Thu, 01 Jan 2099 00:00:00 GMT" },
          body: {
            error: "Failed to send message due to rate limiting. Use the attached challenge tokens to lift the rate limit " +
              "restrictions via the '/v1/accounts/{number}/rate-limit-challenge' endpoint.",
            challenge_tokens: ["6c4b9e1e-8f0f-4a5e-9d1e-3f7c2a1b0c9d"],
            account: SIGNAL.number
          }
        })
        const challenged = yield* sendTest(app, signalMerchant, "signal")
        expect(challenged.last_error).toMatch(/^answered 429: Failed to send message due to rate limiting/)
        // An HTTP-date Retry-After counts too: this one is decades away, far beyond the schedule.
        expect(secondsUntilNextAttempt(challenged)).toBeGreaterThan(86_400)
      }))

    it.effect("names the setting a channel lacks", () =>
      Effect.gen(function*() {
        const { app } = yield* configured
        yield* deleteSetting(app, "whatsapp_phone_number_id")
        const m = yield* merchantWith(app, "whatsapp", "+85512000010")
        expect((yield* sendTest(app, m, "whatsapp")).last_error).toBe("whatsapp_phone_number_id is not set")
        yield* deleteSetting(app, "sms_from_number")
        const s = yield* merchantWith(app, "sms", "+85512000011")
        expect((yield* sendTest(app, s, "sms")).last_error).toBe("sms_from_number (or sms_messaging_service_sid) is not set")
        yield* deleteSetting(app, "signal_sender_number")
        const g = yield* merchantWith(app, "signal", "+85512000012")
        expect((yield* sendTest(app, g, "signal")).last_error).toBe("signal_sender_number is not set")
      }))
  })
})
