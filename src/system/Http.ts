import { Effect, Layer } from "effect"
import { Api } from "../../domain/Api.ts"
import { Health } from "../../domain/System.ts"
import { MetricsAccessLive, MetricsService } from "./Metrics.ts"
import { SystemService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

/** Liveness's one answer, made once: constructing it checks it against its schema, a few µs a request. */
const HEALTHY = new Health({ status: "ok" })

export const SystemHttpLive = apiGroup(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const system = yield* SystemService
    const metrics = yield* MetricsService
    return handlers
      .handle("health", () => Effect.succeed(HEALTHY))
      .handle("ready", () => system.readiness())
      .handle("metrics", () => metrics.exposition())
  })).pipe(Layer.provide(MetricsAccessLive))
