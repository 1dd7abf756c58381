/**
 * One promotion: its terms, the 30-day simulation, and the moves its status allows — edit and submit a
 * draft; approve or reject (an Owner who did not submit it); activate, pause, end — with the audit trail.
 * A move the user may not make is disabled with the reason shown beside it.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { PromotionId } from "../../../../../domain/Ids.ts"
import type { Promotion, PromotionAuditEntry } from "../../../../../domain/Promotions.ts"
import { Link, navigate } from "../../router.tsx"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Field, FormError, formatAmount, formatTime, Loading } from "../../ui.tsx"
import { LoadError } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"
import { usePermission } from "../../permissions.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import {
  formOfPromotion,
  PROMOTION_FIELDS,
  PROMOTION_STATUS,
  PromotionFields,
  promotionInput,
  PromotionStatusBadge,
  SimulationSummary,
  useMemberNames
} from "./promotionParts.tsx"

type Move = "SubmitPromotion" | "ApprovePromotion" | "ActivatePromotion" | "PausePromotion" | "EndPromotion"

const AUDIT_VERBS: Record<PromotionAuditEntry["action"], string> = {
  create: "created it",
  update: "edited it",
  submit: "submitted it for approval",
  approve: "approved it",
  reject: "rejected it",
  activate: "activated it",
  pause: "paused it",
  end: "ended it"
}

export const PromotionDetailPage = ({ id }: { readonly id: string }) => {
  const promotionId = id as PromotionId
  const queryClient = useQueryClient()
  const { context } = useWorkspace()
  const approve = usePermission("promotion.approve")
  const memberName = useMemberNames()
  const promotion = useConsoleQuery(["promotion", id], (client) => client.GetPromotion({ id: promotionId }))
  const { store } = useWorkspace()
  const segments = useConsoleQuery(["segments", store!.id], (client) => client.ListSegments({ store_id: store!.id, limit: 100 }))
  const segmentName = (segmentId: string) => `Segment: ${segments.data?.data.find((segment) => segment.id === segmentId)?.name ?? segmentId}`
  const [rejecting, setRejecting] = useState(false)
  const [ending, setEnding] = useState(false)
  const [editing, setEditing] = useState(false)
  const moved = (updated: Promotion) => {
    queryClient.setQueryData(["promotion", id], updated)
    void queryClient.invalidateQueries({ queryKey: ["promotions"] })
  }
  const move = useConsoleMutation((client, tag: Move) => client[tag]({ id: promotionId }), {
    onSuccess: (updated) => {
      moved(updated)
      setEnding(false)
    }
  })
  const remove = useConsoleMutation((client, _: void) => client.DeletePromotion({ id: promotionId }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["promotions"] })
      navigate("/promotions")
    }
  })

  if (promotion.isPending) return <div className="page"><Loading /></div>
  if (promotion.error !== null) {
    return (
      <div className="page">
        <p><Link to="/promotions">← Promotions</Link></p>
        <LoadError error={promotion.error} retry={() => void promotion.refetch()} />
      </div>
    )
  }
  const current = promotion.data
  const status = current.status
  const submittedByMe = current.submitted_by === context.me.user.id
  /** Why this user may not approve or reject, or undefined when they may. */
  const decideRefusal = !approve.allowed
    ? approve.reason
    : submittedByMe
    ? "You submitted this promotion: another Owner must approve or reject it."
    : undefined
  const failure = move.error ?? remove.error

  return (
    <div className="page">
      <p className="breadcrumb"><Link to="/promotions">← Promotions</Link></p>
      <div className="page-header">
        <div>
          <p className="muted mono">{current.id}</p>
          <h1 className="amount-title">{current.name} <PromotionStatusBadge status={status} /></h1>
        </div>
        <div className="actions">
          {status === "draft" || status === "rejected"
            ? (
              <>
                <PermittedButton permission="marketing.manage" onClick={() => setEditing(true)}>Edit</PermittedButton>
                <PermittedButton permission="marketing.manage" kind="ghost" onClick={() => remove.mutate()} busy={remove.isPending}>Delete</PermittedButton>
              </>
            )
            : null}
          {status === "draft"
            ? <PermittedButton permission="marketing.manage" kind="primary" busy={move.isPending} onClick={() => move.mutate("SubmitPromotion")}>Submit for approval</PermittedButton>
            : null}
          {status === "approved" || status === "paused"
            ? <PermittedButton permission="marketing.manage" kind="primary" busy={move.isPending} onClick={() => move.mutate("ActivatePromotion")}>{status === "paused" ? "Resume" : "Activate"}</PermittedButton>
            : null}
          {status === "active" ? <PermittedButton permission="marketing.manage" busy={move.isPending} onClick={() => move.mutate("PausePromotion")}>Pause</PermittedButton> : null}
          {status === "active" || status === "paused"
            ? <PermittedButton permission="marketing.manage" kind="danger" onClick={() => setEnding(true)}>End</PermittedButton>
            : null}
        </div>
      </div>
      <PermissionNote permission="marketing.manage" />
      {failure !== null ? <div className="alert alert-error" role="alert">{failure.message}</div> : null}
      {status === "rejected" && current.rejection_reason !== null
        ? <div className="alert alert-warning" role="note"><strong>Rejected:</strong> {current.rejection_reason}. Edit it to return it to draft.</div>
        : null}

      {status === "pending_approval"
        ? (
          <section className="card approval-card" aria-labelledby="approval-title">
            <h2 id="approval-title">Approval</h2>
            <p>Submitted by <strong>{memberName(current.submitted_by)}</strong>. An Owner who did not submit it approves or rejects it.</p>
            <div className="actions">
              <Button kind="primary" busy={move.isPending} disabled={decideRefusal !== undefined} onClick={() => move.mutate("ApprovePromotion")}>Approve</Button>
              <Button kind="danger" disabled={decideRefusal !== undefined} onClick={() => setRejecting(true)}>Reject</Button>
            </div>
            {decideRefusal === undefined ? null : <p className="refusal" role="note" data-testid="approval-refusal">{decideRefusal}</p>}
          </section>
        )
        : null}

      <div className="detail-grid">
        <section className="card" aria-labelledby="simulation-title">
          <h2 id="simulation-title">Simulation</h2>
          <p className="muted">What this promotion would have cost over the last 30 days, with the segment as it is now.</p>
          <SimulationSummary promotion={current} />
        </section>
        <section className="card" aria-labelledby="terms-title">
          <h2 id="terms-title">Terms</h2>
          <dl className="details">
            <dt>Bonus</dt><dd>{current.bonus_points} points a payment</dd>
            <dt>Who</dt><dd>{current.segment_id === null ? "Every customer" : <Link to="/segments">{segmentName(current.segment_id)}</Link>}</dd>
            <dt>Minimum</dt><dd>{current.min_amount === undefined ? "Any amount" : formatAmount(current.min_amount.amount, current.min_amount.currency)}</dd>
            <dt>Starts</dt><dd>{formatTime(current.starts_at)}</dd>
            <dt>Ends</dt><dd>{formatTime(current.ends_at)}</dd>
            <dt>Approved by</dt><dd>{current.approved_by === null ? "—" : memberName(current.approved_by)}</dd>
          </dl>
        </section>
        <section className="card" aria-labelledby="audit-title">
          <h2 id="audit-title">Audit trail</h2>
          <ol className="timeline" data-testid="audit-trail">
            {current.audit.map((entry, index) => (
              <li key={index} className={entry.action === "reject" ? "timeline-failure" : entry.to === "active" || entry.action === "approve" ? "timeline-success" : undefined}>
                <span className="timeline-dot" aria-hidden="true" />
                <div>
                  <strong>{memberName(entry.user_id)} {entry.action === "activate" && entry.from === "paused" ? "resumed it" : AUDIT_VERBS[entry.action]}</strong>
                  <p className="muted">
                    {formatTime(entry.at)} · {entry.from === null ? "" : `${PROMOTION_STATUS[entry.from].label} → `}{PROMOTION_STATUS[entry.to].label}
                    {entry.reason === null ? "" : ` · “${entry.reason}”`}
                  </p>
                </div>
              </li>
            ))}
          </ol>
        </section>
      </div>
      {/* Ending is for good (a paused promotion can be resumed, an ended one cannot): asked once more. */}
      <Dialog title="End this promotion" open={ending} onClose={() => setEnding(false)}>
        <div className="dialog-body">
          <p>No payment earns its bonus points after this, and it cannot be started again. To stop it for a while, pause it instead.</p>
          {move.error !== null ? <div className="alert alert-error" role="alert">{move.error.message}</div> : null}
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setEnding(false)}>Cancel</Button>
          <Button kind="danger" busy={move.isPending} onClick={() => move.mutate("EndPromotion")}>End promotion</Button>
        </footer>
      </Dialog>
      <RejectDialog open={rejecting} onClose={() => setRejecting(false)} promotionId={promotionId} onRejected={moved} />
      <EditDialog open={editing} onClose={() => setEditing(false)} promotion={current} onSaved={moved} />
    </div>
  )
}

const RejectDialog = (
  { onClose, onRejected, open, promotionId }: {
    readonly open: boolean
    readonly onClose: () => void
    readonly promotionId: PromotionId
    readonly onRejected: (promotion: Promotion) => void
  }
) => {
  const [reason, setReason] = useState("")
  const reject = useConsoleMutation((client, _: void) => client.RejectPromotion({ id: promotionId, reason: reason.trim() }), {
    onSuccess: (promotion) => {
      onRejected(promotion)
      onClose()
    }
  })
  useEffect(() => {
    if (open) {
      setReason("")
      reject.reset()
    }
  }, [open])
  const error: ConsoleFailure | null = reject.error
  return (
    <Dialog title="Reject promotion" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        reject.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={error} fields={["reason"]} />
          <Field label="Reason" name="reason" value={reason} onChange={setReason} error={error} required hint="The submitter sees it; they can edit the promotion and submit it again." autoFocus />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="danger" type="submit" busy={reject.isPending}>Reject promotion</Button>
        </footer>
      </form>
    </Dialog>
  )
}

const EditDialog = (
  { onClose, onSaved, open, promotion }: {
    readonly open: boolean
    readonly onClose: () => void
    readonly promotion: Promotion
    readonly onSaved: (promotion: Promotion) => void
  }
) => {
  const [form, setForm] = useState(() => formOfPromotion(promotion))
  const update = useConsoleMutation((client, _: void) => client.UpdatePromotion({ id: promotion.id, ...promotionInput(form) }), {
    onSuccess: (updated) => {
      onSaved(updated)
      onClose()
    }
  })
  useEffect(() => {
    if (open) {
      setForm(formOfPromotion(promotion))
      update.reset()
    }
  }, [open])
  return (
    <Dialog title="Edit promotion" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        update.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={update.error} fields={PROMOTION_FIELDS} />
          <PromotionFields form={form} onChange={setForm} error={update.error} />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={update.isPending}>Save draft</Button>
        </footer>
      </form>
    </Dialog>
  )
}
