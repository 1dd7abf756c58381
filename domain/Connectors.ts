/**
 * Connectors (marketplace integrations delivered like webhooks), messaging notifications (Telegram and
 * other channels), the platform's security posture and monitoring, and subscription billing.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated, Credentials } from "./Auth.ts"
import {
  InvalidStateResponse,
  NotFoundResponse
} from "./Errors.ts"
import { ConnectorId, InvoiceId, NotificationId, OrganizationId, PaymentId, StoreId } from "./Ids.ts"
import { closed, maxText, oneOf } from "./Text.ts"
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
      .annotate(OpenApi.Description, "Checks read from the current state each call: keys, mode, MFA, API key age, URLs, KYC, and " +
        "`integration_addresses`: a warning naming each provider base URL setting (AI, Telegram, channels, Bakong; " +
        "stored or from the environment) whose host is a loopback, link-local or private address.")
  )
  .add(
    HttpApiEndpoint.get("monitoring", "/admin/security/monitoring")
      .addSuccess(Monitoring)
      .annotate(OpenApi.Summary, "Dependency health and throughput (platform admin)")
      .annotate(OpenApi.Description, "Database latency, cluster, outbox and webhook backlog, throughput, process figures.")
  )
  .pipe(authenticated("session"))
  .annotate(OpenApi.Title, "Security")
  .annotate(OpenApi.Description, "The platform's security posture and monitoring, for platform administrators.")
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
  price: Schema.Struct({
    amount: Schema.String.annotations({ description: "Decimal US dollars a month", examples: ["19.00"] }),
    currency: Schema.Literal("USD")
  }),
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
  amount: Schema.String.annotations({ description: "Decimal string, as payment amounts", examples: ["19.00"] }),
  currency: Schema.Literal("USD"),
  status: Schema.Literal("open", "paid", "void"),
  qr: Schema.Struct({ payload: Schema.String, md5: Schema.String }).annotations({
    description: "The KHQR of the invoice's payment, made by the payments engine"
  }),
  checkout_url: Schema.String.annotations({ description: "The hosted checkout page of the invoice's payment" }),
  payment_id: Schema.NullOr(PaymentId).annotations({
    description: "The payment that carries the invoice's KHQR; its payment.completed event pays the invoice"
  }),
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
      .annotate(Credentials, ["apiKey", "session"])
      .setUrlParams(ListParams)
      .addSuccess(PlanList)
      .annotate(OpenApi.Summary, "List plans")
      .annotate(
        OpenApi.Description,
        "Plans are data: free, starter, growth, each with its monthly price (decimal USD) and limits " +
          "(`payments_per_month` counts live-mode payments)."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/billing")
      .setUrlParams(Schema.Struct({ org_id: OrganizationId }))
      .addSuccess(Billing)
      .annotate(OpenApi.Summary, "Plan, usage and warnings")
      .annotate(
        OpenApi.Description,
        "The organization's plan, subscription and usage: stores, live-mode payments created this calendar " +
          "month (UTC; test mode is free and not counted) and team members. A warning is given for each " +
          "limit at 80 % or more of its value. When a limit is reached, the next store, live payment or " +
          "member is refused with 403 `forbidden` naming the plan. Any member of the organization may read it."
      )
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
        "A free plan activates at once (answers the billing object, 201). A paid plan answers an open " +
          "subscription invoice: a payment of the platform's billing store carries it, so its `qr` is that " +
          "payment's KHQR and `checkout_url` its hosted checkout page; when the payment is paid, its " +
          "payment.completed event pays the invoice (once) and activates the plan for 30 days (a renewal of " +
          "the running plan extends it). Subscribing again to the same plan while its QR can still be paid " +
          "answers the same invoice; choosing another plan voids the open invoice and cancels its payment. " +
          "An unknown plan is 400 (`plan_id`); a plan whose limits are below what the organization holds " +
          "(stores, team members) is 409 with the limit as `param`; the free plan while on it is 409. A paid " +
          "plan in a production configuration whose billing store is not live is 409. Owners only (403)."
      )
  )
  .add(
    HttpApiEndpoint.post("simulatePay", "/billing/invoices/:id/simulate-pay")
      .setPath(Schema.Struct({ id: InvoiceId }))
      .addSuccess(SubscriptionInvoice, { status: 201 })
      .annotate(OpenApi.Summary, "Confirm a subscription invoice payment (mock provider only)")
      .annotate(
        OpenApi.Description,
        "Pays the invoice's payment as the mock provider would (scanned, then paid), which pays the invoice " +
          "and activates its plan; answers the paid invoice. 403 in a live configuration (NODE_ENV=production, " +
          "or an invoice whose payment is live); an invoice already paid (or void) is 409, and of simultaneous " +
          "calls one pays and the others are 409. Owners only."
      )
  )
  .add(
    HttpApiEndpoint.get("history", "/billing/:orgId/history")
      .setUrlParams(ListParams)
      .setPath(OrgPath)
      .addSuccess(PlanHistory)
      .annotate(OpenApi.Summary, "Plan history")
      .annotate(OpenApi.Description, "Every plan change of the organization, newest first.")
  )
  .add(
    HttpApiEndpoint.get("invoices", "/billing/:orgId/invoices")
      .setUrlParams(ListParams)
      .setPath(OrgPath)
      .addSuccess(InvoiceList)
      .annotate(OpenApi.Summary, "Invoice history")
      .annotate(OpenApi.Description, "The organization's subscription invoices, newest first.")
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Billing")
  .annotate(OpenApi.Description, "Plans, an organization's subscription, its invoices and history.")
{}
