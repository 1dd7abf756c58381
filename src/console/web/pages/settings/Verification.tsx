/**
 * The organization's verification (KYC): its status (not submitted, pending review, approved, rejected with
 * the reason) and the submission form (business, contact, document links), open until it is approved.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { usePermission } from "../../permissions.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { PermissionNote } from "../../ui/Permitted.tsx"
import { useWorkspace } from "../../workspace.tsx"

const STATUS: Record<string, { readonly label: string; readonly badge: string; readonly detail: string }> = {
  not_submitted: { label: "Not submitted", badge: "badge-expired", detail: "Submit your business details to take live payments." },
  pending: { label: "In review", badge: "badge-pending", detail: "We are reviewing your documents; you will be told by e-mail." },
  approved: { label: "Approved", badge: "badge-paid", detail: "Your organization is verified: stores with credentials may go live." },
  rejected: { label: "Rejected", badge: "badge-failed", detail: "Correct what the reason says and submit again." }
}

const EMPTY = { business_name: "", registration_number: "", contact_name: "", contact_email: "", contact_phone: "", document_type: "business_registration", document_url: "" }

export const VerificationPage = () => {
  const { context, store } = useWorkspace()
  const organizationId = store!.organization_id
  const organization = context.me.organizations.find((candidate) => candidate.id === organizationId)
  const queryClient = useQueryClient()
  const allowed = usePermission("verification.submit").allowed
  const status = useConsoleQuery(["verification", organizationId], (client) => client.VerificationStatus({ organization_id: organizationId as never }))
  const [form, setForm] = useState(EMPTY)
  const set = (field: keyof typeof EMPTY) => (value: string) => setForm((previous) => ({ ...previous, [field]: value }))
  const submit = useConsoleMutation((client, _: void) =>
    client.SubmitVerification({
      organization_id: organizationId as never,
      business_name: form.business_name.trim(),
      registration_number: form.registration_number.trim(),
      contact: {
        name: form.contact_name.trim(),
        email: form.contact_email.trim(),
        ...(form.contact_phone.trim() === "" ? {} : { phone: form.contact_phone.trim() })
      },
      documents: [{ type: form.document_type.trim(), url: form.document_url.trim() }]
    }), {
    onSuccess: (verification) => {
      setForm(EMPTY)
      queryClient.setQueryData(["verification", organizationId], verification)
    }
  })
  const current = status.data
  const shown = STATUS[current?.status ?? "not_submitted"]!
  const open = current !== undefined && (current.status === "not_submitted" || current.status === "rejected")
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Verification</h1>
          <p className="muted">Know-your-customer checks of {organization?.name ?? "your organization"}, needed before any of its stores takes live payments.</p>
        </div>
      </div>
      {status.error ? <div className="alert alert-error" role="alert">{status.error.message}</div> : null}
      {status.isPending ? <Loading /> : (
        <section className="card" aria-labelledby="kyc-status-title">
          <div className="card-header">
            <h2 id="kyc-status-title">Status</h2>
            <span className={`badge ${shown.badge}`} data-testid="verification-status">{shown.label}</span>
          </div>
          <p className="muted">{shown.detail}</p>
          {current !== undefined && current.status !== "not_submitted" && "business_name" in current
            ? (
              <dl className="details">
                <dt>Business</dt><dd>{current.business_name}</dd>
                <dt>Registration</dt><dd className="mono">{current.registration_number}</dd>
                <dt>Submitted</dt><dd>{formatTime(current.created_at)}</dd>
                {current.rejection_reason === null ? null : <><dt>Reason</dt><dd>{current.rejection_reason}</dd></>}
              </dl>
            )
            : null}
        </section>
      )}
      {open
        ? (
          <section className="card" aria-labelledby="kyc-form-title">
            <h2 id="kyc-form-title">Submit your details</h2>
            <PermissionNote permission="verification.submit" />
            <form onSubmit={(event) => {
              event.preventDefault()
              submit.mutate()
            }} noValidate>
              <fieldset disabled={!allowed} className="plain-fieldset form-grid">
                <FormError error={submit.error} fields={["business_name", "registration_number", "contact.name", "contact.email", "contact.phone", "documents.0.type", "documents.0.url"]} />
                <Field label="Registered business name" name="business_name" value={form.business_name} onChange={set("business_name")} error={submit.error} required />
                <Field label="Registration number" name="registration_number" value={form.registration_number} onChange={set("registration_number")} error={submit.error} required />
                <Field label="Contact name" name="contact.name" value={form.contact_name} onChange={set("contact_name")} error={submit.error} required />
                <Field label="Contact e-mail" name="contact.email" type="email" value={form.contact_email} onChange={set("contact_email")} error={submit.error} required />
                <Field label="Contact phone (optional)" name="contact.phone" type="tel" value={form.contact_phone} onChange={set("contact_phone")} error={submit.error} />
                <Field label="Document type" name="documents.0.type" value={form.document_type} onChange={set("document_type")} error={submit.error} hint="business_registration, owner_id or bank_statement" />
                <Field label="Document link" name="documents.0.url" type="url" value={form.document_url} onChange={set("document_url")} error={submit.error} placeholder="https://…" hint="An https:// link to a copy of the document." />
                <div><Button kind="primary" type="submit" busy={submit.isPending}>Submit for review</Button></div>
              </fieldset>
            </form>
          </section>
        )
        : null}
    </div>
  )
}
