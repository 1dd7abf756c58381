/** Referral rows in their wire form (API.md "Referrals and commissions"). */
import { Schema } from "effect"
import type { Currency } from "../../domain/Money.ts"
import {
  Commission,
  type CommissionStatus,
  type CurrencyTotals,
  Referral,
  ReferralProgram,
  ReferralReview
} from "../../domain/Referrals.ts"
import { formatAmount } from "../platform/Money.ts"
import type { CommissionRow, ProgramRow, ReferralRow } from "./Repo.ts"

const iso = (date: Date | null) => date === null ? null : date.toISOString()

export const toProgram = (row: ProgramRow): ReferralProgram =>
  new ReferralProgram({ object: "referral_program", ...row })

export const toReferral = (row: ReferralRow): Referral =>
  new Referral({
    id: row.id,
    object: "referral",
    store_id: row.store_id,
    livemode: row.livemode,
    referrer_id: row.referrer_id,
    referee_id: row.referee_id,
    status: row.status,
    flags: row.flags,
    converted_at: iso(row.converted_at),
    review: row.review_decision === null || row.reviewed_by === null || row.reviewed_at === null
      ? null
      : new ReferralReview({
        decision: row.review_decision,
        note: row.review_note,
        reviewed_by: row.reviewed_by,
        reviewed_at: row.reviewed_at.toISOString()
      }),
    created_at: row.created_at.toISOString()
  })

export const toCommission = (row: CommissionRow): Commission =>
  new Commission({
    id: row.id,
    object: "commission",
    store_id: row.store_id,
    livemode: row.livemode,
    referral_id: row.referral_id,
    referrer_id: row.referrer_id,
    payment_id: row.payment_id,
    amount: formatAmount(row.amount, row.currency),
    currency: row.currency,
    status: row.status,
    paid_at: iso(row.paid_at),
    created_at: row.created_at.toISOString()
  })

export const encodeReferral = Schema.encodeSync(Referral)
export const encodeCommission = Schema.encodeSync(Commission)

/** Minor units per currency, summed as they come. */
export interface Sums {
  USD: bigint
  KHR: bigint
}
export const noSums = (): Sums => ({ USD: 0n, KHR: 0n })
export const addTo = (sums: Sums, currency: Currency, amount: bigint): void => {
  sums[currency] += amount
}
export const toTotals = (sums: Sums): CurrencyTotals => ({
  USD: formatAmount(sums.USD, "USD"),
  KHR: formatAmount(sums.KHR, "KHR")
})

/** Sums per status, then currency. */
export const byStatus = (
  rows: ReadonlyArray<{ readonly status: CommissionStatus | null; readonly currency: Currency | null; readonly total: bigint }>
): Record<CommissionStatus, Sums> => {
  const sums = { held: noSums(), accrued: noSums(), paid: noSums(), voided: noSums() }
  for (const row of rows) if (row.status !== null && row.currency !== null) addTo(sums[row.status], row.currency, row.total)
  return sums
}
