/**
 * API keys of the store: create (the secret shown once, with a copy button), rotate (a new secret, the old
 * key stops at once), revoke; when each was last used.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useId, useState } from "react"
import type { ApiKey, ApiKeyWithSecret } from "../../../../domain/ApiKeys.ts"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading } from "../ui.tsx"
import { PermissionNote, PermittedButton } from "../ui/Permitted.tsx"
import { useWorkspace } from "../workspace.tsx"

export const ApiKeysPage = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const keys = useConsoleQuery(["api-keys", storeId], (client) => client.ListApiKeys({ store_id: storeId }))
  const [creating, setCreating] = useState(false)
  const [revealed, setRevealed] = useState<{ readonly key: ApiKeyWithSecret; readonly rotated: boolean } | undefined>(undefined)
  const [confirm, setConfirm] = useState<{ readonly key: ApiKey; readonly action: "rotate" | "revoke" } | undefined>(undefined)
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["api-keys", storeId] })

  const rotate = useConsoleMutation((client, id: ApiKey["id"]) => client.RotateApiKey({ id }), {
    onSuccess: (key) => {
      setConfirm(undefined)
      setRevealed({ key, rotated: true })
      refresh()
    }
  })
  const revoke = useConsoleMutation((client, id: ApiKey["id"]) => client.RevokeApiKey({ id }), {
    onSuccess: () => {
      setConfirm(undefined)
      refresh()
    }
  })
  const mode = livemode ? "live" : "test"
  const shown = keys.data?.data.filter((key) => key.mode === mode) ?? []

  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>API keys</h1>
          <p className="muted">Your server uses a secret key to create payments and read them. {livemode ? "Live keys move real money." : "Test keys see test data only."}</p>
        </div>
        <PermittedButton permission="api_key.manage" kind="primary" onClick={() => setCreating(true)}>Create {mode} key</PermittedButton>
      </div>
      <PermissionNote permission="api_key.manage" />
      {keys.error ? <div className="alert alert-error" role="alert">{keys.error.message}</div> : null}
      <section className="card table-card">
        {keys.isPending ? <Loading /> : shown.length === 0
          ? <Empty title={`No ${mode} keys yet`} />
          : (
            <table className="table">
              <caption className="visually-hidden">{mode} API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col" className="hide-narrow">Created</th>
                  <th scope="col" className="hide-narrow">Last used</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {shown.map((key) => (
                  <tr key={key.id} data-key-id={key.id}>
                    <td>{key.name ?? <span className="muted">Unnamed</span>}</td>
                    <td className="mono nowrap">
                      sk_{key.mode}_…{key.last4} {key.revoked_at === null ? null : <span className="badge badge-expired">Revoked</span>}
                    </td>
                    <td className="hide-narrow nowrap">{formatTime(key.created_at)}</td>
                    <td className="hide-narrow nowrap">{key.last_used_at === null ? "Never" : formatTime(key.last_used_at)}</td>
                    <td className="row-actions">
                      {key.revoked_at === null
                        ? (
                          <>
                            <PermittedButton permission="api_key.manage" kind="ghost" onClick={() => setConfirm({ key, action: "rotate" })}>Rotate<span className="visually-hidden"> {key.name ?? key.last4}</span></PermittedButton>
                            <PermittedButton permission="api_key.manage" kind="ghost" onClick={() => setConfirm({ key, action: "revoke" })}>Revoke<span className="visually-hidden"> {key.name ?? key.last4}</span></PermittedButton>
                          </>
                        )
                        : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
      <CreateKeyDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(key) => {
          setCreating(false)
          setRevealed({ key, rotated: false })
          refresh()
        }}
      />
      <Dialog
        title={confirm?.action === "rotate" ? "Rotate API key" : "Revoke API key"}
        open={confirm !== undefined}
        onClose={() => setConfirm(undefined)}
      >
        <div className="dialog-body">
          <FormError error={confirm?.action === "rotate" ? rotate.error : revoke.error} fields={[]} />
          <p>
            {confirm?.action === "rotate"
              ? "A new secret replaces this key. The current secret stops working immediately: update your server with the new one right away."
              : "Requests with this key will be refused from now on. This cannot be undone."}
          </p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setConfirm(undefined)}>Cancel</Button>
          {confirm?.action === "rotate"
            ? <Button kind="primary" busy={rotate.isPending} onClick={() => rotate.mutate(confirm.key.id)}>Rotate key</Button>
            : <Button kind="danger" busy={revoke.isPending} onClick={() => confirm !== undefined && revoke.mutate(confirm.key.id)}>Revoke key</Button>}
        </footer>
      </Dialog>
      <SecretDialog revealed={revealed} onClose={() => setRevealed(undefined)} />
    </div>
  )
}

const CreateKeyDialog = (
  { onClose, onCreated, open }: { readonly open: boolean; readonly onClose: () => void; readonly onCreated: (key: ApiKeyWithSecret) => void }
) => {
  const { livemode, store } = useWorkspace()
  const [name, setName] = useState("")
  const create = useConsoleMutation((client, _: void) =>
    client.CreateApiKey({ store_id: store!.id, mode: livemode ? "live" : "test", ...(name.trim() === "" ? {} : { name: name.trim() }) }), {
    onSuccess: onCreated
  })
  useEffect(() => {
    if (open) {
      setName("")
      create.reset()
    }
  }, [open])
  const error: ConsoleFailure | null = create.error
  return (
    <Dialog title={`Create a ${livemode ? "live" : "test"} key`} open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={error} fields={["name"]} />
          <Field label="Name" name="name" value={name} onChange={setName} error={error} hint="What uses this key, e.g. “Online shop”." autoFocus />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Create key</Button>
        </footer>
      </form>
    </Dialog>
  )
}

/** The one time a secret is shown: copy it now, it cannot be shown again. */
const SecretDialog = (
  { onClose, revealed }: { readonly revealed: { readonly key: ApiKeyWithSecret; readonly rotated: boolean } | undefined; readonly onClose: () => void }
) => {
  const [copied, setCopied] = useState(false)
  const secretId = useId()
  useEffect(() => setCopied(false), [revealed])
  const copy = async () => {
    if (revealed === undefined) return
    await navigator.clipboard.writeText(revealed.key.secret).then(() => setCopied(true), () => setCopied(false))
  }
  return (
    <Dialog title={revealed?.rotated === true ? "Your new secret key" : "Your secret key"} open={revealed !== undefined} onClose={onClose}>
      <div className="dialog-body">
        <div className="alert alert-warning" role="note">
          Copy this key now and keep it somewhere safe. For your security it will not be shown again.
        </div>
        <label htmlFor={secretId} className="field-label">Secret key</label>
        <div className="secret-row">
          <input id={secretId} className="mono" readOnly value={revealed?.key.secret ?? ""} onFocus={(event) => event.target.select()} />
          <Button onClick={() => void copy()}>{copied ? "Copied" : "Copy"}</Button>
        </div>
        <p className="visually-hidden" role="status">{copied ? "The key is copied to the clipboard" : ""}</p>
      </div>
      <footer className="dialog-footer">
        <Button kind="primary" onClick={onClose}>I have saved it</Button>
      </footer>
    </Dialog>
  )
}
