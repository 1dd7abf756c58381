/**
 * The notifications consumer of the outbox (payment, refund, redemption and risk events → messages), and
 * the retry singleton that tries failed sends again when their time (Clock) comes.
 */
import { Singleton } from "@effect/cluster"
import { Duration, Effect, Layer } from "effect"
import { AccessService } from "../access/Service.ts"
import { OutboxConsumer, type OutboxEvent } from "../platform/Outbox.ts"
import { NotificationsService } from "./Service.ts"

export const applyNotificationEvent = (event: OutboxEvent) =>
  Effect.flatMap(NotificationsService, (notifications) =>
    notifications.notify(event.storeId, event.eventId, event.type, event.object).pipe(
      AccessService.asSystem("notifying a store's channels of one of its events")
    ))

/** The consumer's name in `outbox_pending`, and the events it is subscribed to. */
export const NOTIFICATIONS_CONSUMER = "notifications"
export const NOTIFICATION_EVENT_TYPES = [
  "payment.completed",
  "payment.refunded",
  "loyalty.redemption.created",
  "risk.case_opened"
] as const

export const NotificationsConsumerLive = OutboxConsumer.make(NOTIFICATIONS_CONSUMER, {
  types: NOTIFICATION_EVENT_TYPES,
  apply: applyNotificationEvent
}).pipe(Layer.provide(NotificationsService.Default))

const RETRY_POLL = Duration.seconds(5)

export const NotificationRetriesLive = Singleton.make(
  "notifications/retries",
  Effect.gen(function*() {
    const notifications = yield* NotificationsService
    while (true) {
      yield* notifications.retryDue.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("notification retries failed", cause)),
        AccessService.asSystem("retrying the stores' failed notifications")
      )
      yield* Effect.sleep(RETRY_POLL)
    }
  })
).pipe(Layer.provide(NotificationsService.Default))
