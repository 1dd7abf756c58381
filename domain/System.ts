/**
 * Liveness and readiness of a process, for load balancers and orchestrators.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailableResponse } from "./Errors.ts"

export const CheckStatus = Schema.Literal("ok", "unavailable")

export class Health extends Schema.Class<Health>("Health")({
  status: Schema.Literal("ok")
}) {}

export class Readiness extends Schema.Class<Readiness>("Readiness")({
  status: Schema.Literal("ready"),
  checks: Schema.Struct({ database: CheckStatus, cluster: CheckStatus })
}) {}

export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .annotate(OpenApi.Summary, "Liveness: 200 while the process is up")
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Readiness)
      .addError(ServiceUnavailableResponse)
      .annotate(OpenApi.Summary, "Readiness: 200 only when the database and the cluster are usable")
  )
  .annotate(OpenApi.Title, "System")
{}
