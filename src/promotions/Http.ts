import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { PromotionsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const PromotionsHttpLive = apiGroup(Api, "promotions", (handlers) =>
  Effect.gen(function*() {
    const promotions = yield* PromotionsService
    return handlers
      .handle("list", ({ path, urlParams }) => promotions.list(path.storeId, urlParams))
      .handle("create", ({ path, payload }) => promotions.create(path.storeId, payload))
      .handle("update", ({ path, payload }) => promotions.update(path.id, payload))
      .handle("delete", ({ path }) => promotions.remove(path.id))
      .handle("simulate", ({ path, urlParams }) => promotions.simulate(path.id, urlParams))
      .handle("submit", ({ path }) => promotions.submit(path.id))
      .handle("approve", ({ path }) => promotions.approve(path.id))
      .handle("reject", ({ path, payload }) => promotions.reject(path.id, payload.reason))
      .handle("activate", ({ path }) => promotions.activate(path.id))
      .handle("pause", ({ path }) => promotions.pause(path.id))
      .handle("end", ({ path }) => promotions.end(path.id))
  }))
