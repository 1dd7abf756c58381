/**
 * The invitation link's page: who invites whom, to which organization, as what; then the one step that
 * joins it — create the account (name and password; the address is the invited one, proven by the link),
 * sign in with the invited address, or accept as the signed-in user.
 */
import { useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useEffect, useState } from "react"
import {
  CONSOLE_INVITATION_PATH,
  CONSOLE_INVITATION_SIGN_UP_PATH,
  InvitationPreview
} from "../../../../../domain/console/Account.ts"
import { ConsoleSignedIn } from "../../../../../domain/Console.ts"
import { Schema } from "effect"
import { AuthLayout } from "../../App.tsx"
import type { PageProps } from "../../route.ts"
import { Link, navigate, useLocation } from "../../router.tsx"
import { callConsole, type ConsoleFailure } from "../../rpc.ts"
import { send, signOut, useSignInSteps, useSubmission } from "../../session.ts"
import { Button, CodeField, Field, FormError, formatTime, Loading } from "../../ui.tsx"

const decodePreview = Schema.decodeUnknownSync(InvitationPreview)
const decodeSignedIn = Schema.decodeUnknownSync(ConsoleSignedIn)

const ROLE_NAMES: Record<string, string> = { admin: "Administrator", developer: "Developer", analyst: "Analyst", owner: "Owner" }

export const InvitationPage = ({ params }: PageProps) => {
  const token = useLocation().search.get("token") ?? ""
  const [preview, setPreview] = useState<InvitationPreview | undefined>(undefined)
  const [error, setError] = useState<ConsoleFailure | null>(null)
  useEffect(() => {
    if (token === "") return
    let current = true
    send("POST", CONSOLE_INVITATION_PATH, { token })
      .then(async (response) => decodePreview(await response.json()))
      .then((found) => current && setPreview(found))
      .catch((failure: ConsoleFailure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [token])

  if (token === "" || error !== null) {
    return (
      <AuthLayout title="This invitation cannot be used">
        <div className="alert alert-error" role="alert">
          {error?.message ?? "This link is incomplete: open the link from the mail again, whole"}.
        </div>
        <p className="muted">Ask the person who invited you to send a new invitation.</p>
        <p className="auth-footer"><Link to="/">Go to the console</Link></p>
      </AuthLayout>
    )
  }
  if (preview === undefined) return <div className="splash"><Loading label="Opening your invitation…" /></div>

  const signedInAs = params["signedIn"] ?? ""
  return (
    <AuthLayout title={`Join ${preview.organization_name}`}>
      <p>
        {preview.invited_by ?? "An administrator"} invited <strong>{preview.email}</strong> to join{" "}
        <strong>{preview.organization_name}</strong> as {ROLE_NAMES[preview.role] ?? preview.role}.
      </p>
      <p className="muted small">The invitation works once, until {formatTime(preview.expires_at)}.</p>
      {signedInAs !== ""
        ? <AcceptAsSignedIn token={token} preview={preview} signedInAs={signedInAs} />
        : preview.account_exists
        ? <SignInToAccept token={token} preview={preview} />
        : <SignUpToAccept token={token} preview={preview} />}
    </AuthLayout>
  )
}

interface StepProps {
  readonly token: string
  readonly preview: InvitationPreview
}

/** Into the console, with the context (organizations, stores) read afresh. */
const useEnterConsole = () => {
  const queryClient = useQueryClient()
  return async () => {
    navigate("/", { replace: true })
    await queryClient.resetQueries({ queryKey: ["context"] })
  }
}

const SignUpToAccept = ({ preview, token }: StepProps) => {
  const enter = useEnterConsole()
  const [name, setName] = useState("")
  const [password, setPassword] = useState("")
  const { busy, error, run } = useSubmission({ busyAfterSuccess: true })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      decodeSignedIn(await (await send("POST", CONSOLE_INVITATION_SIGN_UP_PATH, { token, name: name.trim(), password })).json())
      await enter()
    })
  }
  return (
    <form onSubmit={submit} noValidate aria-label="Create your account">
      <h2 className="form-title">Create your account</h2>
      <FormError error={error} fields={["name", "password"]} />
      <div className="field">
        <span className="field-label">Email</span>
        <p className="static-value" data-invited-email>{preview.email}</p>
      </div>
      <Field label="Your name" name="name" value={name} onChange={setName} autoComplete="name" error={error} required autoFocus />
      <Field
        label="Password"
        name="password"
        type="password"
        value={password}
        onChange={setPassword}
        autoComplete="new-password"
        error={error}
        hint="At least 10 characters."
        required
      />
      <Button kind="primary" type="submit" busy={busy}>Create account and join</Button>
    </form>
  )
}

const acceptInvitation = (token: string) => callConsole((client) => client.AcceptInvitation({ token }))

const SignInToAccept = ({ preview, token }: StepProps) => {
  const enter = useEnterConsole()
  const [password, setPassword] = useState("")
  const { busy, code, error, mfaStep, setCode, submit: signInWith } = useSignInSteps(async () => {
    await acceptInvitation(token)
    await enter()
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    void signInWith({ email: preview.email, password })
  }
  return (
    <form onSubmit={submit} noValidate aria-label="Sign in to accept">
      <h2 className="form-title">Sign in to accept</h2>
      <p className="muted">You have an account with {preview.email}: sign in with it to join.</p>
      <FormError error={error} fields={mfaStep ? ["mfa_code"] : ["password"]} />
      {mfaStep
        ? <CodeField name="mfa_code" value={code} onChange={setCode} error={error} autoFocus />
        : (
          <Field
            label="Password"
            name="password"
            type="password"
            value={password}
            onChange={setPassword}
            autoComplete="current-password"
            error={error}
            required
            autoFocus
          />
        )}
      <Button kind="primary" type="submit" busy={busy}>{mfaStep ? "Verify and join" : "Sign in and join"}</Button>
    </form>
  )
}

const AcceptAsSignedIn = ({ preview, signedInAs, token }: StepProps & { readonly signedInAs: string }) => {
  const enter = useEnterConsole()
  const queryClient = useQueryClient()
  const { busy, error, run } = useSubmission({ busyAfterSuccess: true })
  if (signedInAs.toLowerCase() !== preview.email.toLowerCase()) {
    return (
      <>
        <div className="alert alert-warning" role="note">
          You are signed in as {signedInAs}. This invitation is for {preview.email}: sign out, then open the link again to sign in
          or create the account with that address.
        </div>
        <FormError error={error} fields={[]} />
        <Button
          kind="primary"
          busy={busy}
          onClick={() =>
            void run(async () => {
              await signOut()
              queryClient.clear()
              await queryClient.resetQueries({ queryKey: ["context"] })
            })}
        >
          Sign out
        </Button>
      </>
    )
  }
  return (
    <>
      <FormError error={error} fields={[]} />
      <Button kind="primary" busy={busy} onClick={() => void run(async () => {
        await acceptInvitation(token)
        await enter()
      })}>
        Join {preview.organization_name}
      </Button>
    </>
  )
}
