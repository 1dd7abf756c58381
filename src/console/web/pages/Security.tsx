/** The user's own security: two-step verification (enrolment by QR code, confirmed with a code) and the password. */
import { useQueryClient } from "@tanstack/react-query"
import { toDataURL } from "qrcode"
import { type FormEvent, useEffect, useState } from "react"
import type { MfaSetup } from "../../../../domain/Accounts.ts"
import { useConsoleMutation } from "../rpc.ts"
import { Button, CodeField, Field, FormError } from "../ui.tsx"
import { useWorkspace } from "../workspace.tsx"

export const SecurityPage = () => {
  const { context } = useWorkspace()
  const user = context.me.user
  return (
    <div className="page narrow-page">
      <div className="page-header"><h1>Security</h1></div>
      <section className="card" aria-labelledby="mfa-title">
        <h2 id="mfa-title">Two-step verification</h2>
        {user.mfa_enabled
          ? <p><span className="badge badge-paid">On</span> Signing in and large refunds ask for a code from your authenticator app.</p>
          : <MfaEnrolment />}
      </section>
      <ChangePassword />
    </div>
  )
}

const MfaEnrolment = () => {
  const queryClient = useQueryClient()
  const [setup, setSetup] = useState<MfaSetup | undefined>(undefined)
  const [qr, setQr] = useState<string | undefined>(undefined)
  const [code, setCode] = useState("")
  const start = useConsoleMutation((client, _: void) => client.MfaSetup(), { onSuccess: setSetup })
  const enable = useConsoleMutation((client, _: void) => client.MfaEnable({ code: code.trim() }), {
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["context"] })
  })
  useEffect(() => {
    if (setup === undefined) return
    let current = true
    void toDataURL(setup.otpauth_url, { margin: 1, width: 200 }).then((url) => current && setQr(url))
    return () => {
      current = false
    }
  }, [setup])

  if (setup === undefined) {
    return (
      <>
        <p className="muted">Protect your account with a code from an authenticator app (Google Authenticator, 1Password, Authy…) at every sign-in.</p>
        <FormError error={start.error} fields={[]} />
        <div><Button kind="primary" onClick={() => start.mutate()} busy={start.isPending}>Set up two-step verification</Button></div>
      </>
    )
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    enable.mutate()
  }
  return (
    <form onSubmit={submit} noValidate>
      <p>Scan this code with your authenticator app, then enter the 6-digit code it shows.</p>
      <div className="mfa-enrolment">
        {qr === undefined ? <div className="qr-placeholder small-qr" /> : <img className="qr small-qr" src={qr} width={200} height={200} alt="QR code to add this account to an authenticator app" />}
        <div>
          <p className="muted small">Can't scan it? Enter this key:</p>
          <p className="mono break" data-mfa-secret>{setup.secret}</p>
        </div>
      </div>
      <FormError error={enable.error} fields={["code"]} />
      <CodeField label="Code from the app" name="code" value={code} onChange={setCode} error={enable.error} />
      <div><Button kind="primary" type="submit" busy={enable.isPending}>Turn on</Button></div>
    </form>
  )
}

const ChangePassword = () => {
  const [current, setCurrent] = useState("")
  const [next, setNext] = useState("")
  const [done, setDone] = useState(false)
  const change = useConsoleMutation((client, _: void) => client.ChangePassword({ current_password: current, new_password: next }), {
    onSuccess: () => {
      setDone(true)
      setCurrent("")
      setNext("")
    }
  })
  return (
    <section className="card" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={(event) => {
        event.preventDefault()
        setDone(false)
        change.mutate()
      }} noValidate>
        {done ? <div className="alert alert-success" role="status">Password changed. Your other sessions were signed out.</div> : null}
        <FormError error={change.error} fields={["current_password", "new_password"]} />
        <Field label="Current password" name="current_password" type="password" value={current} onChange={setCurrent} autoComplete="current-password" error={change.error} required />
        <Field label="New password" name="new_password" type="password" value={next} onChange={setNext} autoComplete="new-password" error={change.error} hint="At least 12 characters." required />
        <div><Button type="submit" busy={change.isPending}>Change password</Button></div>
      </form>
    </section>
  )
}
