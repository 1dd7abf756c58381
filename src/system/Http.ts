import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { Health } from "../../domain/System.ts"
import { SystemService } from "./Service.ts"

export const SystemHttpLive = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const system = yield* SystemService
    return handlers
      .handle("health", () => Effect.succeed(new Health({ status: "ok" })))
      .handle("ready", () => system.readiness())
  }))
