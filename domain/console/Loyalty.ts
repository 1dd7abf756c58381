/**
 * The console's loyalty procedures: the program, tiers, rewards, redemptions (made at the counter,
 * fulfilled, cancelled), a customer's points ledger, manual adjustments and the liability figure. Each
 * calls the service the `/dashboard/…/loyalty` routes call, under the same rules.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { ConsoleAuthentication } from "../Console.ts"
import { CustomerId, RedemptionId, RewardId, StoreId, TierId } from "../Ids.ts"
import {
  Adjust,
  CreateReward,
  CreateTier,
  CustomerLoyalty,
  LiabilityParams,
  LoyaltyLiability,
  LoyaltyProgram,
  PointsEntry,
  Redemption,
  RedemptionList,
  Reward,
  RewardList,
  Tier,
  TierList,
  UpdateProgram,
  UpdateReward,
  UpdateTier
} from "../Loyalty.ts"
import { IdempotencyHeaders } from "../Payments.ts"
import { ConsoleLivemode, ConsolePage, EngagementErrors, ReplayedErrors } from "./Customers.ts"

export class ConsoleLoyaltyRpcs extends RpcGroup.make(
  Rpc.make("LoyaltyProgram", {
    payload: { store_id: StoreId },
    success: LoyaltyProgram,
    error: EngagementErrors
  }),
  /** Turns earning on or off and sets the points per unit of each currency (marketing.manage). */
  Rpc.make("ConfigureLoyalty", {
    payload: { store_id: StoreId, ...UpdateProgram.fields },
    success: LoyaltyProgram,
    error: EngagementErrors
  }),
  Rpc.make("ListTiers", {
    payload: { store_id: StoreId, ...ConsolePage },
    success: TierList,
    error: EngagementErrors
  }),
  Rpc.make("CreateTier", {
    payload: { store_id: StoreId, ...CreateTier.fields },
    success: Tier,
    error: EngagementErrors
  }),
  Rpc.make("UpdateTier", {
    payload: { id: TierId, ...UpdateTier.fields },
    success: Tier,
    error: EngagementErrors
  }),
  Rpc.make("DeleteTier", {
    payload: { id: TierId },
    success: Tier,
    error: EngagementErrors
  }),
  Rpc.make("ListRewards", {
    payload: { store_id: StoreId, ...ConsolePage },
    success: RewardList,
    error: EngagementErrors
  }),
  Rpc.make("CreateReward", {
    payload: { store_id: StoreId, ...CreateReward.fields },
    success: Reward,
    error: EngagementErrors
  }),
  /** Changes a reward: its stock, cost, or `active: false` to deactivate it. */
  Rpc.make("UpdateReward", {
    payload: { id: RewardId, ...UpdateReward.fields },
    success: Reward,
    error: EngagementErrors
  }),
  Rpc.make("ListRedemptions", {
    payload: { store_id: StoreId, livemode: ConsoleLivemode, ...ConsolePage },
    success: RedemptionList,
    error: EngagementErrors
  }),
  /**
   * Redeems a reward for a customer at the counter under the rules of `POST /v1/loyalty/redemptions`
   * (customer.write); `idempotency_key` is that route's Idempotency-Key.
   */
  Rpc.make("RedeemReward", {
    payload: { customer_id: CustomerId, reward_id: RewardId, idempotency_key: IdempotencyHeaders.fields["idempotency-key"] },
    success: Redemption,
    error: ReplayedErrors
  }),
  Rpc.make("FulfilRedemption", {
    payload: { id: RedemptionId },
    success: Redemption,
    error: EngagementErrors
  }),
  /** Cancels an issued redemption: its points and the reward's stock come back. */
  Rpc.make("CancelRedemption", {
    payload: { id: RedemptionId },
    success: Redemption,
    error: EngagementErrors
  }),
  /** A customer's points, tier and ledger, newest entry first. */
  Rpc.make("CustomerPoints", {
    payload: { id: CustomerId, ...ConsolePage },
    success: CustomerLoyalty,
    error: EngagementErrors
  }),
  /** Credits or debits a customer's points by hand; the reason is kept on the entry (customer.write). */
  Rpc.make("AdjustPoints", {
    payload: { id: CustomerId, ...Adjust.fields },
    success: PointsEntry,
    error: EngagementErrors
  }),
  /** The points the store's customers hold, valued at `point_value` per point. */
  Rpc.make("LoyaltyLiability", {
    payload: { store_id: StoreId, livemode: ConsoleLivemode, point_value: LiabilityParams.fields.point_value, currency: LiabilityParams.fields.currency },
    success: LoyaltyLiability,
    error: EngagementErrors
  })
).middleware(ConsoleAuthentication) {}
