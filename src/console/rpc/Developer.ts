/** The developer group's handlers (domain/console/Developer.ts). */
import { Effect, Stream } from "effect"
import { DeveloperRpcs } from "../../../domain/console/Developer.ts"
import { EventFeedService } from "../../webhooks/EventFeed.ts"
import { hideStreamDefects } from "./Defects.ts"

export const DeveloperHandlersLive = DeveloperRpcs.toLayer(Effect.gen(function*() {
  const events = yield* EventFeedService
  return DeveloperRpcs.of({
    EventFeed: (input) => hideStreamDefects(Stream.unwrap(events.feed(input)))
  })
}))
