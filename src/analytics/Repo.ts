/**
 * SQL of the analytics: one query per report, aggregated in the database. Daily figures come from the
 * payments' paid time and the refunds' time through covering indexes (migration 0014), zero-filled
 * with `generate_series`.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { OrganizationId, StoreId } from "../../domain/Ids.ts"

export const DailyRow = Schema.Struct({
  date: Schema.String,
  count: Schema.Number,
  revenue_usd: Schema.BigInt,
  revenue_khr: Schema.BigInt,
  refunds_usd: Schema.BigInt,
  refunds_khr: Schema.BigInt
})
export type DailyRow = typeof DailyRow.Type

export const PeriodRow = Schema.Struct({
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
export type PeriodRow = typeof PeriodRow.Type

export const OrganizationTotals = Schema.Struct({
  active_customers: Schema.Number,
  liability_points: Schema.Number
})

export class AnalyticsRepo extends Effect.Service<AnalyticsRepo>()("analytics/AnalyticsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The daily rows of a range: complete days from the rollup (`analytics_daily`), today from the
     * payments and refunds themselves, so today's figures are exact the moment a payment commits.
     */
    const daily = SqlSchema.findAll({
      Request: Schema.Struct({
        storeId: StoreId,
        livemode: Schema.Boolean,
        from: Schema.String,
        to: Schema.String,
        today: Schema.String,
        todayStart: Schema.DateFromSelf,
        todayEnd: Schema.DateFromSelf
      }),
      Result: DailyRow,
      execute: ({ from, livemode, storeId, to, today, todayEnd, todayStart }) =>
        sql`
          WITH days AS (
            SELECT generate_series(${from}::date, ${to}::date, interval '1 day')::date AS day
          ), figures AS (
            SELECT day, currency, paid_count, revenue, refunds FROM analytics_daily
            WHERE store_id = ${storeId} AND livemode = ${livemode} AND day >= ${from}::date AND day <= ${to}::date
              AND day < ${today}::date
            UNION ALL
            SELECT ${today}::date, currency, count(*), sum(amount), 0 FROM payments
            WHERE store_id = ${storeId} AND livemode = ${livemode} AND paid_at >= ${todayStart} AND paid_at < ${todayEnd}
              AND ${today}::date BETWEEN ${from}::date AND ${to}::date
            GROUP BY currency
            UNION ALL
            SELECT ${today}::date, currency, 0, 0, sum(amount) FROM refunds
            WHERE store_id = ${storeId} AND livemode = ${livemode} AND created_at >= ${todayStart} AND created_at < ${todayEnd}
              AND status = 'succeeded' AND ${today}::date BETWEEN ${from}::date AND ${to}::date
            GROUP BY currency
          )
          SELECT to_char(d.day, 'YYYY-MM-DD') AS date,
            COALESCE(sum(f.paid_count), 0)::int AS count,
            COALESCE(sum(f.revenue) FILTER (WHERE f.currency = 'USD'), 0)::text AS revenue_usd,
            COALESCE(sum(f.revenue) FILTER (WHERE f.currency = 'KHR'), 0)::text AS revenue_khr,
            COALESCE(sum(f.refunds) FILTER (WHERE f.currency = 'USD'), 0)::text AS refunds_usd,
            COALESCE(sum(f.refunds) FILTER (WHERE f.currency = 'KHR'), 0)::text AS refunds_khr
          FROM days d LEFT JOIN figures f ON f.day = d.day
          GROUP BY d.day
          ORDER BY d.day`
    })

    /**
     * Recomputes the rollup rows of one store, mode and day from the payments and refunds of that day:
     * what the analytics consumer does for each event, so applying an event twice changes nothing.
     */
    const refreshDay = SqlSchema.void({
      Request: Schema.Struct({
        storeId: StoreId,
        livemode: Schema.Boolean,
        day: Schema.String,
        start: Schema.DateFromSelf,
        end: Schema.DateFromSelf
      }),
      execute: ({ day, end, livemode, start, storeId }) =>
        sql`
          INSERT INTO analytics_daily (store_id, livemode, day, currency, paid_count, revenue, refunds)
          SELECT ${storeId}, ${livemode}, ${day}::date, c.currency,
            (SELECT count(*) FROM payments WHERE store_id = ${storeId} AND livemode = ${livemode}
               AND currency = c.currency AND paid_at >= ${start} AND paid_at < ${end}),
            (SELECT COALESCE(sum(amount), 0) FROM payments WHERE store_id = ${storeId} AND livemode = ${livemode}
               AND currency = c.currency AND paid_at >= ${start} AND paid_at < ${end}),
            (SELECT COALESCE(sum(amount), 0) FROM refunds WHERE store_id = ${storeId} AND livemode = ${livemode}
               AND currency = c.currency AND status = 'succeeded' AND created_at >= ${start} AND created_at < ${end})
          FROM (VALUES ('USD'), ('KHR')) AS c (currency)
          ON CONFLICT (store_id, livemode, day, currency) DO UPDATE
            SET paid_count = EXCLUDED.paid_count, revenue = EXCLUDED.revenue, refunds = EXCLUDED.refunds`
    })

    /** Rebuilds a store's whole rollup from its history (after history was written by other means). */
    const rebuildStore = (storeId: StoreId) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM analytics_daily WHERE store_id = ${storeId}`
        yield* sql`
          INSERT INTO analytics_daily (store_id, livemode, day, currency, paid_count, revenue, refunds)
          SELECT store_id, livemode, day, currency, sum(paid_count), sum(revenue), sum(refunds)
          FROM (
            SELECT store_id, livemode, (paid_at AT TIME ZONE 'UTC')::date AS day, currency,
                   count(*) AS paid_count, sum(amount) AS revenue, 0 AS refunds
            FROM payments WHERE store_id = ${storeId} AND paid_at IS NOT NULL GROUP BY 1, 2, 3, 4
            UNION ALL
            SELECT store_id, livemode, (created_at AT TIME ZONE 'UTC')::date, currency, 0, 0, sum(amount)
            FROM refunds WHERE store_id = ${storeId} AND status = 'succeeded' GROUP BY 1, 2, 3, 4
          ) history
          GROUP BY 1, 2, 3, 4`
      })).pipe(Effect.orDie)

    /** Per store of the organization: revenue of the period and the one before, and its counts. */
    const period = SqlSchema.findAll({
      Request: Schema.Struct({
        organizationId: OrganizationId,
        livemode: Schema.Boolean,
        previousStart: Schema.DateFromSelf,
        start: Schema.DateFromSelf,
        end: Schema.DateFromSelf
      }),
      Result: PeriodRow,
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
          FROM stores s
          LEFT JOIN payments p ON p.store_id = s.id AND p.livemode = ${livemode} AND p.paid_at IS NOT NULL
            AND p.paid_at >= ${previousStart} AND p.paid_at < ${end}
          WHERE s.organization_id = ${organizationId}
          GROUP BY s.id, s.name
          ORDER BY s.created_at, s.id`
    })

    const organizationTotals = SqlSchema.single({
      Request: Schema.Struct({
        organizationId: OrganizationId,
        livemode: Schema.Boolean,
        start: Schema.DateFromSelf,
        end: Schema.DateFromSelf
      }),
      Result: OrganizationTotals,
      execute: ({ end, livemode, organizationId, start }) =>
        sql`
          SELECT
            (SELECT count(DISTINCT p.customer_id) FROM payments p JOIN stores s ON s.id = p.store_id
              WHERE s.organization_id = ${organizationId} AND p.livemode = ${livemode} AND p.customer_id IS NOT NULL
                AND p.paid_at >= ${start} AND p.paid_at < ${end})::int AS active_customers,
            (SELECT COALESCE(sum(c.points_balance), 0) FROM customers c JOIN stores s ON s.id = c.store_id
              WHERE s.organization_id = ${organizationId} AND c.livemode = ${livemode})::int AS liability_points`
    })

    return {
      daily: (input: Parameters<typeof daily>[0]) => Effect.orDie(daily(input)),
      refreshDay: (input: Parameters<typeof refreshDay>[0]) => Effect.orDie(refreshDay(input)),
      rebuildStore,
      period: (input: Parameters<typeof period>[0]) => Effect.orDie(period(input)),
      organizationTotals: (input: Parameters<typeof organizationTotals>[0]) => Effect.orDie(organizationTotals(input))
    } as const
  })
}) {}
