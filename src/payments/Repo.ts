/**
 * SQL of payments and refunds. The writes that change a payment run inside the Payment entity's transaction
 * (see Entity.ts), with its outbox event (src/platform/Outbox.ts) and journal entry (src/ledger/Journal.ts);
 * reads go straight here.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { BranchId, CustomerId, PaymentId, RefundId, StoreId } from "../../domain/Ids.ts"
import type { PaymentStatus } from "../../domain/Payments.ts"
import { OpenStatuses, PaymentStatus as PaymentStatusSchema } from "../../domain/Payments.ts"
import { Currency } from "../platform/Money.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { transactionOf } from "../platform/Transaction.ts"
import { traced } from "../platform/Traced.ts"

const Timestamp = Schema.DateFromSelf
const NullableTimestamp = Schema.NullOr(Schema.DateFromSelf)

export const PaymentRow = Schema.Struct({
  id: PaymentId,
  store_id: StoreId,
  branch_id: Schema.NullOr(BranchId),
  customer_id: Schema.NullOr(CustomerId),
  livemode: Schema.Boolean,
  status: PaymentStatusSchema,
  amount: Schema.BigInt,
  currency: Currency,
  amount_refunded: Schema.BigInt,
  version: Schema.Number,
  reference_id: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.String }),
  provider: Schema.String,
  qr_payload: Schema.String,
  qr_md5: Schema.String,
  expires_at: Timestamp,
  scanned_at: NullableTimestamp,
  paid_at: NullableTimestamp,
  failed_at: NullableTimestamp,
  expired_at: NullableTimestamp,
  cancelled_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type PaymentRow = typeof PaymentRow.Type

export const RefundRow = Schema.Struct({
  id: RefundId,
  payment_id: PaymentId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  amount: Schema.BigInt,
  currency: Currency,
  reason: Schema.NullOr(Schema.String),
  status: Schema.Literal("succeeded"),
  request_key: Schema.String,
  created_at: Timestamp
})
export type RefundRow = typeof RefundRow.Type

/** One grouping of `PaymentsRepo.summary`; amounts in minor units. */
export const SummaryRow = Schema.Struct({
  status: Schema.NullOr(PaymentStatusSchema),
  currency: Schema.NullOr(Currency),
  count: Schema.Number,
  paid: Schema.BigInt,
  refunded: Schema.BigInt,
  last_paid_at: NullableTimestamp
})
export type SummaryRow = typeof SummaryRow.Type

export interface NewPayment {
  readonly id: PaymentId
  readonly storeId: StoreId
  readonly branchId: BranchId | null
  readonly customerId: CustomerId | null
  readonly livemode: boolean
  readonly amount: bigint
  readonly currency: Currency
  readonly referenceId: string | null
  readonly description: string | null
  readonly metadata: Record<string, string>
  readonly provider: string
  readonly qrPayload: string
  readonly qrMd5: string
  readonly expiresAt: Date
  readonly createdAt: Date
}

export interface PaymentFilters {
  readonly status?: PaymentStatus | undefined
  readonly referenceId?: string | undefined
  readonly customerId?: CustomerId | undefined
  readonly createdFrom?: Date | undefined
  readonly createdTo?: Date | undefined
}

/** The timestamp column each status sets when a payment enters it. */
const statusTimestampColumn: Partial<Record<PaymentStatus, string>> = {
  scanned: "scanned_at",
  paid: "paid_at",
  failed: "failed_at",
  expired: "expired_at",
  cancelled: "cancelled_at"
}


/**
 * A metadata object in the order PostgreSQL's jsonb keeps its keys — shorter keys first, keys of one
 * length by their bytes — so a row built from what was inserted reads as the stored one does.
 */
const inJsonbKeyOrder = (metadata: Readonly<Record<string, string>>): Record<string, string> => {
  const entries = Object.entries(metadata)
  if (entries.length < 2) return Object.fromEntries(entries)
  const sorted = entries
    .map((entry) => ({ entry, bytes: Buffer.from(entry[0], "utf8") }))
    .sort((a, b) => a.bytes.length - b.bytes.length || Buffer.compare(a.bytes, b.bytes))
  return Object.fromEntries(sorted.map(({ entry }) => entry))
}

/**
 * The row a new payment's insert stores: the values given, and the columns' defaults for the rest
 * (migrations/0004_payments.ts: amount_refunded 0, version 1, no status timestamps). Timestamps are
 * `timestamptz(3)` and the dates given carry milliseconds, so they are stored as given.
 */
const insertedRow = (payment: NewPayment): PaymentRow => ({
  id: payment.id,
  store_id: payment.storeId,
  branch_id: payment.branchId,
  customer_id: payment.customerId,
  livemode: payment.livemode,
  status: "pending",
  amount: payment.amount,
  currency: payment.currency,
  amount_refunded: 0n,
  version: 1,
  reference_id: payment.referenceId,
  description: payment.description,
  metadata: inJsonbKeyOrder(payment.metadata),
  provider: payment.provider,
  qr_payload: payment.qrPayload,
  qr_md5: payment.qrMd5,
  expires_at: payment.expiresAt,
  scanned_at: null,
  paid_at: null,
  failed_at: null,
  expired_at: null,
  cancelled_at: null,
  created_at: payment.createdAt,
  updated_at: payment.createdAt
})

export class PaymentsRepo extends Effect.Service<PaymentsRepo>()("payments/PaymentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // A decode failure or a SqlError is the infrastructure's, not the caller's: every method dies on them.

    const insertPayment = SqlSchema.void({
      Request: Schema.Struct({
        id: PaymentId,
        storeId: StoreId,
        branchId: Schema.NullOr(BranchId),
        customerId: Schema.NullOr(CustomerId),
        livemode: Schema.Boolean,
        // The bigint itself: the driver sends its decimal digits, so the request passes to the statement unchanged.
        amount: Schema.BigIntFromSelf,
        currency: Currency,
        referenceId: Schema.NullOr(Schema.String),
        description: Schema.NullOr(Schema.String),
        metadata: Schema.Record({ key: Schema.String, value: Schema.String }),
        provider: Schema.String,
        qrPayload: Schema.String,
        qrMd5: Schema.String,
        expiresAt: Schema.DateFromSelf,
        createdAt: Schema.DateFromSelf
      }),
      // Its change notice goes out once the insert commits (payments/Changes.ts announcePaymentChange).
      execute: (payment) =>
        sql`
          INSERT INTO payments (id, store_id, branch_id, customer_id, livemode, status, amount, currency, reference_id,
            description, metadata, provider, qr_payload, qr_md5, expires_at, created_at, updated_at)
          VALUES (${payment.id}, ${payment.storeId}, ${payment.branchId}, ${payment.customerId}, ${payment.livemode}, 'pending',
            ${payment.amount}, ${payment.currency}, ${payment.referenceId}, ${payment.description},
            ${JSON.stringify(payment.metadata)}::jsonb, ${payment.provider}, ${payment.qrPayload}, ${payment.qrMd5}, ${payment.expiresAt}, ${payment.createdAt},
            ${payment.createdAt})`
    })
    /**
     * Inserts the payment and answers its row as stored: every column is the value given or its column's
     * default, so the row is built here (`insertedRow`) rather than read back — no result to describe,
     * parse and decode on every creation.
     */
    const insert = traced("PaymentsRepo.insert")((payment: NewPayment) =>
      insertPayment(payment).pipe(Effect.orDie, Effect.as(insertedRow(payment)))
    )

    /** Runs `effect` in one transaction; a failure to begin or commit is the infrastructure's, a defect. */
    const inTransaction = transactionOf(sql)

    const find = traced("PaymentsRepo.find")(
      SqlSchema.findOne({
        Request: PaymentId,
        Result: PaymentRow,
        execute: (id) => sql`SELECT * FROM payments WHERE id = ${id}`
      }),
      Effect.orDie
    )

    /** The payments of `ids` that exist, in no particular order. */
    const findMany = traced("PaymentsRepo.findMany")(
      SqlSchema.findAll({
        Request: Schema.NonEmptyArray(PaymentId),
        Result: PaymentRow,
        execute: (ids) => sql`SELECT * FROM payments WHERE id IN ${sql.in(ids)}`
      }),
      Effect.orDie
    )

    /** The payment, locked for the rest of the transaction. */
    const findForUpdate = traced("PaymentsRepo.findForUpdate")(
      SqlSchema.findOne({
        Request: PaymentId,
        Result: PaymentRow,
        execute: (id) => sql`SELECT * FROM payments WHERE id = ${id} FOR UPDATE`
      }),
      Effect.orDie
    )

    const listPayments = SqlSchema.findAll({
      Request: Schema.Struct({
        storeId: StoreId,
        livemode: Schema.Boolean,
        status: Schema.optional(PaymentStatusSchema),
        referenceId: Schema.optional(Schema.String),
        customerId: Schema.optional(CustomerId),
        createdFrom: Schema.optional(Schema.DateFromSelf),
        createdTo: Schema.optional(Schema.DateFromSelf),
        ...PageRequest.fields
      }),
      Result: PaymentRow,
      execute: (request) =>
        sql`
          SELECT * FROM payments
          WHERE store_id = ${request.storeId} AND livemode = ${request.livemode}
            AND ${request.status === undefined ? sql`TRUE` : sql`status = ${request.status}`}
            AND ${request.referenceId === undefined ? sql`TRUE` : sql`reference_id = ${request.referenceId}`}
            AND ${request.customerId === undefined ? sql`TRUE` : sql`customer_id = ${request.customerId}`}
            AND ${request.createdFrom === undefined ? sql`TRUE` : sql`created_at >= ${request.createdFrom}`}
            AND ${request.createdTo === undefined ? sql`TRUE` : sql`created_at <= ${request.createdTo}`}
            AND ${keysetAfter(sql, request.position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${request.limit + 1}`
    })
    const list = traced("PaymentsRepo.list")(
      (storeId: StoreId, livemode: boolean, filters: PaymentFilters, limit: number, position?: PagePosition) =>
        listPayments({ storeId, livemode, ...filters, limit, position }).pipe(Effect.orDie)
    )

    /**
     * A store's payments of one mode in figures, in one pass: the count per status, the paid and refunded
     * volume per currency, the total, and when the latest payment was paid. Rows with a null `status`
     * group by currency; with a null `currency`, by status; with both null, the whole store.
     */
    const summarize = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean }),
      Result: SummaryRow,
      execute: ({ livemode, storeId }) =>
        sql`
          SELECT status, currency, count(*)::int AS count,
            COALESCE(sum(amount) FILTER (WHERE paid_at IS NOT NULL), 0)::text AS paid,
            COALESCE(sum(amount_refunded), 0)::text AS refunded,
            max(paid_at) AS last_paid_at
          FROM payments
          WHERE store_id = ${storeId} AND livemode = ${livemode}
          GROUP BY GROUPING SETS ((status), (currency), ())`
    })
    const summary = traced("PaymentsRepo.summary")((storeId: StoreId, livemode: boolean) =>
      summarize({ storeId, livemode }).pipe(Effect.orDie)
    )

    // An UPDATE … RETURNING of a payment the entity has just loaded in the same transaction: `single`,
    // and a missing row is a defect as it always was.
    const updateStatus = SqlSchema.single({
      Request: Schema.Struct({ id: PaymentId, status: PaymentStatusSchema, at: Schema.DateFromSelf }),
      Result: PaymentRow,
      execute: ({ at, id, status }) => {
        const column = statusTimestampColumn[status]
        return sql`
          UPDATE payments SET status = ${status}, updated_at = ${at}, version = version + 1
            ${column === undefined ? sql`` : sql`, ${sql(column)} = ${at}`}
          WHERE id = ${id}
          RETURNING *`
      }
    })
    const setStatus = traced("PaymentsRepo.setStatus")((id: PaymentId, status: PaymentStatus, at: Date) =>
      updateStatus({ id, status, at }).pipe(Effect.orDie)
    )

    const updateRefunded = SqlSchema.single({
      Request: Schema.Struct({
        id: PaymentId,
        amount: Schema.BigInt,
        status: PaymentStatusSchema,
        at: Schema.DateFromSelf
      }),
      Result: PaymentRow,
      execute: ({ amount, at, id, status }) =>
        sql`
          UPDATE payments SET amount_refunded = amount_refunded + ${amount}, status = ${status}, updated_at = ${at},
            version = version + 1
          WHERE id = ${id}
          RETURNING *`
    })
    const addRefunded = traced("PaymentsRepo.addRefunded")(
      (id: PaymentId, amount: bigint, status: PaymentStatus, at: Date) =>
        updateRefunded({ id, amount, status, at }).pipe(Effect.orDie)
    )

    const TransitionKey = Schema.Struct({ paymentId: PaymentId, requestKey: Schema.String })

    const findTransition = SqlSchema.findOne({
      Request: TransitionKey,
      // Only whether the row exists matters.
      Result: Schema.Unknown,
      execute: ({ paymentId, requestKey }) =>
        sql`SELECT 1 FROM payment_transitions WHERE payment_id = ${paymentId} AND request_key = ${requestKey}`
    })
    /** Whether the request `requestKey` already changed this payment (a replayed message). */
    const transitionApplied = traced("PaymentsRepo.transitionApplied")((paymentId: PaymentId, requestKey: string) =>
      findTransition({ paymentId, requestKey }).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    const insertTransition = SqlSchema.void({
      Request: Schema.Struct({ ...TransitionKey.fields, transition: Schema.String }),
      execute: ({ paymentId, requestKey, transition }) =>
        sql`
          INSERT INTO payment_transitions (payment_id, request_key, transition)
          VALUES (${paymentId}, ${requestKey}, ${transition})`
    })
    const recordTransition = traced("PaymentsRepo.recordTransition")(
      (paymentId: PaymentId, requestKey: string, transition: string) =>
        insertTransition({ paymentId, requestKey, transition }).pipe(Effect.orDie)
    )

    const insertRefund = traced("PaymentsRepo.insertRefund")(
      SqlSchema.single({
        Request: Schema.Struct({
          id: RefundId,
          paymentId: PaymentId,
          storeId: StoreId,
          livemode: Schema.Boolean,
          amount: Schema.BigInt,
          currency: Currency,
          reason: Schema.NullOr(Schema.String),
          requestKey: Schema.String,
          createdAt: Schema.DateFromSelf
        }),
        Result: RefundRow,
        execute: (refund) =>
          sql`
            INSERT INTO refunds (id, payment_id, store_id, livemode, amount, currency, reason, request_key, created_at)
            VALUES (${refund.id}, ${refund.paymentId}, ${refund.storeId}, ${refund.livemode}, ${refund.amount},
              ${refund.currency}, ${refund.reason}, ${refund.requestKey}, ${refund.createdAt})
            RETURNING *`
      }),
      Effect.orDie
    )

    const findRefund = SqlSchema.findOne({
      Request: TransitionKey,
      Result: RefundRow,
      execute: ({ paymentId, requestKey }) =>
        sql`SELECT * FROM refunds WHERE payment_id = ${paymentId} AND request_key = ${requestKey}`
    })
    const findRefundByRequestKey = traced("PaymentsRepo.findRefundByRequestKey")(
      (paymentId: PaymentId, requestKey: string) => findRefund({ paymentId, requestKey }).pipe(Effect.orDie)
    )

    const refundsOfPayment = SqlSchema.findAll({
      Request: Schema.Struct({ paymentId: PaymentId, ...PageRequest.fields }),
      Result: RefundRow,
      execute: ({ limit, paymentId, position }) =>
        sql`
          SELECT * FROM refunds
          WHERE payment_id = ${paymentId} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })
    const listRefunds = traced("PaymentsRepo.listRefunds")(
      (paymentId: PaymentId, limit: number, position?: PagePosition) =>
        refundsOfPayment({ paymentId, limit, position }).pipe(Effect.orDie)
    )

    // Expiry is judged at `now` from the caller's Clock, not the database's now(), so it is tested under
    // TestClock. Nodes keep NTP time; the sweep runs every second anyway.
    const LimitAt = Schema.Struct({ limit: Schema.Number, now: Schema.DateFromSelf })

    const findOverdue = SqlSchema.findAll({
      Request: LimitAt,
      Result: Schema.Struct({ id: PaymentId }),
      execute: ({ limit, now }) =>
        sql`
          SELECT id FROM payments
          WHERE status IN ${sql.in(OpenStatuses)} AND expires_at <= ${now}
          ORDER BY expires_at
          LIMIT ${limit}`
    })
    /** Ids of open payments whose expiry has come at `now`, oldest first. */
    const overdue = traced("PaymentsRepo.overdue")((limit: number, now: Date) =>
      findOverdue({ limit, now }).pipe(Effect.map((rows) => rows.map((row) => row.id)), Effect.orDie)
    )

    const findOpenLive = SqlSchema.findAll({
      Request: LimitAt,
      Result: Schema.Struct({ id: PaymentId, qr_md5: Schema.String, store_id: StoreId }),
      execute: ({ limit, now }) =>
        sql`
          SELECT id, qr_md5, store_id FROM payments
          WHERE livemode AND status IN ${sql.in(OpenStatuses)} AND expires_at > ${now}
          ORDER BY created_at
          LIMIT ${limit}`
    })
    /** Open live payments not yet expired at `now`, for asking the provider whether they were paid. */
    const openLive = traced("PaymentsRepo.openLive")((limit: number, now: Date) =>
      findOpenLive({ limit, now }).pipe(Effect.orDie)
    )

    return {
      insert,
      inTransaction,
      find,
      findMany,
      findForUpdate,
      list,
      summary,
      setStatus,
      addRefunded,
      transitionApplied,
      recordTransition,
      insertRefund,
      findRefundByRequestKey,
      listRefunds,
      overdue,
      openLive
    } as const
  })
}) {}
