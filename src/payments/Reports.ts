/**
 * The reports other areas make over payments and refunds. The payments area owns both tables, so every
 * statement that reads them is written here, one function per question with typed rows, and the areas that
 * report (analytics, the assistant, promotions, payment links, monitoring, the ledger, receipts) call these.
 *
 * Where a report must meet another area's rows in one statement (a segment's members, a store's customers,
 * a link's payments), the other area passes in the relation of its own rows, as a SQL fragment with the
 * columns the report names, and the report joins it: each area writes the SQL of its own tables, and the
 * database still answers in one statement over one snapshot, with the plan the single query had.
 * Every method dies on SQL failures: they are the infrastructure's, not the caller's.
 */
import { SqlClient, type Statement } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { OrganizationId, PaymentId, type RefundId, StoreId } from "../../domain/Ids.ts"
import { OpenStatuses } from "../../domain/Payments.ts"
import { Currency } from "../platform/Money.ts"
import { joinableStores } from "../stores/Reads.ts"
import { traced, spanWhenExported } from "../platform/Traced.ts"

type Sql = SqlClient.SqlClient
type Fragment = Statement.Fragment

/** What a store took in and refunded in one currency over a time range; amounts in minor units. */
export const CurrencyTotals = Schema.Struct({
  currency: Currency,
  paid_count: Schema.Number,
  revenue: Schema.BigInt,
  refunds: Schema.BigInt
})
export type CurrencyTotals = typeof CurrencyTotals.Type

/** One (mode, UTC day, currency) of a store's whole history: payments by paid day, refunds by their day. */
export const DayHistory = Schema.Struct({
  livemode: Schema.Boolean,
  day: Schema.String,
  currency: Currency,
  paid_count: Schema.Number,
  revenue: Schema.BigInt,
  refunds: Schema.BigInt
})
export type DayHistory = typeof DayHistory.Type

/** One store of an organization over a period and the period before it; amounts in minor units. */
export const StorePeriod = Schema.Struct({
  store_id: StoreId,
  name: Schema.String,
  revenue_usd: Schema.BigInt,
  revenue_khr: Schema.BigInt,
  previous_usd: Schema.BigInt,
  previous_khr: Schema.BigInt,
  paid: Schema.Number,
  created: Schema.Number,
  refunded: Schema.Number
})
export type StorePeriod = typeof StorePeriod.Type

/** A store's paid payments of a window in one currency. */
export const WindowRevenue = Schema.Struct({
  currency: Schema.Literal("USD", "KHR"),
  payments: Schema.Number,
  amount: Schema.BigInt,
  refunded: Schema.BigInt
})

/** One customer's paid payments of a window in one currency, net of refunds. */
export const TopPayer = Schema.Struct({
  customer_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  currency: Schema.Literal("USD", "KHR"),
  payments: Schema.Number,
  amount: Schema.BigInt
})

/** How many customers last paid in the window (`active`) or in the time before it (`lapsed`). */
export const Recency = Schema.Struct({
  segment: Schema.Literal("active", "lapsed"),
  customers: Schema.Number,
  reachable: Schema.Number
})

/** The newest open payment among some, and whether its expiry has come. */
export const OpenPayment = Schema.Struct({
  id: PaymentId,
  amount: Schema.BigInt,
  currency: Currency,
  overdue: Schema.Boolean
})
export type OpenPayment = typeof OpenPayment.Type

const StoreWindow = Schema.Struct({ storeId: Schema.String, livemode: Schema.Boolean, since: Schema.DateFromSelf, until: Schema.DateFromSelf })

/**
 * A customer's paid payments up to `now`, as one row of figures: paid amounts less refunds per currency
 * (`lifetime_value_usd`, `lifetime_value_khr`, null without any), `payments_count`, `payments_last_30d` (paid
 * in the 30 days up to `now`) and `last_paid_at`. `customerId` is the customer's id in the enclosing query
 * (a lateral join's outer column), so a segment's rules test every customer of a store in one statement.
 */
export const paidFiguresOfCustomer = (sql: Sql, customerId: Fragment, now: Date): Fragment => sql`
    SELECT
      sum(pp.amount - pp.amount_refunded) FILTER (WHERE pp.currency = 'USD') AS lifetime_value_usd,
      sum(pp.amount - pp.amount_refunded) FILTER (WHERE pp.currency = 'KHR') AS lifetime_value_khr,
      count(*) AS payments_count,
      count(*) FILTER (WHERE pp.paid_at > ${now}::timestamptz - interval '30 days') AS payments_last_30d,
      max(pp.paid_at) AS last_paid_at
    FROM payments pp
    WHERE pp.customer_id = ${customerId} AND pp.paid_at IS NOT NULL AND pp.paid_at <= ${now}::timestamptz`

/**
 * When the first of some payments was paid (null when none was), as a scalar subquery; `paymentIds` is a
 * relation of one column of payment ids (a link's payments).
 */
export const firstPaidAtOf = (sql: Sql, paymentIds: Fragment): Fragment => sql`
  (SELECT min(p.paid_at) FROM payments p WHERE p.id IN (${paymentIds}) AND p.paid_at IS NOT NULL)`

export class PaymentReports extends Effect.Service<PaymentReports>()("payments/PaymentReports", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const dayTotals = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean, start: Schema.DateFromSelf, end: Schema.DateFromSelf }),
      Result: CurrencyTotals,
      execute: ({ end, livemode, start, storeId }) =>
        sql`
          SELECT c.currency,
            (SELECT count(*) FROM payments WHERE store_id = ${storeId} AND livemode = ${livemode}
               AND currency = c.currency AND paid_at >= ${start} AND paid_at < ${end})::int AS paid_count,
            (SELECT COALESCE(sum(amount), 0) FROM payments WHERE store_id = ${storeId} AND livemode = ${livemode}
               AND currency = c.currency AND paid_at >= ${start} AND paid_at < ${end})::text AS revenue,
            (SELECT COALESCE(sum(amount), 0) FROM refunds WHERE store_id = ${storeId} AND livemode = ${livemode}
               AND currency = c.currency AND status = 'succeeded' AND created_at >= ${start} AND created_at < ${end})::text AS refunds
          FROM (VALUES ('USD'), ('KHR')) AS c (currency)`
    })
    /**
     * Per currency (both, zero when nothing happened), the store's payments paid in [start, end) and its
     * succeeded refunds made in it: a day of the analytics rollup.
     */
    const storeTotals = traced("PaymentReports.storeTotals")((input: Parameters<typeof dayTotals>[0]) =>
      Effect.orDie(dayTotals(input))
    )

    const history = SqlSchema.findAll({
      Request: StoreId,
      Result: DayHistory,
      execute: (storeId) =>
        sql`
          SELECT livemode, to_char(day, 'YYYY-MM-DD') AS day, currency, sum(paid_count)::int AS paid_count,
            sum(revenue)::text AS revenue, sum(refunds)::text AS refunds
          FROM (
            SELECT livemode, (paid_at AT TIME ZONE 'UTC')::date AS day, currency, count(*) AS paid_count,
                   sum(amount) AS revenue, 0 AS refunds
            FROM payments WHERE store_id = ${storeId} AND paid_at IS NOT NULL GROUP BY 1, 2, 3
            UNION ALL
            SELECT livemode, (created_at AT TIME ZONE 'UTC')::date, currency, 0, 0, sum(amount)
            FROM refunds WHERE store_id = ${storeId} AND status = 'succeeded' GROUP BY 1, 2, 3
          ) history
          GROUP BY livemode, day, currency`
    })
    /** The store's whole history by (mode, UTC day, currency), days without payments or refunds left out. */
    const storeHistoryByDay = traced("PaymentReports.storeHistoryByDay")((storeId: StoreId) => Effect.orDie(history(storeId)))

    const period = SqlSchema.findAll({
      Request: Schema.Struct({
        organizationId: OrganizationId,
        livemode: Schema.Boolean,
        previousStart: Schema.DateFromSelf,
        start: Schema.DateFromSelf,
        end: Schema.DateFromSelf
      }),
      Result: StorePeriod,
      execute: ({ end, livemode, organizationId, previousStart, start }) =>
        sql`
          SELECT s.id AS store_id, s.name,
            COALESCE(sum(p.amount) FILTER (WHERE p.paid_at >= ${start} AND p.currency = 'USD'), 0)::text AS revenue_usd,
            COALESCE(sum(p.amount) FILTER (WHERE p.paid_at >= ${start} AND p.currency = 'KHR'), 0)::text AS revenue_khr,
            COALESCE(sum(p.amount) FILTER (WHERE p.paid_at < ${start} AND p.currency = 'USD'), 0)::text AS previous_usd,
            COALESCE(sum(p.amount) FILTER (WHERE p.paid_at < ${start} AND p.currency = 'KHR'), 0)::text AS previous_khr,
            count(p.id) FILTER (WHERE p.paid_at >= ${start})::int AS paid,
            (SELECT count(*) FROM payments c WHERE c.store_id = s.id AND c.livemode = ${livemode}
               AND c.created_at >= ${start} AND c.created_at < ${end})::int AS created,
            count(p.id) FILTER (WHERE p.paid_at >= ${start} AND p.amount_refunded > 0)::int AS refunded
          FROM (${joinableStores(sql)}) s
          LEFT JOIN payments p ON p.store_id = s.id AND p.livemode = ${livemode} AND p.paid_at IS NOT NULL
            AND p.paid_at >= ${previousStart} AND p.paid_at < ${end}
          WHERE s.organization_id = ${organizationId}
          GROUP BY s.id, s.name, s.created_at
          ORDER BY s.created_at, s.id`
    })
    /**
     * Per store of the organization (every one, oldest first): revenue of [start, end) and of [previousStart,
     * start), and the payments paid, created and refunded in [start, end). The organization's stores are
     * read with their payments, as the live payment count of plan limits reads them; they are the stores
     * area's relation, not its table, so the database cannot tell that a store's id fixes its creation time,
     * and the query groups by that too.
     */
    const organizationPeriod = traced("PaymentReports.organizationPeriod")((input: Parameters<typeof period>[0]) =>
      Effect.orDie(period(input))
    )

    /** How many distinct customers paid in [start, end) in any store of the organization. */
    const organizationPayingCustomers = traced("PaymentReports.organizationPayingCustomers")(
      (input: { readonly organizationId: OrganizationId; readonly livemode: boolean; readonly start: Date; readonly end: Date }) =>
        Effect.map(
          sql<{ n: number }>`
            SELECT count(DISTINCT p.customer_id)::int AS n FROM payments p JOIN (${joinableStores(sql)}) s ON s.id = p.store_id
            WHERE s.organization_id = ${input.organizationId} AND p.livemode = ${input.livemode} AND p.customer_id IS NOT NULL
              AND p.paid_at >= ${input.start} AND p.paid_at < ${input.end}`,
          (rows) => rows[0]?.n ?? 0
        ).pipe(Effect.orDie)
    )

    /** Paid payments and succeeded refunds of every store: what the journal must hold one entry of each. */
    const postableCount = Effect.map(
      sql<{ n: number }>`
        SELECT ((SELECT count(*) FROM payments WHERE paid_at IS NOT NULL)
              + (SELECT count(*) FROM refunds WHERE status = 'succeeded'))::int AS n`,
      (rows) => rows[0]?.n ?? 0
    ).pipe(Effect.orDie, spanWhenExported("PaymentReports.postableCount"))

    const revenue = SqlSchema.findAll({
      Request: StoreWindow,
      Result: WindowRevenue,
      execute: (w) =>
        sql`
          SELECT currency, count(*)::int AS payments, COALESCE(sum(amount), 0)::text AS amount,
                 COALESCE(sum(amount_refunded), 0)::text AS refunded
          FROM payments
          WHERE store_id = ${w.storeId} AND livemode = ${w.livemode} AND paid_at IS NOT NULL
            AND paid_at >= ${w.since} AND paid_at < ${w.until}
          GROUP BY currency ORDER BY currency DESC`
    })
    /** Per currency (those paid in only), the store's payments paid in [since, until) and what was refunded of them. */
    const windowRevenue = traced("PaymentReports.windowRevenue")((input: typeof StoreWindow.Type) => Effect.orDie(revenue(input)))

    /**
     * The customers who paid the most in [since, until), per currency (highest net first, then by id), at
     * most `limit` rows. `customers` is the relation of the store's customers (`id`, `name`) they are named from.
     */
    const topPayers = traced("PaymentReports.topPayers")(
      (input: typeof StoreWindow.Type & { readonly limit: number; readonly customers: Fragment }) =>
        SqlSchema.findAll({
          Request: StoreWindow,
          Result: TopPayer,
          execute: (w) =>
            sql`
              SELECT c.id AS customer_id, c.name, p.currency, count(*)::int AS payments, sum(p.amount - p.amount_refunded)::text AS amount
              FROM payments p JOIN (${input.customers}) c ON c.id = p.customer_id
              WHERE p.store_id = ${w.storeId} AND p.livemode = ${w.livemode} AND p.paid_at IS NOT NULL
                AND p.paid_at >= ${w.since} AND p.paid_at < ${w.until}
              GROUP BY c.id, c.name, p.currency
              ORDER BY p.currency DESC, sum(p.amount - p.amount_refunded) DESC, c.id
              LIMIT ${input.limit}`
        })(input).pipe(Effect.orDie)
    )

    /**
     * Of the customers in `customers` (a relation of `id` and `reachable`, whether they may be sent marketing),
     * those whose last paid payment is at or after `since` (`active`) and those whose last one is in [before,
     * since) (`lapsed`), each with how many are reachable. Customers who never paid since `before` are in neither.
     */
    const recency = traced("PaymentReports.recency")(
      (input: { readonly customers: Fragment; readonly since: Date; readonly before: Date }) =>
        SqlSchema.findAll({
          Request: Schema.Struct({ since: Schema.DateFromSelf, before: Schema.DateFromSelf }),
          Result: Recency,
          execute: (w) =>
            sql`
              WITH last_paid AS (
                SELECT c.id, c.reachable, max(p.paid_at) AS paid_at
                FROM (${input.customers}) c JOIN payments p ON p.customer_id = c.id AND p.paid_at IS NOT NULL
                WHERE p.paid_at >= ${w.before}
                GROUP BY c.id, c.reachable
              )
              SELECT CASE WHEN paid_at >= ${w.since} THEN 'active' ELSE 'lapsed' END AS segment,
                     count(*)::int AS customers, (count(*) FILTER (WHERE reachable))::int AS reachable
              FROM last_paid GROUP BY 1 ORDER BY 1`
        })(input).pipe(Effect.orDie)
    )

    /**
     * Of the store's payments of the mode paid in the `windowDays` days up to `now` by customers in `members`
     * (a relation of customer ids, `id`) and, with a minimum, of at least `minAmount` in `minCurrency`: how
     * many customers made one, and how many there are.
     */
    const membersPaid = traced("PaymentReports.membersPaid")(function*(input: {
      readonly storeId: StoreId
      readonly livemode: boolean
      readonly now: Date
      readonly windowDays: number
      readonly members: Fragment
      readonly minAmount: number | null
      readonly minCurrency: string | null
    }) {
      const minimum = input.minAmount === null
        ? sql`true`
        : sql`p.currency = ${input.minCurrency} AND p.amount >= ${input.minAmount}`
      const rows = yield* sql<{ customers: string; payments: string }>`
        WITH members AS (${input.members})
        SELECT count(DISTINCT p.customer_id) AS customers, count(*) AS payments
        FROM payments p JOIN members ON members.id = p.customer_id
        WHERE p.store_id = ${input.storeId} AND p.livemode = ${input.livemode} AND p.paid_at IS NOT NULL
          AND p.paid_at > ${input.now}::timestamptz - make_interval(days => ${input.windowDays})
          AND p.paid_at <= ${input.now}::timestamptz
          AND ${minimum}`.pipe(Effect.orDie)
      return { customers: Number(rows[0]?.customers ?? 0), payments: Number(rows[0]?.payments ?? 0) }
    })

    /**
     * The newest of some payments (`paymentIds`, a relation of one column of payment ids) that is still open
     * (pending or scanned), with whether its expiry has come at `now`.
     */
    const newestOpenAmong = traced("PaymentReports.newestOpenAmong")(
      (paymentIds: Fragment, now: Date) =>
        SqlSchema.findOne({
          Request: Schema.Struct({ now: Schema.DateFromSelf }),
          Result: OpenPayment,
          execute: (input) =>
            sql`
              SELECT p.id, p.amount, p.currency, p.expires_at <= ${input.now} AS overdue
              FROM payments p
              WHERE p.id IN (${paymentIds}) AND p.status IN ${sql.in(OpenStatuses)}
              ORDER BY p.created_at DESC, p.id DESC
              LIMIT 1`
        })({ now }).pipe(Effect.orDie)
    )

    /** How many payments were created at or after `since`, in every store and mode (monitoring's throughput). */
    const createdSince = traced("PaymentReports.createdSince")((since: Date) =>
      Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM payments WHERE created_at >= ${since}`,
        (rows) => rows[0]?.n ?? 0
      ).pipe(Effect.orDie)
    )

    /**
     * The refund of the payment that brought its refunded total to `total` (refunds in the order they were
     * made): the one a `payment.refunded` event announces. None when no refund reaches it exactly.
     */
    const refundReaching = traced("PaymentReports.refundReaching")((paymentId: string, total: bigint) =>
      Effect.map(
        sql<{ id: string; amount: string }>`
          SELECT id, amount::text AS amount FROM (
            SELECT id, amount, sum(amount) OVER (ORDER BY created_at, id) AS running FROM refunds WHERE payment_id = ${paymentId}
          ) refunds
          WHERE running = ${total.toString()}::bigint`,
        (rows) => rows[0] === undefined ? Option.none() : Option.some({ id: rows[0].id as RefundId, amount: BigInt(rows[0].amount) })
      ).pipe(Effect.orDie)
    )

    return {
      refundReaching,
      storeTotals,
      storeHistoryByDay,
      organizationPeriod,
      organizationPayingCustomers,
      postableCount,
      windowRevenue,
      topPayers,
      recency,
      membersPaid,
      newestOpenAmong,
      createdSince
    } as const
  })
}) {}
