/**
 * How payments and refunds look on the wire (API.md "Payments"), and the events that carry them.
 */
import type { PaymentId } from "../../domain/Ids.ts"
import { Payment, PaymentQr, Refund } from "../../domain/Payments.ts"
import { formatAmount } from "../platform/Money.ts"
import type { PaymentRow, RefundRow } from "./Repo.ts"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

/**
 * Wire objects are built from rows the repo has already decoded, by code the compiler types; checking
 * every field again in the constructor (the `true` below turns that off) cost more than the rest of a list
 * request's own work. Events that carry them are encoded through their schema; HTTP answers are written
 * by projection of the schema's fields (src/platform/WireResponses.ts), which copies without checking.
 */
export const DECODED_ALREADY = true

/** Where a payer pays a payment: its hosted checkout page. */
export const checkoutUrlOf = (baseUrl: string, paymentId: PaymentId) => `${baseUrl}/checkout/${paymentId}`

export const toPayment = (row: PaymentRow, baseUrl: string): Payment =>
  new Payment({
    id: row.id,
    object: "payment",
    status: row.status,
    amount: formatAmount(row.amount, row.currency),
    currency: row.currency,
    amount_refunded: formatAmount(row.amount_refunded, row.currency),
    reference_id: row.reference_id,
    description: row.description,
    metadata: row.metadata,
    livemode: row.livemode,
    store_id: row.store_id,
    branch_id: row.branch_id,
    customer_id: row.customer_id,
    expires_at: row.expires_at.toISOString(),
    paid_at: iso(row.paid_at),
    checkout_url: checkoutUrlOf(baseUrl, row.id),
    qr: new PaymentQr({ payload: row.qr_payload, md5: row.qr_md5 }, DECODED_ALREADY),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  }, DECODED_ALREADY)

export const toRefund = (row: RefundRow): Refund =>
  new Refund({
    id: row.id,
    object: "refund",
    payment_id: row.payment_id,
    amount: formatAmount(row.amount, row.currency),
    currency: row.currency,
    reason: row.reason,
    status: row.status,
    created_at: row.created_at.toISOString()
  }, DECODED_ALREADY)
