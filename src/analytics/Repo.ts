/**
 * SQL of the analytics: the daily rollup (`analytics_daily`) and what it is read with, aggregated in the
 * database. The figures of payments and refunds come from the payments area's reports (their paid time and
 * the refunds' time, through covering indexes, migration 0014); the rollup's days are zero-filled with
 * `generate_series`.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { OrganizationId, StoreId } from "../../domain/Ids.ts"
import { pointsHeldInOrganization } from "../customers/Reads.ts"
import { type CurrencyTotals, PaymentReports, type StorePeriod } from "../payments/Reports.ts"

export const DailyRow = Schema.Struct({
  date: Schema.String,
  count: Schema.Number,
  revenue_usd: Schema.BigInt,
  revenue_khr: Schema.BigInt,
  refunds_usd: Schema.BigInt,
  refunds_khr: Schema.BigInt
})
export type DailyRow = typeof DailyRow.Type

export type PeriodRow = StorePeriod

export const OrganizationTotals = Schema.Struct({
  active_customers: Schema.Number,
  liability_points: Schema.Number
})

export class AnalyticsRepo extends Effect.Service<AnalyticsRepo>()("analytics/AnalyticsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reports = yield* PaymentReports

    const rollup = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean, from: Schema.String, to: Schema.String, today: Schema.String }),
      Result: DailyRow,
      execute: ({ from, livemode, storeId, to, today }) =>
        sql`
          WITH days AS (
            SELECT generate_series(${from}::date, ${to}::date, interval '1 day')::date AS day
          ), figures AS (
            SELECT day, currency, paid_count, revenue, refunds FROM analytics_daily
            WHERE store_id = ${storeId} AND livemode = ${livemode} AND day >= ${from}::date AND day <= ${to}::date
              AND day < ${today}::date
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

    /** Today's row with the payments and refunds of today added (the rollup holds only complete days). */
    const withToday = (row: DailyRow, totals: ReadonlyArray<CurrencyTotals>): DailyRow => {
      const of = (currency: "USD" | "KHR") => totals.find((t) => t.currency === currency)
      const usd = of("USD")
      const khr = of("KHR")
      return {
        date: row.date,
        count: row.count + totals.reduce((n, t) => n + t.paid_count, 0),
        revenue_usd: row.revenue_usd + (usd?.revenue ?? 0n),
        revenue_khr: row.revenue_khr + (khr?.revenue ?? 0n),
        refunds_usd: row.refunds_usd + (usd?.refunds ?? 0n),
        refunds_khr: row.refunds_khr + (khr?.refunds ?? 0n)
      }
    }

    /**
     * The daily rows of a range: complete days from the rollup (`analytics_daily`), today from the
     * payments and refunds themselves, so today's figures are exact the moment a payment commits.
     */
    const daily = (input: {
      readonly storeId: StoreId
      readonly livemode: boolean
      readonly from: string
      readonly to: string
      readonly today: string
      readonly todayStart: Date
      readonly todayEnd: Date
    }) =>
      Effect.gen(function*() {
        const rows = yield* Effect.orDie(rollup(input))
        if (input.today < input.from || input.today > input.to) return rows
        const totals = yield* reports.storeTotals({
          storeId: input.storeId,
          livemode: input.livemode,
          start: input.todayStart,
          end: input.todayEnd
        })
        return rows.map((row) => row.date === input.today ? withToday(row, totals) : row)
      })

    /** Writes rollup rows, replacing those of the same store, mode, day and currency. */
    const upsertDays = (storeId: StoreId, rows: ReadonlyArray<{
      readonly livemode: boolean
      readonly day: string
      readonly currency: string
      readonly paid_count: number
      readonly revenue: bigint
      readonly refunds: bigint
    }>) =>
      sql`
        INSERT INTO analytics_daily ${
        sql.insert(rows.map((row) => ({
          store_id: storeId,
          livemode: row.livemode,
          day: row.day,
          currency: row.currency,
          paid_count: row.paid_count,
          revenue: row.revenue.toString(),
          refunds: row.refunds.toString()
        })))
      }
        ON CONFLICT (store_id, livemode, day, currency) DO UPDATE
          SET paid_count = EXCLUDED.paid_count, revenue = EXCLUDED.revenue, refunds = EXCLUDED.refunds`

    /**
     * Recomputes the rollup rows of one store, mode and day from the payments and refunds of that day:
     * what the analytics consumer does for each event, so applying an event twice changes nothing. The
     * consumer applies one store's events in order, so the figures read are never older than those written.
     */
    const refreshDay = (input: { readonly storeId: StoreId; readonly livemode: boolean; readonly day: string; readonly start: Date; readonly end: Date }) =>
      Effect.gen(function*() {
        const totals = yield* reports.storeTotals({ storeId: input.storeId, livemode: input.livemode, start: input.start, end: input.end })
        yield* upsertDays(input.storeId, totals.map((row) => ({ ...row, livemode: input.livemode, day: input.day })))
      }).pipe(Effect.orDie)

    /** Rows a statement writes at most: a long history is written in parts, below the bound parameters' limit. */
    const ROWS_PER_INSERT = 1_000

    /** Rebuilds a store's whole rollup from its history (after history was written by other means). */
    const rebuildStore = (storeId: StoreId) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM analytics_daily WHERE store_id = ${storeId}`
        const history = yield* reports.storeHistoryByDay(storeId)
        for (let at = 0; at < history.length; at += ROWS_PER_INSERT) {
          yield* upsertDays(storeId, history.slice(at, at + ROWS_PER_INSERT))
        }
      })).pipe(Effect.orDie)

    /** The organization's customers who paid in [start, end), and the points its stores' customers hold. */
    const organizationTotals = (input: { readonly organizationId: OrganizationId; readonly livemode: boolean; readonly start: Date; readonly end: Date }) =>
      Effect.gen(function*() {
        const activeCustomers = yield* reports.organizationPayingCustomers(input)
        const liability_points = yield* pointsHeldInOrganization(sql, input)
        return { active_customers: activeCustomers, liability_points } satisfies typeof OrganizationTotals.Type
      })

    return {
      daily,
      refreshDay,
      rebuildStore,
      /** Per store of the organization, the period's figures and the period's before. */
      period: reports.organizationPeriod,
      organizationTotals
    } as const
  }),
  dependencies: [PaymentReports.Default]
}) {}
