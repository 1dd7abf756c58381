/**
 * The journal entries of the payment engine: the entry of a payment as it is paid and of each refund,
 * posted in the transaction of the change they record (src/payments/Entity.ts), so the journal holds an
 * entry exactly when its payment or refund committed. What the lines hold is in Postings.ts.
 */
import { Effect } from "effect"
import type { PaymentId, RefundId, StoreId } from "../../domain/Ids.ts"
import { newId } from "../platform/Ids.ts"
import type { Currency } from "../platform/Money.ts"
import { paymentLines, refundLines, shareReversalOf } from "./Postings.ts"
import { LedgerRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

/** What of a payment its entries record. */
export interface PostedPayment {
  readonly id: PaymentId
  readonly store_id: StoreId
  readonly livemode: boolean
  readonly currency: Currency
  readonly amount: bigint
}

export class JournalPostings extends Effect.Service<JournalPostings>()("ledger/JournalPostings", {
  effect: Effect.gen(function*() {
    const repo = yield* LedgerRepo

    /** The entry of a payment just paid, sharing it by the store's active revenue shares as they are now. */
    const postPaid = traced("JournalPostings.postPaid")(function*(payment: PostedPayment, at: Date) {
      yield* repo.postEntry({
        id: newId("je"),
        storeId: payment.store_id,
        livemode: payment.livemode,
        currency: payment.currency,
        kind: "payment",
        paymentId: payment.id,
        refundId: null,
        memo: `payment ${payment.id} paid`,
        lines: paymentLines(payment.amount, yield* repo.sharePercents(payment.store_id)),
        at
      })
    })

    /**
     * The entry of a refund of `amount` of a payment that had `refundedBefore` refunded: its share of what
     * the payment's entry moved to revenue shares comes back to the merchant.
     */
    const postRefund = traced("JournalPostings.postRefund")(function*(refund: {
      readonly id: RefundId
      readonly payment: PostedPayment
      readonly refundedBefore: bigint
      readonly amount: bigint
      readonly at: Date
    }) {
      const { payment } = refund
      yield* repo.postEntry({
        id: newId("je"),
        storeId: payment.store_id,
        livemode: payment.livemode,
        currency: payment.currency,
        kind: "refund",
        paymentId: payment.id,
        refundId: refund.id,
        memo: `refund ${refund.id} of payment ${payment.id}`,
        lines: refundLines(
          refund.amount,
          shareReversalOf({
            paymentAmount: payment.amount,
            sharedTotal: yield* repo.sharedTotalOf(payment.id),
            refundedBefore: refund.refundedBefore,
            amount: refund.amount
          })
        ),
        at: refund.at
      })
    })

    return { postPaid, postRefund } as const
  }),
  dependencies: [LedgerRepo.Default]
}) {}
