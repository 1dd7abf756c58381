/**
 * The cluster's settings: where a runner listens, how many shards there are, and how quickly a dead
 * runner's shards move. Read only through `Config`, from our own variable names: `@effect/cluster`'s
 * `ShardingConfig.layerFromEnv` would read HOST and PORT — the HTTP server's variables — as the runner's
 * address, so the cluster is always handed an explicit `ShardingConfig` built from this (runtime/Cluster.ts).
 *
 * How fast shards move when a runner dies (the defaults make it seconds, see README "Running many runners"):
 * - every `healthCheckInterval` the runner-health singleton pings every other runner; a dead one refuses
 *   the connection, and after the library's five retries 500 ms apart it is marked unhealthy;
 * - every `refreshInterval` each process (runners and API nodes) re-reads the runner table and, when
 *   the healthy set changed, recomputes which runner owns which shard;
 * - a runner whose heartbeat (written every `lockExpiration / 3`) is older than `lockExpiration` is left
 *   out by everyone, even if nobody marked it unhealthy — the bound when the dead runner was the one
 *   running the health-check singleton. Shard locks are PostgreSQL advisory locks held by the runner's
 *   session, so a killed runner's locks are released as soon as PostgreSQL sees its connections close.
 */
import { Config, Context, Duration, Effect, Layer, Option } from "effect"
import { describeConfigError } from "../src/platform/Config.ts"

const positiveSeconds = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.validate({ message: "expected a positive number of seconds", validation: (n) => n > 0 }),
    Config.withDefault(fallback),
    Config.map((seconds) => Duration.millis(Math.round(seconds * 1000)))
  )

const port = (name: string) =>
  Config.integer(name).pipe(
    Config.validate({ message: "expected a port number from 1 to 65535", validation: (n) => n >= 1 && n <= 65535 })
  )

export const clusterConfig = Config.all({
  /** The address other processes reach this runner at. */
  runnerHost: Config.string("RUNNER_HOST").pipe(Config.withDefault("127.0.0.1")),
  runnerPort: port("RUNNER_PORT").pipe(Config.withDefault(34431)),
  /** The address the runner binds; defaults to RUNNER_HOST (set 0.0.0.0 behind NAT or in a container). */
  runnerListenHost: Config.option(Config.string("RUNNER_LISTEN_HOST")),
  /** An optional plain-HTTP `GET /health` on runners, for a process supervisor or load balancer. */
  runnerHealthPort: Config.option(port("RUNNER_HEALTH_PORT")),
  /** Shards per group; every process of one cluster must agree on it. */
  shards: Config.integer("CLUSTER_SHARDS").pipe(
    Config.validate({ message: "expected a positive whole number", validation: (n) => n > 0 }),
    Config.withDefault(300)
  ),
  healthCheckInterval: positiveSeconds("CLUSTER_HEALTH_CHECK_SECONDS", 2),
  refreshInterval: positiveSeconds("CLUSTER_REFRESH_SECONDS", 1),
  lockExpiration: positiveSeconds("CLUSTER_LOCK_EXPIRATION_SECONDS", 12)
})

export type ClusterConfigShape = Config.Config.Success<typeof clusterConfig>

export const clusterDefaults: ClusterConfigShape = {
  runnerHost: "127.0.0.1",
  runnerPort: 34431,
  runnerListenHost: Option.none(),
  runnerHealthPort: Option.none(),
  shards: 300,
  healthCheckInterval: Duration.seconds(2),
  refreshInterval: Duration.seconds(1),
  lockExpiration: Duration.seconds(12)
}

/**
 * The cluster settings. A reference with the defaults, so the all-in-one service (and the tests that start
 * it in-process) need nothing; the entry points provide `ClusterConfig.layer`, which reads the environment.
 */
export class ClusterConfig extends Context.Reference<ClusterConfig>()("runtime/ClusterConfig", {
  defaultValue: () => clusterDefaults
}) {
  static readonly layer = Layer.effect(ClusterConfig, Effect.mapError(clusterConfig, describeConfigError))
  static readonly make = (overrides: Partial<ClusterConfigShape>) =>
    Layer.succeed(ClusterConfig, { ...clusterDefaults, ...overrides })
}
