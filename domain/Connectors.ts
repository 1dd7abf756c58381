/**
 * Connectors (marketplace integrations delivered like webhooks), messaging notifications (Telegram and
 * other channels), the platform's security posture and monitoring, and subscription billing.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "./Auth.ts"
import {
  ForbiddenResponse,
  InvalidStateResponse,
  NotFoundResponse,
  UnauthorizedResponse
} from "./Errors.ts"
import { ConnectorId, InvoiceId, NotificationId, OrganizationId, StoreId } from "./Ids.ts"
import { closed, maxText, oneOf } from "./Text.ts"

const MAX_URL_LENGTH = 2048
const EventName = maxText(100).annotations({ examples: ["payment.completed"] })
const EventList = Schema.Array(EventName).pipe(Schema.maxItems(50, { message: () => "must list at most 50 events" }))
const Timestamp = Schema.String.annotations({ description: "ISO 8601 time", examples: ["2026-01-05T10:00:00.000Z"] })
const listOf = <S extends Schema.Schema.Any>(item: S, identifier: string) =>
  Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(item) }).annotations({ identifier })

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
      .addSuccess(Marketplace)
      .annotate(OpenApi.Summary, "Available integrations")
      .annotate(OpenApi.Description, "The connector catalog: each item's key, category and config fields.")
  )
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/connectors")
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
      .annotate(OpenApi.Description, "Fields given replace the stored ones; config keys given replace those keys.")
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
  .middleware(Authentication)
  .addError(UnauthorizedResponse)
  .addError(ForbiddenResponse)
  .addError(NotFoundResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Connectors")
{}

// ---------------------------------------------------------------------------------------------
// Notifications
// ---------------------------------------------------------------------------------------------

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
        "Sends at once and answers the recorded message with its outcome; a failed send stays recorded and " +
          "is retried on the schedule. Without a chat id it is 409."
      )
  )
  .add(
    HttpApiEndpoint.get("channels", "/dashboard/stores/:storeId/channels")
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
      .annotate(OpenApi.Description, "An unknown channel is 404; answers the recorded message with its outcome.")
  )
  .middleware(Authentication)
  .addError(UnauthorizedResponse)
  .addError(ForbiddenResponse)
  .addError(NotFoundResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Notifications")
{}

// ---------------------------------------------------------------------------------------------
// Security posture and monitoring
// ---------------------------------------------------------------------------------------------

export class PostureCheck extends Schema.Class<PostureCheck>("PostureCheck")({
  id: Schema.String,
  title: Schema.String,
  status: Schema.Literal("pass", "warn", "fail"),
  detail: Schema.String
}) {}

export class SecurityPosture extends Schema.Class<SecurityPosture>("SecurityPosture")({
  object: Schema.Literal("security_posture"),
  score: Schema.Number.annotations({ description: "0–100: pass counts fully, warn half, fail nothing" }),
  checks: Schema.Array(PostureCheck)
}) {}

export class Monitoring extends Schema.Class<Monitoring>("Monitoring")({
  object: Schema.Literal("monitoring"),
  database: Schema.Struct({ ok: Schema.Boolean, latency_ms: Schema.Number }),
  cluster: Schema.Struct({ runners: Schema.Number, shards: Schema.Number }),
  outbox: Schema.Struct({ pending: Schema.Number, oldest_age_seconds: Schema.Number }),
  webhooks: Schema.Struct({ pending: Schema.Number, failed_last_hour: Schema.Number }),
  throughput: Schema.Struct({ payments_last_minute: Schema.Number, requests_last_minute: Schema.Number }),
  process: Schema.Struct({ uptime_seconds: Schema.Number, rss_bytes: Schema.Number })
}) {}

export class SecurityGroup extends HttpApiGroup.make("security")
  .add(
    HttpApiEndpoint.get("posture", "/admin/security/posture")
      .addSuccess(SecurityPosture)
      .annotate(OpenApi.Summary, "Security-posture self-assessment (platform admin)")
      .annotate(OpenApi.Description, "Checks read from the current state each call: keys, mode, MFA, API key age, URLs, KYC.")
  )
  .add(
    HttpApiEndpoint.get("monitoring", "/admin/security/monitoring")
      .addSuccess(Monitoring)
      .annotate(OpenApi.Summary, "Dependency health and throughput (platform admin)")
      .annotate(OpenApi.Description, "Database latency, cluster, outbox and webhook backlog, throughput, process figures.")
  )
  .middleware(Authentication)
  .addError(UnauthorizedResponse)
  .addError(ForbiddenResponse)
  .annotate(OpenApi.Title, "Security")
{}

// ---------------------------------------------------------------------------------------------
// Billing
// ---------------------------------------------------------------------------------------------

export const PlanIds = ["free", "starter", "growth"] as const
export type PlanId = (typeof PlanIds)[number]

export class Plan extends Schema.Class<Plan>("Plan")({
  id: Schema.Literal(...PlanIds),
  object: Schema.Literal("plan"),
  name: Schema.String,
  price: Schema.Struct({ amount: Schema.Number, currency: Schema.Literal("USD") }),
  interval: Schema.Literal("month"),
  limits: Schema.Struct({ stores: Schema.Number, payments_per_month: Schema.Number, team_members: Schema.Number })
}) {}

export const PlanList = listOf(Plan, "PlanList")

export class Billing extends Schema.Class<Billing>("Billing")({
  object: Schema.Literal("billing"),
  org_id: OrganizationId,
  plan: Plan,
  subscription: Schema.Struct({ status: Schema.String, current_period_end: Schema.NullOr(Timestamp) }),
  usage: Schema.Struct({ stores: Schema.Number, payments_this_month: Schema.Number, team_members: Schema.Number }),
  warnings: Schema.Array(Schema.String)
}) {}

export class SubscriptionInvoice extends Schema.Class<SubscriptionInvoice>("SubscriptionInvoice")({
  id: InvoiceId,
  object: Schema.Literal("subscription_invoice"),
  org_id: OrganizationId,
  plan_id: Schema.String,
  amount: Schema.Number.annotations({ description: "Minor units (cents)" }),
  currency: Schema.Literal("USD"),
  status: Schema.Literal("open", "paid", "void"),
  qr: Schema.Struct({ payload: Schema.String, md5: Schema.String }),
  checkout_url: Schema.String,
  created_at: Timestamp,
  paid_at: Schema.NullOr(Timestamp)
}) {}


export class PlanChange extends Schema.Class<PlanChange>("PlanChange")({
  object: Schema.Literal("plan_change"),
  org_id: OrganizationId,
  from_plan: Schema.NullOr(Schema.String),
  to_plan: Schema.String,
  invoice_id: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

export const PlanHistory = listOf(PlanChange, "PlanHistory")
export const InvoiceList = listOf(SubscriptionInvoice, "SubscriptionInvoiceList")

export const ChangePlan = closed(Schema.Struct({ plan_id: maxText(32) }), "ChangePlanDto")

const OrgPath = Schema.Struct({ orgId: OrganizationId })

export class BillingGroup extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.get("plans", "/billing/plans")
      .addSuccess(PlanList)
      .annotate(OpenApi.Summary, "List plans")
      .annotate(OpenApi.Description, "Plans are data: free, starter, growth, each with its monthly price and limits.")
  )
  .add(
    HttpApiEndpoint.get("get", "/billing")
      .setUrlParams(Schema.Struct({ org_id: OrganizationId }))
      .addSuccess(Billing)
      .annotate(OpenApi.Summary, "Plan, usage and warnings")
      .annotate(OpenApi.Description, "A warning is given for each limit at 80 % or more of its value.")
  )
  .add(
    HttpApiEndpoint.post("subscribe", "/billing/:orgId/subscribe")
      .setPath(OrgPath)
      .setPayload(ChangePlan)
      // Each member with its own status: the status of a union is not carried to its members.
      .addSuccess(Billing, { status: 201 })
      .addSuccess(SubscriptionInvoice, { status: 201 })
      .annotate(OpenApi.Summary, "Subscribe to a plan")
      .annotate(
        OpenApi.Description,
        "A free plan activates at once (answers the billing object); a paid plan answers an open subscription " +
          "invoice with its KHQR; paying it activates the plan. An unknown plan is 400 (`plan_id`); a plan " +
          "below current usage is 409 naming the limit. Owners only."
      )
  )
  .add(
    HttpApiEndpoint.post("simulatePay", "/billing/invoices/:id/simulate-pay")
      .setPath(Schema.Struct({ id: InvoiceId }))
      .addSuccess(SubscriptionInvoice, { status: 201 })
      .annotate(OpenApi.Summary, "Confirm a subscription invoice payment (mock provider only)")
      .annotate(
        OpenApi.Description,
        "Pays the invoice as the mock provider would: 403 in a live configuration; an invoice already paid is 409."
      )
  )
  .add(
    HttpApiEndpoint.get("history", "/billing/:orgId/history")
      .setPath(OrgPath)
      .addSuccess(PlanHistory)
      .annotate(OpenApi.Summary, "Plan history")
      .annotate(OpenApi.Description, "Every plan change of the organization, newest first.")
  )
  .add(
    HttpApiEndpoint.get("invoices", "/billing/:orgId/invoices")
      .setPath(OrgPath)
      .addSuccess(InvoiceList)
      .annotate(OpenApi.Summary, "Invoice history")
      .annotate(OpenApi.Description, "The organization's subscription invoices, newest first.")
  )
  .middleware(Authentication)
  .addError(UnauthorizedResponse)
  .addError(ForbiddenResponse)
  .addError(NotFoundResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Billing")
{}
