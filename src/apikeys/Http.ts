import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { ApiKeysService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const ApiKeysHttpLive = apiGroup(Api, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeysService
    return handlers
      .handle("create", ({ payload }) => apiKeys.create(payload))
      .handle("list", ({ urlParams: { store_id, ...params } }) => apiKeys.list(store_id, params))
      .handle("revoke", ({ path }) => apiKeys.revoke(path.id))
      .handle("rotate", ({ path }) => apiKeys.rotate(path.id))
  }))
