/**
 * Risk: the store's cases by status (the queue), and a case's detail with its subject linked and the moves
 * a reviewer may make: investigate, then resolve or dismiss with a resolution.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { RiskCase, RiskStatus } from "../../../../../domain/Risk.ts"
import { fromMinor } from "../../money.ts"
import { Link } from "../../router.tsx"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { Button, Dialog, Empty, FormError, formatAmount, formatTime, Loading } from "../../ui.tsx"
import { TextAreaField } from "../../ui/Fields.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"
import { Pager, useCursorTrail } from "../../ui/Paging.tsx"
import { PaymentName } from "../../ui/PaymentName.tsx"
import { useWorkspace } from "../../workspace.tsx"
import { CustomerName } from "../engagement/CustomerName.tsx"

const STATUSES: ReadonlyArray<{ readonly value: RiskStatus; readonly label: string; readonly badge: string }> = [
  { value: "open", label: "Open", badge: "failed" },
  { value: "investigating", label: "Investigating", badge: "refunded" },
  { value: "resolved", label: "Resolved", badge: "paid" },
  { value: "dismissed", label: "Dismissed", badge: "expired" }
]
const KIND_LABELS: Record<RiskCase["kind"], string> = {
  velocity: "Many payments in a short time",
  large_amount: "Unusually large payment",
  refund_ratio: "High refund ratio",
  referral_fraud: "Suspicious referral"
}

const RiskStatusBadge = ({ status }: { readonly status: RiskStatus }) => {
  const found = STATUSES.find((option) => option.value === status)
  return <span className={`badge badge-${found?.badge ?? "pending"}`}>{found?.label ?? status}</span>
}

/** The case's subject by the name the merchant knows it by, linked where the console has a page for it. */
const Subject = ({ subject }: { readonly subject: RiskCase["subject"] }) =>
  subject.type === "payment"
    ? <PaymentName id={subject.id} prefix="Payment" />
    : subject.type === "customer"
    ? <span>Customer <CustomerName id={subject.id} /></span>
    : subject.type === "referral"
    ? <span>Referral {subject.id} (<Link to="/referrals">referrals</Link>)</span>
    : <span>The whole store</span>

export const RiskPage = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const [status, setStatus] = useState<RiskStatus | undefined>("open")
  const trail = useCursorTrail([storeId, livemode, status])
  const summary = useConsoleQuery(["risk-summary", storeId, livemode], (client) => client.RiskSummary({ store_id: storeId, livemode }))
  const cases = useConsoleQuery(["risk-cases", storeId, livemode, status, trail.cursor], (client) =>
    client.RiskCases({ store_id: storeId, livemode, status, cursor: trail.cursor }))
  const [selected, setSelected] = useState<RiskCase | undefined>(undefined)
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Risk</h1>
          <p className="muted">Cases opened by the risk rules as payments, refunds and referrals happen. Review each, then resolve or dismiss it.</p>
        </div>
      </div>
      <PermissionNote permission="risk.manage" />
      <ErrorNotice error={summary.error ?? cases.error} />
      <div className="tabs" role="group" aria-label="Cases by status">
        {STATUSES.map((option) => (
          <button
            key={option.value}
            type="button"
            className="tab"
            aria-pressed={status === option.value}
            onClick={() => setStatus(option.value)}
          >
            {option.label} <span className="tab-count">{summary.data?.[option.value] ?? "–"}</span>
          </button>
        ))}
        <button type="button" className="tab" aria-pressed={status === undefined} onClick={() => setStatus(undefined)}>
          All <span className="tab-count">{summary.data?.total ?? "–"}</span>
        </button>
      </div>
      <section className="card table-card">
        {cases.isPending ? <Loading /> : (cases.data?.data.length ?? 0) === 0
          ? <Empty title={status === undefined ? "No risk cases" : `No ${status} cases`}><p>Nothing to review here.</p></Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Risk cases, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Case</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="hide-narrow">Subject</th>
                  <th scope="col" className="hide-narrow">Opened</th>
                </tr>
              </thead>
              <tbody>
                {cases.data!.data.map((row) => (
                  <tr key={row.id}>
                    <td>
                      <button type="button" className="link-button" onClick={() => setSelected(row)}>{KIND_LABELS[row.kind]}</button>
                    </td>
                    <td><RiskStatusBadge status={row.status} /></td>
                    <td className="hide-narrow small"><Subject subject={row.subject} /></td>
                    <td className="hide-narrow nowrap">{formatTime(row.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        <Pager trail={trail} page={cases.data} label="Risk case pages" />
      </section>
      <CaseDialog riskCase={selected} onClose={() => setSelected(undefined)} onChanged={setSelected} />
    </div>
  )
}

/**
 * A detail value of a case as a reviewer reads it. The rules record amounts (the payment's, the threshold)
 * in minor units of the case's currency: shown as money.
 */
const detailText = (key: string, value: unknown, details: Record<string, unknown>) => {
  const currency = typeof details["currency"] === "string" ? details["currency"] : undefined
  if (typeof value === "string" && currency !== undefined && /amount|threshold/.test(key) && /^-?\d+$/.test(value)) {
    return formatAmount(fromMinor(BigInt(value), currency), currency)
  }
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value)
}

/** A detail's key as a label: `window_minutes` → "Window minutes". */
const labelOf = (key: string) => key.charAt(0).toUpperCase() + key.slice(1).replaceAll("_", " ")

const CaseDialog = (props: { readonly riskCase: RiskCase | undefined; readonly onClose: () => void; readonly onChanged: (updated: RiskCase) => void }) => {
  const { riskCase } = props
  const queryClient = useQueryClient()
  const [resolution, setResolution] = useState("")
  const move = useConsoleMutation((client, status: RiskStatus) =>
    client.UpdateRiskCase({ id: riskCase!.id, status, ...(resolution.trim() === "" ? {} : { resolution: resolution.trim() }) }), {
    onSuccess: (updated) => {
      void queryClient.invalidateQueries({ queryKey: ["risk-cases"] })
      void queryClient.invalidateQueries({ queryKey: ["risk-summary"] })
      props.onChanged(updated)
    }
  })
  useEffect(() => {
    setResolution("")
    move.reset()
  }, [riskCase?.id])
  const closed = riskCase?.status === "resolved" || riskCase?.status === "dismissed"
  return (
    <Dialog title="Risk case" open={riskCase !== undefined} onClose={props.onClose}>
      {riskCase === undefined ? null : (
        <>
          <div className="dialog-body">
            <p><strong>{KIND_LABELS[riskCase.kind]}</strong> <RiskStatusBadge status={riskCase.status} /></p>
            <dl className="details">
              <dt>Subject</dt><dd className="break"><Subject subject={riskCase.subject} /></dd>
              <dt>Opened</dt><dd>{formatTime(riskCase.created_at)}</dd>
              <dt>Updated</dt><dd>{formatTime(riskCase.updated_at)}</dd>
              {Object.entries(riskCase.details).map(([key, value]) => (
                <div key={key} className="details-row"><dt>{labelOf(key)}</dt><dd>{detailText(key, value, riskCase.details)}</dd></div>
              ))}
              {riskCase.resolution === null ? null : <div className="details-row"><dt>Resolution</dt><dd>{riskCase.resolution}</dd></div>}
            </dl>
            <FormError error={move.error} fields={["resolution"]} />
            {closed ? <p className="muted">This case is closed; a closed case stays closed.</p> : (
              <TextAreaField
                label="Resolution"
                name="resolution"
                value={resolution}
                onChange={setResolution}
                error={move.error}
                placeholder="What you found and did: needed to resolve or dismiss"
              />
            )}
          </div>
          <footer className="dialog-footer">
            <Button onClick={props.onClose}>Close</Button>
            {closed ? null : (
              <>
                {riskCase.status === "open" ? <PermittedButton permission="risk.manage" onClick={() => move.mutate("investigating")} busy={move.isPending}>Investigate</PermittedButton> : null}
                <PermittedButton permission="risk.manage" onClick={() => move.mutate("dismissed")} busy={move.isPending}>Dismiss</PermittedButton>
                <PermittedButton permission="risk.manage" kind="primary" onClick={() => move.mutate("resolved")} busy={move.isPending}>Resolve</PermittedButton>
              </>
            )}
          </footer>
        </>
      )}
    </Dialog>
  )
}
