/**
 * The reads other areas make of payments. The payments area owns the table; these are the narrow reads the
 * others need where they cannot go through PaymentsService: inside their own transactions (a wallet's
 * earning, a referral's conversion, a risk rule), or from areas the payments service itself depends on
 * (customers, plan limits), or without a merchant's credential (the hosted checkout). Each is named for what
 * it answers; every method dies on SQL failures.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { CustomerId, type OrganizationId, PaymentId, StoreId } from "../../domain/Ids.ts"
import { Currency, parseAmount } from "../platform/Money.ts"
import { newestFirst } from "../platform/Pagination.ts"
import { joinableStores } from "../stores/Reads.ts"
import { PaymentRow, PaymentsRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

export { PaymentRow, RefundRow } from "./Repo.ts"

/** What another area acts on when a payment is paid or refunded; amounts in minor units. */
export const PaymentFacts = Schema.Struct({
  id: PaymentId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  customer_id: Schema.NullOr(CustomerId),
  amount: Schema.BigInt,
  amount_refunded: Schema.BigInt,
  currency: Currency,
  paid_at: Schema.NullOr(Schema.DateFromSelf)
})
export type PaymentFacts = typeof PaymentFacts.Type

/** What a payment event's object says of its payment, in figures (the amount in minor units). */
const PaymentOfEvent = Schema.Struct({
  id: PaymentId,
  customer_id: Schema.optionalWith(Schema.NullOr(CustomerId), { default: () => null }),
  amount: Schema.String,
  currency: Currency
})
const decodePaymentOfEvent = Schema.decodeUnknownOption(PaymentOfEvent)

/**
 * The facts of the payment a payment event holds (as it was when the event was written: a paid payment's
 * amount never changes), so that an area acting on the event need not read the payment again; none when
 * the object lacks them.
 */
export const paymentFactsOfEvent = (event: { readonly object: unknown; readonly storeId: StoreId; readonly livemode: boolean }) =>
  Option.match(decodePaymentOfEvent(event.object), {
    onNone: () => Effect.succeedNone,
    onSome: (payment) =>
      parseAmount(payment.amount, payment.currency).pipe(
        Effect.map((amount) => ({
          id: payment.id,
          store_id: event.storeId,
          livemode: event.livemode,
          customer_id: payment.customer_id,
          amount,
          currency: payment.currency
        })),
        Effect.option
      )
  })

/** A customer's paid payments in one currency, in figures (minor units). */
export const CustomerPaymentFigures = Schema.Struct({
  currency: Currency,
  paid_count: Schema.Number,
  net: Schema.BigInt,
  refunded: Schema.BigInt,
  first_paid_at: Schema.NullOr(Schema.DateFromSelf),
  last_paid_at: Schema.NullOr(Schema.DateFromSelf)
})
export type CustomerPaymentFigures = typeof CustomerPaymentFigures.Type

export class PaymentReads extends Effect.Service<PaymentReads>()("payments/PaymentReads", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PaymentsRepo

    /** The payment's facts (none when there is no such payment). */
    const factsOf = traced("PaymentReads.factsOf")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: PaymentFacts,
        execute: (id) =>
          sql`
            SELECT id, store_id, livemode, customer_id, amount::text AS amount, amount_refunded::text AS amount_refunded,
              currency, paid_at
            FROM payments WHERE id = ${id}`
      }),
      Effect.orDie
    )

    /** A customer's payments in figures, one row per currency it paid in. */
    const customerFigures = traced("PaymentReads.customerFigures")(
      SqlSchema.findAll({
        Request: Schema.String,
        Result: CustomerPaymentFigures,
        execute: (customerId) =>
          sql`
            SELECT currency, count(*)::int AS paid_count,
              COALESCE(sum(amount - amount_refunded), 0)::text AS net,
              COALESCE(sum(amount_refunded), 0)::text AS refunded,
              min(paid_at) AS first_paid_at, max(paid_at) AS last_paid_at
            FROM payments
            WHERE customer_id = ${customerId} AND paid_at IS NOT NULL
            GROUP BY currency`
      }),
      Effect.orDie
    )

    /** A customer's newest payments, whatever their status. */
    const recentOfCustomer = traced("PaymentReads.recentOfCustomer")(
      SqlSchema.findAll({
        Request: Schema.Struct({ customerId: Schema.String, limit: Schema.Number }),
        Result: PaymentRow,
        execute: ({ customerId, limit }) =>
          sql`
            SELECT * FROM payments
            WHERE customer_id = ${customerId}
            ORDER BY ${newestFirst(sql)}
            LIMIT ${limit}`
      }),
      Effect.orDie
    )

    /**
     * The organization's live payments created in [from, to) (to open when null), as plan limits and billing
     * usage count them: the payments_list index per store.
     */
    const liveCountOfOrganization = (orgId: OrganizationId, from: Date, to: Date | null) =>
      Effect.map(
        sql<{ n: number }>`
          SELECT count(*)::int AS n FROM payments p JOIN (${joinableStores(sql)}) s ON s.id = p.store_id
          WHERE s.organization_id = ${orgId} AND p.livemode AND p.created_at >= ${from}
            ${to === null ? sql`` : sql`AND p.created_at < ${to}`}`,
        (rows) => rows[0]?.n ?? 0
      ).pipe(Effect.orDie)

    /** The status and expiry of a payment (a subscription invoice's, as billing shows it). */
    const stateOf = (paymentId: PaymentId) =>
      Effect.map(
        sql<{ status: string; expires_at: Date }>`SELECT status, expires_at FROM payments WHERE id = ${paymentId}`,
        (rows) => Option.fromNullable(rows[0])
      ).pipe(Effect.orDie)

    /** Paid payments of the customer in (since, until]. */
    const customerPaid = SqlSchema.single({
      Request: Schema.Struct({ customerId: CustomerId, since: Schema.DateFromSelf, until: Schema.DateFromSelf }),
      Result: Schema.Struct({ n: Schema.Number }),
      execute: ({ customerId, since, until }) =>
        sql`SELECT count(*)::int AS n FROM payments
            WHERE customer_id = ${customerId} AND paid_at IS NOT NULL AND paid_at > ${since} AND paid_at <= ${until}`
    })

    /** Per currency, what the store took in and refunded in the window ending at `until`. */
    const windowTotals = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean, since: Schema.DateFromSelf, until: Schema.DateFromSelf }),
      Result: Schema.Struct({ currency: Currency, paid: Schema.BigInt, refunded: Schema.BigInt }),
      execute: ({ livemode, since, storeId, until }) =>
        sql`
          SELECT c.currency,
            (SELECT COALESCE(sum(amount), 0) FROM payments WHERE store_id = ${storeId} AND livemode = ${livemode}
               AND currency = c.currency AND paid_at > ${since} AND paid_at <= ${until})::text AS paid,
            (SELECT COALESCE(sum(amount), 0) FROM refunds WHERE store_id = ${storeId} AND livemode = ${livemode}
               AND currency = c.currency AND status = 'succeeded' AND created_at > ${since} AND created_at <= ${until})::text AS refunded
          FROM (VALUES ('USD'), ('KHR')) AS c (currency)`
    })

    const customerPaidBetween = (input: Parameters<typeof customerPaid>[0]) =>
      Effect.map(Effect.orDie(customerPaid(input)), (row) => row.n)
    const storeWindowTotals = (input: Parameters<typeof windowTotals>[0]) => Effect.orDie(windowTotals(input))

    /**
     * The payment (none when there is no such payment), read without a merchant's credential: the hosted
     * checkout page and the live status streams show it to whoever holds its link.
     */
    const paymentById = repo.find
    /** Those of the payments `ids` that exist, for the live status streams' re-reads. */
    const paymentsByIds = repo.findMany
    /** The payment's newest refunds, at most `limit` of them (and one more, telling there are more). */
    const refundsOf = (paymentId: PaymentId, limit: number) => repo.listRefunds(paymentId, limit)

    return {
      paymentById,
      paymentsByIds,
      refundsOf,
      factsOf,
      customerFigures,
      recentOfCustomer,
      liveCountOfOrganization,
      stateOf,
      customerPaidBetween,
      storeWindowTotals
    } as const
  }),
  dependencies: [PaymentsRepo.Default]
}) {}
