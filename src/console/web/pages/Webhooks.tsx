/**
 * Webhooks: the store's endpoints (create with an event picker and the signing secret shown once, turn
 * off and on, delete), each endpoint's settings (edit its URL and events, rotate its secret) and its
 * delivery attempts, with resend.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useId, useState } from "react"
import type { RotatedWebhookSecret } from "../../../../domain/console/Webhooks.ts"
import { WebhookEventTypes, type WebhookEndpoint, type WebhookEndpointWithSecret } from "../../../../domain/Webhooks.ts"
import { Link, navigate } from "../router.tsx"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading } from "../ui.tsx"
import { DeliveryOutcome } from "../ui/DeliveryOutcome.tsx"
import { PermissionNote, PermittedButton } from "../ui/Permitted.tsx"
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
        <PermittedButton permission="webhook.manage" kind="primary" onClick={() => setCreating(true)}>Add endpoint</PermittedButton>
      </div>
      <PermissionNote permission="webhook.manage" />
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
                      <PermittedButton permission="webhook.manage" kind="ghost" onClick={() => toggle.mutate(endpoint)}>{endpoint.enabled ? "Disable" : "Enable"}<span className="visually-hidden"> {endpoint.url}</span></PermittedButton>
                      <PermittedButton permission="webhook.manage" kind="ghost" onClick={() => setDeleting(endpoint)}>Delete<span className="visually-hidden"> {endpoint.url}</span></PermittedButton>
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
  const create = useConsoleMutation((client, form: EndpointForm) =>
    client.CreateWebhookEndpoint({ store_id: store!.id, url: form.url, events: form.events as never }), { onSuccess: onCreated })
  return (
    <EndpointDialog
      title="Add a webhook endpoint"
      submitLabel="Add endpoint"
      open={open}
      onClose={onClose}
      initial={undefined}
      mutation={create}
    />
  )
}

interface EndpointForm {
  readonly url: string
  readonly events: ReadonlyArray<string>
}

/** The endpoint form (URL and the event picker), to add an endpoint or edit one. */
const EndpointDialog = (
  { initial, mutation, onClose, open, submitLabel, title }: {
    readonly title: string
    readonly submitLabel: string
    readonly open: boolean
    readonly onClose: () => void
    readonly initial: WebhookEndpoint | undefined
    readonly mutation: { readonly mutate: (form: EndpointForm) => void; readonly reset: () => void; readonly error: ConsoleFailure | null; readonly isPending: boolean }
  }
) => {
  const [url, setUrl] = useState("")
  const [all, setAll] = useState(true)
  const [events, setEvents] = useState<ReadonlyArray<string>>(["payment.completed", "payment.refunded"])
  useEffect(() => {
    if (open) {
      setUrl(initial?.url ?? "")
      const everything = initial === undefined || initial.events.includes("*")
      setAll(everything)
      setEvents(everything ? ["payment.completed", "payment.refunded"] : initial.events)
      mutation.reset()
    }
  }, [open])
  const error: ConsoleFailure | null = mutation.error
  const eventsError = error?.param?.startsWith("events") === true ? error : undefined
  return (
    <Dialog title={title} open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        mutation.mutate({ url: url.trim(), events: all ? ["*"] : events })
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
          <Button kind="primary" type="submit" busy={mutation.isPending}>{submitLabel}</Button>
        </footer>
      </form>
    </Dialog>
  )
}

/** The endpoint's URL and events (edit), and its signing secret's rotation with the grace window explained. */
const EndpointSettings = ({ endpoint }: { readonly endpoint: WebhookEndpoint }) => {
  const queryClient = useQueryClient()
  const [editing, setEditing] = useState(false)
  const [rotating, setRotating] = useState(false)
  const [rotated, setRotated] = useState<RotatedWebhookSecret | undefined>(undefined)
  const update = useConsoleMutation((client, form: EndpointForm) =>
    client.UpdateWebhookEndpoint({ id: endpoint.id, url: form.url, events: form.events as never }), {
    onSuccess: () => {
      setEditing(false)
      void queryClient.invalidateQueries({ queryKey: ["webhooks", endpoint.store_id] })
    }
  })
  const rotate = useConsoleMutation((client, _: void) => client.RotateWebhookSecret({ id: endpoint.id }), {
    onSuccess: (answer) => {
      setRotating(false)
      setRotated(answer)
    }
  })
  return (
    <section className="card" aria-labelledby="endpoint-settings-title">
      <div className="card-header">
        <h2 id="endpoint-settings-title">Endpoint</h2>
        <div className="actions">
          <PermittedButton permission="webhook.manage" onClick={() => setEditing(true)}>Edit endpoint</PermittedButton>
          <PermittedButton permission="webhook.manage" onClick={() => setRotating(true)}>Rotate secret</PermittedButton>
        </div>
      </div>
      <dl className="details">
        <dt>URL</dt><dd className="mono break" data-testid="endpoint-url">{endpoint.url}</dd>
        <dt>Events</dt><dd>{endpoint.events.includes("*") ? "All events" : endpoint.events.join(", ")}</dd>
        <dt>Status</dt><dd>{endpoint.enabled ? "Enabled" : "Disabled"}</dd>
      </dl>
      <EndpointDialog title="Edit webhook endpoint" submitLabel="Save changes" open={editing} onClose={() => setEditing(false)} initial={endpoint} mutation={update} />
      <Dialog title="Rotate signing secret" open={rotating} onClose={() => setRotating(false)}>
        <div className="dialog-body">
          <FormError error={rotate.error} fields={[]} />
          <p>A new secret signs every delivery from now on. For the next 24 hours each delivery also carries a signature made with the current secret, so your server keeps accepting them while you deploy the new one. After that the current secret stops working.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setRotating(false)}>Cancel</Button>
          <Button kind="primary" busy={rotate.isPending} onClick={() => rotate.mutate()}>Rotate secret</Button>
        </footer>
      </Dialog>
      <Dialog title="New signing secret" open={rotated !== undefined} onClose={() => setRotated(undefined)}>
        <div className="dialog-body">
          <div className="alert alert-warning" role="note">
            Deploy this secret to your server. The previous secret keeps verifying deliveries until {formatTime(rotated?.previous_secret_expires_at ?? null)}.
          </div>
          <SecretField secret={rotated?.endpoint.secret ?? ""} />
        </div>
        <footer className="dialog-footer">
          <Button kind="primary" onClick={() => setRotated(undefined)}>Done</Button>
        </footer>
      </Dialog>
    </section>
  )
}

export const WebhookEndpointPage = ({ id }: { readonly id: string }) => {
  const { store } = useWorkspace()
  const endpoints = useConsoleQuery(["webhooks", store!.id], (client) => client.ListWebhookEndpoints({ store_id: store!.id }))
  const endpoint = endpoints.data?.data.find((candidate) => candidate.id === id)
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
      {endpoint === undefined ? null : <EndpointSettings endpoint={endpoint} />}
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
                      <DeliveryOutcome delivery={delivery} />
                    </td>
                    <td className="hide-narrow">{delivery.attempt}</td>
                    <td className="hide-narrow nowrap">{formatTime(delivery.created_at)}</td>
                    <td className="row-actions">
                      <PermittedButton permission="webhook.manage" kind="ghost" busy={resend.isPending} onClick={() => resend.mutate(delivery.id)}>Resend<span className="visually-hidden"> {delivery.event_type}</span></PermittedButton>
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
