import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { WebhooksService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const WebhooksHttpLive = apiGroup(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* WebhooksService
    return handlers
      .handle("create", ({ payload }) => webhooks.create(payload))
      .handle("list", ({ urlParams: { store_id, ...params } }) => webhooks.list(store_id, params))
      .handle("update", ({ path, payload }) => webhooks.update(path.id, payload))
      .handle("delete", ({ path }) => webhooks.remove(path.id))
      .handle("revealSecret", ({ path }) => webhooks.revealSecret(path.id))
      .handle("rotateSecret", ({ path }) => webhooks.rotateSecret(path.id))
      .handle("deliveries", ({ path, urlParams }) => webhooks.deliveries(path.id, urlParams))
      .handle("sendTest", ({ path }) => webhooks.sendTest(path.id))
      .handle("resend", ({ path }) => webhooks.resend(path.deliveryId))
  }))
