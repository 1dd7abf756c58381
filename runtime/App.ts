/**
 * The process shapes, assembled from shared parts in start-up order: configuration, database, migrations,
 * the cluster, then — where the shape serves HTTP — the server (which only listens once all of those are up).
 *
 * | shape | entry | hosts entities and singletons | public HTTP | sharding |
 * |---|---|---|---|---|
 * | all-in-one | main.ts | yes | yes | `SingleRunnerLive` |
 * | runner | runner.ts | yes | no (optional `/health` on RUNNER_HEALTH_PORT) | `SocketRunnerLive` |
 * | API node | api.ts | no | yes | `ClientOnlyShardingLive` |
 *
 * Every shape runs the migrations at start (they serialize on an advisory lock). The API node's services
 * still send entity messages (`PaymentEntity.client`); client-only sharding routes them to the runners.
 */
import { Sharding, ShardId } from "@effect/cluster"
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { PublicBaseUrl } from "../src/platform/PublicUrl.ts"
import { MetricsService, runnerMetrics } from "../src/system/Metrics.ts"
import { ClientOnlyShardingLive, EntitiesLive, SingleRunnerLive, SocketRunnerLive } from "./Cluster.ts"
import { ClusterConfig } from "./ClusterConfig.ts"
import { AppConfig, ConfigurationError } from "../src/platform/Config.ts"
import { DatabaseApplicationName, DatabaseLive } from "./Database.ts"
import { DrainOnShutdownLive, HttpLive, logListening, NodeServerLive } from "./Http.ts"
import { MasterKeyLive } from "./MasterKey.ts"
import { MigrationsLive } from "./Migrations.ts"
import { ShutdownDeadlineLive } from "./ShutdownDeadline.ts"
import { TracingLive } from "./Telemetry.ts"
import { ReleaseStartupLockLive, StartupLockLive } from "./StartupLock.ts"

/** What every shape stands on: the database (migrated), the master key and the public base URL. */
export const PlatformLive = Layer.mergeAll(MasterKeyLive, PublicBaseUrl.layer).pipe(
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(StartupLockLive),
  Layer.provideMerge(DatabaseLive)
)

/** Everything below HTTP in the all-in-one process: the platform, the single-runner cluster, every entity. */
export const InfrastructureLive = EntitiesLive.pipe(
  Layer.provideMerge(ReleaseStartupLockLive),
  Layer.provideMerge(SingleRunnerLive),
  Layer.provideMerge(PlatformLive)
)

/** The HTTP server on PORT with every route, on top of `infrastructure`. */
const servingHttp = <A, E, R>(infrastructure: Layer.Layer<A, E, R>) =>
  Layer.effectDiscard(logListening).pipe(
    Layer.provideMerge(DrainOnShutdownLive),
    Layer.provideMerge(HttpLive),
    Layer.provideMerge(NodeServerLive),
    Layer.provideMerge(infrastructure),
    // First up, so every span from start-up on is exported, and last down, so the final batch is sent.
    Layer.provide(TracingLive)
  )

/** The all-in-one service; configuration comes from `AppConfig`, so tests can supply their own. */
export const ServiceLive = servingHttp(InfrastructureLive)

/** Refuses to start a multi-process shape on the embedded database, before anything is opened. */
const requireSharedDatabase = (shape: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isNone(config.databaseUrl)) {
      return yield* Effect.fail(
        new ConfigurationError(
          `Configuration error: the ${shape} requires DATABASE_URL: the embedded database serves one process`
        )
      )
    }
  }))

/**
 * An API node: the public HTTP API with client-only sharding. Stateless: any number of them can run
 * behind a load balancer.
 */
export const ApiServiceLive = servingHttp(
  ReleaseStartupLockLive.pipe(Layer.provideMerge(ClientOnlyShardingLive), Layer.provideMerge(PlatformLive))
).pipe(
  Layer.provide(Layer.effect(DatabaseApplicationName, Effect.map(AppConfig, (config) => `merchant-platform api :${config.port}`))),
  Layer.provide(requireSharedDatabase("API node"))
)

/** The shards this runner holds right now, of the `shards` of the default group. */
const heldShards = (sharding: Sharding.Sharding["Type"], shards: number) => {
  let held = 0
  for (let i = 1; i <= shards; i++) if (sharding.hasShardId(ShardId.make("default", i))) held++
  return held
}

/**
 * `GET /health` on RUNNER_HEALTH_PORT, when set: 200 while the database answers and the runner is part
 * of the cluster (with how many shards it holds), 503 otherwise. Beside it `GET /metrics`, for the
 * METRICS_TOKEN holder: the runner's entities and singletons count payment changes and webhook attempts.
 */
const RunnerHealthServerLive = Layer.unwrapEffect(Effect.gen(function*() {
  const cluster = yield* ClusterConfig
  if (Option.isNone(cluster.runnerHealthPort)) return Layer.empty
  const health = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sharding = yield* Sharding.Sharding
    const databaseOk = yield* sql`SELECT 1`.pipe(Effect.timeout("3 seconds"), Effect.isSuccess)
    const shutDown = yield* sharding.isShutdown
    const body = {
      status: databaseOk && !shutDown ? "ok" : "unavailable",
      runner: `${cluster.runnerHost}:${cluster.runnerPort}`,
      database: databaseOk ? "ok" : "unavailable",
      shards: heldShards(sharding, cluster.shards)
    }
    return HttpServerResponse.unsafeJson(body, { status: body.status === "ok" ? 200 : 503 })
  })
  const host = Option.getOrElse(cluster.runnerListenHost, () => cluster.runnerHost)
  return HttpServer.serve(HttpRouter.empty.pipe(HttpRouter.get("/health", health), HttpRouter.get("/metrics", runnerMetrics))).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { port: cluster.runnerHealthPort.value, host })),
    Layer.provide(MetricsService.Default)
  )
}))

const logRunnerReady = Effect.gen(function*() {
  const cluster = yield* ClusterConfig
  const config = yield* AppConfig
  if (Option.isNone(config.publicBaseUrl)) {
    yield* Effect.logWarning(
      "PUBLIC_BASE_URL is not set: the checkout_url in events this runner writes will name " +
        `${yield* (yield* PublicBaseUrl).get}; set it to the API nodes' public origin`
    )
  }
  const health = Option.match(cluster.runnerHealthPort, {
    onNone: () => "",
    onSome: (port) => `, health on http://${Option.getOrElse(cluster.runnerListenHost, () => cluster.runnerHost)}:${port}/health`
  })
  yield* Effect.logInfo(`runner ready on ${cluster.runnerHost}:${cluster.runnerPort}${health}`)
})

/** A shard runner: hosts the entities and singletons of the shards it holds; no public HTTP. */
export const RunnerLive = Layer.effectDiscard(logRunnerReady).pipe(
  Layer.provideMerge(RunnerHealthServerLive),
  Layer.provideMerge(EntitiesLive),
  Layer.provideMerge(ReleaseStartupLockLive),
  Layer.provideMerge(SocketRunnerLive),
  Layer.provideMerge(PlatformLive),
  Layer.provide(TracingLive),
  // Names the runner in pg_stat_activity, and so in pg_locks, where its shard locks are.
  Layer.provide(Layer.effect(
    DatabaseApplicationName,
    Effect.map(ClusterConfig, (cluster) => `merchant-platform runner ${cluster.runnerHost}:${cluster.runnerPort}`)
  )),
  Layer.provide(requireSharedDatabase("runner"))
)

/** Each shape with its configuration read from the environment. */
const withEnvironment = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  layer.pipe(
    // Built first, so released last: the deadline holds for the whole shutdown sequence.
    Layer.provideMerge(ShutdownDeadlineLive),
    Layer.provideMerge(Layer.merge(AppConfig.layer, ClusterConfig.layer))
  )

export const MainLive = withEnvironment(ServiceLive)
export const ApiMainLive = withEnvironment(ApiServiceLive)
export const RunnerMainLive = withEnvironment(RunnerLive)

export const program = Layer.launch(MainLive).pipe(Effect.asVoid)
export const apiProgram = Layer.launch(ApiMainLive).pipe(Effect.asVoid)
export const runnerProgram = Layer.launch(RunnerMainLive).pipe(Effect.asVoid)
