/**
 * Per-store notification configs (Telegram and the other channels) and the messages sent: every send is
 * recorded with its outcome and, when it failed, its next attempt on the retry schedule (Clock time).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import {
  ChannelConfig,
  type MessageChannelName,
  MessageChannels,
  NotificationMessage,
  TelegramConfig,
  type UpdateChannel,
  type UpdateTelegram
} from "../../domain/Notifications.ts"
import { InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { NotificationId, StoreId } from "../../domain/Ids.ts"
import { AccessService, type StoreAccess, touchesStoreData } from "../access/Service.ts"
import { newId } from "../platform/Ids.ts"
import { oncePerPass } from "../platform/Outbox.ts"
import { currentDate } from "../platform/Time.ts"
import { SettingsService } from "../settings/Service.ts"
import { fixedPage } from "../platform/FixedList.ts"
import { keysetAfter, type ListParams, newestFirst, pageAfter } from "../platform/Pagination.ts"
import { makeChannels } from "./Channels.ts"
import { renderMessage } from "./Render.ts"
import { traced } from "../platform/Traced.ts"

/**
 * A message recorded but never attempted (its process stopped in between) is tried by the retries after
 * this long; sooner, its first attempt may still be under way.
 */
const UNATTEMPTED_GRACE_MILLIS = 60_000

/** The waits before each retry of a failed send; after the last the message stays failed. */
export const NOTIFICATION_RETRY_SECONDS = [30, 120, 600, 3600] as const

interface ConfigRow {
  readonly channel: MessageChannelName
  readonly destination: string | null
  readonly events: ReadonlyArray<string>
  readonly enabled: boolean
}

interface MessageRow {
  readonly id: NotificationId
  readonly store_id: StoreId
  readonly channel: string
  readonly destination: string
  readonly event_type: string
  readonly text: string
  readonly status: "pending" | "sent" | "failed"
  readonly attempts: number
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly next_attempt_at: Date | null
  readonly created_at: Date
}

const DEFAULT_EVENTS = ["payment.completed", "payment.refunded"]

const toMessage = (row: MessageRow) =>
  new NotificationMessage({
    id: row.id,
    object: "notification",
    store_id: row.store_id,
    channel: row.channel,
    destination: row.destination,
    event_type: row.event_type,
    text: row.text,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString()
  })

export class NotificationsService extends Effect.Service<NotificationsService>()("notifications/NotificationsService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* AccessService
    const channels = yield* makeChannels

    const configOf = (storeId: StoreId, channel: MessageChannelName) =>
      touchesStoreData(Effect.map(
        sql<ConfigRow>`SELECT channel, destination, events, enabled FROM notification_configs WHERE store_id = ${storeId} AND channel = ${channel}`,
        (rows): ConfigRow => rows[0] ?? { channel, destination: null, events: DEFAULT_EVENTS, enabled: false }
      ).pipe(Effect.orDie))

    const saveConfig = (storeId: StoreId, config: ConfigRow) =>
      Effect.gen(function*() {
        if (config.enabled && config.destination === null) {
          return yield* new InvalidRequest({
            message: `set ${config.channel === "telegram" ? "chat_id" : "destination"} before enabling`,
            param: config.channel === "telegram" ? "chat_id" : "destination"
          })
        }
        const now = yield* currentDate
        yield* touchesStoreData(sql`
          INSERT INTO notification_configs (store_id, channel, destination, events, enabled, updated_at)
          VALUES (${storeId}, ${config.channel}, ${config.destination}, ${[...new Set(config.events)]}::text[], ${config.enabled}, ${now})
          ON CONFLICT (store_id, channel) DO UPDATE SET destination = EXCLUDED.destination, events = EXCLUDED.events,
            enabled = EXCLUDED.enabled, updated_at = EXCLUDED.updated_at`.pipe(Effect.orDie))
      })

    const merge = (current: ConfigRow, changes: { destination?: string | undefined; events?: ReadonlyArray<string> | undefined; enabled?: boolean | undefined }): ConfigRow => ({
      channel: current.channel,
      destination: changes.destination ?? current.destination,
      events: changes.events ?? current.events,
      // Giving a destination to an unconfigured channel turns it on unless told otherwise.
      enabled: changes.enabled ?? (current.destination === null && changes.destination !== undefined ? true : current.enabled)
    })

    const telegramView = (storeId: StoreId, row: ConfigRow) =>
      new TelegramConfig({ object: "telegram_config", store_id: storeId, chat_id: row.destination, events: row.events, enabled: row.enabled })
    const channelView = (row: ConfigRow) =>
      new ChannelConfig({ object: "channel_config", channel: row.channel as (typeof MessageChannels)[number], enabled: row.enabled, destination: row.destination, events: row.events })

    const storeFor = <A, E, R>(storeId: StoreId, write: boolean, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, write ? "integration.manage" : "store.read", use))

    /** One attempt at a recorded message; the record is updated with the outcome and the next attempt. */
    const attempt = (row: MessageRow) =>
      Effect.gen(function*() {
        const outcome = yield* channels[row.channel as MessageChannelName].send(row.destination, row.text)
        const now = yield* currentDate
        const attempts = row.attempts + 1
        const wait = NOTIFICATION_RETRY_SECONDS[attempts - 1]
        const status = outcome.ok ? "sent" : wait === undefined ? "failed" : "pending"
        // A provider that asked for a longer wait (429 Retry-After) gets it; never a shorter one than the schedule's.
        const waitSeconds = Math.max(wait ?? 0, outcome.retryAfterSeconds ?? 0)
        const next = status === "pending" ? new Date(now.getTime() + waitSeconds * 1000) : null
        const rows = yield* sql<MessageRow>`
          UPDATE notification_messages SET status = ${status}, attempts = ${attempts}, last_status_code = ${outcome.statusCode},
            last_error = ${outcome.error}, next_attempt_at = ${next}
          WHERE id = ${row.id} RETURNING *`.pipe(Effect.orDie)
        return rows[0]!
      })

    /** Records a message (once per store, channel and event) and makes its first attempt. */
    const send = (storeId: StoreId, channel: MessageChannelName, destination: string, eventId: string, eventType: string, text: string) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const rows = yield* touchesStoreData(sql<MessageRow>`
          INSERT INTO notification_messages (id, store_id, channel, destination, event_id, event_type, text, status, next_attempt_at, created_at)
          VALUES (${newId("ntf")}, ${storeId}, ${channel}, ${destination}, ${eventId}, ${eventType}, ${text}, 'pending', ${now}, ${now})
          ON CONFLICT (store_id, channel, event_id) DO NOTHING RETURNING *`.pipe(Effect.orDie))
        const inserted = rows[0]
        return inserted === undefined ? undefined : yield* attempt(inserted)
      })

    const sendTest = (storeId: StoreId, channel: MessageChannelName) =>
      Effect.gen(function*() {
        const config = yield* configOf(storeId, channel)
        if (config.destination === null) {
          return yield* new InvalidState({ message: `${channel} has no ${channel === "telegram" ? "chat id" : "destination"} yet; configure it first` })
        }
        const sent = yield* send(storeId, channel, config.destination, newId("evt"), "test.message", renderMessage("test.message", {}))
        return toMessage(sent!)
      })

    const requireChannel = (channel: string) =>
      (MessageChannels as ReadonlyArray<string>).includes(channel)
        ? Effect.succeed(channel as MessageChannelName)
        : Effect.fail(new NotFound({ message: `No such channel: ${channel}; use one of ${MessageChannels.join(", ")}`, param: "channel" }))

    return {
      telegram: traced("Notifications.telegram")(function*(storeId: StoreId) {
        return yield* storeFor(storeId, false, (store) =>
          Effect.gen(function*() {
            return telegramView(store.storeId, yield* configOf(store.storeId, "telegram"))
          }))
      }),
      updateTelegram: traced("Notifications.updateTelegram")(function*(storeId: StoreId, changes: UpdateTelegram) {
        return yield* storeFor(storeId, true, (store) =>
          Effect.gen(function*() {
            const next = merge(yield* configOf(store.storeId, "telegram"), { destination: changes.chat_id, events: changes.events, enabled: changes.enabled })
            yield* saveConfig(store.storeId, next)
            return telegramView(store.storeId, next)
          }))
      }),
      testTelegram: traced("Notifications.testTelegram")(function*(storeId: StoreId) {
        return yield* storeFor(storeId, true, (store) => sendTest(store.storeId, "telegram"))
      }),
      channels: traced("Notifications.channels")(function*(storeId: StoreId, params: ListParams) {
        return yield* storeFor(storeId, false, (store) =>
          Effect.gen(function*() {
            const all = yield* Effect.forEach(MessageChannels, (channel) => Effect.map(configOf(store.storeId, channel), channelView))
            return yield* fixedPage(all, (config) => config.channel, params)
          }))
      }),
      updateChannel: traced("Notifications.updateChannel")(function*(storeId: StoreId, changes: UpdateChannel) {
        return yield* storeFor(storeId, true, (store) =>
          Effect.gen(function*() {
            const next = merge(yield* configOf(store.storeId, changes.channel), changes)
            yield* saveConfig(store.storeId, next)
            return channelView(next)
          }))
      }),
      testChannel: traced("Notifications.testChannel")(function*(storeId: StoreId, channel: string) {
        return yield* storeFor(storeId, true, (store) => Effect.flatMap(requireChannel(channel), (name) => sendTest(store.storeId, name)))
      }),
      /** The store's messages on every channel (tests and events), newest first: the delivery log. */
      messages: traced("Notifications.messages")(function*(storeId: StoreId, params: ListParams) {
        return yield* storeFor(storeId, false, (store) =>
          Effect.gen(function*() {
            const page = yield* pageAfter(params, (position) =>
              touchesStoreData(sql<MessageRow>`
                SELECT * FROM notification_messages WHERE store_id = ${store.storeId} AND ${keysetAfter(sql, position)}
                ORDER BY ${newestFirst(sql)} LIMIT ${params.limit + 1}`.pipe(Effect.orDie)))
            return { ...page, data: page.data.map(toMessage) }
          }))
      }),
      /** Sends an event's message on every enabled channel of its store subscribed to its type (idempotent). */
      notify: (storeId: StoreId, eventId: string, eventType: string, object: unknown) =>
        Effect.gen(function*() {
          // Read once per pass of the consumer for each store and type (src/platform/Outbox.ts).
          const configs = yield* oncePerPass(`notifications.configs:${storeId}:${eventType}`, touchesStoreData(sql<ConfigRow>`
            SELECT channel, destination, events, enabled FROM notification_configs
            WHERE store_id = ${storeId} AND enabled AND destination IS NOT NULL AND ${eventType} = ANY (events)`.pipe(Effect.orDie)))
          yield* Effect.forEach(configs, (config) =>
            send(storeId, config.channel, config.destination!, eventId, eventType, renderMessage(eventType, object)), { discard: true })
        }),
      /** One attempt at each failed message whose retry is due; answers how many were tried. */
      retryDue: Effect.gen(function*() {
        const now = yield* currentDate
        const due = yield* touchesStoreData(sql<MessageRow>`
          SELECT * FROM notification_messages WHERE status = 'pending' AND next_attempt_at <= ${now}
            AND (attempts > 0 OR created_at <= ${new Date(now.getTime() - UNATTEMPTED_GRACE_MILLIS)})
          ORDER BY next_attempt_at LIMIT 100`.pipe(Effect.orDie))
        yield* Effect.forEach(due, attempt, { concurrency: 8, discard: true })
        return due.length
      })
    } as const
  }),
  dependencies: [AccessService.Default, SettingsService.Default]
}) {}
