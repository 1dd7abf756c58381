/**
 * The console's referral procedures: the program, referrals with their flags, the fraud review queue,
 * commissions with payouts and totals per referrer, the funnel report, and a customer's code with its QR.
 * Each calls the service the `/dashboard/…/referrals` routes call, under the same rules.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ConsoleAuthentication } from "../Console.ts"
import { CustomerId, ReferralId, StoreId } from "../Ids.ts"
import { IdempotencyHeaders } from "../Payments.ts"
import {
  CommissionList,
  CommissionListParams,
  CommissionPayout,
  CommissionSummary,
  PayoutCommissions,
  Referral,
  ReferralList,
  ReferralProgram,
  ReferralQr,
  ReferralReport,
  ReviewReferral,
  UpdateReferralProgram
} from "../Referrals.ts"
import { ConsoleLivemode, ConsolePage, EngagementErrors, ReplayedErrors } from "./Customers.ts"

const StoreMode = { store_id: StoreId, livemode: ConsoleLivemode }

export class ConsoleReferralRpcs extends RpcGroup.make(
  Rpc.make("ReferralProgram", {
    payload: { store_id: StoreId },
    success: ReferralProgram,
    error: EngagementErrors
  }),
  /** Points for both sides, the commission rate and window, the daily limit (marketing.manage). */
  Rpc.make("ConfigureReferrals", {
    payload: { store_id: StoreId, ...UpdateReferralProgram.fields },
    success: ReferralProgram,
    error: EngagementErrors
  }),
  /** The store's referrals, newest first; `flagged_only` is the fraud review queue. */
  Rpc.make("ListReferrals", {
    payload: Schema.Struct({ ...StoreMode, flagged_only: Schema.optionalWith(Schema.Boolean, { default: () => false }), ...ConsolePage }),
    success: ReferralList,
    error: EngagementErrors
  }),
  /** Clears (releases what was held) or voids a flagged referral, with a note (customer.write). */
  Rpc.make("ReviewReferral", {
    payload: { store_id: StoreId, id: ReferralId, ...ReviewReferral.fields },
    success: Referral,
    error: EngagementErrors
  }),
  Rpc.make("ListCommissions", {
    payload: { ...StoreMode, status: CommissionListParams.fields.status, ...ConsolePage },
    success: CommissionList,
    error: EngagementErrors
  }),
  /** Accrued, paid and held commissions per referrer. */
  Rpc.make("CommissionTotals", {
    payload: StoreMode,
    success: CommissionSummary,
    error: EngagementErrors
  }),
  /**
   * Marks the accrued commissions paid (one referrer's, or all) as `POST …/commissions/payout` does;
   * `idempotency_key` is that route's Idempotency-Key.
   */
  Rpc.make("PayoutCommissions", {
    payload: { store_id: StoreId, ...PayoutCommissions.fields, idempotency_key: IdempotencyHeaders.fields["idempotency-key"] },
    success: CommissionPayout,
    error: ReplayedErrors
  }),
  /** The funnel (visits, referrals, converted, flagged, voided) and commission totals. */
  Rpc.make("ReferralReport", {
    payload: StoreMode,
    success: ReferralReport,
    error: EngagementErrors
  }),
  /** A customer's referral code, share link and QR; makes the code if the customer has none yet. */
  Rpc.make("CustomerReferralQr", {
    payload: { id: CustomerId },
    success: ReferralQr,
    error: EngagementErrors
  })
).middleware(ConsoleAuthentication) {}
