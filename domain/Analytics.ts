/**
 * Analytics, ledger reports, revenue shares and risk cases (API.md "Analytics, ledger, revenue shares,
 * risk"). Console routes, with a user session: analytics.read to read (Owner, Admin, Developer, Analyst),
 * marketing.manage to change revenue shares, risk.manage to update risk cases; the `/dashboard/admin/…`
 * routes are for platform admins.
 *
 * Amounts per currency are objects `{ "USD": "12.50", "KHR": "40000" }` in the currency's decimal form;
 * dates are `YYYY-MM-DD`, UTC days. Figures are of test-mode payments unless `livemode=true`.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import {
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse
} from "./Errors.ts"
import {
  JournalId,
  OrganizationId,
  PaymentId,
  RefundId,
  RevenueShareId,
  RiskCaseId,
  StoreId
} from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { closed, MAX_NAME_LENGTH } from "./Text.ts"

export const MAX_RANGE_DAYS = 366
export const DEFAULT_RANGE_DAYS = 30
export const MAX_FORECAST_DAYS = 90
export const DEFAULT_FORECAST_DAYS = 14
export const MAX_RESOLUTION_LENGTH = 1000

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

const Livemode = Schema.optional(Schema.BooleanFromString.annotations({
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
// Ledger
// ---------------------------------------------------------------------------------------------

export const LedgerAccounts = ["provider_clearing", "merchant_payable", "refunds", "revenue_share_payable"] as const
export const LedgerAccount = Schema.Literal(...LedgerAccounts)
export type LedgerAccount = typeof LedgerAccount.Type

export const TrialBalanceAccount = Schema.Struct({
  account: LedgerAccount,
  currency: Schema.String,
  debit: Schema.String,
  credit: Schema.String,
  balance: Schema.String.annotations({ description: "debit − credit (negative for a credit balance)" })
})
export const DebitCredit = Schema.Struct({ debit: Schema.String, credit: Schema.String })
export const TrialBalance = Schema.Struct({
  object: Schema.Literal("trial_balance"),
  store_id: Schema.NullOr(StoreId).annotations({ description: "null for the platform's trial balance" }),
  livemode: Schema.Boolean,
  accounts: Schema.Array(TrialBalanceAccount),
  totals: Schema.Struct({ USD: DebitCredit, KHR: DebitCredit }),
  balanced: Schema.Boolean
}).annotations({ identifier: "TrialBalance" })
export type TrialBalance = typeof TrialBalance.Type

export const JournalLineView = Schema.Struct({
  account: LedgerAccount,
  currency: Schema.String,
  debit: Schema.String,
  credit: Schema.String
})
export const JournalEntry = Schema.Struct({
  id: JournalId,
  object: Schema.Literal("journal_entry"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  kind: Schema.Literal("payment", "refund", "adjustment"),
  payment_id: Schema.NullOr(PaymentId),
  refund_id: Schema.NullOr(RefundId),
  memo: Schema.NullOr(Schema.String),
  lines: Schema.Array(JournalLineView),
  created_at: Schema.String
}).annotations({ identifier: "JournalEntry" })
export type JournalEntry = typeof JournalEntry.Type

export const JournalListParams = Schema.Struct({ ...ListParams.fields, livemode: Livemode })
export type JournalListParams = typeof JournalListParams.Type

export const LedgerLine = Schema.Struct({
  entry_id: JournalId,
  date: Schema.String,
  account: LedgerAccount,
  currency: Schema.String,
  debit: Schema.String,
  credit: Schema.String,
  balance: Schema.String.annotations({ description: "The account's running balance in the currency (debit − credit), from the store's first entry" }),
  payment_id: Schema.NullOr(PaymentId),
  refund_id: Schema.NullOr(RefundId),
  memo: Schema.NullOr(Schema.String),
  created_at: Schema.String
})
export const Ledger = Schema.Struct({
  object: Schema.Literal("ledger"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  from: Schema.String,
  to: Schema.String,
  data: Schema.Array(LedgerLine)
}).annotations({ identifier: "Ledger" })
export type Ledger = typeof Ledger.Type

export const MismatchKinds = [
  "missing_payment_entry",
  "payment_entry_mismatch",
  "missing_refund_entry",
  "refund_entry_mismatch",
  "entry_without_source",
  "unbalanced_entry"
] as const
export const Mismatch = Schema.Struct({
  kind: Schema.Literal(...MismatchKinds),
  store_id: StoreId,
  payment_id: Schema.optional(PaymentId),
  refund_id: Schema.optional(RefundId),
  entry_id: Schema.optional(JournalId),
  expected: Schema.String,
  actual: Schema.String
})
export type Mismatch = typeof Mismatch.Type
export const Reconciliation = Schema.Struct({
  object: Schema.Literal("reconciliation"),
  store_id: Schema.NullOr(StoreId),
  checked_payments: Schema.Number,
  checked_refunds: Schema.Number,
  mismatches: Schema.Array(Mismatch),
  ok: Schema.Boolean
}).annotations({ identifier: "Reconciliation" })
export type Reconciliation = typeof Reconciliation.Type

export const LedgerBackfill = Schema.Struct({
  object: Schema.Literal("ledger_backfill"),
  created: Schema.Number,
  skipped: Schema.Number
}).annotations({ identifier: "LedgerBackfill" })
export type LedgerBackfill = typeof LedgerBackfill.Type

// ---------------------------------------------------------------------------------------------
// Revenue shares
// ---------------------------------------------------------------------------------------------

export const Percent = Schema.String.pipe(
  Schema.pattern(/^\d{1,3}(\.\d{1,4})?$/, { message: () => "percent must be a decimal string such as \"12.5\", at most 4 decimals" }),
  Schema.filter((text) => (Number(text) > 0 && Number(text) <= 100) || "percent must be greater than 0 and at most 100", {
    jsonSchema: {}
  })
).annotations({ description: "A percentage of each paid payment, greater than 0 and at most 100", examples: ["12.5"] })

export const RevenueShare = Schema.Struct({
  id: RevenueShareId,
  object: Schema.Literal("revenue_share"),
  store_id: StoreId,
  party: Schema.String,
  percent: Schema.String,
  active: Schema.Boolean,
  created_at: Schema.String
}).annotations({ identifier: "RevenueShare" })
export type RevenueShare = typeof RevenueShare.Type

const Party = Schema.String.pipe(
  Schema.trimmed({ message: () => "party must not start or end with spaces" }),
  Schema.minLength(1, { message: () => "party must not be empty" }),
  Schema.maxLength(MAX_NAME_LENGTH, { message: () => `party must be at most ${MAX_NAME_LENGTH} characters` })
).annotations({ description: "Who receives the share (a partner, a franchisor)", examples: ["Mall landlord"] })

export const CreateRevenueShare = closed(Schema.Struct({
  party: Party,
  percent: Percent,
  active: Schema.optional(Schema.Boolean.annotations({ description: "Default true" }))
}), "RevenueShareDto")
export type CreateRevenueShare = typeof CreateRevenueShare.Type

export const UpdateRevenueShare = closed(Schema.Struct({
  party: Schema.optional(Party),
  percent: Schema.optional(Percent),
  active: Schema.optional(Schema.Boolean)
}), "UpdateRevenueShareDto")
export type UpdateRevenueShare = typeof UpdateRevenueShare.Type

export const DeletedRevenueShare = Schema.Struct({
  id: RevenueShareId,
  object: Schema.Literal("revenue_share"),
  deleted: Schema.Literal(true)
})

// ---------------------------------------------------------------------------------------------
// Risk
// ---------------------------------------------------------------------------------------------

export const RiskKinds = ["velocity", "large_amount", "refund_ratio", "referral_fraud"] as const
export const RiskKind = Schema.Literal(...RiskKinds)
export type RiskKind = typeof RiskKind.Type
export const RiskStatuses = ["open", "investigating", "resolved", "dismissed"] as const
export const RiskStatus = Schema.Literal(...RiskStatuses).annotations({
  description: "`open` → `investigating` → `resolved` or `dismissed`; a closed case stays closed"
})
export type RiskStatus = typeof RiskStatus.Type

export const RiskCase = Schema.Struct({
  id: RiskCaseId,
  object: Schema.Literal("risk_case"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  kind: RiskKind,
  subject: Schema.Struct({ type: Schema.String, id: Schema.String }),
  status: RiskStatus,
  resolution: Schema.NullOr(Schema.String),
  details: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "RiskCase" })
export type RiskCase = typeof RiskCase.Type

export const RiskCaseListParams = Schema.Struct({
  ...ListParams.fields,
  status: Schema.optional(RiskStatus),
  livemode: Livemode
})
export type RiskCaseListParams = typeof RiskCaseListParams.Type

export const RiskSummary = Schema.Struct({
  object: Schema.Literal("risk_summary"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  open: Schema.Number,
  investigating: Schema.Number,
  resolved: Schema.Number,
  dismissed: Schema.Number,
  total: Schema.Number
}).annotations({ identifier: "RiskSummary" })
export type RiskSummary = typeof RiskSummary.Type

export const UpdateRiskCase = closed(Schema.Struct({
  status: RiskStatus,
  resolution: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1, { message: () => "resolution must not be empty" }),
      Schema.maxLength(MAX_RESOLUTION_LENGTH, { message: () => `resolution must be at most ${MAX_RESOLUTION_LENGTH} characters` })
    )
  )
}), "UpdateCaseDto")
export type UpdateRiskCase = typeof UpdateRiskCase.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const StorePath = Schema.Struct({ storeId: StoreId })
const READ = "Needs analytics.read (Owner, Admin, Developer, Analyst)."
const ADMIN = "Platform admins only (403 for anyone else)."

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

export class LedgerGroup extends HttpApiGroup.make("ledger")
  .add(
    HttpApiEndpoint.get("trialBalance", "/dashboard/stores/:storeId/ledger/trial-balance")
      .setPath(StorePath)
      .setUrlParams(ModeParams)
      .addSuccess(TrialBalance)
      .annotate(OpenApi.Summary, "Account balances and zero-sum check")
      .annotate(OpenApi.Description, "Debits, credits and balance of each account per currency; `balanced` is true when debits equal credits in every currency. " + READ)
  )
  .add(
    HttpApiEndpoint.get("journals", "/dashboard/stores/:storeId/ledger/journals")
      .setPath(StorePath)
      .setUrlParams(JournalListParams)
      .addSuccess(ListOf(JournalEntry))
      .annotate(OpenApi.Summary, "Recent journal entries")
      .annotate(OpenApi.Description, "The store's journal entries with their lines, newest first, by cursor. " + READ)
  )
  .add(
    HttpApiEndpoint.get("reconcile", "/dashboard/stores/:storeId/ledger/reconcile")
      .setPath(StorePath)
      .addSuccess(Reconciliation)
      .annotate(OpenApi.Summary, "Run reconciliation")
      .annotate(
        OpenApi.Description,
        "Checks that every paid payment and every refund of the store (both modes) has exactly the entry it " +
          "should — the right accounts and amounts, revenue shares included — and that every entry is balanced " +
          "and refers to a payment or refund that exists. Lists each mismatch; `ok` when there is none. Reads only. " + READ
      )
  )
  .add(
    HttpApiEndpoint.get("ledger", "/dashboard/stores/:storeId/ledger")
      .setPath(StorePath)
      .setUrlParams(RangeParams)
      .addSuccess(Ledger)
      .annotate(OpenApi.Summary, "Derived accounting ledger over a date range")
      .annotate(
        OpenApi.Description,
        "The journal lines of entries made from `from` to `to` (UTC days, inclusive, at most 366; default the " +
          "last 30), oldest first, each with its account's running balance in its currency counted from the " +
          "store's first entry. " + READ
      )
  )
  .add(
    HttpApiEndpoint.get("platformTrialBalance", "/dashboard/admin/ledger/trial-balance")
      .setUrlParams(ModeParams)
      .addSuccess(TrialBalance)
      .annotate(OpenApi.Summary, "Platform trial balance (admin)")
      .annotate(OpenApi.Description, "The trial balance over every store. " + ADMIN)
  )
  .add(
    HttpApiEndpoint.get("platformReconcile", "/dashboard/admin/ledger/reconcile")
      .addSuccess(Reconciliation)
      .annotate(OpenApi.Summary, "Platform-wide reconciliation (admin)")
      .annotate(OpenApi.Description, "Reconciliation over every store. " + ADMIN)
  )
  .add(
    HttpApiEndpoint.post("backfill", "/dashboard/admin/ledger/backfill")
      .addSuccess(LedgerBackfill, { status: 201 })
      .annotate(OpenApi.Summary, "Backfill ledger from historical records (admin, idempotent)")
      .annotate(
        OpenApi.Description,
        "Posts the missing entry of every paid payment and refund that has none (as the payment engine would " +
          "have, with the revenue shares active now). An entry is unique per payment and per refund, so a " +
          "second run — or two at once — creates nothing twice: `created` counts what this run posted, " +
          "`skipped` what already had its entry. " + ADMIN
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Ledger")
  .annotate(OpenApi.Description, "The double-entry ledger: journals, trial balance and reconciliation with payments.")
{}

const MANAGE_SHARES = "Needs marketing.manage (Owner, Admin)."

export class RevenueSharesGroup extends HttpApiGroup.make("revenueShares")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/revenue-shares")
      .setPath(StorePath)
      .setUrlParams(ListParams)
      .addSuccess(ListOf(RevenueShare))
      .annotate(OpenApi.Summary, "List revenue-share agreements")
      .annotate(OpenApi.Description, "Newest first. " + READ)
  )
  .add(
    HttpApiEndpoint.post("create", "/dashboard/stores/:storeId/revenue-shares")
      .setPath(StorePath)
      .setPayload(CreateRevenueShare)
      .addSuccess(RevenueShare, { status: 201 })
      .annotate(OpenApi.Summary, "Create a revenue share")
      .annotate(
        OpenApi.Description,
        "From the next paid payment on, `percent` of each paid payment (floored to the minor unit) moves from " +
          "`merchant_payable` to `revenue_share_payable` in the payment's journal entry; a refund moves the " +
          "refunded share back. The active shares of a store sum to at most 100 (409 `invalid_state` beyond, " +
          "also when two creates race). " + MANAGE_SHARES
      )
  )
  .add(
    HttpApiEndpoint.put("update", "/dashboard/revenue-shares/:shareId")
      .setPath(Schema.Struct({ shareId: RevenueShareId }))
      .setPayload(UpdateRevenueShare)
      .addSuccess(RevenueShare)
      .annotate(OpenApi.Summary, "Update a revenue share")
      .annotate(OpenApi.Description, "Any of `party`, `percent`, `active`; the 100 % rule holds. Entries already posted stay. " + MANAGE_SHARES)
  )
  .add(
    HttpApiEndpoint.del("delete", "/dashboard/revenue-shares/:shareId")
      .setPath(Schema.Struct({ shareId: RevenueShareId }))
      .addSuccess(DeletedRevenueShare)
      .annotate(OpenApi.Summary, "Delete a revenue share")
      .annotate(OpenApi.Description, "It stops applying to payments paid from now on; entries already posted stay. " + MANAGE_SHARES)
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Revenue shares")
  .annotate(OpenApi.Description, "Splits of a store's payments with partners.")
{}

export class RiskGroup extends HttpApiGroup.make("risk")
  .add(
    HttpApiEndpoint.get("cases", "/dashboard/stores/:storeId/risk/cases")
      .setPath(StorePath)
      .setUrlParams(RiskCaseListParams)
      .addSuccess(ListOf(RiskCase))
      .annotate(OpenApi.Summary, "List risk cases")
      .annotate(
        OpenApi.Description,
        "Newest first, optionally of one `status`. Cases are opened by the risk rules as payments, refunds and " +
          "referrals happen: `velocity` (a customer with more than `risk_velocity_max` (5) paid payments in 10 " +
          "minutes), `large_amount` (a payment above `risk_large_amount_usd` (1000.00) / `risk_large_amount_khr` " +
          "(4000000)), `refund_ratio` (the store's refunds over its paid amount in 24 h above `risk_refund_ratio` " +
          "(0.5)), `referral_fraud` (a flagged referral) — thresholds are platform settings; never " +
          "a second open case for the same subject and kind. " + READ
      )
  )
  .add(
    HttpApiEndpoint.get("summary", "/dashboard/stores/:storeId/risk/summary")
      .setPath(StorePath)
      .setUrlParams(ModeParams)
      .addSuccess(RiskSummary)
      .annotate(OpenApi.Summary, "Case counts by status")
      .annotate(OpenApi.Description, READ)
  )
  .add(
    HttpApiEndpoint.put("update", "/dashboard/risk/cases/:caseId")
      .setPath(Schema.Struct({ caseId: RiskCaseId }))
      .setPayload(UpdateRiskCase)
      .addSuccess(RiskCase)
      .annotate(OpenApi.Summary, "Update a risk case")
      .annotate(
        OpenApi.Description,
        "Moves: open → investigating, resolved, dismissed; investigating → resolved, dismissed. `resolved` and " +
          "`dismissed` need a `resolution`. Any other move (a closed case reopened) is 409 `invalid_state`. " +
          "Needs risk.manage (Owner, Admin)."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Risk")
  .annotate(OpenApi.Description, "Risk cases opened by rules on payments, and their review.")
{}
