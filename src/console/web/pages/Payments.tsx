/**
 * Payments: the list with filters and cursor paging, rows that follow the live feed, and the test
 * payment form (test mode).
 */
import { type InfiniteData, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useEffect, useId, useState } from "react"
import type { PaymentFeedFrame } from "../../../../domain/Console.ts"
import type { ConsoleClientShape } from "../../../../domain/ConsoleClient.ts"
import type { PaymentList, PaymentStatus } from "../../../../domain/Payments.ts"
import { navigate } from "../router.tsx"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery, useLiveFeed } from "../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatAmount, formatTime, Loading, newIdempotencyKey, StatusBadge } from "../ui.tsx"
import { PermittedButton } from "../ui/Permitted.tsx"
import { useWorkspace } from "../workspace.tsx"
import { type Filters, listPayments, NO_FILTERS, paymentsKey } from "./PaymentsList.ts"

const STATUSES: ReadonlyArray<PaymentStatus> = ["pending", "scanned", "paid", "expired", "failed", "cancelled", "refunded", "partially_refunded"]

export const PaymentsPage = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const [draft, setDraft] = useState<Filters>(NO_FILTERS)
  const [filters, setFilters] = useState<Filters>(NO_FILTERS)
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  const [creating, setCreating] = useState(false)
  const cursor = cursors.at(-1)
  const list = useConsoleQuery(paymentsKey(storeId, livemode, filters, cursor), listPayments(storeId, livemode, filters, cursor))

  useEffect(() => setCursors([undefined]), [storeId, livemode])

  // A changed payment is updated in place; one the page does not show yet (a new one) refreshes the page.
  // The feed follows once the first page is shown: opened beside it, its set-up and the page it reads again
  // when it starts (a change may fall between the two) would hold back the first rows.
  const [shown, setShown] = useState(false)
  useEffect(() => {
    if (list.data !== undefined) setShown(true)
  }, [list.data])
  const feed = shown ? (client: ConsoleClientShape) => client.PaymentFeed({ store_id: storeId, livemode }) : undefined
  useLiveFeed(`payments:${storeId}:${livemode}:${shown}`, feed, (frame: PaymentFeedFrame) => {
    if (frame._tag === "PaymentFeedSynced") {
      void queryClient.invalidateQueries({ queryKey: ["payments", storeId, livemode] })
      return
    }
    let shown = false
    queryClient.setQueriesData<PaymentList>({ queryKey: ["payments", storeId, livemode] }, (page) => {
      if (page === undefined || (page as unknown as InfiniteData<unknown>).pages !== undefined) return page
      if (!page.data.some((payment) => payment.id === frame.id)) return page
      shown = true
      return { ...page, data: page.data.map((payment) => payment.id === frame.id ? { ...payment, status: frame.status, amount_refunded: frame.amount_refunded } : payment) } as PaymentList
    })
    void queryClient.invalidateQueries({ queryKey: ["payment", frame.id] })
    if (!shown) void queryClient.invalidateQueries({ queryKey: ["payments", storeId, livemode] })
  })

  const apply = (event: FormEvent) => {
    event.preventDefault()
    setFilters(draft)
    setCursors([undefined])
  }
  const clear = () => {
    setDraft(NO_FILTERS)
    setFilters(NO_FILTERS)
    setCursors([undefined])
  }
  const filtered = filters !== NO_FILTERS
  const statusId = useId()
  const fromId = useId()
  const toId = useId()
  const referenceId = useId()

  return (
    <div className="page">
      <div className="page-header">
        <h1>Payments</h1>
        {livemode ? null : <PermittedButton permission="payment.write" kind="primary" onClick={() => setCreating(true)}>Create test payment</PermittedButton>}
      </div>
      <form className="filters" onSubmit={apply} aria-label="Filter payments">
        <div className="filter">
          <label htmlFor={statusId}>Status</label>
          <select id={statusId} value={draft.status} onChange={(event) => setDraft({ ...draft, status: event.target.value as Filters["status"] })}>
            <option value="">All</option>
            {STATUSES.map((status) => <option key={status} value={status}>{status.replace("_", " ")}</option>)}
          </select>
        </div>
        <div className="filter">
          <label htmlFor={fromId}>From</label>
          <input id={fromId} type="date" value={draft.from} onChange={(event) => setDraft({ ...draft, from: event.target.value })} />
        </div>
        <div className="filter">
          <label htmlFor={toId}>To</label>
          <input id={toId} type="date" value={draft.to} onChange={(event) => setDraft({ ...draft, to: event.target.value })} />
        </div>
        <div className="filter filter-grow">
          <label htmlFor={referenceId}>Reference</label>
          <input id={referenceId} type="search" value={draft.reference} placeholder="Exact reference" onChange={(event) => setDraft({ ...draft, reference: event.target.value })} />
        </div>
        <div className="filter-actions">
          <Button type="submit">Apply</Button>
          {filtered ? <Button kind="ghost" onClick={clear}>Clear</Button> : null}
        </div>
      </form>
      {list.error ? <div className="alert alert-error" role="alert">{list.error.message}</div> : null}
      <section className="card table-card">
        {list.isPending ? <Loading /> : list.data === undefined || list.data.data.length === 0
          ? <Empty title={filtered ? "No payments match these filters" : "No payments yet"} />
          : (
            <table className="table">
              <caption className="visually-hidden">Payments, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Amount</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="hide-narrow">Reference</th>
                  <th scope="col" className="hide-narrow">Description</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((payment) => (
                  <tr key={payment.id} data-payment-id={payment.id} className="clickable" onClick={() => navigate(`/payments/${payment.id}`)}>
                    <td className="amount">
                      <a href={`/console/payments/${payment.id}`} onClick={(event) => {
                        event.preventDefault()
                        navigate(`/payments/${payment.id}`)
                      }}>
                        {formatAmount(payment.amount, payment.currency)}
                      </a>
                    </td>
                    <td><StatusBadge status={payment.status} /></td>
                    <td className="hide-narrow mono">{payment.reference_id ?? "—"}</td>
                    <td className="hide-narrow">{payment.description ?? "—"}</td>
                    <td className="nowrap">{formatTime(payment.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        <div className="pager">
          <Button disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>Previous</Button>
          <Button
            disabled={list.data?.has_more !== true}
            onClick={() => list.data?.next_cursor != null && setCursors([...cursors, list.data.next_cursor])}
          >
            Next
          </Button>
        </div>
      </section>
      <CreateTestPaymentDialog open={creating} onClose={() => setCreating(false)} />
    </div>
  )
}

const CreateTestPaymentDialog = ({ open, onClose }: { readonly open: boolean; readonly onClose: () => void }) => {
  const { store } = useWorkspace()
  const queryClient = useQueryClient()
  const [form, setForm] = useState({ amount: "", currency: "USD" as "USD" | "KHR", reference_id: "", description: "" })
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey)
  const create = useConsoleMutation((client, _: void) =>
    client.CreateTestPayment({
      store_id: store!.id,
      amount: form.amount.trim(),
      currency: form.currency,
      ...(form.reference_id.trim() === "" ? {} : { reference_id: form.reference_id.trim() }),
      ...(form.description.trim() === "" ? {} : { description: form.description.trim() }),
      idempotency_key: idempotencyKey
    }), {
    onSuccess: (payment) => {
      void queryClient.invalidateQueries({ queryKey: ["payments", store!.id, false] })
      onClose()
      navigate(`/payments/${payment.id}`)
    }
  })
  // Changed values are another submission; a retry of the same values keeps its key, so it is made once.
  useEffect(() => setIdempotencyKey(newIdempotencyKey()), [form])
  useEffect(() => {
    if (open) {
      setForm({ amount: "", currency: "USD", reference_id: "", description: "" })
      create.reset()
    }
  }, [open])
  const set = (field: keyof typeof form) => (value: string) => setForm((previous) => ({ ...previous, [field]: value }))
  const error: ConsoleFailure | null = create.error
  const currencyId = useId()
  return (
    <Dialog title="Create a test payment" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={error} fields={["amount", "currency", "reference_id", "description"]} />
          <div className="field-row">
            <Field label="Amount" name="amount" value={form.amount} onChange={set("amount")} inputMode="decimal" placeholder="12.50" error={error} required autoFocus />
            <div className="field">
              <label htmlFor={currencyId}>Currency</label>
              <select id={currencyId} value={form.currency} onChange={(event) => set("currency")(event.target.value)}>
                <option value="USD">USD</option>
                <option value="KHR">KHR</option>
              </select>
            </div>
          </div>
          <Field label="Reference (optional)" name="reference_id" value={form.reference_id} onChange={set("reference_id")} error={error} hint="Your order number; shown in the list and searchable." />
          <Field label="Description (optional)" name="description" value={form.description} onChange={set("description")} error={error} />
        </div>
        <footer className="dialog-footer">
          <Button kind="secondary" onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Create payment</Button>
        </footer>
      </form>
    </Dialog>
  )
}
