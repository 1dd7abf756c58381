/**
 * Analytics of a store (daily series, forecast) and of an organization (executive summary). Figures
 * are computed by SQL aggregates; the forecast's arithmetic is in Forecast.ts.
 */
import { Effect } from "effect"
import {
  type Amounts,
  DEFAULT_FORECAST_DAYS,
  type ExecutiveSummary,
  type Forecast,
  type ForecastParams,
  type ModeParams,
  type RangeParams,
  type Timeseries
} from "../../domain/Analytics.ts"
import type { OrganizationId, StoreId } from "../../domain/Ids.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { formatAmount } from "../platform/Money.ts"
import { currentDate } from "../platform/Time.ts"
import { addDays, dayOf, dayRange, startOfDay } from "../platform/Days.ts"
import { forecastSeries } from "./Forecast.ts"
import { AnalyticsRepo, type DailyRow } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

/** How many days of history the forecast fits. */
export const FORECAST_HISTORY_DAYS = 90
export const EXECUTIVE_PERIOD_DAYS = 30

export const amounts = (usd: bigint, khr: bigint): Amounts => ({ USD: formatAmount(usd, "USD"), KHR: formatAmount(khr, "KHR") })

const rate = (part: number, whole: number) => whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000

export class AnalyticsService extends Effect.Service<AnalyticsService>()("analytics/AnalyticsService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* AnalyticsRepo)
    const access = yield* AccessService

    const readableStore = <A, E, R>(storeId: StoreId, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, "analytics.read", use))

    /** The daily rows of a store over a range; for callers that authorized the store already (AI, forecast). */
    const dailyOf = (storeId: StoreId, livemode: boolean, params: { readonly from?: string | undefined; readonly to?: string | undefined }) =>
      Effect.gen(function*() {
        const range = yield* dayRange(params)
        const today = dayOf(yield* currentDate)
        const rows = yield* repo.daily({
          storeId,
          livemode,
          from: range.from,
          to: range.to,
          today,
          todayStart: startOfDay(today),
          todayEnd: startOfDay(addDays(today, 1))
        })
        return { range, rows }
      })

    const toTimeseries = (storeId: StoreId, livemode: boolean, from: string, to: string, rows: ReadonlyArray<DailyRow>): Timeseries => ({
      object: "timeseries",
      store_id: storeId,
      livemode,
      from,
      to,
      data: rows.map((row) => ({
        date: row.date,
        count: row.count,
        revenue: amounts(row.revenue_usd, row.revenue_khr),
        refunds: amounts(row.refunds_usd, row.refunds_khr)
      }))
    })

    const timeseries = traced("Analytics.timeseries")(function*(storeId: StoreId, params: RangeParams) {
      return yield* readableStore(storeId, (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const { range, rows } = yield* dailyOf(store.storeId, livemode, params)
          return toTimeseries(store.storeId, livemode, range.from, range.to, rows)
        }))
    })

    const forecast = traced("Analytics.forecast")(function*(storeId: StoreId, params: ForecastParams) {
      return yield* readableStore(storeId, (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const days = params.days ?? DEFAULT_FORECAST_DAYS
          const today = dayOf(yield* currentDate)
          const { rows } = yield* dailyOf(store.storeId, livemode, { from: addDays(today, -(FORECAST_HISTORY_DAYS - 1)), to: today })
          const usd = forecastSeries(rows.map((row) => Number(row.revenue_usd)), days)
          const khr = forecastSeries(rows.map((row) => Number(row.revenue_khr)), days)
          return {
            object: "forecast",
            store_id: store.storeId,
            livemode,
            method: "linear_trend_moving_average",
            history_days: rows.length,
            data: usd.map((value, i) => ({
              date: addDays(today, i + 1),
              revenue: amounts(BigInt(value), BigInt(khr[i]!))
            }))
          } satisfies Forecast
        }))
    })

    const executive = traced("Analytics.executive")(function*(organizationId: OrganizationId, params: ModeParams) {
      return yield* access.withOrganization(access.organization(organizationId, "analytics.read"), () =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          // The 30 days up to now, and the 30 before them.
          const end = startOfDay(addDays(dayOf(yield* currentDate), 1))
          const start = startOfDay(addDays(dayOf(end), -EXECUTIVE_PERIOD_DAYS))
          const previousStart = startOfDay(addDays(dayOf(start), -EXECUTIVE_PERIOD_DAYS))
          const stores = yield* repo.period({ organizationId, livemode, previousStart, start, end })
          const totals = yield* repo.organizationTotals({ organizationId, livemode, start, end })
          const sum = (pick: (row: (typeof stores)[number]) => bigint) => stores.reduce((total, row) => total + pick(row), 0n)
          const count = (pick: (row: (typeof stores)[number]) => number) => stores.reduce((total, row) => total + pick(row), 0)
          return {
            object: "executive_summary",
            org_id: organizationId,
            livemode,
            period_days: 30,
            revenue: amounts(sum((row) => row.revenue_usd), sum((row) => row.revenue_khr)),
            previous_revenue: amounts(sum((row) => row.previous_usd), sum((row) => row.previous_khr)),
            payments_count: count((row) => row.paid),
            success_rate: rate(count((row) => row.paid), count((row) => row.created)),
            refund_rate: rate(count((row) => row.refunded), count((row) => row.paid)),
            active_customers: totals.active_customers,
            loyalty_liability_points: totals.liability_points,
            stores: stores.map((row) => ({ store_id: row.store_id, name: row.name, revenue: amounts(row.revenue_usd, row.revenue_khr) }))
          } satisfies ExecutiveSummary
        }))
    })

    return { timeseries, forecast, executive, dailyOf } as const
  }),
  dependencies: [AnalyticsRepo.Default, AccessService.Default]
}) {}
