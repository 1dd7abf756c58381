/**
 * The cluster: sharding with its messages in PostgreSQL. Every entity of the service is registered
 * here; a new entity only needs its `Entity.toLayer` added to `entityLayers`.
 *
 * Three ways to take part, one per process shape (runtime/App.ts):
 * - `SingleRunnerLive` (main.ts): the process is its own and only runner; no network between runners.
 * - `SocketRunnerLive` (runner.ts): one runner of many, reachable over TCP at RUNNER_HOST:RUNNER_PORT;
 *   runners find each other, share the shards and watch each other's health through the runner table
 *   and advisory locks in the shared PostgreSQL.
 * - `ClientOnlyShardingLive` (api.ts): hosts nothing; sends each message to the runner that owns its
 *   shard, learned from the same runner table.
 *
 * Each is assembled here from @effect/cluster's parts rather than through `SingleRunner.layer` or
 * `NodeClusterSocket.layer`: those read `ShardingConfig.layerFromEnv`, which takes HOST and PORT (the HTTP
 * server's variables) as the runner's address. Ours is built from `ClusterConfig` alone.
 */
import {
  MessageStorage,
  RunnerAddress,
  RunnerHealth,
  Runners,
  RunnerStorage,
  Sharding,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "@effect/cluster"
import { NodeClusterSocket } from "@effect/platform-node"
import { RpcSerialization } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Option } from "effect"
import { PaymentEntityLive } from "../src/payments/Entity.ts"
import { PaymentJobsLive } from "../src/payments/Jobs.ts"
import { CustomerWalletEntityLive } from "../src/loyalty/Entity.ts"
import { GameInventoryEntityLive, GamePrizeCreditsLive } from "../src/games/Entity.ts"
import { LoyaltyEarningLive } from "../src/loyalty/Jobs.ts"
import { NotificationRetriesLive, NotificationsConsumerLive } from "../src/notifications/Jobs.ts"
import { BillingPaymentsLive } from "../src/billing/Consumer.ts"
import { RiskRulesLive } from "../src/risk/Jobs.ts"
import { AnalyticsRollupLive } from "../src/analytics/Jobs.ts"
import { ReferralConversionLive } from "../src/referrals/Conversion.ts"
import { ReferralsRepo } from "../src/referrals/Repo.ts"
import { PromotionAwardingLive, PromotionEndingCronLive } from "../src/promotions/Awarding.ts"
import { LoyaltyRepo } from "../src/loyalty/Repo.ts"
import { Outbox, OutboxPolls, OutboxQueues } from "../src/platform/Outbox.ts"
import { PaymentsRepo } from "../src/payments/Repo.ts"
import { JournalPostings } from "../src/ledger/Journal.ts"
import { ClusterProbeLive } from "../src/system/ClusterProbe.ts"
import { RetentionCronLive } from "../src/system/Retention.ts"
import { WebhookDispatcherLive } from "../src/webhooks/Dispatcher.ts"
import { MailSenderLive } from "../src/mail/Sender.ts"
import { ReceiptMailLive } from "../src/mail/Receipts.ts"
import { ClusterConfig, type ClusterConfigShape } from "./ClusterConfig.ts"

/** Every entity hosted by a runner. */
export const entityLayers = [ClusterProbeLive, PaymentEntityLive, CustomerWalletEntityLive, GameInventoryEntityLive] as const

/** Every singleton and cron job, run by exactly one runner of the cluster. */
export const singletonLayers = [PaymentJobsLive, WebhookDispatcherLive, RetentionCronLive, LoyaltyEarningLive, RiskRulesLive, AnalyticsRollupLive, ReferralConversionLive, NotificationsConsumerLive, NotificationRetriesLive, PromotionAwardingLive, PromotionEndingCronLive, BillingPaymentsLive, GamePrizeCreditsLive, MailSenderLive, ReceiptMailLive] as const

export const EntitiesLive = Layer.mergeAll(...entityLayers, ...singletonLayers).pipe(
  Layer.provide([PaymentsRepo.Default, LoyaltyRepo.Default, Outbox.Default, OutboxPolls.Default, OutboxQueues.Default, ReferralsRepo.Default, JournalPostings.Default])
)

/**
 * Message storage and runner storage in SQL. Their layers create the cluster's tables when built, with no
 * lock of their own; each shape builds them while it holds the start-up lock (runtime/StartupLock.ts), so
 * processes starting together on a fresh database take turns.
 */
const ClusterStorageLive: Layer.Layer<
  MessageStorage.MessageStorage | RunnerStorage.RunnerStorage,
  never,
  SqlClient.SqlClient | ShardingConfig.ShardingConfig
> = Layer.merge(SqlMessageStorage.layer, Layer.orDie(SqlRunnerStorage.layer))

/**
 * Messages for local entities are delivered in-process (and messages for remote ones are sent to their
 * runner directly); the storage poll only picks up work left over from a dead runner or a restart, or
 * scheduled for later (DeliverAt). Every second keeps that recovery quick for little cost.
 */
const MESSAGE_POLL_INTERVAL = Duration.seconds(1)

/** What every process of a multi-process cluster must agree on, and the settings that bound recovery. */
export const shardingConfigOf = (
  cluster: ClusterConfigShape,
  address: Option.Option<RunnerAddress.RunnerAddress>
): Partial<ShardingConfig.ShardingConfig["Type"]> => ({
  runnerAddress: address,
  runnerListenAddress: Option.map(
    address,
    (advertised) => RunnerAddress.make(Option.getOrElse(cluster.runnerListenHost, () => advertised.host), advertised.port)
  ),
  shardsPerGroup: cluster.shards,
  shardLockExpiration: cluster.lockExpiration,
  runnerHealthCheckInterval: cluster.healthCheckInterval,
  refreshAssignmentsInterval: cluster.refreshInterval,
  entityMessagePollInterval: MESSAGE_POLL_INTERVAL,
  // A message to an entity of this same runner is handed over as it is, not encoded and decoded on the way
  // (the cluster's default, meant to surface a payload that could not cross the wire): every payload here is
  // a schema the messages to other runners are encoded with, and the round trip cost earning from a backlog
  // a seventh of its rate (319 against 369 events/s, README "Benchmarks").
  simulateRemoteSerialization: false
})

/** One process that is its own (and only) runner, with runner and message storage in SQL. */
export const SingleRunnerLive = Layer.unwrapEffect(Effect.map(ClusterConfig, (cluster) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(ClusterStorageLive),
    Layer.provide(RunnerHealth.layerNoop),
    Layer.provide(ShardingConfig.layer({
      // A fixed identity: a restarted process reclaims its own shards at once instead of waiting for its
      // previous incarnation's locks to expire.
      runnerAddress: Option.some(RunnerAddress.make("single-runner", 1)),
      shardsPerGroup: cluster.shards,
      entityMessagePollInterval: MESSAGE_POLL_INTERVAL
    }))
  )
))

/**
 * A runner of a multi-process cluster: serves the runner protocol on RUNNER_LISTEN_HOST (or RUNNER_HOST)
 * and RUNNER_PORT, advertises RUNNER_HOST:RUNNER_PORT, and pings the other runners (when it holds the
 * health-check singleton) to find dead ones. The same parts as `NodeClusterSocket.layer({ storage: "sql" })`.
 */
export const SocketRunnerLive = Layer.unwrapEffect(Effect.map(ClusterConfig, (cluster) =>
  SocketRunner.layer.pipe(
    Layer.provide(RunnerHealth.layerPing.pipe(
      Layer.provide(Runners.layerRpc),
      Layer.provide(NodeClusterSocket.layerClientProtocol)
    )),
    Layer.provide([NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]),
    Layer.provideMerge(ClusterStorageLive),
    Layer.provide(ShardingConfig.layer(
      shardingConfigOf(cluster, Option.some(RunnerAddress.make(cluster.runnerHost, cluster.runnerPort)))
    )),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
))

/**
 * Client-only sharding for API nodes: no shards, no entities; `Entity.client` sends each message to the
 * runner that owns its shard. The same parts as `NodeClusterSocket.layer({ clientOnly: true, storage: "sql" })`.
 */
export const ClientOnlyShardingLive = Layer.unwrapEffect(Effect.map(ClusterConfig, (cluster) =>
  SocketRunner.layerClientOnly.pipe(
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provideMerge(ClusterStorageLive),
    Layer.provide(ShardingConfig.layer(shardingConfigOf(cluster, Option.none()))),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
))
