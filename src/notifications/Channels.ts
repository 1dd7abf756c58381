/**
 * Messaging channels behind one interface, each speaking its provider's own API over HTTP; base URLs,
 * tokens and the provider-side identities are platform settings (falling back to the environment), so
 * tests point them at local fakes:
 *
 * - telegram: the Bot API, `POST {base}/bot{token}/sendMessage` `{chat_id, text}`;
 * - whatsapp: the WhatsApp Cloud API, `POST {base}/{phone-number-id}/messages` with a Bearer token and
 *   `{messaging_product: "whatsapp", to, type: "text", text: {body}}`;
 * - sms: Twilio's Messages API, `POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json`, form-encoded
 *   `To`, `From` (or `MessagingServiceSid`) and `Body`, basic auth `AccountSid:AuthToken`;
 * - signal: signal-cli-rest-api, `POST {base}/v2/send` `{message, number, recipients: [to]}`.
 *
 * A provider's refusal is recorded in its own words (Meta's `error.message`, Twilio's `code` and
 * `message`, signal-cli's `error`); a rate limit (429, or Meta's throttling codes) carries the wait the
 * provider asked for (`Retry-After`, or Telegram's `parameters.retry_after`) to the retry schedule.
 */
import { Effect, Option, Redacted } from "effect"
import type { MessageChannelName } from "../../domain/Notifications.ts"
import { SettingsService } from "../settings/Service.ts"

/** What one send came to: the provider's status, or an error in words. */
export interface SendOutcome {
  readonly ok: boolean
  readonly statusCode: number | null
  readonly error: string | null
  /** How long the provider asked us to wait (a 429's Retry-After, or Telegram's `parameters.retry_after`). */
  readonly retryAfterSeconds?: number
}

export interface MessageChannel {
  readonly send: (destination: string, text: string) => Effect.Effect<SendOutcome>
}

const SEND_TIMEOUT_MILLIS = 10_000

const DEFAULT_BASE_URLS: Record<MessageChannelName, string> = {
  telegram: "https://api.telegram.org",
  whatsapp: "https://graph.facebook.com/v21.0",
  sms: "https://api.twilio.com",
  signal: "http://localhost:8080"
}

/** Meta's throttling error codes (API calls, account, throughput, pair rate), answered with 429 or 400. */
const WHATSAPP_RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131056])

const parseJson = (text: string): any => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The wait a provider asked for: `Retry-After` in seconds or as an HTTP date, else Telegram's JSON field. */
const retryAfterOf = (headers: Headers, body: any): number | undefined => {
  const header = headers.get("retry-after")
  if (header !== null) {
    const seconds = Number(header)
    if (Number.isFinite(seconds) && seconds > 0) return Math.ceil(seconds)
    const until = Date.parse(header)
    if (Number.isFinite(until) && until > Date.now()) return Math.ceil((until - Date.now()) / 1000)
  }
  const stated = body?.parameters?.retry_after
  return typeof stated === "number" && stated > 0 ? stated : undefined
}

interface Refusal {
  /** The provider's reason, in its own words. */
  readonly reason: string
  readonly rateLimited: boolean
}

type ReadRefusal = (status: number, body: any, text: string) => Refusal

const refusalOf = {
  telegram: (status, body, text) => ({
    reason: typeof body?.description === "string" ? body.description : text.slice(0, 200),
    rateLimited: status === 429
  }),
  whatsapp: (status, body, text) => {
    const error = body?.error
    if (typeof error?.message !== "string") return { reason: text.slice(0, 200), rateLimited: status === 429 }
    const details = typeof error.error_data?.details === "string" ? ` (${error.error_data.details})` : ""
    return { reason: `${error.message}${details}`, rateLimited: status === 429 || WHATSAPP_RATE_LIMIT_CODES.has(error.code) }
  },
  sms: (status, body, text) => ({
    reason: typeof body?.message === "string" ? `${body.code ?? status} ${body.message}` : text.slice(0, 200),
    rateLimited: status === 429
  }),
  signal: (status, body, text) => ({
    reason: typeof body?.error === "string" ? body.error.trim() : text.slice(0, 200),
    rateLimited: status === 429
  })
} satisfies Record<MessageChannelName, ReadRefusal>

const post = (
  url: string,
  request: { readonly headers: Record<string, string>; readonly body: string },
  readRefusal: ReadRefusal
): Effect.Effect<SendOutcome> =>
  Effect.tryPromise({
    try: (signal) =>
      fetch(url, {
        method: "POST",
        headers: request.headers,
        body: request.body,
        redirect: "manual",
        signal: AbortSignal.any([signal, AbortSignal.timeout(SEND_TIMEOUT_MILLIS)])
      }),
    catch: (cause) => cause
  }).pipe(
    Effect.flatMap((response) =>
      Effect.promise(() => response.text().catch(() => "")).pipe(
        Effect.map((text): SendOutcome => {
          if (response.ok) return { ok: true, statusCode: response.status, error: null }
          const body = parseJson(text)
          const refusal = readRefusal(response.status, body, text)
          const failed = { ok: false, statusCode: response.status, error: `answered ${response.status}: ${refusal.reason}` }
          const retryAfterSeconds = refusal.rateLimited ? retryAfterOf(response.headers, body) : undefined
          return retryAfterSeconds === undefined ? failed : { ...failed, retryAfterSeconds }
        })
      )
    ),
    Effect.catchAll((cause) =>
      Effect.succeed<SendOutcome>({
        ok: false,
        statusCode: null,
        error: `could not send: ${cause instanceof Error ? cause.message : String(cause)}`
      })
    )
  )

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

const notSet = (key: string): SendOutcome => ({ ok: false, statusCode: null, error: `${key} is not set` })

export const makeChannels = Effect.gen(function*() {
  const settings = yield* SettingsService
  const setting = (key: string) =>
    Effect.map(settings.get(key), (value) => Option.filter(Option.map(value, Redacted.value), (text) => text.trim() !== ""))

  const baseUrl = (channel: MessageChannelName) =>
    Effect.map(setting(`${channel}_api_base_url`), (value) => Option.getOrElse(value, () => DEFAULT_BASE_URLS[channel]).replace(/\/+$/, ""))

  const telegram: MessageChannel = {
    send: (chatId, text) =>
      Effect.gen(function*() {
        const token = yield* setting("telegram_bot_token")
        if (Option.isNone(token)) return notSet("telegram_bot_token")
        const base = yield* baseUrl("telegram")
        return yield* post(`${base}/bot${token.value}/sendMessage`, json({ chat_id: chatId, text }), refusalOf.telegram)
      })
  }

  const whatsapp: MessageChannel = {
    send: (to, text) =>
      Effect.gen(function*() {
        const token = yield* setting("whatsapp_api_token")
        if (Option.isNone(token)) return notSet("whatsapp_api_token")
        const phoneNumberId = yield* setting("whatsapp_phone_number_id")
        if (Option.isNone(phoneNumberId)) return notSet("whatsapp_phone_number_id")
        const base = yield* baseUrl("whatsapp")
        return yield* post(
          `${base}/${encodeURIComponent(phoneNumberId.value)}/messages`,
          json(
            { messaging_product: "whatsapp", recipient_type: "individual", to, type: "text", text: { preview_url: false, body: text } },
            { authorization: `Bearer ${token.value}` }
          ),
          refusalOf.whatsapp
        )
      })
  }

  const sms: MessageChannel = {
    send: (to, text) =>
      Effect.gen(function*() {
        const accountSid = yield* setting("sms_account_sid")
        if (Option.isNone(accountSid)) return notSet("sms_account_sid")
        const token = yield* setting("sms_api_token")
        if (Option.isNone(token)) return notSet("sms_api_token")
        const messagingServiceSid = yield* setting("sms_messaging_service_sid")
        const from = yield* setting("sms_from_number")
        // Twilio takes a sender number or a Messaging Service; the service wins where both are set.
        const sender = Option.isSome(messagingServiceSid)
          ? { MessagingServiceSid: messagingServiceSid.value }
          : Option.isSome(from)
          ? { From: from.value }
          : undefined
        if (sender === undefined) return notSet("sms_from_number (or sms_messaging_service_sid)")
        const base = yield* baseUrl("sms")
        const credentials = Buffer.from(`${accountSid.value}:${token.value}`).toString("base64")
        return yield* post(
          `${base}/2010-04-01/Accounts/${encodeURIComponent(accountSid.value)}/Messages.json`,
          {
            headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${credentials}` },
            body: new URLSearchParams({ To: to, ...sender, Body: text }).toString()
          },
          refusalOf.sms
        )
      })
  }

  const signal: MessageChannel = {
    send: (to, text) =>
      Effect.gen(function*() {
        const number = yield* setting("signal_sender_number")
        if (Option.isNone(number)) return notSet("signal_sender_number")
        // signal-cli-rest-api has no authentication of its own; a token is for a proxy in front of it.
        const token = yield* setting("signal_api_token")
        const base = yield* baseUrl("signal")
        return yield* post(
          `${base}/v2/send`,
          json(
            { message: text, number: number.value, recipients: [to] },
            Option.isSome(token) ? { authorization: `Bearer ${token.value}` } : {}
          ),
          refusalOf.signal
        )
      })
  }

  const channels: Record<MessageChannelName, MessageChannel> = { telegram, whatsapp, sms, signal }
  return channels
})
