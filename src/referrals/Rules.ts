/**
 * The rules of referrals as pure functions, each tested on its own: the fraud flags a referral can be
 * raised with, what a payment's commission is, and the referral codes' alphabet.
 */
import { randomInt } from "node:crypto"
import { REFERRAL_CODE_LENGTH, type ReferralFlag } from "../../domain/Referrals.ts"

/** What the fraud rules read of a customer. */
export interface Party {
  readonly id: string
  readonly email: string | null
  readonly phone: string | null
  readonly external_id: string | null
}

const sameEmail = (a: string | null, b: string | null) =>
  a !== null && b !== null && a.trim().toLowerCase() === b.trim().toLowerCase()

/** Phones compared by their digits only: "+855 12 345 678" and "85512345678" are one phone. */
const samePhone = (a: string | null, b: string | null) => {
  const digits = (phone: string | null) => phone?.replace(/\D/g, "") ?? ""
  return digits(a) !== "" && digits(a) === digits(b)
}

/**
 * Self-referral: the referee is the referrer (its own code), or shares the referrer's e-mail (case and
 * spaces aside), phone (digits only) or external_id.
 */
export const isSelfReferral = (referrer: Party, referee: Party): boolean =>
  referrer.id === referee.id ||
  sameEmail(referrer.email, referee.email) ||
  samePhone(referrer.phone, referee.phone) ||
  (referrer.external_id !== null && referrer.external_id === referee.external_id)

/** Past the daily limit: the referrer already made `max` referrals in the last 24 hours. */
export const isPastDailyLimit = (referralsInLastDay: number, max: number): boolean => referralsInLastDay >= max

/** The converting payment was refunded in full. */
export const isConvertingPaymentRefunded = (payment: { readonly amount: bigint; readonly amount_refunded: bigint }): boolean =>
  payment.amount > 0n && payment.amount_refunded >= payment.amount

/** The flags a new referral is created with. */
export const flagsAtCreation = (
  referrer: Party,
  referee: Party,
  referralsInLastDay: number,
  maxPerDay: number
): Array<ReferralFlag> => [
  ...(isSelfReferral(referrer, referee) ? ["self_referral" as const] : []),
  ...(isPastDailyLimit(referralsInLastDay, maxPerDay) ? ["referrer_daily_limit" as const] : [])
]

/**
 * The commission on `amount` minor units at `percent` ("5", "12.5", at most 2 decimals): floored to the
 * minor unit, in integers only.
 */
export const commissionOf = (amount: bigint, percent: string): bigint => {
  const [whole = "0", fraction = ""] = percent.split(".")
  const hundredths = BigInt(whole) * 100n + BigInt(fraction.padEnd(2, "0").slice(0, 2) || "0")
  return (amount * hundredths) / 10_000n
}

/** Whether `paidAt` lies within `windowDays` days of the referral's creation. */
export const withinWindow = (referralCreatedAt: Date, paidAt: Date, windowDays: number): boolean =>
  paidAt.getTime() - referralCreatedAt.getTime() <= windowDays * 86_400_000

/** Without look-alikes: no 0/O, 1/I/L. */
export const CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

export const newReferralCode = (): string =>
  Array.from({ length: REFERRAL_CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("")
