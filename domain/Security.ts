/**
 * The platform's security posture and monitoring.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"

export class PostureCheck extends Schema.Class<PostureCheck>("PostureCheck")({
  id: Schema.String,
  title: Schema.String,
  status: Schema.Literal("pass", "warn", "fail"),
  detail: Schema.String
}) {}

export class SecurityPosture extends Schema.Class<SecurityPosture>("SecurityPosture")({
  object: Schema.Literal("security_posture"),
  score: Schema.Number.annotations({ description: "0–100: pass counts fully, warn half, fail nothing" }),
  checks: Schema.Array(PostureCheck)
}) {}

export class Monitoring extends Schema.Class<Monitoring>("Monitoring")({
  object: Schema.Literal("monitoring"),
  database: Schema.Struct({ ok: Schema.Boolean, latency_ms: Schema.Number }),
  cluster: Schema.Struct({ runners: Schema.Number, shards: Schema.Number }),
  outbox: Schema.Struct({ pending: Schema.Number, oldest_age_seconds: Schema.Number }),
  webhooks: Schema.Struct({ pending: Schema.Number, failed_last_hour: Schema.Number }),
  throughput: Schema.Struct({ payments_last_minute: Schema.Number, requests_last_minute: Schema.Number }),
  process: Schema.Struct({ uptime_seconds: Schema.Number, rss_bytes: Schema.Number })
}) {}

export class SecurityGroup extends HttpApiGroup.make("security")
  .add(
    HttpApiEndpoint.get("posture", "/admin/security/posture")
      .addSuccess(SecurityPosture)
      .annotate(OpenApi.Summary, "Security-posture self-assessment (platform admin)")
      .annotate(OpenApi.Description, "Checks read from the current state each call: keys, mode, MFA, API key age, URLs, KYC, and " +
        "`integration_addresses`: a warning naming each provider base URL setting (AI, Telegram, channels, Bakong; " +
        "stored or from the environment) whose host is a loopback, link-local or private address.")
  )
  .add(
    HttpApiEndpoint.get("monitoring", "/admin/security/monitoring")
      .addSuccess(Monitoring)
      .annotate(OpenApi.Summary, "Dependency health and throughput (platform admin)")
      .annotate(OpenApi.Description, "Database latency, cluster, outbox and webhook backlog, throughput, process figures.")
  )
  .pipe(authenticated("session"))
  .annotate(OpenApi.Title, "Security")
  .annotate(OpenApi.Description, "The platform's security posture and monitoring, for platform administrators.")
{}
