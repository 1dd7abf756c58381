/**
 * How loyalty objects look on the wire (API.md "Loyalty"), and the webhook events of the wallet.
 */
import {
  LoyaltyProgram,
  PointsEntry,
  type PointsEntryType,
  Redemption,
  Reward,
  Tier,
  TierSummary,
  WalletEntry,
  WalletVoucher
} from "../../domain/Loyalty.ts"
import type { PointsEntryRow, ProgramRow, RedemptionRow, RewardRow, TierRow, WalletVoucherRow } from "./Repo.ts"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

export const toProgram = (row: ProgramRow): LoyaltyProgram =>
  new LoyaltyProgram({
    object: "loyalty_program",
    store_id: row.store_id,
    active: row.active,
    points_per_unit: { USD: row.points_per_usd, KHR: row.points_per_khr }
  })

export const toTier = (row: TierRow): Tier =>
  new Tier({
    id: row.id,
    object: "tier",
    store_id: row.store_id,
    name: row.name,
    threshold: row.threshold,
    earn_multiplier: row.earn_multiplier,
    created_at: row.created_at.toISOString()
  })

export const toTierSummary = (row: TierRow): TierSummary =>
  new TierSummary({ id: row.id, name: row.name, threshold: row.threshold, earn_multiplier: row.earn_multiplier })

export const toReward = (row: RewardRow): Reward =>
  new Reward({
    id: row.id,
    object: "reward",
    store_id: row.store_id,
    name: row.name,
    description: row.description,
    points_cost: row.points_cost,
    stock: row.stock,
    active: row.active,
    created_at: row.created_at.toISOString()
  })

/**
 * Redemptions and points entries are built from rows the repo has already decoded, on every change of a
 * wallet, so their constructors skip checking them again, as the payment's do (src/payments/View.ts).
 */
const DECODED_ALREADY = true

export const toRedemption = (row: RedemptionRow): Redemption =>
  new Redemption({
    id: row.id,
    object: "redemption",
    customer_id: row.customer_id,
    reward_id: row.reward_id,
    points: row.points,
    status: row.status,
    voucher_code: row.voucher_code,
    created_at: row.created_at.toISOString(),
    fulfilled_at: iso(row.fulfilled_at),
    cancelled_at: iso(row.cancelled_at)
  }, DECODED_ALREADY)

export const toPointsEntry = (row: PointsEntryRow): PointsEntry =>
  new PointsEntry({
    id: row.id,
    object: "points_entry",
    customer_id: row.customer_id,
    type: row.type,
    points: row.points,
    balance_after: row.balance_after,
    ...(row.payment_id === null ? {} : { payment_id: row.payment_id }),
    ...(row.redemption_id === null ? {} : { redemption_id: row.redemption_id }),
    ...(row.reason === null ? {} : { reason: row.reason }),
    ...(row.type === "reverse" ? { shortfall: row.shortfall } : {}),
    created_at: row.created_at.toISOString()
  }, DECODED_ALREADY)

/**
 * What each kind of entry says to the customer. The entry's own `reason` is the merchant's note (or names
 * the other customer of a referral), and its payment id is the merchant's record: neither is shown.
 */
const ENTRY_LABELS: Record<PointsEntryType, string> = {
  earn: "Earned on a purchase",
  reverse: "Returned with a refund",
  redeem: "Redeemed",
  redeem_cancel: "Redemption cancelled",
  adjust: "Adjusted by the store",
  referral: "Referral bonus",
  promotion: "Promotion",
  game: "Game prize"
}

/** A points entry as the customer's public wallet shows it. */
export const toWalletEntry = (row: PointsEntryRow): WalletEntry =>
  new WalletEntry({
    type: row.type,
    points: row.points,
    created_at: row.created_at.toISOString(),
    label: ENTRY_LABELS[row.type]
  })

/** A voucher's label when it is for points rather than a named reward (the wallet page writes it in the page's language). */
export const POINTS_REDEMPTION_LABEL = "Points redemption"

/** A voucher not yet handed over, as the customer's own wallet shows it. */
export const toWalletVoucher = (row: WalletVoucherRow): WalletVoucher =>
  new WalletVoucher({
    code: row.voucher_code,
    label: row.reward_name ?? POINTS_REDEMPTION_LABEL,
    created_at: row.created_at.toISOString()
  })

/** The tier of `lifetime` points among `tiers` (lowest threshold first), and the one after it. */
export const tierOf = (tiers: ReadonlyArray<TierRow>, lifetime: number) => {
  const reached = tiers.filter((tier) => tier.threshold <= lifetime)
  return {
    current: reached.length === 0 ? null : reached[reached.length - 1]!,
    next: tiers.find((tier) => tier.threshold > lifetime) ?? null
  }
}
