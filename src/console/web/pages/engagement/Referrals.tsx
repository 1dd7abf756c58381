/**
 * Referrals: the program (points for both sides, commission rate and window, daily limit), the funnel,
 * the fraud review queue (clear or void with a note), every referral with its flags, and commissions with
 * totals per referrer and the payout.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { CommissionStatus, Referral, ReferralFlag } from "../../../../../domain/Referrals.ts"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatAmount, formatTime, Loading, newIdempotencyKey } from "../../ui.tsx"
import { CheckField, LoadError } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"
import { CustomerName } from "./CustomerName.tsx"
import { usePermission } from "../../permissions.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { PaymentName } from "../../ui/PaymentName.tsx"

const FLAG_LABELS: Record<ReferralFlag, string> = {
  self_referral: "Same e-mail, phone or id as the referrer",
  referrer_daily_limit: "Over the referrer's daily limit",
  converting_payment_refunded: "Converting payment refunded"
}
const STATUS_BADGES: Record<Referral["status"], string> = { pending: "badge-pending", converted: "badge-paid", flagged: "badge-failed", voided: "badge-expired" }
const COMMISSION_LABELS: Record<CommissionStatus, string> = { held: "Held", accrued: "Owed", paid: "Paid", voided: "Voided" }
const COMMISSION_BADGES: Record<CommissionStatus, string> = { held: "badge-refunded", accrued: "badge-pending", paid: "badge-paid", voided: "badge-expired" }
const STATUS_LABELS: Record<Referral["status"], string> = { pending: "Pending", converted: "Converted", flagged: "Flagged", voided: "Voided" }


const totals = (amounts: { readonly USD: string; readonly KHR: string }) =>
  `${formatAmount(amounts.USD, "USD")} · ${formatAmount(amounts.KHR, "KHR")}`

export const ReferralsPage = () => (
  <div className="page">
    <div className="page-header">
      <div>
        <h1>Referrals</h1>
        <p className="muted">Customers invite friends with their code; both earn points, the referrer a commission.</p>
      </div>
    </div>
    <PermissionNote permission="marketing.manage" />
    <FunnelCard />
    <ProgramCard />
    <ReviewQueue />
    <ReferralsTable />
    <CommissionsCard />
  </div>
)

const FunnelCard = () => {
  const { livemode, store } = useWorkspace()
  const report = useConsoleQuery(["referral-report", store!.id, livemode], (client) => client.ReferralReport({ store_id: store!.id, livemode }))
  if (report.error !== null) return <LoadError error={report.error} retry={() => void report.refetch()} />
  if (report.data === undefined) return <Loading />
  const { funnel } = report.data
  const steps = [
    { label: "Link visits", value: funnel.visits },
    { label: "Referrals", value: funnel.referrals },
    { label: "Converted", value: funnel.converted },
    { label: "Flagged", value: funnel.flagged },
    { label: "Voided", value: funnel.voided }
  ]
  return (
    <section aria-labelledby="funnel-title" className="stack">
      <h2 id="funnel-title">Funnel</h2>
      <div className="metrics">
        {steps.map((step) => <div className="metric" key={step.label}><div className="metric-label">{step.label}</div><div className="metric-value">{step.value.toLocaleString("en-US")}</div></div>)}
        <div className="metric"><div className="metric-label">Conversion</div><div className="metric-value">{(funnel.conversion_rate * 100).toFixed(1)}%</div></div>
      </div>
    </section>
  )
}

const ProgramCard = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const program = useConsoleQuery(["referral-program", storeId], (client) => client.ReferralProgram({ store_id: storeId }))
  const [form, setForm] = useState({ active: false, referrer_points: "", referee_points: "", commission_percent: "", commission_window_days: "", max_referrals_per_day: "" })
  const [saved, setSaved] = useState(false)
  useEffect(() => {
    const data = program.data
    if (data !== undefined) {
      setForm({
        active: data.active,
        referrer_points: String(data.referrer_points),
        referee_points: String(data.referee_points),
        commission_percent: data.commission_percent,
        commission_window_days: String(data.commission_window_days),
        max_referrals_per_day: String(data.max_referrals_per_day)
      })
    }
  }, [program.data])
  const whole = (text: string) => (text.trim() === "" ? Number.NaN : Number(text.trim()))
  const save = useConsoleMutation((client, _: void) =>
    client.ConfigureReferrals({
      store_id: storeId,
      active: form.active,
      referrer_points: whole(form.referrer_points),
      referee_points: whole(form.referee_points),
      commission_percent: form.commission_percent.trim(),
      commission_window_days: whole(form.commission_window_days),
      max_referrals_per_day: whole(form.max_referrals_per_day)
    }), {
    onSuccess: (updated) => {
      setSaved(true)
      queryClient.setQueryData(["referral-program", storeId], updated)
    }
  })
  const writable = usePermission("marketing.manage").allowed
  const error: ConsoleFailure | null = save.error
  const set = (field: Exclude<keyof typeof form, "active">) => (value: string) => setForm((previous) => ({ ...previous, [field]: value }))
  return (
    <section className="card" aria-labelledby="referral-program-title">
      <div className="card-header">
        <h2 id="referral-program-title">Program</h2>
        {program.data === undefined ? null : <span className={`badge ${program.data.active ? "badge-paid" : "badge-expired"}`}>{program.data.active ? "On" : "Off"}</span>}
      </div>
      {program.error !== null ? <LoadError error={program.error} retry={() => void program.refetch()} /> : program.isPending ? <Loading /> : (
        <form onSubmit={(event) => {
          event.preventDefault()
          setSaved(false)
          save.mutate()
        }} noValidate>
          <FormError error={error} fields={["referrer_points", "referee_points", "commission_percent", "commission_window_days", "max_referrals_per_day"]} />
          <CheckField label="Referrals earn rewards" checked={form.active} disabled={!writable} onChange={(active) => setForm({ ...form, active })} />
          <div className="form-grid">
            <Field label="Referrer's points" name="referrer_points" value={form.referrer_points} onChange={set("referrer_points")} inputMode="numeric" error={error} />
            <Field label="New customer's points" name="referee_points" value={form.referee_points} onChange={set("referee_points")} inputMode="numeric" error={error} />
            <Field label="Commission (%)" name="commission_percent" value={form.commission_percent} onChange={set("commission_percent")} inputMode="decimal" error={error} />
            <Field label="Commission window (days)" name="commission_window_days" value={form.commission_window_days} onChange={set("commission_window_days")} inputMode="numeric" error={error} hint="How long the referee's payments earn the referrer a commission." />
            <Field label="Referrals a day per referrer" name="max_referrals_per_day" value={form.max_referrals_per_day} onChange={set("max_referrals_per_day")} inputMode="numeric" error={error} hint="More are flagged for review." />
          </div>
          <div className="actions">
            <PermittedButton permission="marketing.manage" kind="primary" type="submit" busy={save.isPending}>Save program</PermittedButton>
            {saved ? <span className="muted" role="status">Saved.</span> : null}
          </div>
        </form>
      )}
    </section>
  )
}

const ReviewQueue = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const flagged = useConsoleQuery(["referrals", storeId, livemode, "flagged"], (client) => client.ListReferrals({ store_id: storeId, livemode, flagged_only: true, limit: 50 }))
  const [reviewing, setReviewing] = useState<{ readonly referral: Referral; readonly decision: "clear" | "void" } | undefined>(undefined)
  const writable = usePermission("customer.write").allowed
  return (
    <section className="card table-card" aria-labelledby="review-title">
      <div className="card-header card-pad">
        <div>
          <h2 id="review-title">Fraud review</h2>
          <p className="muted">Flagged referrals hold their points and commissions until you clear or void them.</p>
        </div>
      </div>
      {flagged.error !== null ? <LoadError error={flagged.error} retry={() => void flagged.refetch()} /> : null}
      {flagged.isPending ? <Loading /> : flagged.data === undefined || flagged.data.data.length === 0
        ? <Empty title="Nothing to review"><p>Referrals that look like fraud land here.</p></Empty>
        : (
          <table className="table">
            <caption className="visually-hidden">Flagged referrals</caption>
            <thead><tr><th scope="col">Referrer → new customer</th><th scope="col">Why flagged</th><th scope="col" className="hide-narrow">Made</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {flagged.data.data.map((referral) => (
                <tr key={referral.id}>
                  <td><CustomerName id={referral.referrer_id} /> → <CustomerName id={referral.referee_id} /></td>
                  <td>{referral.flags.map((flag) => <div key={flag}>{FLAG_LABELS[flag]}</div>)}</td>
                  <td className="hide-narrow nowrap">{formatTime(referral.created_at)}</td>
                  <td className="row-actions">
                    <PermittedButton permission="customer.write" kind="ghost" onClick={() => setReviewing({ referral, decision: "clear" })}>Clear</PermittedButton>
                    <PermittedButton permission="customer.write" kind="ghost" onClick={() => setReviewing({ referral, decision: "void" })}>Void</PermittedButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      <ReviewDialog reviewing={reviewing} onClose={() => setReviewing(undefined)} />
    </section>
  )
}

const ReviewDialog = (
  { onClose, reviewing }: { readonly reviewing: { readonly referral: Referral; readonly decision: "clear" | "void" } | undefined; readonly onClose: () => void }
) => {
  const { store } = useWorkspace()
  const queryClient = useQueryClient()
  const [note, setNote] = useState("")
  const review = useConsoleMutation((client, _: void) =>
    client.ReviewReferral({ store_id: store!.id, id: reviewing!.referral.id, decision: reviewing!.decision, ...(note.trim() === "" ? {} : { note: note.trim() }) }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["referrals", store!.id] })
      void queryClient.invalidateQueries({ queryKey: ["referral-report", store!.id] })
      void queryClient.invalidateQueries({ queryKey: ["commissions", store!.id] })
      onClose()
    }
  })
  useEffect(() => {
    if (reviewing !== undefined) {
      setNote("")
      review.reset()
    }
  }, [reviewing])
  const clearing = reviewing?.decision === "clear"
  return (
    <Dialog title={clearing ? "Clear referral" : "Void referral"} open={reviewing !== undefined} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        review.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={review.error} fields={["note"]} />
          <p>{clearing ? "The held points are credited and the held commissions become payable." : "The points and commissions of this referral are cancelled for good."}</p>
          <Field label="Note" name="note" value={note} onChange={setNote} error={review.error} placeholder="Different households, confirmed by phone" hint="Kept with the review, with your name and the time." autoFocus />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind={clearing ? "primary" : "danger"} type="submit" busy={review.isPending}>{clearing ? "Clear referral" : "Void referral"}</Button>
        </footer>
      </form>
    </Dialog>
  )
}

const ReferralsTable = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const referrals = useConsoleQuery(["referrals", storeId, livemode, "all"], (client) => client.ListReferrals({ store_id: storeId, livemode, limit: 50 }))
  return (
    <section className="card table-card" aria-labelledby="referrals-title">
      <div className="card-header card-pad"><h2 id="referrals-title">All referrals</h2></div>
      {referrals.error !== null ? <LoadError error={referrals.error} retry={() => void referrals.refetch()} /> : null}
      {referrals.isPending ? <Loading /> : referrals.data === undefined || referrals.data.data.length === 0
        ? <Empty title="No referrals yet"><p>A customer made with someone's referral code becomes their referral.</p></Empty>
        : (
          <table className="table">
            <caption className="visually-hidden">Referrals, newest first</caption>
            <thead><tr><th scope="col">Referrer → new customer</th><th scope="col">Status</th><th scope="col" className="hide-narrow">Flags</th><th scope="col" className="hide-narrow">Review</th><th scope="col" className="hide-narrow">Made</th></tr></thead>
            <tbody>
              {referrals.data.data.map((referral) => (
                <tr key={referral.id}>
                  <td><CustomerName id={referral.referrer_id} /> → <CustomerName id={referral.referee_id} /></td>
                  <td><span className={`badge ${STATUS_BADGES[referral.status]}`} data-status={referral.status}>{STATUS_LABELS[referral.status]}</span></td>
                  <td className="hide-narrow">{referral.flags.length === 0 ? "—" : referral.flags.map((flag) => FLAG_LABELS[flag]).join("; ")}</td>
                  <td className="hide-narrow">{referral.review === null ? "—" : `${referral.review.decision === "clear" ? "Cleared" : "Voided"} ${formatTime(referral.review.reviewed_at)}${referral.review.note === null ? "" : `: ${referral.review.note}`}`}</td>
                  <td className="hide-narrow nowrap">{formatTime(referral.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
    </section>
  )
}

const CommissionsCard = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const summary = useConsoleQuery(["commissions", storeId, livemode, "summary"], (client) => client.CommissionTotals({ store_id: storeId, livemode }))
  const commissions = useConsoleQuery(["commissions", storeId, livemode, "list"], (client) => client.ListCommissions({ store_id: storeId, livemode, limit: 50 }))
  const [paying, setPaying] = useState<{ readonly referrerId: string | undefined } | undefined>(undefined)
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey)
  const [paid, setPaid] = useState<string | undefined>(undefined)
  const payout = useConsoleMutation((client, _: void) =>
    client.PayoutCommissions({ store_id: storeId, livemode, ...(paying?.referrerId === undefined ? {} : { referrer_id: paying.referrerId as never }), idempotency_key: idempotencyKey }), {
    onSuccess: (result) => {
      setPaid(`${result.count} commission${result.count === 1 ? "" : "s"} marked paid: ${totals(result.totals)}.`)
      setPaying(undefined)
      void queryClient.invalidateQueries({ queryKey: ["commissions", storeId] })
      void queryClient.invalidateQueries({ queryKey: ["referral-report", storeId] })
    }
  })
  useEffect(() => {
    if (paying !== undefined) {
      setIdempotencyKey(newIdempotencyKey())
      payout.reset()
    }
  }, [paying])
  const writable = usePermission("customer.write").allowed
  return (
    <section className="card table-card" aria-labelledby="commissions-title">
      <div className="card-header card-pad">
        <div>
          <h2 id="commissions-title">Commissions</h2>
          <p className="muted">Owed to referrers on their referees' payments. Mark them paid once you paid them.</p>
        </div>
        <PermittedButton permission="customer.write" onClick={() => setPaying({ referrerId: undefined })}>Pay out all</PermittedButton>
      </div>
      {paid === undefined ? null : <div className="alert alert-success" role="status">{paid}</div>}
      {summary.error !== null ? <LoadError error={summary.error} retry={() => void summary.refetch()} /> : null}
      <h3 className="subheading card-pad">Per referrer</h3>
      {summary.isPending ? <Loading /> : summary.data === undefined || summary.data.data.length === 0
        ? <Empty title="No commissions yet"><p>Set a commission percentage in the program above; a referred customer's paid payments then earn their referrer one.</p></Empty>
        : (
          <table className="table">
            <caption className="visually-hidden">Commission totals per referrer</caption>
            <thead><tr><th scope="col">Referrer</th><th scope="col">Referrals</th><th scope="col">Owed</th><th scope="col" className="hide-narrow">Paid</th><th scope="col" className="hide-narrow">Held</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {summary.data.data.map((row) => (
                <tr key={row.referrer_id}>
                  <td><CustomerName id={row.referrer_id} /></td>
                  <td className="numeric">{row.referrals}</td>
                  <td>{totals(row.accrued)}</td>
                  <td className="hide-narrow">{totals(row.paid)}</td>
                  <td className="hide-narrow">{totals(row.held)}</td>
                  <td className="row-actions">{writable && (Number(row.accrued.USD) > 0 || Number(row.accrued.KHR) > 0) ? <Button kind="ghost" onClick={() => setPaying({ referrerId: row.referrer_id })}>Pay out<span className="visually-hidden"> {row.referrer_id}</span></Button> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      {commissions.data === undefined || commissions.data.data.length === 0 ? null : (
        <>
          <h3 className="subheading card-pad">Latest commissions</h3>
          <table className="table">
            <caption className="visually-hidden">Commissions, newest first</caption>
            <thead><tr><th scope="col">Amount</th><th scope="col">Status</th><th scope="col" className="hide-narrow">Referrer</th><th scope="col" className="hide-narrow">Payment</th><th scope="col" className="hide-narrow">Paid</th></tr></thead>
            <tbody>
              {commissions.data.data.map((commission) => (
                <tr key={commission.id}>
                  <td className="numeric">{formatAmount(commission.amount, commission.currency)}</td>
                  <td><span className={`badge ${COMMISSION_BADGES[commission.status]}`} data-status={commission.status}>{COMMISSION_LABELS[commission.status]}</span></td>
                  <td className="hide-narrow"><CustomerName id={commission.referrer_id} /></td>
                  <td className="hide-narrow"><PaymentName id={commission.payment_id} /></td>
                  <td className="hide-narrow nowrap">{formatTime(commission.paid_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <Dialog title="Pay out commissions" open={paying !== undefined} onClose={() => setPaying(undefined)}>
        <div className="dialog-body">
          <FormError error={payout.error} fields={[]} />
          <p>{paying?.referrerId === undefined ? "Every referrer's owed commissions" : <>The owed commissions of <CustomerName id={paying.referrerId} /></>} will be marked paid, and a <span className="mono">commission.paid</span> event sent for each. Pay them first, outside the console.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setPaying(undefined)}>Cancel</Button>
          <Button kind="primary" busy={payout.isPending} onClick={() => payout.mutate()}>Mark paid</Button>
        </footer>
      </Dialog>
    </section>
  )
}
