/**
 * Platform settings (platform administrators): each integration setting with where its value comes from
 * (set here, the environment, or nowhere), masked; set a new value, or clear it back to the environment's.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { PlatformSetting } from "../../../../../domain/Settings.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"

const SOURCE_LABELS: Record<PlatformSetting["source"], { readonly label: string; readonly badge: string }> = {
  database: { label: "Set here", badge: "paid" },
  environment: { label: "Environment", badge: "scanned" },
  unset: { label: "Not set", badge: "expired" }
}

export const PlatformSettingsPage = () => {
  const queryClient = useQueryClient()
  const settings = useConsoleQuery(["platform-settings"], (client) => client.ListPlatformSettings({}))
  const [editing, setEditing] = useState<PlatformSetting | undefined>(undefined)
  const clear = useConsoleMutation((client, key: string) => client.ClearPlatformSetting({ key }), {
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["platform-settings"] })
  })
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Platform settings</h1>
          <p className="muted">Integration settings used at run time. Values are encrypted at rest and never shown in full. A value set here wins over the environment's.</p>
        </div>
      </div>
      <ErrorNotice error={settings.error ?? clear.error} />
      <section className="card table-card">
        {settings.isPending ? <Loading /> : (
          <table className="table wrapping-table">
            <caption className="visually-hidden">Platform settings</caption>
            <thead>
              <tr>
                <th scope="col">Setting</th>
                <th scope="col">Source</th>
                <th scope="col" className="hide-narrow">Value</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {(settings.data?.data ?? []).map((setting) => (
                <tr key={setting.key} data-setting={setting.key}>
                  <td>
                    <span className="mono">{setting.key}</span>
                    {setting.description === null ? null : <p className="muted small">{setting.description}</p>}
                  </td>
                  <td>
                    <span className={`badge badge-${SOURCE_LABELS[setting.source].badge}`}>{SOURCE_LABELS[setting.source].label}</span>
                    {setting.updated_at === null ? null : <p className="muted small nowrap">{formatTime(setting.updated_at)}</p>}
                  </td>
                  <td className="hide-narrow mono small">{setting.value_masked ?? "—"}</td>
                  <td className="row-actions">
                    <Button kind="ghost" onClick={() => setEditing(setting)}>Set<span className="visually-hidden"> {setting.key}</span></Button>
                    {setting.source === "database"
                      ? <Button kind="ghost" busy={clear.isPending && clear.variables === setting.key} onClick={() => clear.mutate(setting.key)}>Clear<span className="visually-hidden"> {setting.key}</span></Button>
                      : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {/* A fresh form each time: a value typed for one setting never shows in the next. */}
      <SetDialog key={editing?.key ?? "closed"} setting={editing} onClose={() => setEditing(undefined)} />
    </div>
  )
}

const SetDialog = ({ onClose, setting }: { readonly setting: PlatformSetting | undefined; readonly onClose: () => void }) => {
  const queryClient = useQueryClient()
  const [value, setValue] = useState("")
  const save = useConsoleMutation((client, _: void) => client.SetPlatformSetting({ key: setting!.key, value }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["platform-settings"] })
      onClose()
    }
  })
  return (
    <Dialog title={`Set ${setting?.key ?? ""}`} open={setting !== undefined} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        save.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={save.error} fields={["value"]} />
          {setting?.description == null ? null : <p className="muted">{setting.description}</p>}
          <Field
            label="New value"
            name="value"
            type="password"
            autoComplete="off"
            value={value}
            onChange={setValue}
            error={save.error}
            hint={setting?.value_masked == null ? "Write-only." : `Now ${setting.value_masked}. Write-only: the new value is never shown again.`}
            required
            autoFocus
          />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={save.isPending}>Save</Button>
        </footer>
      </form>
    </Dialog>
  )
}
