import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { NotificationsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const NotificationsHttpLive = apiGroup(Api, "notifications", (handlers) =>
  Effect.gen(function*() {
    const notifications = yield* NotificationsService
    return handlers
      .handle("telegram", ({ path }) => notifications.telegram(path.storeId))
      .handle("updateTelegram", ({ path, payload }) => notifications.updateTelegram(path.storeId, payload))
      .handle("testTelegram", ({ path }) => notifications.testTelegram(path.storeId))
      .handle("channels", ({ path, urlParams }) => notifications.channels(path.storeId, urlParams))
      .handle("updateChannel", ({ path, payload }) => notifications.updateChannel(path.storeId, payload))
      .handle("testChannel", ({ path }) => notifications.testChannel(path.storeId, path.channel))
  }))
