/**
 * Connectors: marketplace integrations that receive a store's events, delivered like webhooks.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import {
  InvalidStateResponse,
  NotFoundResponse
} from "./Errors.ts"
import { ConnectorId, StoreId } from "./Ids.ts"
import { closed, maxText } from "./Text.ts"
import { WebhookEventSelector } from "./Webhooks.ts"
import { ListOf, ListParams } from "./Lists.ts"

const MAX_URL_LENGTH = 2048
const EventList = Schema.Array(WebhookEventSelector).pipe(Schema.maxItems(50, { message: () => "must list at most 50 events" }))
  .annotations({ description: "Webhook event types delivered to the connector (`*`, the default, for all of them)" })
const Timestamp = Schema.String.annotations({ description: "ISO 8601 time", examples: ["2026-01-05T10:00:00.000Z"] })
const listOf = <A, I, R>(item: Schema.Schema<A, I, R>, identifier: string) => ListOf(item).annotations({ identifier })

// ---------------------------------------------------------------------------------------------
// Connectors
// ---------------------------------------------------------------------------------------------

export class ConfigField extends Schema.Class<ConfigField>("ConfigField")({
  key: Schema.String,
  label: Schema.String,
  secret: Schema.Boolean.annotations({ description: "Encrypted at rest and masked in answers" }),
  required: Schema.Boolean
}) {}

export class MarketplaceItem extends Schema.Class<MarketplaceItem>("MarketplaceItem")({
  key: Schema.String.annotations({ examples: ["slack_webhook"] }),
  name: Schema.String,
  description: Schema.String,
  category: Schema.String,
  config_fields: Schema.Array(ConfigField)
}) {}

export const Marketplace = listOf(MarketplaceItem, "Marketplace")

export const ConfigValues = Schema.Record({ key: maxText(64), value: maxText(MAX_URL_LENGTH) }).annotations({
  description: "The catalog item's config fields by key (strings). `url` is where events are delivered.",
  examples: [{ url: "https://hooks.example.com/T000/B000" }]
})

export class Connector extends Schema.Class<Connector>("Connector")({
  id: ConnectorId,
  object: Schema.Literal("connector"),
  store_id: StoreId,
  type: Schema.String.annotations({ description: "A marketplace key" }),
  name: Schema.String,
  config: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "The config; secret fields are masked (all but their last four characters)."
  }),
  events: Schema.Array(Schema.String),
  enabled: Schema.Boolean,
  signing_secret: Schema.optional(Schema.String.annotations({
    description: "The secret (`whsec_…`) that signs the connector's deliveries (Standard Webhooks headers, as " +
      "webhook endpoints). Shown only in the answer to the install; keep it to verify deliveries.",
    examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]
  })),
  created_at: Timestamp
}) {}

export const ConnectorList = listOf(Connector, "ConnectorList")

export const CreateConnector = closed(Schema.Struct({
  type: maxText(64).annotations({ description: "A key of GET /dashboard/marketplace", examples: ["slack_webhook"] }),
  name: Schema.optional(maxText(200)),
  config: ConfigValues,
  events: Schema.optional(EventList),
  enabled: Schema.optional(Schema.Boolean)
}), "ConnectorDto")
export type CreateConnector = typeof CreateConnector.Type

export const UpdateConnector = closed(Schema.Struct({
  name: Schema.optional(maxText(200)),
  config: Schema.optional(ConfigValues),
  events: Schema.optional(EventList),
  enabled: Schema.optional(Schema.Boolean)
}), "UpdateConnectorDto")
export type UpdateConnector = typeof UpdateConnector.Type

export class DeletedConnector extends Schema.Class<DeletedConnector>("DeletedConnector")({
  id: ConnectorId,
  object: Schema.Literal("connector"),
  deleted: Schema.Literal(true)
}) {}

export class ConnectorDelivery extends Schema.Class<ConnectorDelivery>("ConnectorDelivery")({
  id: Schema.String.annotations({ description: "The delivery record's id (whd_…); the event id while still queued" }),
  object: Schema.Literal("connector_delivery"),
  connector_id: ConnectorId,
  event_id: Schema.String,
  event_type: Schema.String,
  status: Schema.Literal("pending", "delivered", "failed"),
  status_code: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

const StorePath = Schema.Struct({ storeId: StoreId })
const ConnectorPath = Schema.Struct({ connectorId: ConnectorId })

export class ConnectorsGroup extends HttpApiGroup.make("connectors")
  .add(
    HttpApiEndpoint.get("marketplace", "/dashboard/marketplace")
      .setUrlParams(ListParams)
      .addSuccess(Marketplace)
      .annotate(OpenApi.Summary, "Available integrations")
      .annotate(OpenApi.Description, "The connector catalog: each item's key, category and config fields.")
  )
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/connectors")
      .setUrlParams(ListParams)
      .setPath(StorePath)
      .addSuccess(ConnectorList)
      .annotate(OpenApi.Summary, "Installed connectors")
      .annotate(OpenApi.Description, "A store's connectors, newest first, secrets masked.")
  )
  .add(
    HttpApiEndpoint.post("install", "/dashboard/stores/:storeId/connectors")
      .setPath(StorePath)
      .setPayload(CreateConnector)
      .addSuccess(Connector, { status: 201 })
      .annotate(OpenApi.Summary, "Install a connector")
      .annotate(
        OpenApi.Description,
        "An unknown marketplace key is 400 (`type`). The `url` is checked like a webhook URL: a private " +
          "network address is 400 unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set. Events default to `*`. " +
          "Deliveries are signed webhooks (Standard Webhooks headers) with the connector's own secret."
      )
  )
  .add(
    HttpApiEndpoint.put("update", "/dashboard/connectors/:connectorId")
      .setPath(ConnectorPath)
      .setPayload(UpdateConnector)
      .addSuccess(Connector)
      .annotate(OpenApi.Summary, "Update a connector")
      .annotate(
        OpenApi.Description,
        "Fields given replace the stored ones; config keys given replace those keys (a secret field sent back " +
          "masked, as answered, keeps its value), checked as on install (400 naming `config.<key>`). The " +
          "signing secret does not change. Events `*` or empty mean every event type."
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/dashboard/connectors/:connectorId")
      .setPath(ConnectorPath)
      .addSuccess(DeletedConnector)
      .annotate(OpenApi.Summary, "Remove a connector")
      .annotate(OpenApi.Description, "Removes the connector with its queued deliveries and delivery records.")
  )
  .add(
    HttpApiEndpoint.post("test", "/dashboard/connectors/:connectorId/test")
      .setPath(ConnectorPath)
      .addSuccess(ConnectorDelivery, { status: 201 })
      .annotate(OpenApi.Summary, "Send a test event to a connector")
      .annotate(
        OpenApi.Description,
        "Queues a `test.event` and waits up to a few seconds for its first attempt; answers the delivery " +
          "record (`pending` if the attempt has not finished by then). A disabled connector is 409."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Connectors")
  .annotate(OpenApi.Description, "Integrations that receive a store's events (accounting, CRM and others) from the marketplace.")
{}
