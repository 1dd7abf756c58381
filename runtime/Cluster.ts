/**
 * The cluster: sharding with its messages in PostgreSQL. Every entity of the service is registered
 * here; a new entity only needs its `Entity.toLayer` added to `entityLayers`.
 */
import { SingleRunner } from "@effect/cluster"
import { Layer } from "effect"
import { PaymentEntityLive } from "../src/payments/Entity.ts"
import { PaymentJobsLive } from "../src/payments/Jobs.ts"
import { PaymentsRepo } from "../src/payments/Repo.ts"
import { ClusterProbeLive } from "../src/system/ClusterProbe.ts"

/** Every entity hosted by a runner. */
export const entityLayers = [ClusterProbeLive, PaymentEntityLive] as const

/** Every singleton and cron job, run by exactly one runner of the cluster. */
export const singletonLayers = [PaymentJobsLive] as const

export const EntitiesLive = Layer.mergeAll(...entityLayers, ...singletonLayers).pipe(
  Layer.provide(PaymentsRepo.Default)
)

/** One process that is its own (and only) runner, with runner and message storage in SQL. */
export const SingleRunnerLive = SingleRunner.layer({
  runnerStorage: "sql",
  shardingConfig: {
    // Messages for local entities are delivered in-process; the poll only picks up work left over
    // from before a restart or scheduled for later (DeliverAt), so it can be relaxed.
    entityMessagePollInterval: "1 second"
  }
})

export const ClusterLive = EntitiesLive.pipe(Layer.provideMerge(SingleRunnerLive))
