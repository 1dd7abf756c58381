/**
 * Messaging channels behind one interface. Each sends over HTTP to a provider whose base URL and token
 * are platform settings (so tests point them at a local fake): Telegram's Bot API `sendMessage`, and a
 * generic messages API (`POST {base}/messages`, Bearer token, `{ to, text }`) for whatsapp, sms, signal.
 */
import { Effect, Option, Redacted } from "effect"
import type { MessageChannelName } from "../../domain/Connectors.ts"
import { SettingsService } from "../settings/Service.ts"

/** What one send came to: the provider's status, or an error in words. */
export interface SendOutcome {
  readonly ok: boolean
  readonly statusCode: number | null
  readonly error: string | null
  /** How long the provider asked us to wait (a 429's Retry-After, or Telegram's `parameters.retry_after`). */
  readonly retryAfterSeconds?: number
}

/** The wait a provider asked for, from the Retry-After header or Telegram's JSON answer. */
const retryAfterOf = (response: Response, body: string): number | undefined => {
  const header = Number(response.headers.get("retry-after"))
  if (Number.isFinite(header) && header > 0) return header
  try {
    const parsed = JSON.parse(body) as { parameters?: { retry_after?: unknown } }
    const stated = parsed.parameters?.retry_after
    return typeof stated === "number" && stated > 0 ? stated : undefined
  } catch {
    return undefined
  }
}

export interface MessageChannel {
  readonly send: (destination: string, text: string) => Effect.Effect<SendOutcome>
}

const SEND_TIMEOUT_MILLIS = 10_000

const DEFAULT_BASE_URLS: Record<MessageChannelName, string> = {
  telegram: "https://api.telegram.org",
  whatsapp: "https://graph.facebook.com/v19.0",
  sms: "https://api.twilio.com",
  signal: "http://localhost:8080"
}

const postJson = (url: string, headers: Record<string, string>, body: unknown): Effect.Effect<SendOutcome> =>
  Effect.tryPromise({
    try: (signal) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
        redirect: "manual",
        signal: AbortSignal.any([signal, AbortSignal.timeout(SEND_TIMEOUT_MILLIS)])
      }),
    catch: (cause) => cause
  }).pipe(
    Effect.flatMap((response) =>
      Effect.promise(() => response.text().catch(() => "")).pipe(
        Effect.map((text): SendOutcome => {
          if (response.ok) return { ok: true, statusCode: response.status, error: null }
          const retryAfterSeconds = response.status === 429 ? retryAfterOf(response, text) : undefined
          const failed = { ok: false, statusCode: response.status, error: `answered ${response.status}: ${text.slice(0, 200)}` }
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

export const makeChannels = Effect.gen(function*() {
  const settings = yield* SettingsService
  const setting = (key: string) => Effect.map(settings.get(key), Option.map(Redacted.value))

  const baseUrl = (channel: MessageChannelName) =>
    Effect.map(setting(`${channel}_api_base_url`), (value) => Option.getOrElse(value, () => DEFAULT_BASE_URLS[channel]).replace(/\/+$/, ""))

  const telegram: MessageChannel = {
    send: (chatId, text) =>
      Effect.gen(function*() {
        const token = yield* setting("telegram_bot_token")
        if (Option.isNone(token)) return { ok: false, statusCode: null, error: "telegram_bot_token is not set" }
        const base = yield* baseUrl("telegram")
        return yield* postJson(`${base}/bot${token.value}/sendMessage`, {}, { chat_id: chatId, text })
      })
  }

  const generic = (channel: "whatsapp" | "sms" | "signal"): MessageChannel => ({
    send: (to, text) =>
      Effect.gen(function*() {
        const token = yield* setting(`${channel}_api_token`)
        if (Option.isNone(token)) return { ok: false, statusCode: null, error: `${channel}_api_token is not set` }
        const base = yield* baseUrl(channel)
        return yield* postJson(`${base}/messages`, { authorization: `Bearer ${token.value}` }, { to, text })
      })
  })

  const channels: Record<MessageChannelName, MessageChannel> = {
    telegram,
    whatsapp: generic("whatsapp"),
    sms: generic("sms"),
    signal: generic("signal")
  }
  return channels
})
