/**
 * Promotions: bonus points on qualifying payments, under four-eyes approval. The list with the approval
 * queue (what an Owner who did not submit may approve, with who submitted it and what the simulation
 * predicts), and new drafts.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { Promotion } from "../../../../../domain/Promotions.ts"
import { Link, navigate } from "../../router.tsx"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Empty, FormError, formatTime, Loading } from "../../ui.tsx"
import { LoadError } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"
import { usePermission } from "../../permissions.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import {
  emptyPromotionForm,
  PROMOTION_FIELDS,
  PromotionFields,
  promotionInput,
  PromotionStatusBadge,
  SimulationSummary,
  useMemberNames
} from "./promotionParts.tsx"

export const PromotionsPage = () => {
  const { context, store } = useWorkspace()
  const storeId = store!.id
  const memberName = useMemberNames()
  const promotions = useConsoleQuery(["promotions", storeId], (client) => client.ListPromotions({ store_id: storeId, limit: 100 }))
  const [creating, setCreating] = useState(false)
  const all = promotions.data?.data ?? []
  const waiting = all.filter((promotion) => promotion.status === "pending_approval")
  const mine = (promotion: Promotion) => promotion.submitted_by === context.me.user.id
  const approver = usePermission("promotion.approve").allowed
  const queue = approver ? waiting.filter((promotion) => !mine(promotion)) : []
  const writable = usePermission("marketing.manage").allowed

  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Promotions</h1>
          <p className="muted">Bonus points on qualifying payments. Each goes live only after an Owner other than its submitter approves it.</p>
        </div>
        <PermittedButton permission="marketing.manage" kind="primary" onClick={() => setCreating(true)}>New promotion</PermittedButton>
      </div>
      <PermissionNote permission="marketing.manage" />
      {promotions.error !== null ? <LoadError error={promotions.error} retry={() => void promotions.refetch()} /> : null}
      {approver
        ? (
          <section className="card" aria-labelledby="queue-title">
            <h2 id="queue-title">Waiting for your approval</h2>
            {promotions.isPending ? <Loading /> : queue.length === 0
              ? <p className="muted">Nothing to approve. {waiting.some(mine) ? "Promotions you submitted need another Owner's approval." : ""}</p>
              : (
                <ul className="approval-queue">
                  {queue.map((promotion) => (
                    <li key={promotion.id} className="approval-item">
                      <div className="approval-head">
                        <Link to={`/promotions/${promotion.id}`}><strong>{promotion.name}</strong></Link>
                        <span className="muted">Submitted by {memberName(promotion.submitted_by)} · {promotion.bonus_points} points a payment</span>
                      </div>
                      <SimulationSummary promotion={promotion} />
                      <div><Button kind="primary" onClick={() => navigate(`/promotions/${promotion.id}`)}>Review<span className="visually-hidden"> {promotion.name}</span></Button></div>
                    </li>
                  ))}
                </ul>
              )}
          </section>
        )
        : waiting.length > 0
        ? <div className="alert alert-warning" role="note">{waiting.length} promotion{waiting.length === 1 ? " waits" : "s wait"} for an Owner's approval.</div>
        : null}
      <section className="card table-card" aria-labelledby="promotions-title">
        <div className="card-header card-pad"><h2 id="promotions-title">All promotions</h2></div>
        {promotions.isPending ? <Loading /> : all.length === 0
          ? <Empty title="No promotions yet"><p>Create a draft, check its simulation, and submit it for approval.</p></Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Promotions, newest first</caption>
              <thead><tr><th scope="col">Promotion</th><th scope="col">Status</th><th scope="col">Bonus</th><th scope="col" className="hide-narrow">Runs</th></tr></thead>
              <tbody>
                {all.map((promotion) => (
                  <tr key={promotion.id} className="clickable" onClick={() => navigate(`/promotions/${promotion.id}`)}>
                    <td><Link to={`/promotions/${promotion.id}`}><strong>{promotion.name}</strong></Link></td>
                    <td><PromotionStatusBadge status={promotion.status} /></td>
                    <td className="nowrap">{promotion.bonus_points} pts</td>
                    <td className="hide-narrow nowrap">{formatTime(promotion.starts_at)} – {formatTime(promotion.ends_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
      <NewPromotionDialog open={creating} onClose={() => setCreating(false)} />
    </div>
  )
}

const NewPromotionDialog = ({ onClose, open }: { readonly open: boolean; readonly onClose: () => void }) => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const [form, setForm] = useState(emptyPromotionForm)
  const create = useConsoleMutation((client, _: void) => client.CreatePromotion({ store_id: storeId, ...promotionInput(form) }), {
    onSuccess: (promotion) => {
      void queryClient.invalidateQueries({ queryKey: ["promotions", storeId] })
      onClose()
      navigate(`/promotions/${promotion.id}`)
    }
  })
  useEffect(() => {
    if (open) {
      setForm(emptyPromotionForm())
      create.reset()
    }
  }, [open])
  return (
    <Dialog title="New promotion" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={create.error} fields={PROMOTION_FIELDS} />
          <PromotionFields form={form} onChange={setForm} error={create.error} />
          <p className="muted small">It is saved as a draft: you see its simulation before you submit it.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Create draft</Button>
        </footer>
      </form>
    </Dialog>
  )
}
