/** The signed-in user's profile: name and e-mail, and changing the e-mail (confirmed from the new address). */
import { type FormEvent, useState } from "react"
import { useConsoleMutation } from "../../rpc.ts"
import { Button, Field, FormError } from "../../ui.tsx"
import { useWorkspace } from "../../workspace.tsx"

export const ProfilePage = () => {
  const { context } = useWorkspace()
  const user = context.me.user
  return (
    <div className="page narrow-page">
      <div className="page-header"><h1>Profile</h1></div>
      <section className="card" aria-labelledby="profile-title">
        <h2 id="profile-title">Your account</h2>
        <dl className="details">
          <dt>Name</dt>
          <dd>{user.name ?? "—"}</dd>
          <dt>E-mail</dt>
          <dd data-user-email className="break">
            {user.email}{" "}
            {user.email_verified ? <span className="badge badge-paid">Verified</span> : <span className="badge badge-pending">Not verified</span>}
          </dd>
        </dl>
        {user.email_verified ? null : <p className="muted">Open the link in the verification mail we sent to {user.email} to verify it.</p>}
      </section>
      <ChangeEmail />
    </div>
  )
}

const ChangeEmail = () => {
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [sent, setSent] = useState<string | undefined>(undefined)
  const change = useConsoleMutation(
    (client, _: void) => client.RequestEmailChange({ new_email: email.trim(), password }),
    {
      onSuccess: (answer) => {
        setSent(answer.message)
        setPassword("")
      }
    }
  )
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSent(undefined)
    change.mutate()
  }
  return (
    <section className="card" aria-labelledby="email-title">
      <h2 id="email-title">Change your e-mail address</h2>
      <p className="muted">We send a link to the new address; your address changes when you open it. Your current address gets a notice.</p>
      <form onSubmit={submit} noValidate>
        <FormError error={change.error} fields={["new_email", "password"]} />
        {sent === undefined ? null : <div className="alert alert-success" role="status">{sent}.</div>}
        <Field label="New e-mail" name="new_email" type="email" value={email} onChange={setEmail} autoComplete="email" error={change.error} required />
        <Field
          label="Current password"
          name="password"
          type="password"
          value={password}
          onChange={setPassword}
          autoComplete="current-password"
          error={change.error}
          required
        />
        <div><Button kind="primary" type="submit" busy={change.isPending}>Send confirmation link</Button></div>
      </form>
    </section>
  )
}
