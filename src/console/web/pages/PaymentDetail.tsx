/**
 * One payment: its amount and status, the KHQR as a QR image, the timeline (created, paid, refunds,
 * the end of an unpaid payment), the webhooks sent for it with their outcome, the refund dialog, and in
 * test mode the simulate actions.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useRef, useState } from "react"
import type { PaymentDetail } from "../../../../domain/Console.ts"
import { Link } from "../router.tsx"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery, useLiveFeed } from "../rpc.ts"
import { Button, CodeField, Dialog, Empty, Field, FormError, formatAmount, formatTime, Loading, newIdempotencyKey, StatusBadge } from "../ui.tsx"
import { DeliveryOutcome } from "../ui/DeliveryOutcome.tsx"
import { QrImage } from "../ui/QrImage.tsx"
import { remainingRefundable, toMinor } from "../money.ts"
import { PermittedButton } from "../ui/Permitted.tsx"
import { useWorkspace } from "../workspace.tsx"

const OPEN = ["pending", "scanned"]
const REFUNDABLE = ["paid", "partially_refunded"]

export const PaymentDetailPage = ({ id }: { readonly id: string }) => {
  const queryClient = useQueryClient()
  const detail = useConsoleQuery(["payment", id], (client) => client.PaymentDetail({ id: id as never }))
  const [refunding, setRefunding] = useState(false)
  const payment = detail.data?.payment
  const actionsRef = useRef<HTMLDivElement>(null)
  const headingRef = useRef<HTMLHeadingElement>(null)
  // The status a simulated step led to, said aloud; and the focus to place once its button has gone.
  const [simulated, setSimulated] = useState<string | undefined>(undefined)

  useLiveFeed(
    `payment:${payment?.store_id}:${payment?.livemode}`,
    payment === undefined ? undefined : (client) => client.PaymentFeed({ store_id: payment.store_id, livemode: payment.livemode }),
    (frame) => {
      if (frame._tag === "PaymentFeedSynced" || frame.id === id) void queryClient.invalidateQueries({ queryKey: ["payment", id] })
    }
  )

  const simulate = useConsoleMutation((client, status: "scanned" | "paid" | "failed") => client.SimulatePayment({ id: id as never, status }), {
    onSuccess: (updated) => {
      setSimulated(updated.status)
      queryClient.setQueryData<PaymentDetail>(["payment", id], (previous) => previous === undefined ? previous : { ...previous, payment: updated } as PaymentDetail)
      void queryClient.invalidateQueries({ queryKey: ["payments"] })
    }
  })

  // A simulated step removes the button that took it ("Simulate scan" once scanned, all of them once paid):
  // the focus goes to the next action the payment offers (or its heading), never back to the page's start.
  useEffect(() => {
    if (simulated === undefined || payment?.status !== simulated) return
    if (document.activeElement !== null && document.activeElement !== document.body) return
    const next = actionsRef.current?.querySelector<HTMLButtonElement>("button:not([disabled])")
    ;(next ?? headingRef.current)?.focus()
  }, [simulated, payment?.status])

  if (detail.isPending) return <div className="page"><Loading /></div>
  if (detail.error !== null || payment === undefined) {
    return (
      <div className="page">
        <p><Link to="/payments">← Payments</Link></p>
        <div className="alert alert-error" role="alert">{detail.error?.message ?? "No such payment"}</div>
      </div>
    )
  }

  const refunds = detail.data.refunds.data
  return (
    <div className="page">
      <p className="breadcrumb"><Link to="/payments">← Payments</Link></p>
      <div className="page-header">
        <div>
          <p className="muted mono">{payment.id}</p>
          <h1 className="amount-title" ref={headingRef} tabIndex={-1}>
            {formatAmount(payment.amount, payment.currency)} <StatusBadge status={payment.status} />
          </h1>
        </div>
        <div className="actions" ref={actionsRef}>
          {!payment.livemode && OPEN.includes(payment.status)
            ? (
              <>
                {payment.status === "pending" ? <PermittedButton permission="payment.write" onClick={() => simulate.mutate("scanned")} busy={simulate.isPending}>Simulate scan</PermittedButton> : null}
                <PermittedButton permission="payment.write" onClick={() => simulate.mutate("paid")} busy={simulate.isPending}>Simulate payment</PermittedButton>
                <PermittedButton permission="payment.write" kind="danger" onClick={() => simulate.mutate("failed")} busy={simulate.isPending}>Simulate failure</PermittedButton>
              </>
            )
            : null}
          {REFUNDABLE.includes(payment.status) ? <PermittedButton permission="payment.refund" kind="primary" onClick={() => setRefunding(true)}>Refund</PermittedButton> : null}
        </div>
      </div>
      <p className="visually-hidden" role="status">{simulated === undefined ? "" : `Simulated: the payment is now ${simulated.replace("_", " ")}`}</p>
      {simulate.error ? <div className="alert alert-error" role="alert">{simulate.error.message}</div> : null}
      <div className="detail-grid">
        <section className="card" aria-labelledby="timeline-title">
          <h2 id="timeline-title">Timeline</h2>
          <ol className="timeline">
            <li><span className="timeline-dot" aria-hidden="true" /><div><strong>Payment created</strong><p className="muted">{formatTime(payment.created_at)}</p></div></li>
            {payment.status === "scanned" ? <li><span className="timeline-dot" aria-hidden="true" /><div><strong>QR scanned</strong><p className="muted">Waiting for the customer to confirm</p></div></li> : null}
            {payment.paid_at === null ? null : (
              <li className="timeline-success"><span className="timeline-dot" aria-hidden="true" /><div><strong>Paid</strong><p className="muted">{formatTime(payment.paid_at)}</p></div></li>
            )}
            {["failed", "expired", "cancelled"].includes(payment.status)
              ? <li className="timeline-failure"><span className="timeline-dot" aria-hidden="true" /><div><strong>{payment.status[0]!.toUpperCase() + payment.status.slice(1)}</strong><p className="muted">{formatTime(payment.updated_at)}</p></div></li>
              : null}
            {[...refunds].reverse().map((refund) => (
              <li key={refund.id}>
                <span className="timeline-dot" aria-hidden="true" />
                <div>
                  <strong>Refunded {formatAmount(refund.amount, refund.currency)}</strong>
                  <p className="muted">{formatTime(refund.created_at)}{refund.reason === null ? "" : ` · ${refund.reason}`}</p>
                </div>
              </li>
            ))}
          </ol>
        </section>
        <section className="card qr-card" aria-labelledby="qr-title">
          <h2 id="qr-title">KHQR</h2>
          <QrImage payload={payment.qr.payload} alt="KHQR code of this payment" />
          <p className="muted small">Expires {formatTime(payment.expires_at)}</p>
          <a href={payment.checkout_url} target="_blank" rel="noopener noreferrer">Open the checkout page</a>
        </section>
        <section className="card" aria-labelledby="details-title">
          <h2 id="details-title">Details</h2>
          <dl className="details">
            <dt>Amount</dt><dd>{formatAmount(payment.amount, payment.currency)}</dd>
            <dt>Refunded</dt><dd>{formatAmount(payment.amount_refunded, payment.currency)}</dd>
            <dt>Reference</dt><dd className="mono">{payment.reference_id ?? "—"}</dd>
            <dt>Description</dt><dd>{payment.description ?? "—"}</dd>
            <dt>Mode</dt><dd>{payment.livemode ? "Live" : "Test"}</dd>
            <dt>Created</dt><dd>{formatTime(payment.created_at)}</dd>
          </dl>
        </section>
      </div>
      <PaymentDeliveries id={payment.id} />
      <RefundDialog open={refunding} onClose={() => setRefunding(false)} detail={detail.data} />
    </div>
  )
}

/** The webhook deliveries of this payment's events (and its refunds'), read again every few seconds while shown. */
const PaymentDeliveries = ({ id }: { readonly id: string }) => {
  const deliveries = useConsoleQuery(["payment-deliveries", id], (client) => client.PaymentWebhookDeliveries({ id: id as never }), {
    refetchIntervalMs: 5000
  })
  return (
    <section className="card table-card" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title" className="card-title">Webhooks sent</h2>
      {deliveries.error ? <div className="alert alert-error" role="alert">{deliveries.error.message}</div> : null}
      {deliveries.isPending ? <Loading /> : (deliveries.data?.length ?? 0) === 0
        ? <Empty title="No webhooks sent for this payment">Events go to the store's webhook endpoints as the payment changes.</Empty>
        : (
          <table className="table">
            <caption className="visually-hidden">Webhook deliveries of this payment, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Result</th>
                <th scope="col" className="hide-narrow">Attempt</th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data!.map((delivery) => (
                <tr key={delivery.id} data-delivery-id={delivery.id}>
                  <td className="mono"><Link to={`/webhooks/${delivery.endpoint_id}`}>{delivery.event_type}</Link></td>
                  <td><DeliveryOutcome delivery={delivery} /></td>
                  <td className="hide-narrow">{delivery.attempt}</td>
                  <td className="nowrap">{formatTime(delivery.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
    </section>
  )
}

const RefundDialog = ({ open, onClose, detail }: { readonly open: boolean; readonly onClose: () => void; readonly detail: PaymentDetail }) => {
  const queryClient = useQueryClient()
  const payment = detail.payment
  const remaining = remainingRefundable(payment)
  const [amount, setAmount] = useState(remaining)
  const [reason, setReason] = useState("")
  const [code, setCode] = useState("")
  const [needsCode, setNeedsCode] = useState(false)
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey)

  const refund = useConsoleMutation((client, _: void) =>
    client.RefundPayment({
      id: payment.id,
      ...(amount.trim() === remaining ? {} : { amount: amount.trim() }),
      ...(reason.trim() === "" ? {} : { reason: reason.trim() }),
      ...(needsCode ? { mfa_code: code.trim() } : {}),
      idempotency_key: idempotencyKey
    }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["payment", payment.id] })
      void queryClient.invalidateQueries({ queryKey: ["payments"] })
      onClose()
    }
  })

  useEffect(() => {
    if (open) {
      setAmount(remaining)
      setReason("")
      setCode("")
      setNeedsCode(false)
      refund.reset()
    }
  }, [open])
  // Changed values are another submission; a retry of the same values keeps its key, so it is made once.
  useEffect(() => setIdempotencyKey(newIdempotencyKey()), [amount, reason, code])
  useEffect(() => {
    if (refund.error?.code === "mfa_required" || refund.error?.param === "mfa_code") setNeedsCode(true)
  }, [refund.error])

  let tooMuch = false
  try {
    tooMuch = toMinor(amount.trim() || "0", payment.currency) > toMinor(remaining, payment.currency)
  } catch {
    tooMuch = false
  }
  const error: ConsoleFailure | null = refund.error
  return (
    <Dialog title="Refund payment" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        refund.mutate()
      }} noValidate>
        <div className="dialog-body">
          <p className="refund-remaining">
            Refundable: <strong>{formatAmount(remaining, payment.currency)}</strong> of {formatAmount(payment.amount, payment.currency)}
          </p>
          <FormError error={error?.code === "mfa_required" ? null : error} fields={["amount", "reason", "mfa_code"]} />
          <Field
            label={`Amount (${payment.currency})`}
            name="amount"
            value={amount}
            onChange={setAmount}
            inputMode="decimal"
            error={error}
            hint={tooMuch ? "More than what is left to refund." : "Leave the full amount for a full refund."}
            required
          />
          <Field label="Reason (optional)" name="reason" value={reason} onChange={setReason} error={error} placeholder="Requested by customer" />
          {needsCode
            ? (
              <CodeField
                name="mfa_code"
                value={code}
                onChange={setCode}
                error={error}
                hint="This refund needs a fresh code from your authenticator app."
                autoFocus
              />
            )
            : null}
        </div>
        <footer className="dialog-footer">
          <Button kind="secondary" onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={refund.isPending} disabled={tooMuch}>Refund</Button>
        </footer>
      </form>
    </Dialog>
  )
}
