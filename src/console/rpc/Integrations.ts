/**
 * The console's integrations procedures (domain/console/Integrations.ts): connectors and notification
 * channels, each one call of ConnectorsService or NotificationsService, which check access.
 */
import { Effect } from "effect"
import { ConsoleIntegrationsRpcs } from "../../../domain/console/Integrations.ts"
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "../../../domain/Lists.ts"
import { ConnectorsService } from "../../connectors/Service.ts"
import { NotificationsService } from "../../notifications/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsoleIntegrationsLive = ConsoleIntegrationsRpcs.toLayer(Effect.gen(function*() {
  const connectors = yield* ConnectorsService
  const notifications = yield* NotificationsService
  return ConsoleIntegrationsRpcs.of({
    Marketplace: () => hideDefects(connectors.marketplace({ limit: MAX_LIST_LIMIT })),
    ListConnectors: ({ cursor, limit, store_id }) => hideDefects(connectors.list(store_id, { limit: limit ?? DEFAULT_LIST_LIMIT, cursor })),
    InstallConnector: ({ store_id, ...input }) => hideDefects(connectors.install(store_id, input)),
    UpdateConnector: ({ id, ...changes }) => hideDefects(connectors.update(id, changes)),
    RemoveConnector: ({ id }) => hideDefects(connectors.remove(id)),
    TestConnector: ({ id }) => hideDefects(connectors.test(id)),
    TelegramConfig: ({ store_id }) => hideDefects(notifications.telegram(store_id)),
    UpdateTelegram: ({ store_id, ...changes }) => hideDefects(notifications.updateTelegram(store_id, changes)),
    ListChannels: ({ store_id }) => hideDefects(notifications.channels(store_id, { limit: MAX_LIST_LIMIT })),
    UpdateChannel: ({ store_id, ...changes }) => hideDefects(notifications.updateChannel(store_id, changes)),
    TestChannel: ({ channel, store_id }) =>
      hideDefects(channel === "telegram" ? notifications.testTelegram(store_id) : notifications.testChannel(store_id, channel)),
    NotificationLog: ({ cursor, limit, store_id }) =>
      hideDefects(notifications.messages(store_id, { limit: limit ?? DEFAULT_LIST_LIMIT, cursor }))
  })
}))
