/**
 * SQL of the ledger reports: trial balances, journal pages, the ledger over a range with running
 * balances, the facts reconciliation compares, the backfill's inserts, and the entries the payment engine
 * posts as a payment is paid or refunded (through Journal.ts); entries and lines are immutable.
 *
 * Reconciliation and the backfill read payments and refunds with their journal entries in one statement:
 * the audit's point is that both agree in one snapshot (read apart, a payment paid between the two reads
 * would be reported without its entry), and the payments area's columns they read are those the journal
 * records. Every other figure of payments comes from the payments area's reports.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { LedgerAccount } from "../../domain/Ledger.ts"
import { JournalId, PaymentId, RefundId, StoreId } from "../../domain/Ids.ts"
import { Currency } from "../platform/Money.ts"
import { keysetAfter, newestFirst, type PagePosition } from "../platform/Pagination.ts"
import { PaymentReports } from "../payments/Reports.ts"
import { activeSharePercentsOfStore } from "../revenue-shares/Reads.ts"
import type { JournalLine } from "./Postings.ts"
import { traced } from "../platform/Traced.ts"

export const AccountTotal = Schema.Struct({
  account: LedgerAccount,
  currency: Currency,
  debit: Schema.BigInt,
  credit: Schema.BigInt
})
export type AccountTotal = typeof AccountTotal.Type

export const EntryRow = Schema.Struct({
  id: JournalId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  currency: Currency,
  kind: Schema.Literal("payment", "refund", "adjustment"),
  payment_id: Schema.NullOr(PaymentId),
  refund_id: Schema.NullOr(RefundId),
  memo: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})
export type EntryRow = typeof EntryRow.Type

export const LineRow = Schema.Struct({
  entry_id: JournalId,
  line: Schema.Number,
  account: LedgerAccount,
  debit: Schema.BigInt,
  credit: Schema.BigInt
})
export type LineRow = typeof LineRow.Type

export const LedgerRow = Schema.Struct({
  entry_id: JournalId,
  created_at: Schema.DateFromSelf,
  payment_id: Schema.NullOr(PaymentId),
  refund_id: Schema.NullOr(RefundId),
  memo: Schema.NullOr(Schema.String),
  currency: Currency,
  account: LedgerAccount,
  debit: Schema.BigInt,
  credit: Schema.BigInt,
  balance: Schema.BigInt
})
export type LedgerRow = typeof LedgerRow.Type

/** A paid payment with the totals its entry posted (null when it has no entry). */
export const PaymentPosting = Schema.Struct({
  id: PaymentId,
  store_id: StoreId,
  currency: Currency,
  amount: Schema.BigInt,
  entry_id: Schema.NullOr(JournalId),
  clearing_debit: Schema.BigInt,
  payable_credit: Schema.BigInt,
  payable_debit: Schema.BigInt,
  shared_credit: Schema.BigInt
})
export type PaymentPosting = typeof PaymentPosting.Type

export const RefundPosting = Schema.Struct({
  id: RefundId,
  payment_id: PaymentId,
  store_id: StoreId,
  currency: Currency,
  amount: Schema.BigInt,
  entry_id: Schema.NullOr(JournalId),
  refunds_debit: Schema.BigInt,
  clearing_credit: Schema.BigInt
})
export type RefundPosting = typeof RefundPosting.Type

export const UnsoundEntry = Schema.Struct({
  id: JournalId,
  store_id: StoreId,
  currency: Currency,
  kind: Schema.String,
  payment_id: Schema.NullOr(PaymentId),
  refund_id: Schema.NullOr(RefundId),
  debit: Schema.BigInt,
  credit: Schema.BigInt,
  source_exists: Schema.Boolean
})
export type UnsoundEntry = typeof UnsoundEntry.Type

/** A paid payment or a refund with no entry yet, with what the backfill needs to post it. */
export const MissingPosting = Schema.Struct({
  kind: Schema.Literal("payment", "refund"),
  id: Schema.String,
  payment_id: PaymentId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  currency: Currency,
  amount: Schema.BigInt,
  payment_amount: Schema.BigInt,
  refunded_before: Schema.BigInt,
  at: Schema.DateFromSelf
})
export type MissingPosting = typeof MissingPosting.Type

/** Store scope of a report: one store, or every store (the platform's). */
export type Scope = StoreId | null

export class LedgerRepo extends Effect.Service<LedgerRepo>()("ledger/LedgerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reports = yield* PaymentReports
    const storeIs = (column: string, scope: string | null) => scope === null ? sql`TRUE` : sql`${sql(column)} = ${scope}`

    const accountTotals = SqlSchema.findAll({
      Request: Schema.Struct({ scope: Schema.NullOr(StoreId), livemode: Schema.Boolean }),
      Result: AccountTotal,
      execute: ({ livemode, scope }) =>
        sql`
          SELECT l.account, e.currency, sum(l.debit)::text AS debit, sum(l.credit)::text AS credit
          FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
          WHERE ${storeIs("e.store_id", scope)} AND e.livemode = ${livemode}
          GROUP BY l.account, e.currency
          ORDER BY e.currency, l.account`
    })

    const entriesPage = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean, limit: Schema.Number, position: Schema.optional(Schema.Any) }),
      Result: EntryRow,
      execute: ({ limit, livemode, position, storeId }) =>
        sql`
          SELECT * FROM journal_entries
          WHERE store_id = ${storeId} AND livemode = ${livemode} AND ${keysetAfter(sql, position as PagePosition | undefined)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })

    const linesOf = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: LineRow,
      execute: (ids) =>
        sql`SELECT entry_id, line, account, debit::text AS debit, credit::text AS credit FROM journal_lines
            WHERE entry_id IN ${sql.in(ids)} ORDER BY entry_id, line`
    })

    const ledgerLines = SqlSchema.findAll({
      Request: Schema.Struct({
        storeId: StoreId,
        livemode: Schema.Boolean,
        from: Schema.DateFromSelf,
        until: Schema.DateFromSelf,
        limit: Schema.Number
      }),
      Result: LedgerRow,
      // The lines of the range with a window over them alone, each started from its account's balance
      // before the range (one aggregate), rather than a window over the store's whole history.
      execute: ({ from, limit, livemode, storeId, until }) =>
        sql`
          WITH opening AS (
            SELECT l.account, e.currency, sum(l.debit - l.credit) AS balance
            FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
            WHERE e.store_id = ${storeId} AND e.livemode = ${livemode} AND e.created_at < ${from}
            GROUP BY l.account, e.currency
          ), ranged AS (
            SELECT e.id AS entry_id, e.created_at, e.payment_id, e.refund_id, e.memo, e.currency, l.account, l.line,
                   l.debit, l.credit
            FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
            WHERE e.store_id = ${storeId} AND e.livemode = ${livemode} AND e.created_at >= ${from} AND e.created_at < ${until}
            ORDER BY e.created_at, e.id, l.line
            LIMIT ${limit}
          )
          SELECT r.entry_id, r.created_at, r.payment_id, r.refund_id, r.memo, r.currency, r.account,
                 r.debit::text AS debit, r.credit::text AS credit,
                 (COALESCE(o.balance, 0) + sum(r.debit - r.credit) OVER (
                   PARTITION BY r.account, r.currency ORDER BY r.created_at, r.entry_id, r.line
                 ))::text AS balance
          FROM ranged r LEFT JOIN opening o ON o.account = r.account AND o.currency = r.currency
          ORDER BY r.created_at, r.entry_id, r.line`
    })

    const paymentPostings = SqlSchema.findAll({
      Request: Schema.NullOr(StoreId),
      Result: PaymentPosting,
      execute: (scope) =>
        sql`
          SELECT p.id, p.store_id, p.currency, p.amount::text AS amount, e.id AS entry_id,
            COALESCE(sum(l.debit) FILTER (WHERE l.account = 'provider_clearing'), 0)::text AS clearing_debit,
            COALESCE(sum(l.credit) FILTER (WHERE l.account = 'merchant_payable'), 0)::text AS payable_credit,
            COALESCE(sum(l.debit) FILTER (WHERE l.account = 'merchant_payable'), 0)::text AS payable_debit,
            COALESCE(sum(l.credit) FILTER (WHERE l.account = 'revenue_share_payable'), 0)::text AS shared_credit
          FROM payments p
          LEFT JOIN journal_entries e ON e.payment_id = p.id AND e.kind = 'payment'
          LEFT JOIN journal_lines l ON l.entry_id = e.id
          WHERE p.paid_at IS NOT NULL AND ${storeIs("p.store_id", scope)}
          GROUP BY p.id, e.id
          ORDER BY p.id`
    })

    const refundPostings = SqlSchema.findAll({
      Request: Schema.NullOr(StoreId),
      Result: RefundPosting,
      execute: (scope) =>
        sql`
          SELECT r.id, r.payment_id, r.store_id, r.currency, r.amount::text AS amount, e.id AS entry_id,
            COALESCE(sum(l.debit) FILTER (WHERE l.account = 'refunds'), 0)::text AS refunds_debit,
            COALESCE(sum(l.credit) FILTER (WHERE l.account = 'provider_clearing'), 0)::text AS clearing_credit
          FROM refunds r
          LEFT JOIN journal_entries e ON e.refund_id = r.id AND e.kind = 'refund'
          LEFT JOIN journal_lines l ON l.entry_id = e.id
          WHERE r.status = 'succeeded' AND ${storeIs("r.store_id", scope)}
          GROUP BY r.id, e.id
          ORDER BY r.id`
    })

    /** Entries whose lines do not balance, or whose payment or refund is not there. */
    const unsoundEntries = SqlSchema.findAll({
      Request: Schema.NullOr(StoreId),
      Result: UnsoundEntry,
      execute: (scope) =>
        sql`
          SELECT * FROM (
            SELECT e.id, e.store_id, e.currency, e.kind, e.payment_id, e.refund_id,
              COALESCE(sum(l.debit), 0)::text AS debit, COALESCE(sum(l.credit), 0)::text AS credit,
              CASE e.kind
                WHEN 'payment' THEN EXISTS (SELECT 1 FROM payments p WHERE p.id = e.payment_id AND p.paid_at IS NOT NULL)
                WHEN 'refund' THEN EXISTS (SELECT 1 FROM refunds r WHERE r.id = e.refund_id)
                ELSE TRUE
              END AS source_exists
            FROM journal_entries e LEFT JOIN journal_lines l ON l.entry_id = e.id
            WHERE ${storeIs("e.store_id", scope)}
            GROUP BY e.id
          ) entries
          WHERE debit <> credit OR debit = '0' OR NOT source_exists`
    })

    const missingPostings = SqlSchema.findAll({
      Request: Schema.Void,
      Result: MissingPosting,
      execute: () =>
        sql`
          SELECT 'payment' AS kind, p.id, p.id AS payment_id, p.store_id, p.livemode, p.currency,
                 p.amount::text AS amount, p.amount::text AS payment_amount, '0' AS refunded_before, p.paid_at AS at
          FROM payments p
          WHERE p.paid_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM journal_entries e WHERE e.payment_id = p.id AND e.kind = 'payment')
          UNION ALL
          SELECT 'refund', r.id, r.payment_id, r.store_id, r.livemode, r.currency, r.amount::text, p.amount::text,
                 (SELECT COALESCE(sum(b.amount), 0) FROM refunds b
                  WHERE b.payment_id = r.payment_id AND b.status = 'succeeded'
                    AND (b.created_at, b.id) < (r.created_at, r.id))::text,
                 r.created_at
          FROM refunds r JOIN payments p ON p.id = r.payment_id
          WHERE r.status = 'succeeded'
            AND NOT EXISTS (SELECT 1 FROM journal_entries e WHERE e.refund_id = r.id AND e.kind = 'refund')
          ORDER BY at`
    })

    /** The lines of the entry `entryId`, numbered from 1 in their order. */
    const insertLines = (entryId: JournalId, lines: ReadonlyArray<JournalLine>) =>
      sql`INSERT INTO journal_lines ${
        sql.insert(lines.map((line, index) => ({
          entry_id: entryId,
          line: index + 1,
          account: line.account,
          debit: line.debit.toString(),
          credit: line.credit.toString()
        })))
      }`

    /**
     * Posts an entry unless its payment's (or refund's) entry exists: the unique index per source makes
     * a concurrent backfill's insert of the same entry a no-op. Answers whether this one posted it.
     */
    const postOnce = (entry: {
      readonly id: JournalId
      readonly posting: MissingPosting
      readonly memo: string
      readonly lines: ReadonlyArray<JournalLine>
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        const { posting } = entry
        const inserted = posting.kind === "payment"
          ? yield* sql<{ id: string }>`
              INSERT INTO journal_entries (id, store_id, livemode, currency, kind, payment_id, refund_id, memo, created_at)
              VALUES (${entry.id}, ${posting.store_id}, ${posting.livemode}, ${posting.currency}, 'payment',
                ${posting.payment_id}, NULL, ${entry.memo}, ${posting.at})
              ON CONFLICT (payment_id) WHERE kind = 'payment' DO NOTHING
              RETURNING id`
          : yield* sql<{ id: string }>`
              INSERT INTO journal_entries (id, store_id, livemode, currency, kind, payment_id, refund_id, memo, created_at)
              VALUES (${entry.id}, ${posting.store_id}, ${posting.livemode}, ${posting.currency}, 'refund',
                ${posting.payment_id}, ${posting.id}, ${entry.memo}, ${posting.at})
              ON CONFLICT (refund_id) WHERE kind = 'refund' DO NOTHING
              RETURNING id`
        if (inserted.length === 0) return false
        yield* insertLines(entry.id, entry.lines)
        return true
      })).pipe(Effect.orDie)

    /**
     * Posts one balanced journal entry, in the caller's transaction (the payment's or the refund's it
     * records); the database refuses to commit an unbalanced one. Two writes that read nothing back, so they
     * stay plain statements (there is no row to decode).
     */
    const postEntry = traced("LedgerRepo.postEntry")(function*(entry: {
      readonly id: JournalId
      readonly storeId: StoreId
      readonly livemode: boolean
      readonly currency: Currency
      readonly kind: "payment" | "refund"
      readonly paymentId: PaymentId
      readonly refundId: RefundId | null
      readonly memo: string
      readonly lines: ReadonlyArray<JournalLine>
      readonly at: Date
    }) {
      yield* sql`
        INSERT INTO journal_entries (id, store_id, livemode, currency, kind, payment_id, refund_id, memo, created_at)
        VALUES (${entry.id}, ${entry.storeId}, ${entry.livemode}, ${entry.currency}, ${entry.kind}, ${entry.paymentId},
          ${entry.refundId}, ${entry.memo}, ${entry.at})`
      yield* insertLines(entry.id, entry.lines)
    }, Effect.orDie)

    const sharedTotal = SqlSchema.single({
      Request: PaymentId,
      Result: Schema.Struct({ total: Schema.BigInt }),
      execute: (paymentId) =>
        sql`
          SELECT COALESCE(sum(l.credit), 0)::text AS total
          FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
          WHERE e.payment_id = ${paymentId} AND e.kind = 'payment' AND l.account = 'revenue_share_payable'`
    })
    /** What the payment's entry moved to `revenue_share_payable` when it was paid. */
    const sharedTotalOf = traced("LedgerRepo.sharedTotalOf")((paymentId: PaymentId) =>
      sharedTotal(paymentId).pipe(Effect.map((row) => row.total), Effect.orDie)
    )

    return {
      accountTotals: (scope: Scope, livemode: boolean) => Effect.orDie(accountTotals({ scope, livemode })),
      entriesPage: (storeId: StoreId, livemode: boolean, limit: number, position?: PagePosition) =>
        Effect.orDie(entriesPage({ storeId, livemode, limit, position })),
      linesOf: (ids: ReadonlyArray<string>) => ids.length === 0 ? Effect.succeed([]) : Effect.orDie(linesOf(ids)),
      ledgerLines: (input: { storeId: StoreId; livemode: boolean; from: Date; until: Date; limit: number }) =>
        Effect.orDie(ledgerLines(input)),
      paymentPostings: (scope: Scope) => Effect.orDie(paymentPostings(scope)),
      refundPostings: (scope: Scope) => Effect.orDie(refundPostings(scope)),
      unsoundEntries: (scope: Scope) => Effect.orDie(unsoundEntries(scope)),
      missingPostings: Effect.orDie(missingPostings(undefined)),
      /** Paid payments and succeeded refunds: how many journal entries a complete journal holds. */
      countPostable: reports.postableCount,
      /** The percents of the store's active revenue shares, which split a payment's entry (the revenue-shares area's read). */
      sharePercents: (storeId: StoreId) => activeSharePercentsOfStore(sql, storeId),
      postOnce,
      postEntry,
      sharedTotalOf
    } as const
  }),
  dependencies: [PaymentReports.Default]
}) {}
