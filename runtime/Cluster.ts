/**
 * The cluster: sharding with its messages in PostgreSQL. Every entity of the service is registered
 * here; a new entity only needs its `Entity.toLayer` added to `entityLayers`.
 */
import { RunnerAddress, SingleRunner } from "@effect/cluster"
import { Layer, Option } from "effect"
import { PaymentEntityLive } from "../src/payments/Entity.ts"
import { PaymentJobsLive } from "../src/payments/Jobs.ts"
import { PaymentsRepo } from "../src/payments/Repo.ts"
import { ClusterProbeLive } from "../src/system/ClusterProbe.ts"
import { WebhookDispatcherLive } from "../src/webhooks/Dispatcher.ts"

/** Every entity hosted by a runner. */
export const entityLayers = [ClusterProbeLive, PaymentEntityLive] as const

/** Every singleton and cron job, run by exactly one runner of the cluster. */
export const singletonLayers = [PaymentJobsLive, WebhookDispatcherLive] as const

export const EntitiesLive = Layer.mergeAll(...entityLayers, ...singletonLayers).pipe(
  Layer.provide(PaymentsRepo.Default)
)

/** One process that is its own (and only) runner, with runner and message storage in SQL. */
export const SingleRunnerLive = SingleRunner.layer({
  runnerStorage: "sql",
  shardingConfig: {
    // A fixed identity: a restarted process reclaims its own shards at once instead of waiting for its
    // previous incarnation's locks to expire. (Left to the environment, the cluster would read HOST and
    // PORT — the HTTP server's variables — as its address.)
    runnerAddress: Option.some(RunnerAddress.make("single-runner", 1)),
    // Messages for local entities are delivered in-process; the poll only picks up work left over
    // from before a restart or scheduled for later (DeliverAt), so it can be relaxed.
    entityMessagePollInterval: "1 second"
  }
})

export const ClusterLive = EntitiesLive.pipe(Layer.provideMerge(SingleRunnerLive))
