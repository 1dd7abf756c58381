import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { SecurityService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const SecurityHttpLive = apiGroup(Api, "security", (handlers) =>
  Effect.gen(function*() {
    const security = yield* SecurityService
    return handlers
      .handle("posture", () => security.posture())
      .handle("monitoring", () => security.monitoring())
  }))
