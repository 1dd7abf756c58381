/**
 * Payment links and invoices of the store (in the current mode): create one, copy its public link to share,
 * deactivate it (no new payments) or open it again.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { PaymentLink } from "../../../../../domain/Links.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatAmount, formatTime, Loading } from "../../ui.tsx"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { SelectField } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"

const STATUS_BADGES: Record<string, string> = { open: "badge-paid", paid: "badge-paid", inactive: "badge-expired", expired: "badge-expired" }

export const LinksPage = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const links = useConsoleQuery(["links", storeId], (client) => client.ListLinks({ store_id: storeId }))
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["links", storeId] })
  const [creating, setCreating] = useState(false)
  const [copied, setCopied] = useState<string | undefined>(undefined)
  const setActive = useConsoleMutation((client, link: PaymentLink) => client.SetLinkActive({ id: link.id, active: !link.active }), { onSuccess: refresh })
  const shown = links.data?.data.filter((link) => link.livemode === livemode) ?? []
  const copy = (link: PaymentLink) =>
    void navigator.clipboard.writeText(link.url).then(() => setCopied(link.id), () => setCopied(undefined))
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Payment links</h1>
          <p className="muted">A page your customers pay on, shared by message or QR: a link for any number of payments, or an invoice paid once.</p>
        </div>
        <PermittedButton permission="payment.write" kind="primary" onClick={() => setCreating(true)}>Create link</PermittedButton>
      </div>
      <PermissionNote permission="payment.write" />
      {links.error ? <div className="alert alert-error" role="alert">{links.error.message}</div> : null}
      {setActive.error ? <div className="alert alert-error" role="alert">{setActive.error.message}</div> : null}
      <p className="visually-hidden" role="status">{copied === undefined ? "" : "Link copied to the clipboard"}</p>
      <section className="card table-card">
        {links.isPending ? <Loading /> : shown.length === 0
          ? <Empty title={`No ${livemode ? "live" : "test"} links yet`}>Create one to take a payment without a website.</Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Payment links and invoices</caption>
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="hide-narrow">Payments</th>
                  <th scope="col" className="hide-narrow">Created</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {shown.map((link) => (
                  <tr key={link.id} data-link-id={link.id}>
                    <td>
                      <div>{link.title}</div>
                      <div className="muted small">{link.kind === "invoice" ? `Invoice${link.customer_email === null ? "" : ` · ${link.customer_email}`}` : "Link"}</div>
                    </td>
                    <td className="nowrap">{link.amount === null ? "Customer chooses" : formatAmount(link.amount, link.currency)}</td>
                    <td><span className={`badge ${STATUS_BADGES[link.status] ?? ""}`}>{link.status[0]!.toUpperCase() + link.status.slice(1)}</span></td>
                    <td className="hide-narrow">{link.payments_count}</td>
                    <td className="hide-narrow nowrap">{formatTime(link.created_at)}</td>
                    <td className="row-actions">
                      <Button kind="ghost" onClick={() => copy(link)}>{copied === link.id ? "Copied" : "Copy link"}<span className="visually-hidden"> {link.title}</span></Button>
                      {link.status === "open" || link.status === "inactive"
                        ? (
                          <PermittedButton permission="payment.write" kind="ghost" busy={setActive.isPending} onClick={() => setActive.mutate(link)}>
                            {link.active ? "Deactivate" : "Activate"}<span className="visually-hidden"> {link.title}</span>
                          </PermittedButton>
                        )
                        : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
      <CreateLinkDialog open={creating} onClose={() => setCreating(false)} onCreated={() => {
        setCreating(false)
        refresh()
      }} />
    </div>
  )
}

const EMPTY = { kind: "link" as "link" | "invoice", title: "", amount: "", currency: "USD" as "USD" | "KHR", description: "", customer_email: "", due_date: "" }

const CreateLinkDialog = (
  { onClose, onCreated, open }: { readonly open: boolean; readonly onClose: () => void; readonly onCreated: (link: PaymentLink) => void }
) => {
  const { livemode, store } = useWorkspace()
  const [form, setForm] = useState(EMPTY)
  const set = <K extends keyof typeof EMPTY>(field: K) => (value: (typeof EMPTY)[K]) => setForm((previous) => ({ ...previous, [field]: value }))
  const optional = (value: string) => (value.trim() === "" ? undefined : value.trim())
  const create = useConsoleMutation((client, _: void) =>
    client.CreateLink({
      store_id: store!.id,
      kind: form.kind,
      title: form.title.trim(),
      currency: form.currency,
      livemode,
      ...(optional(form.amount) === undefined ? {} : { amount: optional(form.amount)! }),
      ...(optional(form.description) === undefined ? {} : { description: optional(form.description)! }),
      ...(form.kind === "invoice" && optional(form.customer_email) !== undefined ? { customer_email: optional(form.customer_email)! } : {}),
      ...(form.kind === "invoice" && optional(form.due_date) !== undefined ? { due_date: optional(form.due_date)! } : {})
    }), { onSuccess: onCreated })
  useEffect(() => {
    if (open) {
      setForm(EMPTY)
      create.reset()
    }
  }, [open])
  return (
    <Dialog title="Create a payment link" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={create.error} fields={["kind", "title", "amount", "currency", "description", "customer_email", "due_date"]} />
          <SelectField label="Kind" name="kind" value={form.kind} onChange={set("kind")} error={create.error} options={[
            { value: "link", label: "Link: paid any number of times" },
            { value: "invoice", label: "Invoice: paid once" }
          ]} />
          <Field label="Title" name="title" value={form.title} onChange={set("title")} error={create.error} required autoFocus placeholder="Iced latte" />
          <div className="form-row">
            <Field
              label={form.kind === "invoice" ? "Amount" : "Amount (optional)"}
              name="amount"
              inputMode="decimal"
              value={form.amount}
              onChange={set("amount")}
              error={create.error}
              hint={form.kind === "invoice" ? undefined : "Leave empty to let the customer choose."}
            />
            <SelectField label="Currency" name="currency" value={form.currency} onChange={set("currency")} error={create.error} options={[
              { value: "USD", label: "USD" },
              { value: "KHR", label: "KHR" }
            ]} />
          </div>
          <Field label="Description (optional)" name="description" value={form.description} onChange={set("description")} error={create.error} />
          {form.kind === "invoice"
            ? (
              <>
                <Field label="Customer e-mail (optional)" name="customer_email" type="email" value={form.customer_email} onChange={set("customer_email")} error={create.error} />
                <Field label="Due date (optional)" name="due_date" type="date" value={form.due_date} onChange={set("due_date")} error={create.error} />
              </>
            )
            : null}
          <p className="muted small">{livemode ? "A live link takes real payments." : "A test link takes test payments only."}</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Create link</Button>
        </footer>
      </form>
    </Dialog>
  )
}
