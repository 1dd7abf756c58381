import { Effect, Layer } from "effect"
import { Api } from "../../domain/Api.ts"
import { Health } from "../../domain/System.ts"
import { MetricsAccessLive, MetricsService } from "./Metrics.ts"
import { SystemService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const SystemHttpLive = apiGroup(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const system = yield* SystemService
    const metrics = yield* MetricsService
    return handlers
      .handle("health", () => Effect.succeed(new Health({ status: "ok" })))
      .handle("ready", () => system.readiness())
      .handle("metrics", () => metrics.exposition())
  })).pipe(Layer.provide(MetricsAccessLive))
