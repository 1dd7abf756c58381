/**
 * The payment lifecycle of the specification, as data: which action moves which status where, what
 * a refund may take, and which event each change emits. Pure; the entity applies it.
 */
import { Either } from "effect"
import { InvalidRequest, InvalidState } from "../../domain/Errors.ts"
import { OpenStatuses, type PaymentStatus } from "../../domain/Payments.ts"
import { formatAmount, type Currency } from "../platform/Money.ts"

export const PaymentActions = ["scan", "pay", "fail", "expire", "cancel"] as const
export type PaymentAction = (typeof PaymentActions)[number]

const transitions: Record<PaymentAction, { readonly from: ReadonlyArray<PaymentStatus>; readonly to: PaymentStatus }> = {
  scan: { from: ["pending"], to: "scanned" },
  pay: { from: ["scanned"], to: "paid" },
  fail: { from: ["pending"], to: "failed" },
  expire: { from: OpenStatuses, to: "expired" },
  cancel: { from: ["pending"], to: "cancelled" }
}

export const eventTypeOf: Record<PaymentAction | "refund", string> = {
  scan: "payment.scanned",
  pay: "payment.completed",
  fail: "payment.failed",
  expire: "payment.expired",
  cancel: "payment.cancelled",
  refund: "payment.refunded"
}

const describe: Record<PaymentAction, string> = {
  scan: "scanned",
  pay: "paid",
  fail: "failed",
  expire: "expired",
  cancel: "cancelled"
}

/** Where `action` takes a payment in `current`, or why it cannot. */
export const nextStatus = (current: PaymentStatus, action: PaymentAction): Either.Either<PaymentStatus, InvalidState> => {
  const transition = transitions[action]
  if (transition.from.includes(current)) return Either.right(transition.to)
  const allowed = transition.from.join(" or ")
  return Either.left(
    new InvalidState({
      message: action === "cancel"
        ? `Only a pending payment can be cancelled; this one is ${current}`
        : `A ${current} payment cannot be ${describe[action]}; only a ${allowed} one can`
    })
  )
}

export interface RefundablePayment {
  readonly status: PaymentStatus
  readonly amount: bigint
  readonly amount_refunded: bigint
  readonly currency: Currency
}

/** The amount a refund takes (the remaining balance when none is asked) and the payment's next status. */
export const refundOutcome = (
  payment: RefundablePayment,
  requested: bigint | null
): Either.Either<{ readonly amount: bigint; readonly status: PaymentStatus }, InvalidState | InvalidRequest> => {
  if (payment.status !== "paid" && payment.status !== "partially_refunded") {
    return Either.left(
      new InvalidState({
        message: payment.status === "refunded"
          ? "This payment is already fully refunded"
          : `Only a paid payment can be refunded; this one is ${payment.status}`
      })
    )
  }
  const remaining = payment.amount - payment.amount_refunded
  const amount = requested ?? remaining
  if (amount > remaining) {
    return Either.left(
      new InvalidRequest({
        message: `The refund (${formatAmount(amount, payment.currency)} ${payment.currency}) exceeds the remaining ` +
          `balance of the payment (${formatAmount(remaining, payment.currency)} ${payment.currency})`,
        param: "amount"
      })
    )
  }
  return Either.right({ amount, status: amount === remaining ? "refunded" : "partially_refunded" })
}
