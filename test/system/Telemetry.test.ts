/**
 * Span export over OTLP/HTTP: with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local collector stub, the
 * spans of HTTP requests arrive at `/v1/traces`, named for the service, with their route and without
 * the secrets of query strings. Unset, no tracer is installed at all.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { AppConfig } from "../../src/platform/Config.ts"
import { redactAttribute, TracingLive } from "../../runtime/Telemetry.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

interface ReceivedExport {
  readonly path: string
  readonly contentType: string | undefined
  readonly body: string
}

/** A stand-in for an OpenTelemetry collector: records every POST and answers 200 `{}` as OTLP/HTTP does. */
class CollectorStub extends Context.Tag("test/CollectorStub")<CollectorStub, {
  readonly origin: string
  readonly received: ReadonlyArray<ReceivedExport>
}>() {
  static readonly layer = Layer.scoped(
    CollectorStub,
    Effect.acquireRelease(
      Effect.async<{ readonly origin: string; readonly received: Array<ReceivedExport>; readonly close: () => void }>(
        (resume) => {
          const received: Array<ReceivedExport> = []
          const server = createServer((request, response) => {
            const chunks: Array<Buffer> = []
            request.on("data", (chunk: Buffer) => chunks.push(chunk))
            request.on("end", () => {
              if (request.method === "POST") {
                received.push({
                  path: request.url ?? "",
                  contentType: request.headers["content-type"],
                  body: Buffer.concat(chunks).toString("utf8")
                })
              }
              response.writeHead(200, { "content-type": "application/json" }).end("{}")
            })
          })
          server.listen(0, "127.0.0.1", () => {
            const { port } = server.address() as AddressInfo
            resume(Effect.succeed({
              origin: `http://127.0.0.1:${port}`,
              received,
              close: () => {
                server.closeAllConnections()
                server.close()
              }
            }))
          })
        }
      ),
      ({ close }) => Effect.sync(close)
    )
  )
}

interface OtlpAttribute {
  readonly key: string
  readonly value: { readonly stringValue?: string; readonly intValue?: number | string }
}

interface OtlpSpan {
  readonly name: string
  readonly traceId: string
  readonly parentSpanId?: string
  readonly attributes: ReadonlyArray<OtlpAttribute>
}

interface ExportedSpan extends OtlpSpan {
  readonly serviceName: string | undefined
}

const attributeOf = (attributes: ReadonlyArray<OtlpAttribute>, key: string) => {
  const value = attributes.find((attribute) => attribute.key === key)?.value
  return value?.stringValue ?? value?.intValue
}

/** Every span the stub received at /v1/traces, with its resource's service name. */
const exportedSpans = (received: ReadonlyArray<ReceivedExport>): ReadonlyArray<ExportedSpan> =>
  received.filter((request) => request.path === "/v1/traces").flatMap((request) => {
    const data = JSON.parse(request.body) as {
      resourceSpans: Array<{
        resource: { attributes: Array<OtlpAttribute> }
        scopeSpans: Array<{ spans: Array<OtlpSpan> }>
      }>
    }
    return data.resourceSpans.flatMap((resourceSpans) =>
      resourceSpans.scopeSpans.flatMap((scope) =>
        scope.spans.map((span) => ({
          ...span,
          serviceName: attributeOf(resourceSpans.resource.attributes, "service.name") as string | undefined
        }))
      )
    )
  })

/** Waits for the exporter's next batch (every EXPORT_DELAY_MILLIS) to bring a span that `matches`. */
const waitForSpan = (received: ReadonlyArray<ReceivedExport>, matches: (span: ExportedSpan) => boolean) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 20_000
    while (true) {
      const found = exportedSpans(received).find(matches)
      if (found !== undefined) return found
      if (Date.now() > deadline) {
        const names = exportedSpans(received).map((span) => span.name)
        return yield* Effect.dieMessage(`no matching span arrived; got ${names.length}: ${names.slice(0, 20).join(", ")}`)
      }
      yield* Effect.sleep("200 millis")
    }
  })

/** Batches every 300 ms rather than the default 5 s: the tests wait for them. */
const EXPORT_DELAY_MILLIS = 300

const suite = Layer.unwrapEffect(Effect.map(CollectorStub, (collector) =>
  testAppLayer({
    telemetry: {
      otlpEndpoint: Option.some(collector.origin),
      otlpProtocol: "http/json",
      serviceName: "merchant-platform-under-test",
      exportDelayMillis: EXPORT_DELAY_MILLIS
    }
  }))).pipe(Layer.provideMerge(CollectorStub.layer))

describe("OTLP span export", () => {
  layer(suite, { timeout: 120_000, excludeTestServices: true })("to a local collector", (it) => {
    it.effect("sends the span of an HTTP request, with its route, to /v1/traces", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const collector = yield* CollectorStub
        const response = yield* Effect.promise(() => app.fetch("/health"))
        expect(response.status).toBe(200)

        const span = yield* waitForSpan(collector.received, (span) =>
          span.name === "http.server GET" && attributeOf(span.attributes, "url.path") === "/health")
        expect(span.serviceName).toBe("merchant-platform-under-test")
        expect(attributeOf(span.attributes, "http.route")).toBe("/health")
        expect(Number(attributeOf(span.attributes, "http.response.status_code"))).toBe(200)
        expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
        expect(collector.received.find((request) => request.path === "/v1/traces")?.contentType).toMatch(/^application\/json/)
      }))

    it.effect("exports a query string's names but not its values", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const collector = yield* CollectorStub
        const secret = "verification-token-that-must-stay-here"
        yield* Effect.promise(() => app.fetch(`/auth/verify-email?token=${secret}`))

        const span = yield* waitForSpan(collector.received, (span) =>
          span.name === "http.server GET" && attributeOf(span.attributes, "url.path") === "/auth/verify-email")
        expect(attributeOf(span.attributes, "url.query")).toBe("token=REDACTED")
        expect(attributeOf(span.attributes, "url.full")).toMatch(/\/auth\/verify-email\?token=REDACTED$/)
        expect(collector.received.some((request) => request.body.includes(secret))).toBe(false)

        // The service functions open their spans while spans are exported (src/platform/Traced.ts), inside
        // the request's.
        const serviceSpan = yield* waitForSpan(collector.received, (found) =>
          found.name === "Accounts.verifyEmail" && found.traceId === span.traceId)
        expect(serviceSpan.parentSpanId).toMatch(/^[0-9a-f]{16}$/)
      }))
  })
})

describe("without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it.effect("installs no tracer: spans stay Effect's default", () =>
    Effect.gen(function*() {
      const defaultTracer = yield* Effect.tracer
      const unset = AppConfig.make({
        telemetry: { otlpEndpoint: Option.none(), otlpProtocol: "http/protobuf", serviceName: "unused", exportDelayMillis: 5000 }
      })
      const withoutEndpoint = yield* Effect.tracer.pipe(Effect.provide(TracingLive.pipe(Layer.provide(unset))))
      expect(withoutEndpoint).toBe(defaultTracer)

      const set = AppConfig.make({
        telemetry: { otlpEndpoint: Option.some("http://127.0.0.1:9"), otlpProtocol: "http/protobuf", serviceName: "unused", exportDelayMillis: 5000 }
      })
      const withEndpoint = yield* Effect.scoped(
        Effect.tracer.pipe(Effect.provide(TracingLive.pipe(Layer.provide(set))))
      )
      expect(withEndpoint).not.toBe(defaultTracer)
    }))

  it("redacts the values of query strings, in url.query and url.full", () => {
    expect(redactAttribute("url.query", "token=abc&limit=2&flag")).toBe("token=REDACTED&limit=REDACTED&flag")
    expect(redactAttribute("url.full", "http://h/p?token=abc")).toBe("http://h/p?token=REDACTED")
    expect(redactAttribute("url.full", "http://h/p")).toBe("http://h/p")
    expect(redactAttribute("url.path", "/p?x=1")).toBe("/p?x=1")
    expect(redactAttribute("http.response.status_code", 200)).toBe(200)
  })
})
