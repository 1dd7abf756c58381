/**
 * Traces out of the process. With `OTEL_EXPORTER_OTLP_ENDPOINT` set, every span — each HTTP request
 * (`http.server GET`, with its route), each service and repo call written with `Effect.fn`, SQL
 * statements, cluster messages, outgoing webhook requests — is sent over OTLP/HTTP to
 * `<endpoint>/v1/traces`, in batches every 5 seconds and once more at shutdown. Unset, tracing is
 * switched off: no span is made, and nothing is sent anywhere.
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { FetchHttpClient } from "@effect/platform"
import { Duration, Effect, Layer, Option, Tracer } from "effect"
import { AppConfig } from "../src/platform/Config.ts"
import { exportingSpans } from "../src/platform/Traced.ts"

const REDACTED = "REDACTED"

const redactParameters = (query: string): string =>
  query.split("&").map((pair) => {
    const equals = pair.indexOf("=")
    return equals === -1 ? pair : `${pair.slice(0, equals)}=${REDACTED}`
  }).join("&")

/**
 * A span attribute as it may leave the process. Query strings carry one-time secrets (the e-mail
 * verification link's token, a merchant's webhook URL with a key in it), and a tracing backend is not a
 * place for them: their values are replaced, their names kept.
 */
export const redactAttribute = (key: string, value: unknown): unknown => {
  if (typeof value !== "string") return value
  if (key === "url.query") return redactParameters(value)
  if (key === "url.full") {
    const question = value.indexOf("?")
    return question === -1 ? value : `${value.slice(0, question)}?${redactParameters(value.slice(question + 1))}`
  }
  return value
}

const redacting = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span(name, parent, context, links, startTime, kind, options) {
      const span = tracer.span(name, parent, context, links, startTime, kind, options)
      const record = span.attribute.bind(span)
      return Object.assign(span, { attribute: (key: string, value: unknown) => record(key, redactAttribute(key, value)) })
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })

/** The OTLP span exporter when an endpoint is configured; nothing otherwise. */
export const TracingLive = Layer.unwrapEffect(Effect.gen(function*() {
  const { telemetry } = yield* AppConfig
  // With no exporter, no span is made at all: the framework's and the SQL client's spans (a span object,
  // its attributes and clock readings per statement and per request) reached no one.
  if (Option.isNone(telemetry.otlpEndpoint)) return Layer.setTracerEnabled(false)
  const tracer = OtlpTracer.make({
    url: `${telemetry.otlpEndpoint.value}/v1/traces`,
    resource: { serviceName: telemetry.serviceName },
    exportInterval: Duration.millis(telemetry.exportDelayMillis)
  })
  // The service functions open their spans only while a tracer exports them (src/platform/Traced.ts).
  return Layer.unwrapScoped(Effect.map(tracer, (otlp) => Layer.setTracer(redacting(otlp)))).pipe(
    Layer.merge(Layer.scopedDiscard(exportingSpans)),
    Layer.provide(telemetry.otlpProtocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer)
  )
}))
