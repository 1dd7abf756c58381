/**
 * KYC reviews (platform administrators): the merchant verifications by status, the pending ones first; a
 * submission's details and documents, approved, or rejected with the reason the merchant will read.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { Verification } from "../../../../../domain/Verification.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Empty, FormError, formatTime, Loading } from "../../ui.tsx"
import { TextAreaField } from "../../ui/Fields.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"
import { Pager, useCursorTrail } from "../../ui/Paging.tsx"

type Status = Verification["status"]
const STATUSES: ReadonlyArray<{ readonly value: Status; readonly label: string; readonly badge: string }> = [
  { value: "pending", label: "Pending", badge: "pending" },
  { value: "approved", label: "Approved", badge: "paid" },
  { value: "rejected", label: "Rejected", badge: "failed" }
]

const VerificationBadge = ({ status }: { readonly status: Status }) => {
  const found = STATUSES.find((option) => option.value === status)
  return <span className={`badge badge-${found?.badge ?? "pending"}`}>{found?.label ?? status}</span>
}

export const VerificationsPage = () => {
  const [status, setStatus] = useState<Status>("pending")
  const trail = useCursorTrail([status])
  const list = useConsoleQuery(["verifications", status, trail.cursor], (client) => client.ListVerifications({ status, cursor: trail.cursor }))
  const [reviewing, setReviewing] = useState<Verification | undefined>(undefined)
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>KYC reviews</h1>
          <p className="muted">Merchants' verifications. An approved organization's stores can go live once their provider credentials are set.</p>
        </div>
      </div>
      <div className="tabs" role="group" aria-label="Verifications by status">
        {STATUSES.map((option) => (
          <button key={option.value} type="button" className="tab" aria-pressed={status === option.value} onClick={() => setStatus(option.value)}>{option.label}</button>
        ))}
      </div>
      <ErrorNotice error={list.error} />
      <section className="card table-card">
        {list.isPending ? <Loading /> : (list.data?.data.length ?? 0) === 0
          ? <Empty title={`No ${status} verifications`}>{status === "pending" ? <p>The queue is empty.</p> : null}</Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">{status} verifications, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Business</th>
                  <th scope="col" className="hide-narrow">Registration</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="hide-narrow">Submitted</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {list.data!.data.map((verification) => (
                  <tr key={verification.id} data-verification-id={verification.id}>
                    <td>{verification.business_name}<span className="muted small hide-narrow"> · {verification.contact.email}</span></td>
                    <td className="hide-narrow mono small">{verification.registration_number}</td>
                    <td><VerificationBadge status={verification.status} /></td>
                    <td className="hide-narrow nowrap">{formatTime(verification.created_at)}</td>
                    <td className="row-actions">
                      <Button kind={verification.status === "pending" ? "primary" : "ghost"} onClick={() => setReviewing(verification)}>
                        {verification.status === "pending" ? "Review" : "View"}<span className="visually-hidden"> {verification.business_name}</span>
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        <Pager trail={trail} page={list.data} label="Verification pages" />
      </section>
      <ReviewDialog verification={reviewing} onClose={() => setReviewing(undefined)} />
    </div>
  )
}

const ReviewDialog = ({ onClose, verification }: { readonly verification: Verification | undefined; readonly onClose: () => void }) => {
  const queryClient = useQueryClient()
  const [rejecting, setRejecting] = useState(false)
  const [reason, setReason] = useState("")
  const done = () => {
    void queryClient.invalidateQueries({ queryKey: ["verifications"] })
    onClose()
  }
  const approve = useConsoleMutation((client, _: void) => client.ApproveVerification({ id: verification!.id }), { onSuccess: done })
  const reject = useConsoleMutation((client, _: void) => client.RejectVerification({ id: verification!.id, reason: reason.trim() }), { onSuccess: done })
  useEffect(() => {
    setRejecting(false)
    setReason("")
    approve.reset()
    reject.reset()
  }, [verification?.id])
  const pending = verification?.status === "pending"
  return (
    <Dialog title="Verification" open={verification !== undefined} onClose={onClose}>
      {verification === undefined ? null : (
        <>
          <div className="dialog-body">
            <FormError error={approve.error ?? reject.error} fields={["reason"]} />
            <p><strong>{verification.business_name}</strong> <VerificationBadge status={verification.status} /></p>
            <dl className="details">
              <dt>Registration</dt><dd className="mono">{verification.registration_number}</dd>
              <dt>Organization</dt><dd className="mono small">{verification.organization_id}</dd>
              <dt>Contact</dt><dd>{verification.contact.name}<br /><span className="small">{verification.contact.email}{verification.contact.phone === null ? "" : ` · ${verification.contact.phone}`}</span></dd>
              <dt>Submitted</dt><dd>{formatTime(verification.created_at)}</dd>
              {verification.reviewed_at === null ? null : <div className="details-row"><dt>Reviewed</dt><dd>{formatTime(verification.reviewed_at)}</dd></div>}
              {verification.rejection_reason === null ? null : <div className="details-row"><dt>Reason</dt><dd>{verification.rejection_reason}</dd></div>}
            </dl>
            <div>
              <h3 className="field-label">Documents</h3>
              <ul className="documents">
                {verification.documents.map((document, index) => (
                  <li key={index}>
                    <span className="badge">{document.type.replaceAll("_", " ")}</span>{" "}
                    <a className="break small" href={document.url} target="_blank" rel="noreferrer noopener">{document.url}</a>
                  </li>
                ))}
              </ul>
            </div>
            {pending && rejecting
              ? (
                <TextAreaField
                  label="Reason for rejecting"
                  name="reason"
                  value={reason}
                  onChange={setReason}
                  error={reject.error}
                  placeholder="What the merchant must fix before submitting again"
                  required
                />
              )
              : null}
          </div>
          <footer className="dialog-footer">
            <Button onClick={onClose}>Close</Button>
            {!pending ? null : rejecting
              ? <Button kind="danger" busy={reject.isPending} disabled={reason.trim() === ""} onClick={() => reject.mutate()}>Reject with this reason</Button>
              : (
                <>
                  <Button kind="danger" onClick={() => setRejecting(true)}>Reject…</Button>
                  <Button kind="primary" busy={approve.isPending} onClick={() => approve.mutate()}>Approve</Button>
                </>
              )}
          </footer>
        </>
      )}
    </Dialog>
  )
}
