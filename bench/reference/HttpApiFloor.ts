/**
 * The framework's floor (a reference server of bench/requests.ts, not part of the product): one HttpApi
 * group with one GET endpoint answering a constant object, served the way the service serves its API
 * (HttpLayerRouter.addHttpApi on NodeHttpServer, runtime/Http.ts) with no middleware, no logger, no
 * database. What the service's `GET /health` pays beyond this is the service's own request pipeline.
 *
 * Environment: HOST (127.0.0.1), PORT (0: a free port). Logs one line, `listening on http://host:port`.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpLayerRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"

class Health extends Schema.Class<Health>("Health")({ status: Schema.Literal("ok") }) {}

const FloorApi = HttpApi.make("floor").add(
  HttpApiGroup.make("system").add(HttpApiEndpoint.get("health", "/health").addSuccess(Health))
)

const SystemLive = HttpApiBuilder.group(FloorApi, "system", (handlers) =>
  handlers.handle("health", () => Effect.succeed(new Health({ status: "ok" }))))

const host = process.env["HOST"] ?? "127.0.0.1"
const port = Number(process.env["PORT"] ?? "0")

const logListening = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const bound = server.address._tag === "TcpAddress" ? server.address.port : port
  yield* Effect.sync(() => console.log(`listening on http://${host}:${bound}`))
}))

const FloorLive = Layer.merge(
  HttpLayerRouter.serve(HttpLayerRouter.addHttpApi(FloorApi).pipe(Layer.provide(SystemLive)), {
    disableLogger: true,
    disableListenLog: true
  }),
  logListening
).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port, host })))

NodeRuntime.runMain(Layer.launch(FloorLive))
