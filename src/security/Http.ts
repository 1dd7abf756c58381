import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { SecurityService } from "./Service.ts"

export const SecurityHttpLive = HttpApiBuilder.group(Api, "security", (handlers) =>
  Effect.gen(function*() {
    const security = yield* SecurityService
    return handlers
      .handle("posture", () => security.posture())
      .handle("monitoring", () => security.monitoring())
  }))
