/**
 * The store's settings: checkout branding with a live preview of the hosted checkout page (framed from
 * CONSOLE_CHECKOUT_PREVIEW_PATH with the unsaved values), the KHQR provider credentials (written, never shown
 * again: the saved ones are masked), live mode, and a new store.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import { CONSOLE_CHECKOUT_PREVIEW_PATH } from "../../../../../domain/Console.ts"
import type { Store } from "../../../../../domain/Stores.ts"
import { usePermission } from "../../permissions.ts"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Field, FormError, Loading } from "../../ui.tsx"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { useWorkspace } from "../../workspace.tsx"

export const StoreSettingsPage = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const detail = useConsoleQuery(["store", storeId], (client) => client.GetStore({ store_id: storeId }))
  const [creating, setCreating] = useState(false)
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Store settings</h1>
          <p className="muted">{store!.name} · <span className="mono">{storeId}</span></p>
        </div>
        <PermittedButton permission="store.create" onClick={() => setCreating(true)}>New store</PermittedButton>
      </div>
      {detail.error ? <div className="alert alert-error" role="alert">{detail.error.message}</div> : null}
      {detail.data === undefined ? (detail.isPending ? <Loading /> : null) : (
        <>
          <Branding store={detail.data} />
          <Credentials store={detail.data} />
          <LiveMode store={detail.data} />
        </>
      )}
      <NewStoreDialog open={creating} onClose={() => setCreating(false)} />
    </div>
  )
}

const COLOR = /^#[0-9a-fA-F]{6}$/

const previewSource = (form: BrandingForm, storeName: string) => {
  const query = new URLSearchParams({ name: storeName })
  for (const [key, value] of Object.entries(form)) if (value.trim() !== "") query.set(key, value.trim())
  return `${CONSOLE_CHECKOUT_PREVIEW_PATH}?${query.toString()}`
}

interface BrandingForm {
  readonly display_name: string
  readonly primary_color: string
  readonly accent_color: string
  readonly logo_url: string
}

const brandingOf = (store: Store): BrandingForm => ({
  display_name: store.branding.display_name ?? "",
  primary_color: store.branding.primary_color ?? "",
  accent_color: store.branding.accent_color ?? "",
  logo_url: store.branding.logo_url ?? ""
})

const Branding = ({ store }: { readonly store: Store }) => {
  const queryClient = useQueryClient()
  const allowed = usePermission("store.update").allowed
  const [form, setForm] = useState<BrandingForm>(() => brandingOf(store))
  const [saved, setSaved] = useState(false)
  // The preview follows the form a moment after typing stops, so it is not reloaded at every key.
  const [preview, setPreview] = useState(() => previewSource(form, store.name))
  useEffect(() => {
    const timer = setTimeout(() => setPreview(previewSource(form, store.name)), 250)
    return () => clearTimeout(timer)
  }, [form, store.name])
  const set = (field: keyof BrandingForm) => (value: string) => {
    setSaved(false)
    setForm((previous) => ({ ...previous, [field]: value }))
  }
  const orNull = (value: string) => (value.trim() === "" ? null : value.trim())
  const save = useConsoleMutation((client, _: void) =>
    client.UpdateBranding({
      store_id: store.id,
      display_name: orNull(form.display_name),
      primary_color: orNull(form.primary_color),
      accent_color: orNull(form.accent_color),
      logo_url: orNull(form.logo_url)
    }), {
    onSuccess: (updated) => {
      setSaved(true)
      queryClient.setQueryData(["store", store.id], updated)
    }
  })
  return (
    <section className="card" aria-labelledby="branding-title">
      <h2 id="branding-title">Checkout branding</h2>
      <p className="muted small">How the hosted checkout page, payment links and receipts look to your customers. The preview shows your changes before you save them.</p>
      <PermissionNote permission="store.update" />
      <div className="branding-grid">
        <form onSubmit={(event) => {
          event.preventDefault()
          save.mutate()
        }} noValidate>
          <fieldset disabled={!allowed} className="plain-fieldset">
            <FormError error={save.error} fields={["display_name", "primary_color", "accent_color", "logo_url"]} />
            {saved ? <div className="alert alert-success" role="status">Branding saved. New checkouts use it now.</div> : null}
            <Field label="Display name" name="display_name" value={form.display_name} onChange={set("display_name")} error={save.error} placeholder={store.name} hint="Shown instead of the store's name." />
            <ColorField label="Primary color" name="primary_color" value={form.primary_color} onChange={set("primary_color")} error={save.error} />
            <ColorField label="Background color" name="accent_color" value={form.accent_color} onChange={set("accent_color")} error={save.error} />
            <Field label="Logo URL" name="logo_url" type="url" value={form.logo_url} onChange={set("logo_url")} error={save.error} placeholder="https://…/logo.png" hint="An https:// image, square works best." />
            <div><Button kind="primary" type="submit" busy={save.isPending}>Save branding</Button></div>
          </fieldset>
        </form>
        <div className="checkout-preview">
          <p className="field-label" id="preview-label">Preview</p>
          <iframe title="Checkout page preview" src={preview} className="checkout-preview-frame" sandbox="" aria-describedby="preview-label" />
        </div>
      </div>
    </section>
  )
}

/** A hex color, typed or picked: the text field is what is sent, the swatch picks into it. */
const ColorField = (
  props: { readonly label: string; readonly name: string; readonly value: string; readonly onChange: (value: string) => void; readonly error: ConsoleFailure | null }
) => (
  <div className="color-field">
    <Field label={props.label} name={props.name} value={props.value} onChange={props.onChange} error={props.error} placeholder="#0b5cad" />
    <input
      type="color"
      aria-label={`Pick the ${props.label.toLowerCase()}`}
      value={COLOR.test(props.value) ? props.value : "#0b5cad"}
      onChange={(event) => props.onChange(event.target.value)}
    />
  </div>
)

const EMPTY_CREDENTIALS = { bakong_account_id: "", merchant_name: "", merchant_city: "", acquiring_bank: "" }

const Credentials = ({ store }: { readonly store: Store }) => {
  const queryClient = useQueryClient()
  const allowed = usePermission("store.credentials.manage").allowed
  const [form, setForm] = useState(EMPTY_CREDENTIALS)
  const [saved, setSaved] = useState(false)
  const set = (field: keyof typeof EMPTY_CREDENTIALS) => (value: string) => setForm((previous) => ({ ...previous, [field]: value }))
  const save = useConsoleMutation((client, _: void) => client.SetCredentials({ store_id: store.id, ...form }), {
    onSuccess: (updated) => {
      // Write-only: what was typed is forgotten, the saved values come back masked.
      setForm(EMPTY_CREDENTIALS)
      setSaved(true)
      queryClient.setQueryData(["store", store.id], updated)
      void queryClient.invalidateQueries({ queryKey: ["context"] })
    }
  })
  const current = store.credentials
  return (
    <section className="card" aria-labelledby="credentials-title">
      <h2 id="credentials-title">Provider credentials</h2>
      <p className="muted small">The Bakong account that receives this store's KHQR payments. Saved values are never shown again; enter them all to replace them.</p>
      <PermissionNote permission="store.credentials.manage" />
      {current === null
        ? <p className="muted" data-testid="credentials-status">Not set yet: live mode opens once they are set and your verification is approved.</p>
        : (
          <dl className="details" data-testid="credentials-status">
            <dt>Bakong account</dt><dd className="mono">{current.bakong_account_id}</dd>
            <dt>Merchant name</dt><dd>{current.merchant_name}</dd>
            <dt>City</dt><dd>{current.merchant_city}</dd>
            <dt>Acquiring bank</dt><dd>{current.acquiring_bank}</dd>
          </dl>
        )}
      {saved ? <div className="alert alert-success" role="status">Credentials saved. They are stored encrypted and shown masked.</div> : null}
      <form onSubmit={(event) => {
        event.preventDefault()
        setSaved(false)
        save.mutate()
      }} noValidate autoComplete="off">
        <fieldset disabled={!allowed} className="plain-fieldset form-grid">
          <FormError error={save.error} fields={Object.keys(EMPTY_CREDENTIALS)} />
          <Field label="Bakong account id" name="bakong_account_id" type="password" autoComplete="off" value={form.bakong_account_id} onChange={set("bakong_account_id")} error={save.error} placeholder={current === null ? "shop_name@bank" : "•••••••• (saved)"} />
          <Field label="Merchant name" name="merchant_name" value={form.merchant_name} onChange={set("merchant_name")} error={save.error} placeholder={current?.merchant_name ?? "Riverside Cafe"} />
          <Field label="Merchant city" name="merchant_city" value={form.merchant_city} onChange={set("merchant_city")} error={save.error} placeholder={current?.merchant_city ?? "Phnom Penh"} />
          <Field label="Acquiring bank" name="acquiring_bank" value={form.acquiring_bank} onChange={set("acquiring_bank")} error={save.error} placeholder={current?.acquiring_bank ?? "ACLEDA"} />
          <div><Button kind="primary" type="submit" busy={save.isPending}>{current === null ? "Save credentials" : "Replace credentials"}</Button></div>
        </fieldset>
      </form>
    </section>
  )
}

const LiveMode = ({ store }: { readonly store: Store }) => {
  const queryClient = useQueryClient()
  const toggle = useConsoleMutation((client, live: boolean) => client.SetLiveMode({ store_id: store.id, live_mode: live }), {
    onSuccess: (updated) => {
      queryClient.setQueryData(["store", store.id], updated)
      void queryClient.invalidateQueries({ queryKey: ["context"] })
    }
  })
  return (
    <section className="card" aria-labelledby="live-title">
      <div className="card-header">
        <h2 id="live-title">Live mode</h2>
        <span className={`badge ${store.live_mode ? "badge-paid" : "badge-expired"}`}>{store.live_mode ? "On" : "Off"}</span>
      </div>
      <p className="muted small">In live mode the store takes real payments. It needs the provider credentials above and your organization's verification approved.</p>
      {toggle.error ? <div className="alert alert-error" role="alert">{toggle.error.message}</div> : null}
      <div>
        <PermittedButton permission="store.live_mode.manage" kind={store.live_mode ? "danger" : "primary"} busy={toggle.isPending} onClick={() => toggle.mutate(!store.live_mode)}>
          {store.live_mode ? "Turn live mode off" : "Turn live mode on"}
        </PermittedButton>
      </div>
    </section>
  )
}

const NewStoreDialog = ({ open, onClose }: { readonly open: boolean; readonly onClose: () => void }) => {
  const queryClient = useQueryClient()
  const workspace = useWorkspace()
  const [name, setName] = useState("")
  const create = useConsoleMutation((client, _: void) => client.CreateStore({ name: name.trim(), organization_id: workspace.store?.organization_id as never }), {
    onSuccess: (created) => {
      onClose()
      setName("")
      workspace.selectStore(created.id)
      void queryClient.invalidateQueries({ queryKey: ["context"] })
    }
  })
  return (
    <Dialog title="New store" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={create.error} fields={["name"]} />
          <p className="muted small">A store has its own KHQR account, API keys, webhooks and branding. It starts in test mode.</p>
          <Field label="Store name" name="name" value={name} onChange={setName} error={create.error} required autoFocus />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Create store</Button>
        </footer>
      </form>
    </Dialog>
  )
}
