/**
 * Liveness and readiness of a process, for load balancers and orchestrators, and its metrics for
 * Prometheus.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Credentials } from "./Auth.ts"
import { ForbiddenResponse, ServiceUnavailableResponse, UnauthorizedResponse } from "./Errors.ts"

export const CheckStatus = Schema.Literal("ok", "unavailable")

export class Health extends Schema.Class<Health>("Health")({
  status: Schema.Literal("ok")
}) {}

export class Readiness extends Schema.Class<Readiness>("Readiness")({
  status: Schema.Literal("ready"),
  checks: Schema.Struct({ database: CheckStatus, cluster: CheckStatus })
}) {}

/**
 * Who may read `/metrics`: a scraper with `METRICS_TOKEN`, or a platform administrator's session. Anyone
 * else with a valid credential is 403; no credential, or an unknown one, is 401.
 */
export class MetricsAccess extends HttpApiMiddleware.Tag<MetricsAccess>()("MetricsAccess", {
  failure: Schema.Union(UnauthorizedResponse, ForbiddenResponse),
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "`METRICS_TOKEN` (for a Prometheus scraper), or the session token of a platform administrator."
      )
    )
  }
}) {}

/** The Prometheus text exposition format, version 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

export const PrometheusText = HttpApiSchema.Text({ contentType: PROMETHEUS_CONTENT_TYPE })
  .annotations({ description: "Metrics in the Prometheus text exposition format 0.0.4" })

export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .annotate(OpenApi.Summary, "Liveness: 200 while the process is up")
      .annotate(
        OpenApi.Description,
        "Answers 200 `{ status: \"ok\" }` as long as the process can answer at all; it checks nothing else. No credential."
      )
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Readiness)
      .addError(ServiceUnavailableResponse)
      .annotate(OpenApi.Summary, "Readiness: 200 only when the database and the cluster are usable")
      .annotate(
        OpenApi.Description,
        "Checks the database (a query) and the cluster (this process can reach the shard runners). 503 `service_unavailable` names what is not usable. No credential."
      )
  )
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(PrometheusText)
      .middleware(MetricsAccess)
      .annotate(Credentials, ["metricsToken", "session"])
      .annotate(OpenApi.Summary, "Metrics in Prometheus text format (platform admin or METRICS_TOKEN)")
      .annotate(
        OpenApi.Description,
        [
          "This process's metrics, for Prometheus to scrape (each process is scraped on its own):",
          "",
          "- `http_server_requests_total` and `http_server_request_duration_seconds` (histogram), by `method`,",
          "  `route` (the route pattern, `unmatched` for unknown paths) and `status_class` (`2xx`, `4xx`, …);",
          "- `payment_status_transitions_total` by `from`, `to` and `mode` (`from=\"none\"` is a payment created);",
          "- `webhook_delivery_attempts_total` by `outcome` (`delivered`, `retrying`, `gave_up`, `gone`);",
          "- `outbox_oldest_undispatched_age_seconds`: how long the oldest undispatched event has waited,",
          "  read from the database at each scrape;",
          "- the cluster's own gauges (`effect_cluster_*`).",
          "",
          "Send `Authorization: Bearer <METRICS_TOKEN>` (when the variable is set) or a platform",
          "administrator's session token. The content type is `text/plain; version=0.0.4`."
        ].join("\n")
      )
  )
  .annotate(OpenApi.Title, "System")
  .annotate(OpenApi.Description, "Liveness, readiness and metrics of one process, for load balancers, orchestrators and Prometheus.")
{}
