/**
 * Revenue shares: the store's agreements (who receives what percentage of each paid payment), added,
 * changed, paused and removed. The active shares may sum to at most 100 %: the form says so at the
 * percentage before anything is sent, and the server holds the same rule.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { RevenueShare } from "../../../../../domain/RevenueShares.ts"
import { ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { usePermission } from "../../permissions.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"
import { useWorkspace } from "../../workspace.tsx"

/** Percentages in ten-thousandths, so "33.3333" + "66.6667" is exactly 100. */
const basisOf = (percent: string) => Math.round(Number(percent) * 10_000)
const fromBasis = (basis: number) => (basis / 10_000).toFixed(4).replace(/\.?0+$/, "")

export const RevenueSharesPage = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const manage = usePermission("marketing.manage")
  const shares = useConsoleQuery(["revenue-shares", storeId], (client) => client.ListRevenueShares({ store_id: storeId, limit: 100 }))
  const [editing, setEditing] = useState<RevenueShare | "new" | undefined>(undefined)
  const [removing, setRemoving] = useState<RevenueShare | undefined>(undefined)
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["revenue-shares", storeId] })
  const toggle = useConsoleMutation((client, share: RevenueShare) => client.UpdateRevenueShare({ id: share.id, active: !share.active }), { onSuccess: refresh })
  const remove = useConsoleMutation((client, share: RevenueShare) => client.DeleteRevenueShare({ id: share.id }), {
    onSuccess: () => {
      setRemoving(undefined)
      refresh()
    }
  })
  const rows = shares.data?.data ?? []
  const activeBasis = rows.filter((share) => share.active).reduce((sum, share) => sum + basisOf(share.percent), 0)
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Revenue shares</h1>
          <p className="muted">Split each paid payment with partners — a landlord, a franchisor. Shares are booked in the ledger as each payment is paid.</p>
        </div>
        <Button
          kind="primary"
          onClick={() => setEditing("new")}
          disabled={!manage.allowed || activeBasis >= 1_000_000}
          {...(manage.reason !== undefined ? { title: manage.reason } : activeBasis >= 1_000_000 ? { title: "Active shares already add up to 100 %" } : {})}
        >
          Add share
        </Button>
      </div>
      <PermissionNote permission="marketing.manage" />
      <ErrorNotice error={shares.error ?? toggle.error} />
      <section className="metrics" aria-label="Split">
        <div className="metric">
          <h2 className="metric-label">Shared</h2>
          <p className="metric-value">{fromBasis(activeBasis)} %</p>
        </div>
        <div className="metric">
          <h2 className="metric-label">Kept by the store</h2>
          <p className="metric-value">{fromBasis(1_000_000 - activeBasis)} %</p>
        </div>
      </section>
      <section className="card table-card">
        {shares.isPending ? <Loading /> : rows.length === 0
          ? <Empty title="No revenue shares"><p>The store keeps all of each payment.</p></Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Revenue-share agreements</caption>
              <thead>
                <tr>
                  <th scope="col">Party</th>
                  <th scope="col">Share</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="hide-narrow">Since</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {rows.map((share) => (
                  <tr key={share.id}>
                    <td>{share.party}</td>
                    <td>{share.percent} %</td>
                    <td>{share.active ? <span className="badge badge-paid">Active</span> : <span className="badge badge-expired">Paused</span>}</td>
                    <td className="hide-narrow nowrap">{formatTime(share.created_at)}</td>
                    <td className="row-actions">
                      <PermittedButton permission="marketing.manage" kind="ghost" onClick={() => setEditing(share)}>Edit<span className="visually-hidden"> {share.party}</span></PermittedButton>
                      <PermittedButton permission="marketing.manage" kind="ghost" onClick={() => toggle.mutate(share)}>{share.active ? "Pause" : "Resume"}<span className="visually-hidden"> {share.party}</span></PermittedButton>
                      <PermittedButton permission="marketing.manage" kind="ghost" onClick={() => setRemoving(share)}>Remove<span className="visually-hidden"> {share.party}</span></PermittedButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
      <ShareDialog
        share={editing}
        othersBasis={activeBasis - (editing !== undefined && editing !== "new" && editing.active ? basisOf(editing.percent) : 0)}
        onClose={() => setEditing(undefined)}
        onSaved={() => {
          setEditing(undefined)
          refresh()
        }}
      />
      <Dialog title="Remove revenue share" open={removing !== undefined} onClose={() => setRemoving(undefined)}>
        <div className="dialog-body">
          <FormError error={remove.error} fields={[]} />
          <p><strong>{removing?.party}</strong> stops receiving {removing?.percent} % of payments paid from now on. Entries already booked stay in the ledger.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setRemoving(undefined)}>Cancel</Button>
          <Button kind="danger" busy={remove.isPending} onClick={() => removing !== undefined && remove.mutate(removing)}>Remove share</Button>
        </footer>
      </Dialog>
    </div>
  )
}

const ShareDialog = (props: {
  readonly share: RevenueShare | "new" | undefined
  /** What the other active shares add up to, in ten-thousandths of a percent. */
  readonly othersBasis: number
  readonly onClose: () => void
  readonly onSaved: () => void
}) => {
  const { store } = useWorkspace()
  const editing = props.share === "new" || props.share === undefined ? undefined : props.share
  const [party, setParty] = useState("")
  const [percent, setPercent] = useState("")
  const save = useConsoleMutation((client, _: void) =>
    editing === undefined
      ? client.CreateRevenueShare({ store_id: store!.id, party: party.trim(), percent: percent.trim() })
      : client.UpdateRevenueShare({ id: editing.id, party: party.trim(), percent: percent.trim() }), { onSuccess: props.onSaved })
  useEffect(() => {
    setParty(editing?.party ?? "")
    setPercent(editing?.percent ?? "")
    save.reset()
  }, [props.share])
  const room = 1_000_000 - props.othersBasis
  const wanted = basisOf(percent)
  const active = editing === undefined || editing.active
  // The 100 % rule, at the field: what this share would make the active ones add up to.
  const overLimit = active && percent.trim() !== "" && Number.isFinite(wanted) && wanted > room
  const error = overLimit
    ? new ConsoleFailure("invalid_request", `At most ${fromBasis(room)} %: the other active shares already take ${fromBasis(props.othersBasis)} %, and all together may not pass 100 %.`, "percent")
    : save.error
  return (
    <Dialog title={editing === undefined ? "Add a revenue share" : "Edit revenue share"} open={props.share !== undefined} onClose={props.onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        if (!overLimit) save.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={error} fields={["party", "percent"]} />
          <Field label="Party" name="party" value={party} onChange={setParty} placeholder="Mall landlord" error={error} required autoFocus />
          <Field
            label="Percentage of each paid payment"
            name="percent"
            value={percent}
            onChange={setPercent}
            inputMode="decimal"
            placeholder="12.5"
            error={error}
            hint={`Up to ${fromBasis(room)} % is free.`}
            required
          />
        </div>
        <footer className="dialog-footer">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={save.isPending} disabled={overLimit}>{editing === undefined ? "Add share" : "Save"}</Button>
        </footer>
      </form>
    </Dialog>
  )
}
