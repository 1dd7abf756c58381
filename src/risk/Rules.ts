/**
 * The risk rules, each a named function of the facts it needs: whether a case should open. The
 * consumer (Jobs.ts) gathers the facts for an event with SQL and opens the cases these say should be.
 */
import type { Currency } from "../../domain/Money.ts"

export interface RiskThresholds {
  /** Paid payments one customer may make within VELOCITY_WINDOW before a case opens. */
  readonly velocityMax: number
  /** Per currency, in minor units: a payment above this opens a case. */
  readonly largeAmount: Readonly<Record<Currency, bigint>>
  /** Refunded over paid in the last 24 h, per currency, above which a case opens. */
  readonly refundRatio: number
}

export const DEFAULT_THRESHOLDS: RiskThresholds = {
  velocityMax: 5,
  largeAmount: { USD: 100_000n, KHR: 4_000_000n },
  refundRatio: 0.5
}

export const VELOCITY_WINDOW_MINUTES = 10
export const REFUND_RATIO_WINDOW_HOURS = 24

/** More than `velocityMax` paid payments from one customer within the window. */
export const velocityExceeded = (paidInWindow: number, thresholds: RiskThresholds): boolean =>
  paidInWindow > thresholds.velocityMax

/** A payment above its currency's threshold. */
export const largeAmount = (amount: bigint, currency: Currency, thresholds: RiskThresholds): boolean =>
  amount > thresholds.largeAmount[currency]

/** The store refunded more than the ratio of what it took in, in any currency, over the window. */
export const refundRatioExceeded = (
  windowTotals: ReadonlyArray<{ readonly paid: bigint; readonly refunded: bigint }>,
  thresholds: RiskThresholds
): boolean =>
  windowTotals.some(({ paid, refunded }) =>
    refunded > 0n && (paid === 0n || Number(refunded) / Number(paid) > thresholds.refundRatio)
  )

/** A referral the referral rules flagged (and nobody has cleared or voided yet) is a case to review. */
export const referralFlagged = (status: string): boolean => status === "flagged"
