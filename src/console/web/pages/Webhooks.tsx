/**
 * Webhooks: the store's endpoints (create with an event picker and the signing secret shown once, turn
 * off and on, delete) and each endpoint's delivery attempts, with resend.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useId, useState } from "react"
import { WebhookEventTypes, type WebhookEndpoint, type WebhookEndpointWithSecret } from "../../../../domain/Webhooks.ts"
import { Link, navigate } from "../router.tsx"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading } from "../ui.tsx"
import { useWorkspace } from "../workspace.tsx"

export const WebhooksPage = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const endpoints = useConsoleQuery(["webhooks", storeId], (client) => client.ListWebhookEndpoints({ store_id: storeId }))
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<WebhookEndpointWithSecret | undefined>(undefined)
  const [deleting, setDeleting] = useState<WebhookEndpoint | undefined>(undefined)
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["webhooks", storeId] })
  const toggle = useConsoleMutation((client, endpoint: WebhookEndpoint) => client.SetWebhookEndpointEnabled({ id: endpoint.id, enabled: !endpoint.enabled }), {
    onSuccess: refresh
  })
  const remove = useConsoleMutation((client, endpoint: WebhookEndpoint) => client.DeleteWebhookEndpoint({ id: endpoint.id }), {
    onSuccess: () => {
      setDeleting(undefined)
      refresh()
    }
  })

  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Webhooks</h1>
          <p className="muted">Your server hears about payments as they happen. Each delivery is signed (Standard Webhooks).</p>
        </div>
        <Button kind="primary" onClick={() => setCreating(true)}>Add endpoint</Button>
      </div>
      {endpoints.error ? <div className="alert alert-error" role="alert">{endpoints.error.message}</div> : null}
      {toggle.error ? <div className="alert alert-error" role="alert">{toggle.error.message}</div> : null}
      <section className="card table-card">
        {endpoints.isPending ? <Loading /> : (endpoints.data?.data.length ?? 0) === 0
          ? <Empty title="No endpoints yet" />
          : (
            <table className="table">
              <caption className="visually-hidden">Webhook endpoints</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col" className="hide-narrow">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {endpoints.data!.data.map((endpoint) => (
                  <tr key={endpoint.id}>
                    <td className="mono break"><Link to={`/webhooks/${endpoint.id}`}>{endpoint.url}</Link></td>
                    <td className="hide-narrow">{endpoint.events.includes("*") ? "All events" : endpoint.events.join(", ")}</td>
                    <td>{endpoint.enabled ? <span className="badge badge-paid">Enabled</span> : <span className="badge badge-expired">Disabled</span>}</td>
                    <td className="row-actions">
                      <Button kind="ghost" onClick={() => toggle.mutate(endpoint)}>{endpoint.enabled ? "Disable" : "Enable"}<span className="visually-hidden"> {endpoint.url}</span></Button>
                      <Button kind="ghost" onClick={() => setDeleting(endpoint)}>Delete<span className="visually-hidden"> {endpoint.url}</span></Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
      <CreateEndpointDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(endpoint) => {
          setCreating(false)
          setCreated(endpoint)
          refresh()
        }}
      />
      <Dialog title="Signing secret" open={created !== undefined} onClose={() => setCreated(undefined)}>
        <div className="dialog-body">
          <div className="alert alert-warning" role="note">Verify every delivery with this secret. Keep it on your server only.</div>
          <SecretField secret={created?.secret ?? ""} />
        </div>
        <footer className="dialog-footer">
          <Button kind="primary" onClick={() => {
            const id = created?.id
            setCreated(undefined)
            if (id !== undefined) navigate(`/webhooks/${id}`)
          }}>Done</Button>
        </footer>
      </Dialog>
      <Dialog title="Delete endpoint" open={deleting !== undefined} onClose={() => setDeleting(undefined)}>
        <div className="dialog-body">
          <FormError error={remove.error} fields={[]} />
          <p>No more events will be sent to <span className="mono break">{deleting?.url}</span>. Its delivery log is deleted with it.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setDeleting(undefined)}>Cancel</Button>
          <Button kind="danger" busy={remove.isPending} onClick={() => deleting !== undefined && remove.mutate(deleting)}>Delete endpoint</Button>
        </footer>
      </Dialog>
    </div>
  )
}

export const SecretField = ({ secret }: { readonly secret: string }) => {
  const [copied, setCopied] = useState(false)
  const id = useId()
  useEffect(() => setCopied(false), [secret])
  return (
    <>
      <label htmlFor={id} className="field-label">Secret</label>
      <div className="secret-row">
        <input id={id} className="mono" readOnly value={secret} onFocus={(event) => event.target.select()} />
        <Button onClick={() => void navigator.clipboard.writeText(secret).then(() => setCopied(true), () => setCopied(false))}>
          {copied ? "Copied" : "Copy"}
        </Button>
      </div>
      <p className="visually-hidden" role="status">{copied ? "Copied to the clipboard" : ""}</p>
    </>
  )
}

const CreateEndpointDialog = (
  { onClose, onCreated, open }: { readonly open: boolean; readonly onClose: () => void; readonly onCreated: (endpoint: WebhookEndpointWithSecret) => void }
) => {
  const { store } = useWorkspace()
  const [url, setUrl] = useState("")
  const [all, setAll] = useState(true)
  const [events, setEvents] = useState<ReadonlyArray<string>>(["payment.completed", "payment.refunded"])
  const create = useConsoleMutation((client, _: void) =>
    client.CreateWebhookEndpoint({
      store_id: store!.id,
      url: url.trim(),
      events: (all ? ["*"] : events) as never
    }), { onSuccess: onCreated })
  useEffect(() => {
    if (open) {
      setUrl("")
      setAll(true)
      create.reset()
    }
  }, [open])
  const error: ConsoleFailure | null = create.error
  const eventsError = error?.param?.startsWith("events") === true ? error : undefined
  return (
    <Dialog title="Add a webhook endpoint" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={eventsError === undefined ? error : null} fields={["url"]} />
          <Field label="Endpoint URL" name="url" type="url" value={url} onChange={setUrl} error={error} placeholder="https://shop.example.com/hooks/khqr" required autoFocus />
          <fieldset className="events">
            <legend>Events to send</legend>
            <label className="check"><input type="checkbox" checked={all} onChange={(event) => setAll(event.target.checked)} /> All events</label>
            {all ? null : (
              <div className="event-grid">
                {WebhookEventTypes.filter((type) => type !== "test.event").map((type) => (
                  <label key={type} className="check">
                    <input
                      type="checkbox"
                      checked={events.includes(type)}
                      onChange={(event) => setEvents(event.target.checked ? [...events, type] : events.filter((chosen) => chosen !== type))}
                    />{" "}
                    <span className="mono">{type}</span>
                  </label>
                ))}
              </div>
            )}
            {eventsError === undefined ? null : <p className="field-error" role="alert">{eventsError.message}</p>}
          </fieldset>
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Add endpoint</Button>
        </footer>
      </form>
    </Dialog>
  )
}

export const WebhookEndpointPage = ({ id }: { readonly id: string }) => {
  const [resent, setResent] = useState<string | undefined>(undefined)
  // After a resend the new attempt goes out within about a second: the log is read again every two
  // seconds for a while, so it shows up without a click.
  const deliveries = useConsoleQuery(["webhook-deliveries", id], (client) => client.WebhookDeliveries({ id: id as never }), {
    refetchIntervalMs: resent === undefined ? false : 2000
  })
  useEffect(() => {
    if (resent === undefined) return
    const stop = setTimeout(() => setResent(undefined), 30_000)
    return () => clearTimeout(stop)
  }, [resent])
  const resend = useConsoleMutation((client, deliveryId: string) => client.ResendWebhookDelivery({ id: deliveryId as never }), {
    onSuccess: (event) => setResent(event.type)
  })
  return (
    <div className="page">
      <p className="breadcrumb"><Link to="/webhooks">← Webhooks</Link></p>
      <div className="page-header">
        <div>
          <p className="muted mono">{id}</p>
          <h1>Deliveries</h1>
        </div>
        <Button onClick={() => void deliveries.refetch()} busy={deliveries.isFetching}>Refresh</Button>
      </div>
      {resent === undefined ? null : <div className="alert alert-success" role="status">The {resent} event is queued to be sent again.</div>}
      {resend.error ? <div className="alert alert-error" role="alert">{resend.error.message}</div> : null}
      {deliveries.error ? <div className="alert alert-error" role="alert">{deliveries.error.message}</div> : null}
      <section className="card table-card">
        {deliveries.isPending ? <Loading /> : (deliveries.data?.data.length ?? 0) === 0
          ? <Empty title="No deliveries yet">Events are sent here as they happen.</Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Delivery attempts, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Result</th>
                  <th scope="col" className="hide-narrow">Attempt</th>
                  <th scope="col" className="hide-narrow">Time</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {deliveries.data!.data.map((delivery) => (
                  <tr key={delivery.id} data-delivery-id={delivery.id}>
                    <td className="mono">{delivery.event_type}</td>
                    <td>
                      {delivery.status_code !== null && delivery.status_code < 300
                        ? <span className="badge badge-paid">{delivery.status_code} OK</span>
                        : <span className="badge badge-failed" title={delivery.error ?? undefined}>{delivery.status_code ?? "No answer"}</span>}
                      <span className="muted small"> {delivery.duration_ms} ms</span>
                    </td>
                    <td className="hide-narrow">{delivery.attempt}</td>
                    <td className="hide-narrow nowrap">{formatTime(delivery.created_at)}</td>
                    <td className="row-actions">
                      <Button kind="ghost" busy={resend.isPending} onClick={() => resend.mutate(delivery.id)}>Resend<span className="visually-hidden"> {delivery.event_type}</span></Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
    </div>
  )
}
