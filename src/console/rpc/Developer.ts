/** The developer group's handlers (domain/console/Developer.ts). */
import { Effect, Stream } from "effect"
import { DeveloperRpcs } from "../../../domain/console/Developer.ts"
import { WebhooksService } from "../../webhooks/Service.ts"
import { hideStreamDefects } from "./Defects.ts"

export const DeveloperHandlersLive = DeveloperRpcs.toLayer(Effect.gen(function*() {
  const webhooks = yield* WebhooksService
  return DeveloperRpcs.of({
    EventFeed: (input) => hideStreamDefects(Stream.unwrap(webhooks.eventFeed(input)))
  })
}))
