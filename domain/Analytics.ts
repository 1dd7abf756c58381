/**
 * Analytics (API.md "Analytics, ledger, revenue shares, risk"): payment figures over time, a forecast and
 * the executive view of an organization. Console routes, with a user session and analytics.read (Owner,
 * Admin, Developer, Analyst). The range and mode parameters here are shared by the ledger and risk reports.
 *
 * Amounts per currency are objects `{ "USD": "12.50", "KHR": "40000" }` in the currency's decimal form;
 * dates are `YYYY-MM-DD`, UTC days. Figures are of test-mode payments unless `livemode=true`.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import { InvalidRequestResponse, NotFoundResponse } from "./Errors.ts"
import { OrganizationId, StoreId } from "./Ids.ts"

export const MAX_RANGE_DAYS = 366
export const DEFAULT_RANGE_DAYS = 30
export const MAX_FORECAST_DAYS = 90
export const DEFAULT_FORECAST_DAYS = 14

const AmountText = Schema.String.annotations({ examples: ["12.50"] })

/** An amount per currency: `{ USD, KHR }`, both always present ("0.00" / "0" when none). */
export const Amounts = Schema.Struct({ USD: AmountText, KHR: AmountText }).annotations({
  description: "An amount per currency, in the currency's decimal form",
  examples: [{ USD: "12.50", KHR: "40000" }]
})
export type Amounts = typeof Amounts.Type

const DAY = /^\d{4}-\d{2}-\d{2}$/
/** A UTC calendar day, `YYYY-MM-DD`, that exists. */
export const Day = Schema.String.pipe(
  Schema.filter((text) => {
    if (!DAY.test(text)) return "must be a date YYYY-MM-DD"
    const parsed = new Date(`${text}T00:00:00Z`)
    return (!Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === text) || "must be a real date YYYY-MM-DD"
  }, { jsonSchema: {} })
).annotations({ description: "A UTC day, YYYY-MM-DD", examples: ["2026-11-01"] })

export const Livemode = Schema.optional(Schema.BooleanFromString.annotations({
  description: "`true` for live-mode figures; test mode by default"
}))

export const RangeParams = Schema.Struct({
  from: Schema.optional(Day.annotations({ description: `First day, inclusive (default: ${DEFAULT_RANGE_DAYS} days before \`to\`)` })),
  to: Schema.optional(Day.annotations({ description: "Last day, inclusive (default: today, UTC)" })),
  livemode: Livemode
})
export type RangeParams = typeof RangeParams.Type

export const ForecastParams = Schema.Struct({
  days: Schema.optional(
    Schema.NumberFromString.pipe(
      Schema.int({ message: () => `days must be a whole number from 1 to ${MAX_FORECAST_DAYS}` }),
      Schema.between(1, MAX_FORECAST_DAYS, { message: () => `days must be from 1 to ${MAX_FORECAST_DAYS}` })
    ).annotations({
      description: `Days to forecast, 1 to ${MAX_FORECAST_DAYS} (default ${DEFAULT_FORECAST_DAYS})`,
      // Text on the wire, an integer in meaning: documented as one, so generated clients take a number.
      jsonSchema: {
        type: "integer",
        minimum: 1,
        maximum: MAX_FORECAST_DAYS,
        default: DEFAULT_FORECAST_DAYS,
        description: `Days to forecast, 1 to ${MAX_FORECAST_DAYS} (default ${DEFAULT_FORECAST_DAYS})`
      }
    })
  ),
  livemode: Livemode
})
export type ForecastParams = typeof ForecastParams.Type

export const ModeParams = Schema.Struct({ livemode: Livemode })
export type ModeParams = typeof ModeParams.Type

// ---------------------------------------------------------------------------------------------
// Analytics
// ---------------------------------------------------------------------------------------------

export const TimeseriesDay = Schema.Struct({
  date: Schema.String,
  count: Schema.Number.annotations({ description: "Payments paid that day" }),
  revenue: Amounts.annotations({ description: "What the payments paid that day took in" }),
  refunds: Amounts.annotations({ description: "What was refunded that day (of payments of any day)" })
})

export const Timeseries = Schema.Struct({
  object: Schema.Literal("timeseries"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  from: Schema.String,
  to: Schema.String,
  data: Schema.Array(TimeseriesDay)
}).annotations({ identifier: "Timeseries" })
export type Timeseries = typeof Timeseries.Type

export const ForecastDay = Schema.Struct({ date: Schema.String, revenue: Amounts })
export const Forecast = Schema.Struct({
  object: Schema.Literal("forecast"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  method: Schema.Literal("linear_trend_moving_average"),
  history_days: Schema.Number,
  data: Schema.Array(ForecastDay)
}).annotations({ identifier: "Forecast" })
export type Forecast = typeof Forecast.Type

export const ExecutiveStore = Schema.Struct({ store_id: StoreId, name: Schema.String, revenue: Amounts })
export const ExecutiveSummary = Schema.Struct({
  object: Schema.Literal("executive_summary"),
  org_id: OrganizationId,
  livemode: Schema.Boolean,
  period_days: Schema.Literal(30),
  revenue: Amounts,
  previous_revenue: Amounts,
  payments_count: Schema.Number,
  success_rate: Schema.Number.annotations({ description: "Paid payments over payments created in the period, 0 to 1 (0 when none)" }),
  refund_rate: Schema.Number.annotations({ description: "Paid payments with any refund over paid payments, 0 to 1" }),
  active_customers: Schema.Number.annotations({ description: "Customers with a paid payment in the period" }),
  loyalty_liability_points: Schema.Number,
  stores: Schema.Array(ExecutiveStore)
}).annotations({ identifier: "ExecutiveSummary" })
export type ExecutiveSummary = typeof ExecutiveSummary.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const StorePath = Schema.Struct({ storeId: StoreId })
const READ = "Needs analytics.read (Owner, Admin, Developer, Analyst)."

export class AnalyticsGroup extends HttpApiGroup.make("analytics")
  .add(
    HttpApiEndpoint.get("timeseries", "/dashboard/stores/:storeId/analytics/timeseries")
      .setPath(StorePath)
      .setUrlParams(RangeParams)
      .addSuccess(Timeseries)
      .annotate(OpenApi.Summary, "Daily revenue and count series")
      .annotate(
        OpenApi.Description,
        "One row per UTC day from `from` to `to` inclusive (at most 366 days; default the last 30), days " +
          "without payments included with zeros. `count` and `revenue` are of payments paid that day; " +
          "`refunds` of refunds made that day. `from` after `to`, a longer range or a malformed date is 400. " + READ
      )
  )
  .add(
    HttpApiEndpoint.get("forecast", "/dashboard/stores/:storeId/analytics/forecast")
      .setPath(StorePath)
      .setUrlParams(ForecastParams)
      .addSuccess(Forecast)
      .annotate(OpenApi.Summary, "Revenue forecast (linear trend plus moving average)")
      .annotate(
        OpenApi.Description,
        "Per currency, over the last 90 days of daily revenue (`history_days`): a least-squares line " +
          "`a + b·t` through the days, and the mean of the last 7 days' residuals from it added to every " +
          "forecast day, never below 0. A straight-line history forecasts the line; no history forecasts " +
          "zeros. Days 1–90 (default 14) from tomorrow. " + READ
      )
  )
  .add(
    HttpApiEndpoint.get("executive", "/dashboard/orgs/:orgId/analytics/executive")
      .setPath(Schema.Struct({ orgId: OrganizationId }))
      .setUrlParams(ModeParams)
      .addSuccess(ExecutiveSummary)
      .annotate(OpenApi.Summary, "Organization executive summary")
      .annotate(
        OpenApi.Description,
        "The last 30 days across the organization's stores against the 30 before: revenue per currency, " +
          "payments paid, success and refund rates, active customers, outstanding loyalty points, and " +
          "revenue per store. Needs analytics.read in the organization."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Analytics")
  .annotate(OpenApi.Description, "Payment figures over time, a forecast, and the executive view of an organization.")
{}
