/** The store's branches: list, create, edit, deactivate (a deactivated branch keeps its history) and reopen. */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { Branch } from "../../../../../domain/Stores.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, Loading } from "../../ui.tsx"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { useWorkspace } from "../../workspace.tsx"

interface BranchForm {
  readonly name: string
  readonly address: string
  readonly phone: string
}

export const BranchesPage = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const branches = useConsoleQuery(["branches", storeId], (client) => client.ListBranches({ store_id: storeId }))
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["branches", storeId] })
  const [editing, setEditing] = useState<Branch | "new" | undefined>(undefined)
  const setActive = useConsoleMutation((client, branch: Branch) => client.UpdateBranch({ id: branch.id, active: !branch.active }), { onSuccess: refresh })
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Branches</h1>
          <p className="muted">The places where {store!.name} takes payments. Payments can name the branch they were taken at.</p>
        </div>
        <PermittedButton permission="store.update" kind="primary" onClick={() => setEditing("new")}>Add branch</PermittedButton>
      </div>
      <PermissionNote permission="store.update" />
      {branches.error ? <div className="alert alert-error" role="alert">{branches.error.message}</div> : null}
      {setActive.error ? <div className="alert alert-error" role="alert">{setActive.error.message}</div> : null}
      <section className="card table-card">
        {branches.isPending ? <Loading /> : (branches.data?.data.length ?? 0) === 0
          ? <Empty title="No branches yet">Add one for each shop or counter that takes payments.</Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Branches</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col" className="hide-narrow">Address</th>
                  <th scope="col" className="hide-narrow">Phone</th>
                  <th scope="col">Status</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {branches.data!.data.map((branch) => (
                  <tr key={branch.id}>
                    <td>{branch.name}</td>
                    <td className="hide-narrow">{branch.address ?? "—"}</td>
                    <td className="hide-narrow">{branch.phone ?? "—"}</td>
                    <td>{branch.active ? <span className="badge badge-paid">Active</span> : <span className="badge badge-expired">Inactive</span>}</td>
                    <td className="row-actions">
                      <PermittedButton permission="store.update" kind="ghost" onClick={() => setEditing(branch)}>Edit<span className="visually-hidden"> {branch.name}</span></PermittedButton>
                      <PermittedButton permission="store.update" kind="ghost" busy={setActive.isPending} onClick={() => setActive.mutate(branch)}>
                        {branch.active ? "Deactivate" : "Reactivate"}<span className="visually-hidden"> {branch.name}</span>
                      </PermittedButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
      <BranchDialog branch={editing} onClose={() => setEditing(undefined)} onSaved={() => {
        setEditing(undefined)
        refresh()
      }} />
    </div>
  )
}

const BranchDialog = (
  { branch, onClose, onSaved }: { readonly branch: Branch | "new" | undefined; readonly onClose: () => void; readonly onSaved: () => void }
) => {
  const { store } = useWorkspace()
  const [form, setForm] = useState<BranchForm>({ name: "", address: "", phone: "" })
  const set = (field: keyof BranchForm) => (value: string) => setForm((previous) => ({ ...previous, [field]: value }))
  const orNull = (value: string) => (value.trim() === "" ? null : value.trim())
  const save = useConsoleMutation((client, _: void) =>
    branch === "new" || branch === undefined
      ? client.CreateBranch({ store_id: store!.id, name: form.name.trim(), address: orNull(form.address), phone: orNull(form.phone) })
      : client.UpdateBranch({ id: branch.id, name: form.name.trim(), address: orNull(form.address), phone: orNull(form.phone) }), { onSuccess: onSaved })
  useEffect(() => {
    if (branch === undefined) return
    save.reset()
    setForm(branch === "new" ? { name: "", address: "", phone: "" } : { name: branch.name, address: branch.address ?? "", phone: branch.phone ?? "" })
  }, [branch])
  return (
    <Dialog title={branch === "new" ? "Add a branch" : "Edit branch"} open={branch !== undefined} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        save.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={save.error} fields={["name", "address", "phone"]} />
          <Field label="Name" name="name" value={form.name} onChange={set("name")} error={save.error} required autoFocus placeholder="Riverside" />
          <Field label="Address (optional)" name="address" value={form.address} onChange={set("address")} error={save.error} placeholder="12 Sisowath Quay, Phnom Penh" />
          <Field label="Phone (optional)" name="phone" type="tel" value={form.phone} onChange={set("phone")} error={save.error} placeholder="+855 12 345 678" />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={save.isPending}>{branch === "new" ? "Add branch" : "Save changes"}</Button>
        </footer>
      </form>
    </Dialog>
  )
}
