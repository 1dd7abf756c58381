/**
 * A tiny entity that answers a ping. Readiness sends it one message: an answer proves that sharding
 * is running, that this process can reach the runner owning the probe's shard, and that the runner
 * processes messages — the same path every real entity's messages take.
 */
import { Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Effect, Schema } from "effect"

export const ClusterProbe = Entity.make("ClusterProbe", [
  Rpc.make("Ping", { success: Schema.Literal("pong") })
])

export const ClusterProbeLive = ClusterProbe.toLayer(
  ClusterProbe.of({ Ping: () => Effect.succeed("pong" as const) }),
  { maxIdleTime: "1 minute" }
)
