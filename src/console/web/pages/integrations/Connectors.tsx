/**
 * Connectors: the store's installed connectors (configure, send a test event and see its delivery record,
 * remove) and the marketplace to install from. Secret config fields are write-only: the service answers
 * them masked, and the form leaves a secret as it is unless a new value is typed.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { Connector, ConnectorDelivery, MarketplaceItem } from "../../../../../domain/Connectors.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"
import { useWorkspace } from "../../workspace.tsx"
import { SecretField } from "../Webhooks.tsx"

export const ConnectorsPage = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const marketplace = useConsoleQuery(["marketplace"], (client) => client.Marketplace())
  const installed = useConsoleQuery(["connectors", storeId], (client) => client.ListConnectors({ store_id: storeId, limit: 100 }))
  const [installing, setInstalling] = useState<MarketplaceItem | undefined>(undefined)
  const [configuring, setConfiguring] = useState<Connector | undefined>(undefined)
  const [signingSecret, setSigningSecret] = useState<string | undefined>(undefined)
  const [removing, setRemoving] = useState<Connector | undefined>(undefined)
  const [tested, setTested] = useState<{ readonly connector: Connector; readonly delivery: ConnectorDelivery } | undefined>(undefined)
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["connectors", storeId] })
  const test = useConsoleMutation((client, connector: Connector) => client.TestConnector({ id: connector.id }), {
    onSuccess: (delivery, connector) => setTested({ connector, delivery })
  })
  const remove = useConsoleMutation((client, connector: Connector) => client.RemoveConnector({ id: connector.id }), {
    onSuccess: () => {
      setRemoving(undefined)
      refresh()
    }
  })
  const itemOf = (type: string) => marketplace.data?.data.find((item) => item.key === type)

  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Connectors</h1>
          <p className="muted">Send the store's events to the tools you run it with. Deliveries are signed and retried like webhooks.</p>
        </div>
      </div>
      <PermissionNote permission="integration.manage" />
      <ErrorNotice error={installed.error ?? marketplace.error ?? test.error} />
      <section className="card table-card" aria-labelledby="installed-title">
        <div className="card-header"><h2 id="installed-title">Installed</h2></div>
        {installed.isPending ? <Loading /> : (installed.data?.data.length ?? 0) === 0
          ? <Empty title="No connectors installed"><p>Pick one from the marketplace below.</p></Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Installed connectors</caption>
              <thead>
                <tr>
                  <th scope="col">Connector</th>
                  <th scope="col" className="hide-narrow">Delivers to</th>
                  <th scope="col">Status</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {installed.data!.data.map((connector) => (
                  <tr key={connector.id}>
                    <td>{connector.name}<span className="muted small"> · {itemOf(connector.type)?.name ?? connector.type}</span></td>
                    <td className="hide-narrow mono small break">{connector.config["url"] ?? "—"}</td>
                    <td>{connector.enabled ? <span className="badge badge-paid">Enabled</span> : <span className="badge badge-expired">Disabled</span>}</td>
                    <td className="row-actions">
                      <PermittedButton permission="integration.manage" kind="ghost" onClick={() => test.mutate(connector)} busy={test.isPending && test.variables?.id === connector.id} disabled={!connector.enabled}>
                        Send test event<span className="visually-hidden"> to {connector.name}</span>
                      </PermittedButton>
                      <PermittedButton permission="integration.manage" kind="ghost" onClick={() => setConfiguring(connector)}>Configure<span className="visually-hidden"> {connector.name}</span></PermittedButton>
                      <PermittedButton permission="integration.manage" kind="ghost" onClick={() => setRemoving(connector)}>Remove<span className="visually-hidden"> {connector.name}</span></PermittedButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
      <section aria-labelledby="marketplace-title">
        <h2 id="marketplace-title" className="section-title">Marketplace</h2>
        {marketplace.isPending ? <Loading /> : (
          <ul className="tiles">
            {(marketplace.data?.data ?? []).map((item) => (
              <li key={item.key} className="card tile">
                <span className="badge">{item.category}</span>
                <h3>{item.name}</h3>
                <p className="muted small">{item.description}</p>
                <div><PermittedButton permission="integration.manage" onClick={() => setInstalling(item)}>Install<span className="visually-hidden"> {item.name}</span></PermittedButton></div>
              </li>
            ))}
          </ul>
        )}
      </section>
      <ConnectorDialog
        // A fresh form for each connector: nothing typed for one (a secret least of all) shows in another's.
        key={configuring?.id ?? installing?.key ?? "closed"}
        item={installing ?? (configuring === undefined ? undefined : itemOf(configuring.type))}
        connector={configuring}
        onClose={() => {
          setInstalling(undefined)
          setConfiguring(undefined)
        }}
        onSaved={(saved) => {
          setInstalling(undefined)
          setConfiguring(undefined)
          if (saved.signing_secret !== undefined) setSigningSecret(saved.signing_secret)
          refresh()
        }}
      />
      <Dialog title="Connector signing secret" open={signingSecret !== undefined} onClose={() => setSigningSecret(undefined)}>
        <div className="dialog-body">
          <div className="alert alert-warning" role="note">Shown once. The receiving tool verifies each delivery with it.</div>
          <SecretField secret={signingSecret ?? ""} />
        </div>
        <footer className="dialog-footer"><Button kind="primary" onClick={() => setSigningSecret(undefined)}>Done</Button></footer>
      </Dialog>
      <Dialog title="Test event sent" open={tested !== undefined} onClose={() => setTested(undefined)}>
        {tested === undefined ? null : (
          <>
            <div className="dialog-body">
              <DeliveryOutcome delivery={tested.delivery} />
              <dl className="details">
                <dt>Connector</dt><dd>{tested.connector.name}</dd>
                <dt>Event</dt><dd className="mono">{tested.delivery.event_type}</dd>
                <dt>Delivery</dt><dd className="mono small break">{tested.delivery.id}</dd>
                <dt>Answer</dt><dd>{tested.delivery.status_code ?? "None"}</dd>
                {tested.delivery.error === null ? null : <div className="details-row"><dt>Error</dt><dd className="break">{tested.delivery.error}</dd></div>}
                <dt>Time</dt><dd>{formatTime(tested.delivery.created_at)}</dd>
              </dl>
            </div>
            <footer className="dialog-footer"><Button kind="primary" onClick={() => setTested(undefined)}>Done</Button></footer>
          </>
        )}
      </Dialog>
      <Dialog title="Remove connector" open={removing !== undefined} onClose={() => setRemoving(undefined)}>
        <div className="dialog-body">
          <FormError error={remove.error} fields={[]} />
          <p><strong>{removing?.name}</strong> stops receiving events; its queued deliveries and delivery records are removed with it.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setRemoving(undefined)}>Cancel</Button>
          <Button kind="danger" busy={remove.isPending} onClick={() => removing !== undefined && remove.mutate(removing)}>Remove connector</Button>
        </footer>
      </Dialog>
    </div>
  )
}

const DeliveryOutcome = ({ delivery }: { readonly delivery: ConnectorDelivery }) =>
  delivery.status === "delivered"
    ? <div className="alert alert-success" role="status">Delivered: the receiver answered {delivery.status_code}.</div>
    : delivery.status === "pending"
    ? <div className="alert alert-warning" role="status">Still on its way: the first attempt had not finished. It is retried like any webhook.</div>
    : <div className="alert alert-error" role="alert">Not delivered{delivery.status_code === null ? "" : `: the receiver answered ${delivery.status_code}`}. It is retried like any webhook.</div>

/** Install (no `connector`) or configure one. Secret fields start empty; left empty they keep their value. */
const ConnectorDialog = (props: {
  readonly item: MarketplaceItem | undefined
  readonly connector: Connector | undefined
  readonly onClose: () => void
  readonly onSaved: (connector: Connector) => void
}) => {
  const { store } = useWorkspace()
  const { connector, item } = props
  const [name, setName] = useState(connector?.name ?? item?.name ?? "")
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries((item?.config_fields ?? []).map((field) => [field.key, field.secret ? "" : connector?.config[field.key] ?? ""]))
  )
  const [enabled, setEnabled] = useState(connector?.enabled ?? true)
  const save = useConsoleMutation((client, _: void) => {
    const config = Object.fromEntries(
      (item?.config_fields ?? []).flatMap((field) => {
        const value = (values[field.key] ?? "").trim()
        // A secret left empty keeps its stored value: sent back masked, as answered.
        if (field.secret && value === "" && connector !== undefined) return [[field.key, connector.config[field.key] ?? ""]]
        return value === "" && !field.required ? [] : [[field.key, value]]
      })
    )
    return connector === undefined
      ? client.InstallConnector({ store_id: store!.id, type: item!.key, name: name.trim() === "" ? item!.name : name.trim(), config, enabled })
      : client.UpdateConnector({ id: connector.id, name: name.trim() === "" ? connector.name : name.trim(), config, enabled })
  }, { onSuccess: props.onSaved })
  const fieldNames = ["name", ...(item?.config_fields ?? []).map((field) => `config.${field.key}`)]
  return (
    <Dialog title={connector === undefined ? `Install ${item?.name ?? ""}` : `Configure ${connector.name}`} open={item !== undefined} onClose={props.onClose}>
      {item === undefined ? null : (
        <form onSubmit={(event) => {
          event.preventDefault()
          save.mutate()
        }} noValidate>
          <div className="dialog-body">
            <FormError error={save.error} fields={fieldNames} />
            <Field label="Name" name="name" value={name} onChange={setName} error={save.error} />
            {item.config_fields.map((field) => (
              <Field
                key={field.key}
                label={field.label + (field.required ? "" : " (optional)")}
                name={`config.${field.key}`}
                type={field.secret ? "password" : field.key === "url" ? "url" : "text"}
                autoComplete={field.secret ? "new-password" : "off"}
                value={values[field.key] ?? ""}
                onChange={(value) => setValues({ ...values, [field.key]: value })}
                error={save.error}
                {...(field.secret && connector !== undefined ? { placeholder: `Saved: ${connector.config[field.key] ?? "—"}`, hint: "Write-only. Leave empty to keep the saved value." } : {})}
                {...(field.secret && connector === undefined ? { hint: "Write-only: stored encrypted and never shown again." } : {})}
              />
            ))}
            <label className="check"><input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} /> Enabled</label>
          </div>
          <footer className="dialog-footer">
            <Button onClick={props.onClose}>Cancel</Button>
            <Button kind="primary" type="submit" busy={save.isPending}>{connector === undefined ? "Install" : "Save"}</Button>
          </footer>
        </form>
      )}
    </Dialog>
  )
}
