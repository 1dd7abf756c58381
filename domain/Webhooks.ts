/**
 * Webhook endpoints: where a store's events are delivered, signed by the Standard Webhooks scheme
 * (API.md "Webhooks"), and the record of every delivery attempt. An endpoint's signing secret is shown
 * when it is created, revealed or rotated, and nowhere else; at rest it is sealed under the master key.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import {
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse
} from "./Errors.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { EventId, StoreId, WebhookDeliveryId, WebhookEndpointId } from "./Ids.ts"
import { closed } from "./Text.ts"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/** Every event type an endpoint can subscribe to; `*` subscribes to all of them. */
export const WebhookEventTypes = [
  "payment.completed",
  "payment.refunded",
  "payment.failed",
  "payment.expired",
  "payment.cancelled",
  "payment.scanned",
  "loyalty.points_earned",
  "loyalty.redemption.created",
  "loyalty.redemption.cancelled",
  "referral.converted",
  "referral.flagged",
  "commission.paid",
  "promotion.activated",
  "promotion.ended",
  "risk.case_opened",
  "game.prize_awarded",
  "test.event"
] as const
export type WebhookEventType = (typeof WebhookEventTypes)[number]

export const ALL_EVENTS = "*"

const eventList = [...WebhookEventTypes, ALL_EVENTS].map((type) => `"${type}"`).join(", ")

export const WebhookEventSelector = Schema.Literal(...WebhookEventTypes, ALL_EVENTS).annotations({
  // `override`: without it a union of literals reports its first member only.
  message: () => ({ message: `must be one of ${eventList}`, override: true }),
  description: "An event type, or `*` for every event type."
})

export const WebhookEvents = Schema.Array(WebhookEventSelector).pipe(
  Schema.minItems(1, { message: () => "must name at least one event type" }),
  Schema.filter((types) => new Set(types).size === types.length || "must not name an event type twice", { jsonSchema: {} })
).annotations({
  description: `The event types delivered to the endpoint: any of ${eventList}.`,
  examples: [["payment.completed", "payment.refunded"]]
})

const MAX_URL_LENGTH = 2048

/**
 * The shape of a webhook URL. Whether its scheme and the addresses its host resolves to are allowed
 * depends on configuration and DNS, so that is checked by the service, not here.
 */
export const WebhookUrl = Schema.String.pipe(
  Schema.maxLength(MAX_URL_LENGTH, { message: () => `must be at most ${MAX_URL_LENGTH} characters` }),
  Schema.filter((value) => {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return "must be an absolute https:// URL"
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an https:// URL"
    if (url.hostname.length === 0) return "must name a host"
    if (url.username !== "" || url.password !== "") return "must not contain a user name or password"
    if (url.hash !== "") return "must not contain a #fragment"
    return true
  }, { jsonSchema: {} })
).annotations({
  description: "An absolute https:// URL on the public internet (plain http and private addresses only where " +
    "WEBHOOK_ALLOW_PRIVATE_NETWORKS is on).",
  examples: ["https://shop.example.com/hooks/khqr"]
})

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

const endpointFields = {
  id: WebhookEndpointId,
  object: Schema.Literal("webhook_endpoint"),
  store_id: StoreId,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  enabled: Schema.Boolean.annotations({
    description: "Whether events are delivered. An endpoint that answers 410 Gone is disabled by the service."
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}

/** An endpoint as listed and updated: never with its secret. */
export class WebhookEndpoint extends Schema.Class<WebhookEndpoint>("WebhookEndpoint")(endpointFields) {}

/** An endpoint in the answers that show its signing secret: create, reveal, rotate. */
export class WebhookEndpointWithSecret extends Schema.Class<WebhookEndpointWithSecret>("WebhookEndpointWithSecret")({
  ...endpointFields,
  secret: Schema.String.annotations({
    description: "The signing secret: `whsec_` and the base64 of 32 random bytes. Verify deliveries with it " +
      "(Standard Webhooks: the HMAC-SHA256 key is the base64-decoded part after `whsec_`).",
    examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4f2WcR0ztQw="]
  })
}) {}

export class DeletedWebhookEndpoint extends Schema.Class<DeletedWebhookEndpoint>("DeletedWebhookEndpoint")({
  id: WebhookEndpointId,
  object: Schema.Literal("webhook_endpoint"),
  deleted: Schema.Literal(true)
}) {}

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: WebhookDeliveryId,
  object: Schema.Literal("webhook_delivery"),
  endpoint_id: WebhookEndpointId,
  event_id: EventId.annotations({ description: "The event's id, sent as the `webhook-id` header." }),
  event_type: Schema.String,
  attempt: Schema.Int.annotations({ description: "1 for the first attempt to deliver this event to this endpoint, then 2, 3, …" }),
  status_code: Schema.NullOr(Schema.Int).annotations({ description: "The receiver's HTTP status; null when it gave no answer." }),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String).annotations({ description: "Why the attempt failed; null for a 2xx answer." }),
  created_at: Schema.String.annotations({ description: "When the attempt started." })
}) {}

/** The body of every webhook delivery (API.md "Webhooks"). */
export class WebhookEvent extends Schema.Class<WebhookEvent>("WebhookEvent")({
  id: EventId,
  object: Schema.Literal("event"),
  type: Schema.String,
  created_at: Schema.String,
  livemode: Schema.Boolean,
  data: Schema.Struct({ object: Schema.Unknown })
}) {}

export const WebhookEndpointList = ListOf(WebhookEndpoint).annotations({ identifier: "WebhookEndpointList" })
export const WebhookDeliveryList = ListOf(WebhookDelivery).annotations({ identifier: "WebhookDeliveryList" })

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

export const CreateWebhookEndpoint = closed(
  Schema.Struct({
    store_id: StoreId,
    url: WebhookUrl,
    events: WebhookEvents,
    enabled: Schema.optional(Schema.Boolean.annotations({ description: "Defaults to true." }))
  }),
  "CreateWebhookDto"
)
export type CreateWebhookEndpoint = typeof CreateWebhookEndpoint.Type

export const UpdateWebhookEndpoint = closed(
  Schema.Struct({
    url: Schema.optional(WebhookUrl),
    events: Schema.optional(WebhookEvents),
    enabled: Schema.optional(Schema.Boolean)
  }),
  "UpdateWebhookDto"
)
export type UpdateWebhookEndpoint = typeof UpdateWebhookEndpoint.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const IdPath = Schema.Struct({ id: WebhookEndpointId })

const QUEUED = "The event is queued behind the endpoint's earlier deliveries (an endpoint receives its events " +
  "one at a time, in order) and goes out within about a second when nothing is ahead of it; its attempts " +
  "appear in the endpoint's deliveries. A disabled endpoint is 409 `invalid_state`."

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/webhook-endpoints")
      .setPayload(CreateWebhookEndpoint)
      .addSuccess(WebhookEndpointWithSecret, { status: 201 })
      .annotate(OpenApi.Summary, "Register an endpoint; its signing secret is in this answer")
      .annotate(
        OpenApi.Description,
        "Needs `webhook.manage` on the store, from a user session. The URL must be https and its host must " +
          "not resolve to a loopback, private, link-local or unspecified address (both allowed only where " +
          "WEBHOOK_ALLOW_PRIVATE_NETWORKS is on); the same check runs again before every delivery. " +
          "An endpoint receives the events of its store in both modes; each event says its `livemode`."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/webhook-endpoints")
      .setUrlParams(Schema.Struct({
        store_id: StoreId.annotations({ description: "The store whose endpoints to list (required)." }),
        ...ListParams.fields
      }))
      .addSuccess(WebhookEndpointList)
      .annotate(OpenApi.Summary, "List a store's endpoints, newest first; never their secrets")
      .annotate(
        OpenApi.Description,
        "Needs `webhook.manage` on the store. Secrets are shown only on create, reveal and rotate."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/webhook-endpoints/:id")
      .setPath(IdPath)
      .setPayload(UpdateWebhookEndpoint)
      .addSuccess(WebhookEndpoint)
      .annotate(OpenApi.Summary, "Change an endpoint's URL, events or enabled flag")
      .annotate(
        OpenApi.Description,
        "Changes only the fields sent. Disabling an endpoint drops the deliveries still waiting for it; " +
          "events that happen while it is disabled are not delivered later."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/webhook-endpoints/:id")
      .setPath(IdPath)
      .addSuccess(DeletedWebhookEndpoint)
      .annotate(OpenApi.Summary, "Delete an endpoint, its waiting deliveries and its delivery history")
      .annotate(
        OpenApi.Description,
        "Answers `{ id, object: \"webhook_endpoint\", deleted: true }`. Events already sent are not recalled."
      )
  )
  .add(
    HttpApiEndpoint.get("revealSecret", "/webhook-endpoints/:id/secret")
      .setPath(IdPath)
      .addSuccess(WebhookEndpointWithSecret)
      .annotate(OpenApi.Summary, "Reveal the endpoint's active signing secret")
      .annotate(OpenApi.Description, "Needs `webhook.manage`. After a rotation this is the new secret.")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhook-endpoints/:id/rotate-secret")
      .setPath(IdPath)
      .addSuccess(WebhookEndpointWithSecret, { status: 201 })
      .annotate(OpenApi.Summary, "Issue a new signing secret; the old one keeps signing for 24 hours")
      .annotate(
        OpenApi.Description,
        "For 24 hours after a rotation every delivery carries two signatures in `webhook-signature`, one " +
          "with the new secret and one with the old, so a receiver can switch secrets without losing a delivery."
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhook-endpoints/:id/deliveries")
      .setPath(IdPath)
      .setUrlParams(ListParams)
      .addSuccess(WebhookDeliveryList)
      .annotate(OpenApi.Summary, "List the endpoint's delivery attempts, newest first")
      .annotate(
        OpenApi.Description,
        "One record per attempt: the receiver's status code (null when it did not answer), the duration and the error."
      )
  )
  .add(
    HttpApiEndpoint.post("sendTest", "/webhook-endpoints/:id/test")
      .setPath(IdPath)
      .addSuccess(WebhookEvent, { status: 201 })
      .annotate(OpenApi.Summary, "Send a synthetic `test.event` to this endpoint only")
      .annotate(OpenApi.Description, `The answer is the event sent. ${QUEUED}`)
  )
  .add(
    HttpApiEndpoint.post("resend", "/webhook-endpoints/deliveries/:deliveryId/resend")
      .setPath(Schema.Struct({ deliveryId: WebhookDeliveryId }))
      .addSuccess(WebhookEvent, { status: 201 })
      .annotate(OpenApi.Summary, "Deliver a delivery's event again")
      .annotate(
        OpenApi.Description,
        "The same event, with the same body and `webhook-id`, is delivered again to the same endpoint as new " +
          `attempts (retried on the usual schedule). The answer is the event. ${QUEUED}`
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Webhook endpoints")
  .annotate(OpenApi.Description, "Where a store's events are POSTed, signed as Standard Webhooks, with delivery history, resend and test events.")
{}
