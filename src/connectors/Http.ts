import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { ConnectorsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const ConnectorsHttpLive = apiGroup(Api, "connectors", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* ConnectorsService
    return handlers
      .handle("marketplace", ({ urlParams }) => connectors.marketplace(urlParams))
      .handle("list", ({ path, urlParams }) => connectors.list(path.storeId, urlParams))
      .handle("install", ({ path, payload }) => connectors.install(path.storeId, payload))
      .handle("update", ({ path, payload }) => connectors.update(path.connectorId, payload))
      .handle("remove", ({ path }) => connectors.remove(path.connectorId))
      .handle("test", ({ path }) => connectors.test(path.connectorId))
  }))
