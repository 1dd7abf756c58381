import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { StoresService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const StoresHttpLive = apiGroup(Api, "stores", (handlers) =>
  Effect.gen(function*() {
    const stores = yield* StoresService
    return handlers
      .handle("create", ({ payload }) => stores.create(payload))
      .handle("list", ({ urlParams }) => stores.list(urlParams))
      .handle("retrieve", ({ path }) => stores.retrieve(path.id))
      .handle("updateBranding", ({ path, payload }) => stores.updateBranding(path.id, payload))
      .handle("setCredentials", ({ path, payload }) => stores.setCredentials(path.id, payload))
      .handle("setLiveMode", ({ path, payload }) => stores.setLiveMode(path.id, payload.live_mode))
  }))

export const BranchesHttpLive = apiGroup(Api, "branches", (handlers) =>
  Effect.gen(function*() {
    const stores = yield* StoresService
    return handlers
      .handle("create", ({ path, payload }) => stores.createBranch(path.storeId, payload))
      .handle("list", ({ path, urlParams }) => stores.listBranches(path.storeId, urlParams))
      .handle("update", ({ path, payload }) => stores.updateBranch(path.id, payload))
      .handle("delete", ({ path }) => stores.deleteBranch(path.id))
  }))
