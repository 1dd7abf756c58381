/**
 * Customers of the store in the current mode: search by e-mail, name, phone or external id (as you type),
 * each row opening the customer 360; add a customer (Owner, Admin).
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useId, useState } from "react"
import { navigate } from "../../router.tsx"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading, newIdempotencyKey } from "../../ui.tsx"
import { LoadError } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"
import { usePermission } from "../../permissions.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { useDebounced } from "./useDebounced.ts"

const PAGE_SIZE = 25

export const CustomersPage = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const [search, setSearch] = useState("")
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  const [adding, setAdding] = useState(false)
  const searched = useDebounced(search.trim())
  const cursor = cursors.at(-1)
  const searchId = useId()
  useEffect(() => setCursors([undefined]), [searched, storeId, livemode])

  const list = useConsoleQuery(["customers", storeId, livemode, searched, cursor], (client) =>
    client.SearchCustomers({ store_id: storeId, livemode, limit: PAGE_SIZE, cursor, ...(searched === "" ? {} : { search: searched }) }))

  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Customers</h1>
          <p className="muted">Everyone who pays you with a customer attached: their points, tier and consent.</p>
        </div>
        <PermittedButton permission="customer.write" kind="primary" onClick={() => setAdding(true)}>Add customer</PermittedButton>
      </div>
      <PermissionNote permission="customer.write" />
      <div className="filter filter-grow search-field">
        <label htmlFor={searchId}>Search customers</label>
        <input id={searchId} type="search" value={search} onChange={(event) => setSearch(event.target.value)} placeholder="E-mail, name, phone or external id" />
      </div>
      {list.error ? <LoadError error={list.error} retry={() => void list.refetch()} /> : null}
      <section className="card table-card" aria-busy={list.isFetching}>
        {list.isPending ? <Loading /> : list.data === undefined || list.data.data.length === 0
          ? (
            <Empty title={searched === "" ? "No customers yet" : `No customer matches “${searched}”`}>
              <p>{searched === "" ? "Customers appear when your server creates them with the API, or when you add one." : "Try part of the e-mail, the name or the external id."}</p>
            </Empty>
          )
          : (
            <table className="table">
              <caption className="visually-hidden">Customers, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Customer</th>
                  <th scope="col" className="hide-narrow">External id</th>
                  <th scope="col">Points</th>
                  <th scope="col" className="hide-narrow">Tier</th>
                  <th scope="col" className="hide-narrow">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((customer) => (
                  <tr key={customer.id} data-customer-id={customer.id} className="clickable" onClick={() => navigate(`/customers/${customer.id}`)}>
                    <td>
                      <a href={`/console/customers/${customer.id}`} onClick={(event) => {
                        event.preventDefault()
                        navigate(`/customers/${customer.id}`)
                      }}>
                        <strong>{customer.name ?? customer.email ?? customer.external_id ?? customer.id}</strong>
                      </a>
                      {customer.name !== null && customer.email !== null ? <div className="muted small">{customer.email}</div> : null}
                    </td>
                    <td className="hide-narrow mono">{customer.external_id ?? "—"}</td>
                    <td className="numeric">{customer.points_balance.toLocaleString("en-US")}</td>
                    <td className="hide-narrow">{customer.tier?.name ?? "—"}</td>
                    <td className="hide-narrow nowrap">{formatTime(customer.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        <div className="pager">
          <Button disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>Previous</Button>
          <Button disabled={list.data?.has_more !== true} onClick={() => list.data?.next_cursor != null && setCursors([...cursors, list.data.next_cursor])}>Next</Button>
        </div>
      </section>
      <AddCustomerDialog open={adding} onClose={() => setAdding(false)} />
    </div>
  )
}

const EMPTY = { email: "", name: "", external_id: "", phone: "", referral_code: "" }

const AddCustomerDialog = ({ open, onClose }: { readonly open: boolean; readonly onClose: () => void }) => {
  const { livemode, store } = useWorkspace()
  const queryClient = useQueryClient()
  const [form, setForm] = useState(EMPTY)
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey)
  const optional = (value: string) => value.trim() === "" ? undefined : value.trim()
  const create = useConsoleMutation((client, _: void) =>
    client.CreateCustomer({
      store_id: store!.id,
      livemode,
      email: optional(form.email),
      name: optional(form.name),
      external_id: optional(form.external_id),
      phone: optional(form.phone),
      referral_code: optional(form.referral_code),
      idempotency_key: idempotencyKey
    }), {
    onSuccess: (customer) => {
      void queryClient.invalidateQueries({ queryKey: ["customers", store!.id] })
      onClose()
      navigate(`/customers/${customer.id}`)
    }
  })
  // Changed values are another submission; a retry of the same values keeps its key, so it is made once.
  useEffect(() => setIdempotencyKey(newIdempotencyKey()), [form])
  useEffect(() => {
    if (open) {
      setForm(EMPTY)
      create.reset()
    }
  }, [open])
  const set = (field: keyof typeof EMPTY) => (value: string) => setForm((previous) => ({ ...previous, [field]: value }))
  const error: ConsoleFailure | null = create.error
  return (
    <Dialog title="Add a customer" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={error} fields={Object.keys(EMPTY)} />
          <p className="muted">An e-mail or an external id (or both): either finds the customer again.</p>
          <Field label="E-mail" name="email" type="email" value={form.email} onChange={set("email")} error={error} autoFocus />
          <Field label="Name (optional)" name="name" value={form.name} onChange={set("name")} error={error} />
          <Field label="External id (optional)" name="external_id" value={form.external_id} onChange={set("external_id")} error={error} hint="Your own id of the customer, e.g. from your CRM." />
          <Field label="Phone (optional)" name="phone" type="tel" value={form.phone} onChange={set("phone")} error={error} />
          <Field label="Referred by code (optional)" name="referral_code" value={form.referral_code} onChange={set("referral_code")} error={error} hint="The referral code of the customer who sent them." />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Add customer</Button>
        </footer>
      </form>
    </Dialog>
  )
}
