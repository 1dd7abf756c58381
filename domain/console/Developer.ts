/**
 * The console's developer procedures: a store's events as they are written, the stream `khqr listen`
 * forwards to a local URL (as `stripe listen --forward-to` does).
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, NotFound } from "../Errors.ts"
import { EventId, StoreId } from "../Ids.ts"
import { WebhookEvent } from "../Webhooks.ts"

/** An event of the followed store was written: its body as a webhook delivery carries it. */
export class EventOccurred extends Schema.TaggedClass<EventOccurred>()("EventOccurred", {
  event: WebhookEvent
}) {}

/**
 * The feed follows from here: sent first, once subscribed (and after `after`'s later events, when given).
 * `last_event_id` is the newest event before the feed, to pass as `after` when subscribing again.
 */
export class EventFeedSynced extends Schema.TaggedClass<EventFeedSynced>()("EventFeedSynced", {
  last_event_id: Schema.NullOr(EventId)
}) {}

export const EventFeedFrame = Schema.Union(EventFeedSynced, EventOccurred)
export type EventFeedFrame = typeof EventFeedFrame.Type

export class DeveloperRpcs extends RpcGroup.make(
  /**
   * The events of a store in one mode as they are written, every type, in the order written (needs
   * webhook.manage on the store, as creating an endpoint does). With `after` (an event of the store),
   * the events written since it come first, so a client that subscribes again misses none. Ends after a
   * while like PaymentFeed: subscribe again with `after`.
   */
  Rpc.make("EventFeed", {
    payload: Schema.Struct({
      store_id: StoreId,
      livemode: Schema.optionalWith(Schema.Boolean, { default: () => false }),
      after: Schema.optional(EventId)
    }),
    success: EventFeedFrame,
    error: Schema.Union(Forbidden, NotFound, InvalidRequest),
    stream: true
  })
).middleware(ConsoleAuthentication) {}
