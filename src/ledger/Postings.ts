/**
 * What the journal entry of a paid payment or a refund holds, as data: the payment engine posts these,
 * the backfill posts them for history, and reconciliation compares the journal with them.
 *
 * - A paid payment: the provider owes the amount (debit `provider_clearing`), the store is owed it (credit
 *   `merchant_payable`); each active revenue share then moves its part from `merchant_payable` to
 *   `revenue_share_payable` — `floor(amount × percent / 100)` in minor units, per share.
 * - A refund: the money goes back out (debit `refunds`, credit `provider_clearing`), and the refunded
 *   share of what the payment moved to `revenue_share_payable` comes back to `merchant_payable`. Counted
 *   on the running refunded total, `floor(S × after / A) − floor(S × before / A)`, so partial refunds
 *   that add up to the whole give back exactly S, never a unit more or less.
 */
import type { LedgerAccount } from "../../domain/Ledger.ts"

export interface JournalLine {
  readonly account: LedgerAccount
  readonly debit: bigint
  readonly credit: bigint
}

const SCALE = 10_000n

/** A percent text ("12.5", at most 4 decimals) in ten-thousandths of a percent. */
export const percentUnits = (percent: string): bigint => {
  const [whole = "0", fraction = ""] = percent.split(".")
  return BigInt(whole) * SCALE + BigInt(fraction.padEnd(4, "0").slice(0, 4) || "0")
}

/** The part of `amount` (minor units) a share of `percent` takes, floored. */
export const shareOf = (amount: bigint, percent: string): bigint => (amount * percentUnits(percent)) / (100n * SCALE)

export const paymentLines = (amount: bigint, sharePercents: ReadonlyArray<string>): ReadonlyArray<JournalLine> => {
  const lines: Array<JournalLine> = [
    { account: "provider_clearing", debit: amount, credit: 0n },
    { account: "merchant_payable", debit: 0n, credit: amount }
  ]
  for (const percent of sharePercents) {
    const share = shareOf(amount, percent)
    if (share === 0n) continue
    lines.push({ account: "merchant_payable", debit: share, credit: 0n })
    lines.push({ account: "revenue_share_payable", debit: 0n, credit: share })
  }
  return lines
}

/** The share of the revenue shares (`sharedTotal`, moved when paid) a refund gives back. */
export const shareReversalOf = (refund: {
  readonly paymentAmount: bigint
  readonly sharedTotal: bigint
  readonly refundedBefore: bigint
  readonly amount: bigint
}): bigint =>
  refund.paymentAmount === 0n
    ? 0n
    : (refund.sharedTotal * (refund.refundedBefore + refund.amount)) / refund.paymentAmount -
      (refund.sharedTotal * refund.refundedBefore) / refund.paymentAmount

export const refundLines = (amount: bigint, shareReversal: bigint): ReadonlyArray<JournalLine> => {
  const lines: Array<JournalLine> = [
    { account: "refunds", debit: amount, credit: 0n },
    { account: "provider_clearing", debit: 0n, credit: amount }
  ]
  if (shareReversal > 0n) {
    lines.push({ account: "revenue_share_payable", debit: shareReversal, credit: 0n })
    lines.push({ account: "merchant_payable", debit: 0n, credit: shareReversal })
  }
  return lines
}
