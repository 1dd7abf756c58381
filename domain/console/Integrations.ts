/**
 * The console's integrations: the connector marketplace and a store's installed connectors (config with
 * write-only secrets, a test event answered with its delivery record), and its notification channels
 * (Telegram, WhatsApp, SMS, Signal) with a test message and the log of messages sent. The handlers call
 * ConnectorsService and NotificationsService, as the `/dashboard/…` routes do.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { Connector, ConnectorDelivery, ConnectorList, CreateConnector, DeletedConnector, Marketplace, UpdateConnector } from "../Connectors.ts"
import { ChannelConfig, ChannelConfigList, MessageChannels, NotificationMessage, TelegramConfig, UpdateChannel, UpdateTelegram } from "../Notifications.ts"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { ConnectorId, StoreId } from "../Ids.ts"
import { ListOf, ListParams, MAX_LIST_LIMIT } from "../Lists.ts"

const Limit = Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_LIST_LIMIT)))
const Failures = Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)

export const NotificationMessageList = ListOf(NotificationMessage)

export class ConsoleIntegrationsRpcs extends RpcGroup.make(
  Rpc.make("Marketplace", { success: Marketplace, error: Failures }),
  Rpc.make("ListConnectors", {
    payload: { store_id: StoreId, cursor: ListParams.fields.cursor, limit: Limit },
    success: ConnectorList,
    error: Failures
  }),
  /** Installs a connector; its signing secret is in this answer only. */
  Rpc.make("InstallConnector", { payload: { store_id: StoreId, ...CreateConnector.fields }, success: Connector, error: Failures }),
  /** A secret field sent back masked, as answered, keeps its value. */
  Rpc.make("UpdateConnector", { payload: { id: ConnectorId, ...UpdateConnector.fields }, success: Connector, error: Failures }),
  Rpc.make("RemoveConnector", { payload: { id: ConnectorId }, success: DeletedConnector, error: Failures }),
  Rpc.make("TestConnector", { payload: { id: ConnectorId }, success: ConnectorDelivery, error: Failures }),
  Rpc.make("TelegramConfig", { payload: { store_id: StoreId }, success: TelegramConfig, error: Failures }),
  Rpc.make("UpdateTelegram", { payload: { store_id: StoreId, ...UpdateTelegram.fields }, success: TelegramConfig, error: Failures }),
  Rpc.make("ListChannels", { payload: { store_id: StoreId }, success: ChannelConfigList, error: Failures }),
  Rpc.make("UpdateChannel", { payload: { store_id: StoreId, ...UpdateChannel.fields }, success: ChannelConfig, error: Failures }),
  /** Sends a test message on `telegram` or another channel and answers it as recorded, with its outcome. */
  Rpc.make("TestChannel", {
    payload: { store_id: StoreId, channel: Schema.Literal("telegram", ...MessageChannels) },
    success: NotificationMessage,
    error: Failures
  }),
  /** The store's messages on every channel, newest first. */
  Rpc.make("NotificationLog", {
    payload: { store_id: StoreId, cursor: ListParams.fields.cursor, limit: Limit },
    success: NotificationMessageList,
    error: Failures
  })
).middleware(ConsoleAuthentication) {}
