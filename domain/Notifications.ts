/**
 * Messaging notifications of a store: Telegram and the other channels (WhatsApp, SMS, Signal), the events
 * they carry, and the messages sent.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import { InvalidStateResponse, NotFoundResponse } from "./Errors.ts"
import { NotificationId, StoreId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { closed, maxText, oneOf } from "./Text.ts"

const Timestamp = Schema.String.annotations({ description: "ISO 8601 time", examples: ["2026-01-05T10:00:00.000Z"] })
const listOf = <A, I, R>(item: Schema.Schema<A, I, R>, identifier: string) => ListOf(item).annotations({ identifier })
const StorePath = Schema.Struct({ storeId: StoreId })

export const NotificationEvents = [
  "payment.completed",
  "payment.refunded",
  "loyalty.redemption.created",
  "risk.case_opened"
] as const
const NotificationEvent = oneOf(...NotificationEvents)
const NotificationEventList = Schema.Array(NotificationEvent).pipe(Schema.maxItems(NotificationEvents.length * 2))

export const MessageChannels = ["whatsapp", "sms", "signal"] as const
export type MessageChannelName = (typeof MessageChannels)[number] | "telegram"

export class TelegramConfig extends Schema.Class<TelegramConfig>("TelegramConfig")({
  object: Schema.Literal("telegram_config"),
  store_id: StoreId,
  chat_id: Schema.NullOr(Schema.String),
  events: Schema.Array(Schema.String),
  enabled: Schema.Boolean
}) {}

export const UpdateTelegram = closed(Schema.Struct({
  chat_id: Schema.optional(maxText(64).pipe(Schema.minLength(1, { message: () => "must not be empty" }))),
  events: Schema.optional(NotificationEventList),
  enabled: Schema.optional(Schema.Boolean)
}), "UpdateTelegramDto")
export type UpdateTelegram = typeof UpdateTelegram.Type

export class ChannelConfig extends Schema.Class<ChannelConfig>("ChannelConfig")({
  object: Schema.Literal("channel_config"),
  channel: Schema.Literal(...MessageChannels),
  enabled: Schema.Boolean,
  destination: Schema.NullOr(Schema.String),
  events: Schema.Array(Schema.String)
}) {}

export const ChannelConfigList = listOf(ChannelConfig, "ChannelConfigList")

export const UpdateChannel = closed(Schema.Struct({
  channel: oneOf(...MessageChannels),
  enabled: Schema.optional(Schema.Boolean),
  destination: Schema.optional(maxText(64).pipe(Schema.minLength(1, { message: () => "must not be empty" }))),
  events: Schema.optional(NotificationEventList)
}), "UpdateChannelDto")
export type UpdateChannel = typeof UpdateChannel.Type

export class NotificationMessage extends Schema.Class<NotificationMessage>("NotificationMessage")({
  id: NotificationId,
  object: Schema.Literal("notification"),
  store_id: StoreId,
  channel: Schema.String,
  destination: Schema.String,
  event_type: Schema.String,
  text: Schema.String,
  status: Schema.Literal("pending", "sent", "failed"),
  attempts: Schema.Number,
  last_status_code: Schema.NullOr(Schema.Number),
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
}) {}

const ChannelPath = Schema.Struct({ storeId: StoreId, channel: maxText(32) })

export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("telegram", "/dashboard/stores/:storeId/telegram")
      .setPath(StorePath)
      .addSuccess(TelegramConfig)
      .annotate(OpenApi.Summary, "Messaging-app notification config")
      .annotate(OpenApi.Description, "The store's Telegram chat, events and enabled flag (disabled until configured).")
  )
  .add(
    HttpApiEndpoint.put("updateTelegram", "/dashboard/stores/:storeId/telegram")
      .setPath(StorePath)
      .setPayload(UpdateTelegram)
      .addSuccess(TelegramConfig)
      .annotate(OpenApi.Summary, "Configure Telegram notifications")
      .annotate(
        OpenApi.Description,
        "Messages go through the Bot API (`telegram_bot_token`, `telegram_api_base_url` platform settings). " +
          "Enabling without a chat id is 400 (`chat_id`)."
      )
  )
  .add(
    HttpApiEndpoint.post("testTelegram", "/dashboard/stores/:storeId/telegram/test")
      .setPath(StorePath)
      .addSuccess(NotificationMessage, { status: 201 })
      .annotate(OpenApi.Summary, "Send a test message")
      .annotate(
        OpenApi.Description,
        "Sends at once and answers the recorded message with its outcome (`status` sent, or pending with " +
          "`last_status_code`, `last_error` and `next_attempt_at`). A failed send (an error answer such as 401 " +
          "or 429, or no answer in 10 s) is retried 30 s, 2 min, 10 min and 1 h later — later when a 429 asks " +
          "for longer (Retry-After or Telegram's `retry_after`) — and is `failed` after the last. Messages for " +
          "events (payment.completed, payment.refunded, loyalty.redemption.created, risk.case_opened) are sent " +
          "and recorded the same way, once per event and channel. Without a chat id it is 409."
      )
  )
  .add(
    HttpApiEndpoint.get("channels", "/dashboard/stores/:storeId/channels")
      .setUrlParams(ListParams)
      .setPath(StorePath)
      .addSuccess(ChannelConfigList)
      .annotate(OpenApi.Summary, "Messaging channel configs")
      .annotate(OpenApi.Description, "whatsapp, sms and signal, each disabled until configured.")
  )
  .add(
    HttpApiEndpoint.put("updateChannel", "/dashboard/stores/:storeId/channels")
      .setPath(StorePath)
      .setPayload(UpdateChannel)
      .addSuccess(ChannelConfig)
      .annotate(OpenApi.Summary, "Configure a channel")
      .annotate(OpenApi.Description, "Enabling without a destination is 400 (`destination`).")
  )
  .add(
    HttpApiEndpoint.post("testChannel", "/dashboard/stores/:storeId/channels/:channel/test")
      .setPath(ChannelPath)
      .addSuccess(NotificationMessage, { status: 201 })
      .annotate(OpenApi.Summary, "Test message on a channel")
      .annotate(
        OpenApi.Description,
        "Sends through the channel's provider (`POST {<channel>_api_base_url}/messages` with " +
          "`Authorization: Bearer <channel>_api_token` and `{to, text}`, platform settings) and answers the " +
          "recorded message with its outcome, retried like Telegram's. An unknown channel is 404; a channel " +
          "without a destination is 409."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Notifications")
  .annotate(OpenApi.Description, "Store notifications on Telegram, WhatsApp, SMS and Signal.")
{}
