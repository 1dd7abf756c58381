/**
 * Billing of the current store's organization: the plan, this month's usage against its limits (a warning
 * from 80 %), the plans to change to, and a paid plan's invoice shown as its KHQR, followed until it is paid.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { Billing, Plan, SubscriptionInvoice } from "../../../../../domain/Billing.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, formatAmount, formatTime, Loading } from "../../ui.tsx"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { QrImage } from "../../ui/QrImage.tsx"
import { useWorkspace } from "../../workspace.tsx"

const USAGE: ReadonlyArray<{ readonly usage: keyof Billing["usage"]; readonly limit: keyof Plan["limits"]; readonly label: string }> = [
  { usage: "payments_this_month", limit: "payments_per_month", label: "Payments this month" },
  { usage: "stores", limit: "stores", label: "Stores" },
  { usage: "team_members", limit: "team_members", label: "Team members" }
]

/** From this share of a limit on, the usage is shown as a warning (as the server warns). */
const WARNING_SHARE = 0.8

export const BillingPage = () => {
  const { livemode, store } = useWorkspace()
  const organizationId = store!.organization_id as never
  const queryClient = useQueryClient()
  const billing = useConsoleQuery(["billing", organizationId], (client) => client.GetBilling({ organization_id: organizationId }))
  const plans = useConsoleQuery(["plans"], (client) => client.ListPlans())
  const [invoiceId, setInvoiceId] = useState<string | undefined>(undefined)
  // An open invoice is read again every two seconds, so its status changes on screen when it is paid.
  const invoices = useConsoleQuery(["billing-invoices", organizationId], (client) => client.ListSubscriptionInvoices({ organization_id: organizationId }), {
    refetchIntervalMs: invoiceId === undefined ? false : 2000
  })
  const invoice = invoices.data?.data.find((candidate) => candidate.id === invoiceId) ??
    invoices.data?.data.find((candidate) => candidate.status === "open")
  useEffect(() => {
    if (invoiceId === undefined && invoice?.status === "open") setInvoiceId(invoice.id)
    if (invoice?.status === "paid") void queryClient.invalidateQueries({ queryKey: ["billing", organizationId] })
  }, [invoice?.id, invoice?.status])
  const change = useConsoleMutation((client, planId: string) => client.ChangePlan({ organization_id: organizationId, plan_id: planId }), {
    onSuccess: (answer) => {
      if (answer.object === "subscription_invoice") {
        setInvoiceId(answer.id)
        queryClient.setQueryData(["billing-invoices", organizationId], (previous: { data: ReadonlyArray<SubscriptionInvoice> } | undefined) =>
          previous === undefined ? previous : { ...previous, data: [answer, ...previous.data.filter((candidate) => candidate.id !== answer.id)] })
      } else {
        setInvoiceId(undefined)
        queryClient.setQueryData(["billing", organizationId], answer)
      }
      void queryClient.invalidateQueries({ queryKey: ["billing-invoices", organizationId] })
    }
  })
  const current = billing.data
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Billing</h1>
          <p className="muted">Your plan, what you have used of it this month, and its invoices, paid by KHQR.</p>
        </div>
      </div>
      <PermissionNote permission="billing.manage" />
      {billing.error ? <div className="alert alert-error" role="alert">{billing.error.message}</div> : null}
      {current === undefined ? (billing.isPending ? <Loading /> : null) : (
        <>
          {current.warnings.map((warning) => <div key={warning} className="alert alert-warning" role="note">{warning}. Change plan before you reach the limit.</div>)}
          <section className="card" aria-labelledby="plan-title">
            <div className="card-header">
              <h2 id="plan-title">{current.plan.name} plan</h2>
              <span className="badge badge-paid">{current.subscription.status}</span>
            </div>
            <p className="muted">
              {current.plan.price.amount === "0.00" ? "Free" : `${formatAmount(current.plan.price.amount, "USD")} a month`}
              {current.subscription.current_period_end === null ? "" : ` · renews ${formatTime(current.subscription.current_period_end)}`}
            </p>
            <div className="usage-list">
              {USAGE.map((row) => {
                const used = current.usage[row.usage]
                const limit = current.plan.limits[row.limit]
                const share = limit === 0 ? 1 : used / limit
                return (
                  <div key={row.usage} className={`usage${share >= WARNING_SHARE ? " usage-warning" : ""}`}>
                    <div className="usage-label"><span>{row.label}</span><span className="mono">{used} / {limit}</span></div>
                    <progress value={Math.min(used, limit)} max={limit} aria-label={`${row.label}: ${used} of ${limit}`} />
                  </div>
                )
              })}
            </div>
          </section>
        </>
      )}
      {invoice === undefined || invoice.id !== invoiceId ? null : <InvoiceCard invoice={invoice} testMode={!livemode} />}
      {change.error ? <div className="alert alert-error" role="alert">{change.error.message}</div> : null}
      <section className="card table-card" aria-labelledby="plans-title">
        <h2 id="plans-title" className="card-title">Plans</h2>
        {plans.isPending ? <Loading /> : (
          <table className="table">
            <caption className="visually-hidden">Plans and their limits</caption>
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">Price</th>
                <th scope="col" className="hide-narrow">Payments a month</th>
                <th scope="col" className="hide-narrow">Stores</th>
                <th scope="col" className="hide-narrow">Members</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {plans.data?.data.map((plan) => (
                <tr key={plan.id}>
                  <td>{plan.name}</td>
                  <td>{plan.price.amount === "0.00" ? "Free" : `${formatAmount(plan.price.amount, "USD")}/month`}</td>
                  <td className="hide-narrow">{plan.limits.payments_per_month.toLocaleString("en-US")}</td>
                  <td className="hide-narrow">{plan.limits.stores}</td>
                  <td className="hide-narrow">{plan.limits.team_members}</td>
                  <td className="row-actions">
                    {current?.plan.id === plan.id
                      ? <span className="muted">Current plan</span>
                      : (
                        <PermittedButton permission="billing.manage" organizationId={organizationId} busy={change.isPending && change.variables === plan.id} onClick={() => change.mutate(plan.id)}>
                          Switch to {plan.name}
                        </PermittedButton>
                      )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  )
}

const InvoiceCard = ({ invoice, testMode }: { readonly invoice: SubscriptionInvoice; readonly testMode: boolean }) => {
  const queryClient = useQueryClient()
  const pay = useConsoleMutation((client, _: void) => client.SimulateInvoicePayment({ id: invoice.id }), {
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["billing-invoices", invoice.org_id] })
  })
  return (
    <section className="card invoice-card" aria-labelledby="invoice-title" data-invoice-status={invoice.status}>
      <div className="card-header">
        <h2 id="invoice-title">Invoice {formatAmount(invoice.amount, invoice.currency)}</h2>
        <span className={`badge ${invoice.status === "paid" ? "badge-paid" : invoice.status === "void" ? "badge-expired" : "badge-pending"}`} role="status">
          {invoice.status === "paid" ? "Paid" : invoice.status === "void" ? "Void" : "Waiting for payment"}
        </span>
      </div>
      {invoice.status === "open"
        ? (
          <div className="invoice-body">
            <QrImage payload={invoice.qr.payload} alt={`KHQR code of invoice ${invoice.id}`} />
            <div>
              <p>Scan this KHQR with your banking app to pay the {invoice.plan_id.charAt(0).toUpperCase() + invoice.plan_id.slice(1)} plan. The new plan starts as soon as it is paid; this page updates by itself.</p>
              <p className="muted small mono">{invoice.id}</p>
              <p><a href={invoice.checkout_url} target="_blank" rel="noopener noreferrer">Open the payment page</a></p>
              {testMode
                ? (
                  <>
                    {pay.error ? <div className="alert alert-error" role="alert">{pay.error.message}</div> : null}
                    <Button onClick={() => pay.mutate()} busy={pay.isPending}>Simulate payment (test)</Button>
                  </>
                )
                : null}
            </div>
          </div>
        )
        : <p className="muted">{invoice.status === "paid" ? `Paid ${formatTime(invoice.paid_at)}. Your plan is active.` : "This invoice was replaced by a newer one."}</p>}
    </section>
  )
}
