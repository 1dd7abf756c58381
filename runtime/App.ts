/**
 * The all-in-one process, assembled from its parts in start-up order: configuration, database,
 * migrations, cluster and keys, then the HTTP server (which only listens once all of those are up).
 */
import { Effect, Layer } from "effect"
import { PublicBaseUrl } from "../src/platform/PublicUrl.ts"
import { ClusterLive } from "./Cluster.ts"
import { AppConfig } from "./Config.ts"
import { DatabaseLive } from "./Database.ts"
import { HttpLive, logListening, NodeServerLive } from "./Http.ts"
import { MasterKeyLive } from "./MasterKey.ts"
import { MigrationsLive } from "./Migrations.ts"

/** Everything below HTTP: the database (migrated), the single-runner cluster and the master key. */
export const InfrastructureLive = ClusterLive.pipe(
  Layer.provideMerge(Layer.mergeAll(MasterKeyLive, PublicBaseUrl.layer)),
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(DatabaseLive)
)

/** The whole service; configuration comes from `AppConfig`, so tests can supply their own. */
export const ServiceLive = Layer.effectDiscard(logListening).pipe(
  Layer.provideMerge(HttpLive),
  Layer.provideMerge(NodeServerLive),
  Layer.provideMerge(InfrastructureLive)
)

export const MainLive = ServiceLive.pipe(Layer.provideMerge(AppConfig.layer))

export const program = Layer.launch(MainLive).pipe(Effect.asVoid)
