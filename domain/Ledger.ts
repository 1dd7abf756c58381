/**
 * Ledger reports (API.md "Analytics, ledger, revenue shares, risk"): the double-entry journal, trial
 * balances, the ledger over a range and reconciliation with payments. Console routes, with a user session
 * and analytics.read; the `/dashboard/admin/…` routes are for platform admins.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Livemode, ModeParams, RangeParams } from "./Analytics.ts"
import { authenticated } from "./Auth.ts"
import { InvalidRequestResponse, NotFoundResponse } from "./Errors.ts"
import { JournalId, PaymentId, RefundId, StoreId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"

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

const StorePath = Schema.Struct({ storeId: StoreId })
const READ = "Needs analytics.read (Owner, Admin, Developer, Analyst)."
const ADMIN = "Platform admins only (403 for anyone else)."

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
