/**
 * Ledger: the trial balance of the store's accounts, its journal entries page by page, and the
 * reconciliation of the ledger with payments and refunds, every mismatch linked to its payment.
 */
import type { Effect } from "effect"
import { useState } from "react"
import type { ConsoleClientShape } from "../../../../../domain/ConsoleClient.ts"
import type { Mismatch, Reconciliation, TrialBalance } from "../../../../../domain/Ledger.ts"
import { fromMinor, toMinor } from "../../money.ts"
import { Link } from "../../router.tsx"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Empty, formatAmount, formatTime, Loading } from "../../ui.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"
import { Pager, useCursorTrail } from "../../ui/Paging.tsx"
import { PaymentName } from "../../ui/PaymentName.tsx"
import { useWorkspace } from "../../workspace.tsx"

const ACCOUNT_LABELS: Record<string, string> = {
  provider_clearing: "Provider clearing",
  merchant_payable: "Merchant payable",
  refunds: "Refunds",
  revenue_share_payable: "Revenue shares payable"
}
export const accountLabel = (account: string) => ACCOUNT_LABELS[account] ?? account

/** An amount of the ledger; a zero side is left blank, as on a printed trial balance. */
const side = (amount: string, currency: string) => (Number(amount) === 0 ? "" : formatAmount(amount, currency))

export const LedgerPage = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const balance = useConsoleQuery(["trial-balance", storeId, livemode], (client) => client.TrialBalance({ store_id: storeId, livemode }))
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Ledger</h1>
          <p className="muted">Double-entry bookkeeping of every paid payment, refund and revenue share, {livemode ? "live" : "test"} mode.</p>
        </div>
      </div>
      <ErrorNotice error={balance.error} />
      {balance.isPending ? <Loading /> : balance.data === undefined ? null : <TrialBalanceCard balance={balance.data} />}
      <ReconciliationCard run={(client) => client.Reconcile({ store_id: storeId })} />
      <JournalsCard />
    </div>
  )
}

export const TrialBalanceCard = ({ balance }: { readonly balance: TrialBalance }) => (
  <section className="card table-card" aria-labelledby="trial-title">
    <div className="card-header">
      <h2 id="trial-title">Trial balance</h2>
      {balance.balanced
        ? <span className="badge badge-paid">Balanced</span>
        : <span className="badge badge-failed">Out of balance</span>}
    </div>
    {balance.accounts.length === 0 ? <Empty title="No entries yet"><p>Entries are posted as payments are paid and refunded.</p></Empty> : (
      <table className="table">
        <caption className="visually-hidden">Debits, credits and balance of each account per currency</caption>
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col" className="hide-narrow">Debit</th>
            <th scope="col" className="hide-narrow">Credit</th>
            <th scope="col">Balance</th>
          </tr>
        </thead>
        <tbody>
          {balance.accounts.map((row) => (
            <tr key={`${row.account}-${row.currency}`}>
              <td>{accountLabel(row.account)} <span className="muted small">{row.currency}</span></td>
              <td className="hide-narrow">{side(row.debit, row.currency)}</td>
              <td className="hide-narrow">{side(row.credit, row.currency)}</td>
              <td>{formatAmount(row.balance, row.currency)}</td>
            </tr>
          ))}
          {(["USD", "KHR"] as const).map((currency) => (
            <tr key={currency} className="total-row">
              <th scope="row">Total {currency}</th>
              <td className="hide-narrow">{formatAmount(balance.totals[currency].debit, currency)}</td>
              <td className="hide-narrow">{formatAmount(balance.totals[currency].credit, currency)}</td>
              <td>{formatAmount(fromMinor(toMinor(balance.totals[currency].debit, currency) - toMinor(balance.totals[currency].credit, currency), currency), currency)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </section>
)

const MISMATCH_LABELS: Record<Mismatch["kind"], string> = {
  missing_payment_entry: "Paid payment without an entry",
  payment_entry_mismatch: "Payment entry differs from the payment",
  missing_refund_entry: "Refund without an entry",
  refund_entry_mismatch: "Refund entry differs from the refund",
  entry_without_source: "Entry without a payment or refund",
  unbalanced_entry: "Entry out of balance"
}

/**
 * Where a mismatch can be looked into: its payment, by the merchant's reference and amount (a refund's payment
 * is not known here, so its id is shown). Across stores (the platform's view) the payment's store is not the
 * reader's, so its id is linked as it is.
 */
const MismatchSubject = ({ mismatch, acrossStores }: { readonly mismatch: Mismatch; readonly acrossStores: boolean }) => (
  <>
    {mismatch.payment_id === undefined
      ? null
      : acrossStores
      ? <Link to={`/payments/${mismatch.payment_id}`}>{mismatch.payment_id}</Link>
      : <PaymentName id={mismatch.payment_id} />}
    {mismatch.refund_id === undefined ? null : <span className="mono small"> refund {mismatch.refund_id}</span>}
    {mismatch.entry_id === undefined ? null : <span className="mono small"> entry {mismatch.entry_id}</span>}
  </>
)

export const ReconciliationCard = <E,>(props: {
  readonly run: (client: ConsoleClientShape) => Effect.Effect<Reconciliation, E>
  readonly showStore?: boolean
}) => {
  const reconcile = useConsoleMutation((client, _: void) => props.run(client))
  const result: Reconciliation | undefined = reconcile.data
  return (
    <section className="card table-card" aria-labelledby="reconcile-title">
      <div className="card-header">
        <h2 id="reconcile-title">Reconciliation</h2>
        <Button onClick={() => reconcile.mutate()} busy={reconcile.isPending}>{result === undefined ? "Run reconciliation" : "Run again"}</Button>
      </div>
      <ErrorNotice error={reconcile.error} />
      {result === undefined
        ? <p className="muted card-note">Checks that every paid payment and refund has exactly the entry it should, and every entry is balanced. It only reads.</p>
        : result.ok
        ? (
          <div className="alert alert-success" role="status">
            All clear: {result.checked_payments} payments and {result.checked_refunds} refunds match the ledger.
          </div>
        )
        : (
          <>
            <div className="alert alert-error" role="alert">
              {result.mismatches.length} {result.mismatches.length === 1 ? "mismatch" : "mismatches"} among {result.checked_payments} payments and {result.checked_refunds} refunds.
            </div>
            <table className="table">
              <caption className="visually-hidden">Mismatches</caption>
              <thead>
                <tr>
                  <th scope="col">Problem</th>
                  <th scope="col">Payment or refund</th>
                  {props.showStore === true ? <th scope="col" className="hide-narrow">Store</th> : null}
                  <th scope="col" className="hide-narrow">Expected</th>
                  <th scope="col" className="hide-narrow">Found</th>
                </tr>
              </thead>
              <tbody>
                {result.mismatches.map((mismatch, index) => (
                  <tr key={index}>
                    <td>{MISMATCH_LABELS[mismatch.kind]}</td>
                    <td className="small break"><MismatchSubject mismatch={mismatch} acrossStores={props.showStore === true} /></td>
                    {props.showStore === true ? <td className="hide-narrow mono small">{mismatch.store_id}</td> : null}
                    <td className="hide-narrow small">{mismatch.expected}</td>
                    <td className="hide-narrow small">{mismatch.actual}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
    </section>
  )
}

const JournalsCard = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const trail = useCursorTrail([storeId, livemode])
  const journals = useConsoleQuery(["journals", storeId, livemode, trail.cursor], (client) =>
    client.LedgerJournals({ store_id: storeId, livemode, cursor: trail.cursor, limit: 20 }))
  const [open, setOpen] = useState<string | undefined>(undefined)
  return (
    <section className="card table-card" aria-labelledby="journals-title">
      <div className="card-header"><h2 id="journals-title">Journal entries</h2></div>
      <ErrorNotice error={journals.error} />
      {journals.isPending ? <Loading /> : (journals.data?.data.length ?? 0) === 0
        ? <Empty title="No journal entries yet"><p>Every paid payment and refund writes one. <Link to="/payments">Go to payments</Link> to take the first.</p></Empty>
        : (
          <table className="table wrapping-table">
            <caption className="visually-hidden">Journal entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Entry</th>
                <th scope="col">For</th>
                <th scope="col">Lines</th>
                <th scope="col" className="hide-narrow">Time</th>
              </tr>
            </thead>
            <tbody>
              {journals.data!.data.map((entry) => (
                <tr key={entry.id}>
                  <td>
                    <span className="badge">{entry.kind}</span>
                    <span className="mono small hide-narrow"> {entry.id}</span>
                  </td>
                  <td className="small break">
                    {entry.payment_id === null ? entry.memo ?? "—" : <PaymentName id={entry.payment_id} />}
                    {entry.refund_id === null ? null : <span className="id-text"> · {entry.refund_id}</span>}
                  </td>
                  <td>
                    <button type="button" className="link-button" aria-expanded={open === entry.id} onClick={() => setOpen(open === entry.id ? undefined : entry.id)}>
                      {entry.lines.length} lines<span className="visually-hidden"> of {entry.id}</span>
                    </button>
                    {open === entry.id ? (
                      <ul className="journal-lines">
                        {entry.lines.map((line, index) => (
                          <li key={index}>
                            {accountLabel(line.account)}: {Number(line.debit) === 0 ? `credit ${formatAmount(line.credit, line.currency)}` : `debit ${formatAmount(line.debit, line.currency)}`}
                          </li>
                        ))}
                      </ul>
                    ) : null}
                  </td>
                  <td className="hide-narrow nowrap">{formatTime(entry.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      <Pager trail={trail} page={journals.data} label="Journal pages" />
    </section>
  )
}
