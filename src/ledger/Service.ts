/**
 * Ledger reports: trial balances (a store's, the platform's), journal pages, the ledger over a range,
 * reconciliation of the journal against payments and refunds, and the backfill of missing entries.
 */
import { Effect } from "effect"
import type { RangeParams } from "../../domain/Analytics.ts"
import type {
  JournalEntry,
  JournalListParams,
  Ledger,
  LedgerBackfill,
  Mismatch,
  Reconciliation,
  TrialBalance
} from "../../domain/Ledger.ts"
import { Currencies } from "../../domain/Money.ts"
import type { StoreId } from "../../domain/Ids.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { newId } from "../platform/Ids.ts"
import { formatAmount } from "../platform/Money.ts"
import { pageAfter } from "../platform/Pagination.ts"
import { dayRange } from "../platform/Days.ts"
import { paymentLines, refundLines, shareReversalOf } from "./Postings.ts"
import { type AccountTotal, LedgerRepo, type MissingPosting, type Scope } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

/** The most lines one ledger answer holds; a longer range is to be narrowed. */
export const MAX_LEDGER_LINES = 10_000

const trialBalanceOf = (scope: Scope, livemode: boolean, totals: ReadonlyArray<AccountTotal>): TrialBalance => {
  const sums = { USD: { debit: 0n, credit: 0n }, KHR: { debit: 0n, credit: 0n } }
  for (const row of totals) {
    sums[row.currency].debit += row.debit
    sums[row.currency].credit += row.credit
  }
  return {
    object: "trial_balance",
    store_id: scope,
    livemode,
    accounts: totals.map((row) => ({
      account: row.account,
      currency: row.currency,
      debit: formatAmount(row.debit, row.currency),
      credit: formatAmount(row.credit, row.currency),
      balance: formatAmount(row.debit - row.credit, row.currency)
    })),
    totals: {
      USD: { debit: formatAmount(sums.USD.debit, "USD"), credit: formatAmount(sums.USD.credit, "USD") },
      KHR: { debit: formatAmount(sums.KHR.debit, "KHR"), credit: formatAmount(sums.KHR.credit, "KHR") }
    },
    balanced: Currencies.every((currency) => sums[currency].debit === sums[currency].credit)
  }
}

export class LedgerService extends Effect.Service<LedgerService>()("ledger/LedgerService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* LedgerRepo)
    const access = yield* AccessService

    const readableStore = <A, E, R>(storeId: StoreId, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, "analytics.read", use))

    const trialBalance = traced("Ledger.trialBalance")(function*(storeId: StoreId, livemode = false) {
      return yield* readableStore(storeId, (store) =>
        Effect.gen(function*() {
          return trialBalanceOf(store.storeId, livemode, yield* repo.accountTotals(store.storeId, livemode))
        }))
    })

    const platformTrialBalance = traced("Ledger.platformTrialBalance")(function*(livemode = false) {
      return yield* access.withPlatformAdmin(() =>
        Effect.gen(function*() {
          return trialBalanceOf(null, livemode, yield* repo.accountTotals(null, livemode))
        }))
    })

    const journals = traced("Ledger.journals")(function*(storeId: StoreId, params: JournalListParams) {
      return yield* readableStore(storeId, (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const page = yield* pageAfter(params, (position) => repo.entriesPage(store.storeId, livemode, params.limit, position))
          const lines = yield* repo.linesOf(page.data.map((entry) => entry.id))
          const data: Array<JournalEntry> = page.data.map((entry) => ({
            id: entry.id,
            object: "journal_entry",
            store_id: entry.store_id,
            livemode: entry.livemode,
            kind: entry.kind,
            payment_id: entry.payment_id,
            refund_id: entry.refund_id,
            memo: entry.memo,
            lines: lines.filter((line) => line.entry_id === entry.id).map((line) => ({
              account: line.account,
              currency: entry.currency,
              debit: formatAmount(line.debit, entry.currency),
              credit: formatAmount(line.credit, entry.currency)
            })),
            created_at: entry.created_at.toISOString()
          }))
          return { ...page, data }
        }))
    })

    const ledger = traced("Ledger.ledger")(function*(storeId: StoreId, params: RangeParams) {
      return yield* readableStore(storeId, (store) =>
        Effect.gen(function*() {
          const range = yield* dayRange(params)
          const livemode = params.livemode ?? false
          const rows = yield* repo.ledgerLines({
            storeId: store.storeId,
            livemode,
            from: range.start,
            until: range.end,
            limit: MAX_LEDGER_LINES
          })
          return {
            object: "ledger",
            store_id: store.storeId,
            livemode,
            from: range.from,
            to: range.to,
            data: rows.map((row) => ({
              entry_id: row.entry_id,
              date: row.created_at.toISOString().slice(0, 10),
              account: row.account,
              currency: row.currency,
              debit: formatAmount(row.debit, row.currency),
              credit: formatAmount(row.credit, row.currency),
              balance: formatAmount(row.balance, row.currency),
              payment_id: row.payment_id,
              refund_id: row.refund_id,
              memo: row.memo,
              created_at: row.created_at.toISOString()
            }))
          } satisfies Ledger
        }))
    })

    /** Every paid payment and refund against its entry, and every entry against its lines and source. */
    const reconcileScope = (scope: Scope) =>
      Effect.gen(function*() {
        const payments = yield* repo.paymentPostings(scope)
        const refunds = yield* repo.refundPostings(scope)
        const unsound = yield* repo.unsoundEntries(scope)
        const mismatches: Array<Mismatch> = []
        for (const payment of payments) {
          const amount = formatAmount(payment.amount, payment.currency)
          const expected = `provider_clearing debit ${amount}, merchant_payable credit ${amount}, shares moved out of merchant_payable`
          if (payment.entry_id === null) {
            mismatches.push({ kind: "missing_payment_entry", store_id: payment.store_id, payment_id: payment.id, expected, actual: "no entry" })
          } else if (
            payment.clearing_debit !== payment.amount || payment.payable_credit !== payment.amount ||
            payment.payable_debit !== payment.shared_credit
          ) {
            mismatches.push({
              kind: "payment_entry_mismatch",
              store_id: payment.store_id,
              payment_id: payment.id,
              entry_id: payment.entry_id,
              expected,
              actual: `provider_clearing debit ${formatAmount(payment.clearing_debit, payment.currency)}, merchant_payable credit ` +
                `${formatAmount(payment.payable_credit, payment.currency)}, shares ${formatAmount(payment.payable_debit, payment.currency)} ` +
                `out of merchant_payable and ${formatAmount(payment.shared_credit, payment.currency)} into revenue_share_payable`
            })
          }
        }
        for (const refund of refunds) {
          const amount = formatAmount(refund.amount, refund.currency)
          const expected = `refunds debit ${amount}, provider_clearing credit ${amount}`
          if (refund.entry_id === null) {
            mismatches.push({
              kind: "missing_refund_entry",
              store_id: refund.store_id,
              payment_id: refund.payment_id,
              refund_id: refund.id,
              expected,
              actual: "no entry"
            })
          } else if (refund.refunds_debit !== refund.amount || refund.clearing_credit !== refund.amount) {
            mismatches.push({
              kind: "refund_entry_mismatch",
              store_id: refund.store_id,
              payment_id: refund.payment_id,
              refund_id: refund.id,
              entry_id: refund.entry_id,
              expected,
              actual: `refunds debit ${formatAmount(refund.refunds_debit, refund.currency)}, provider_clearing credit ` +
                formatAmount(refund.clearing_credit, refund.currency)
            })
          }
        }
        for (const entry of unsound) {
          const source = {
            ...(entry.payment_id === null ? {} : { payment_id: entry.payment_id }),
            ...(entry.refund_id === null ? {} : { refund_id: entry.refund_id })
          }
          if (!entry.source_exists) {
            mismatches.push({
              kind: "entry_without_source",
              store_id: entry.store_id,
              entry_id: entry.id,
              ...source,
              expected: `an existing ${entry.kind === "payment" ? "paid payment" : entry.kind}`,
              actual: "none"
            })
          }
          if (entry.debit !== entry.credit || entry.debit === 0n) {
            mismatches.push({
              kind: "unbalanced_entry",
              store_id: entry.store_id,
              entry_id: entry.id,
              ...source,
              expected: "debits equal credits, and at least one line",
              actual: `debits ${formatAmount(entry.debit, entry.currency)}, credits ${formatAmount(entry.credit, entry.currency)}`
            })
          }
        }
        return {
          object: "reconciliation",
          store_id: scope,
          checked_payments: payments.length,
          checked_refunds: refunds.length,
          mismatches,
          ok: mismatches.length === 0
        } satisfies Reconciliation
      })

    const reconcile = traced("Ledger.reconcile")(function*(storeId: StoreId) {
      return yield* readableStore(storeId, (store) => reconcileScope(store.storeId))
    })

    const platformReconcile = traced("Ledger.platformReconcile")(function*() {
      return yield* access.withPlatformAdmin(() => reconcileScope(null))
    })

    const linesOfMissing = (posting: MissingPosting) =>
      posting.kind === "payment"
        ? Effect.map(repo.sharePercents(posting.store_id), (percents) => paymentLines(posting.amount, percents))
        : Effect.map(repo.paymentPostings(posting.store_id), (payments) => {
          const payment = payments.find((row) => row.id === posting.payment_id)
          return refundLines(
            posting.amount,
            shareReversalOf({
              paymentAmount: posting.payment_amount,
              sharedTotal: payment?.shared_credit ?? 0n,
              refundedBefore: posting.refunded_before,
              amount: posting.amount
            })
          )
        })

    const backfill = traced("Ledger.backfill")(function*() {
      return yield* access.withPlatformAdmin(() =>
        Effect.gen(function*() {
          const postable = yield* repo.countPostable
          const missing = yield* repo.missingPostings
          let created = 0
          // Payments first (the list is by time, and a payment is paid before it is refunded): a refund's
          // share reversal reads what its payment's entry moved.
          for (const posting of missing) {
            const posted = yield* repo.postOnce({
              id: newId("je"),
              posting,
              memo: posting.kind === "payment"
                ? `payment ${posting.payment_id} paid (backfilled)`
                : `refund ${posting.id} of payment ${posting.payment_id} (backfilled)`,
              lines: yield* linesOfMissing(posting)
            })
            if (posted) created++
          }
          return { object: "ledger_backfill", created, skipped: postable - created } satisfies LedgerBackfill
        }))
    })

    return { trialBalance, platformTrialBalance, journals, ledger, reconcile, platformReconcile, backfill } as const
  }),
  dependencies: [LedgerRepo.Default, AccessService.Default]
}) {}
