/**
 * `GET /metrics`: this process's metric registry in Prometheus text format, and who may read it. API
 * processes serve it in the HttpApi; a shard runner (whose entities and singletons count payment changes
 * and webhook attempts) serves it beside `/health` on its health port, to the METRICS_TOKEN holder.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Layer, Metric, Option, Redacted } from "effect"
import { Authentication } from "../../domain/Auth.ts"
import { Forbidden } from "../../domain/Errors.ts"
import { MetricsAccess, PROMETHEUS_CONTENT_TYPE } from "../../domain/System.ts"
import { AppConfig } from "../platform/Config.ts"
import { hashToken, tokensMatch } from "../platform/Crypto.ts"
import { setOutboxLag } from "../platform/Metrics.ts"
import { oldestUndispatchedAgeSeconds } from "../platform/OutboxReads.ts"
import { makeProcessMetrics } from "../platform/ProcessMetrics.ts"
import { encodePrometheus } from "../platform/Prometheus.ts"
import { traced } from "../platform/Traced.ts"

// A scrape must answer even when the database does not: the other metrics matter most then.
const OUTBOX_LAG_TIMEOUT = "2 seconds"

export class MetricsService extends Effect.Service<MetricsService>()("system/MetricsService", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const processMetrics = yield* makeProcessMetrics

    /** Outbox lag is a fact of the database, not of this process: it is read when asked for. */
    const refreshOutboxLag = oldestUndispatchedAgeSeconds(sql).pipe(
      Effect.timeout(OUTBOX_LAG_TIMEOUT),
      Effect.flatMap(setOutboxLag),
      Effect.catchAllCause((cause) =>
        Effect.zipRight(
          Effect.logWarning(`outbox lag not measured: ${Cause.pretty(cause).split("\n")[0]}`),
          setOutboxLag(Number.NaN)
        )
      )
    )

    const exposition = traced("Metrics.exposition")(function*() {
      yield* refreshOutboxLag
      yield* processMetrics.refresh
      return encodePrometheus(yield* Metric.snapshot)
    })

    return { exposition } as const
  })
}) {}

/**
 * The `MetricsAccess` middleware: `METRICS_TOKEN` (compared in constant time) lets a scraper in without a
 * user; any other credential goes through the ordinary authentication and must be a platform
 * administrator's session.
 */
export const MetricsAccessLive = Layer.effect(
  MetricsAccess,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const authentication = yield* Authentication
    const metricsTokenHash = Option.map(config.metricsToken, (token) => hashToken(Redacted.value(token)))

    return {
      bearer: (credential) =>
        Effect.gen(function*() {
          const presented = Redacted.value(credential).trim()
          if (Option.isSome(metricsTokenHash) && presented.length > 0 && tokensMatch(presented, metricsTokenHash.value)) {
            return
          }
          const principal = yield* authentication.bearer(credential)
          if (principal._tag === "User" && principal.platformAdmin) return
          return yield* new Forbidden({
            message: "Metrics are for platform administrators and for the holder of METRICS_TOKEN"
          })
        })
    }
  })
)

const plainError = (status: 401 | 403, code: "unauthorized" | "forbidden", message: string) =>
  HttpServerResponse.unsafeJson({ error: { code, message } }, { status })

/**
 * `GET /metrics` on a runner's health port. There are no user sessions on a runner, so only the
 * METRICS_TOKEN holder may read it; without the variable set it is refused.
 */
export const runnerMetrics = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* AppConfig
  const metrics = yield* MetricsService
  if (Option.isNone(config.metricsToken)) {
    return plainError(403, "forbidden", "Set METRICS_TOKEN to read a runner's metrics")
  }
  const presented = (request.headers.authorization ?? "").replace(/^Bearer\s+/i, "").trim()
  if (presented.length === 0 || !tokensMatch(presented, hashToken(Redacted.value(config.metricsToken.value)))) {
    return plainError(401, "unauthorized", "Send Authorization: Bearer <METRICS_TOKEN>")
  }
  return HttpServerResponse.text(yield* metrics.exposition(), { contentType: PROMETHEUS_CONTENT_TYPE })
})
