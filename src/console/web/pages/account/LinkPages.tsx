/** The pages of the verification and e-mail change links: each says what happened and where to go next. */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import { CONSOLE_EMAIL_CHANGE_PATH } from "../../../../../domain/console/Account.ts"
import { AuthLayout } from "../../App.tsx"
import type { PageProps } from "../../route.ts"
import { Link, useLocation } from "../../router.tsx"
import type { ConsoleFailure } from "../../rpc.ts"
import { send, useSubmission } from "../../session.ts"
import { Button, FormError, Loading } from "../../ui.tsx"

type Outcome =
  | { readonly state: "working" }
  | { readonly state: "done"; readonly message: string }
  | { readonly state: "failed"; readonly error: ConsoleFailure }

const acknowledged = async (response: Response) => ((await response.json()) as { readonly message: string }).message

const useToken = () => useLocation().search.get("token") ?? ""

const NoToken = ({ title }: { readonly title: string }) => (
  <AuthLayout title={title}>
    <div className="alert alert-error" role="alert">This link is incomplete: open the link from the mail again, whole.</div>
    <p className="auth-footer"><Link to="/">Go to the console</Link></p>
  </AuthLayout>
)

/**
 * One verification per token for the page's life: the token works once, and React may run an effect twice
 * (StrictMode), so a second run waits for the first call's answer instead of spending the token again.
 */
const verifications = new Map<string, Promise<string>>()
const verifyOnce = (token: string) => {
  let verification = verifications.get(token)
  if (verification === undefined) {
    verification = send("GET", `/auth/verify-email?token=${encodeURIComponent(token)}`).then(acknowledged)
    verifications.set(token, verification)
  }
  return verification
}

/** Verifies the address as the page opens (the link is the whole proof), then points to the console. */
export const VerifyEmailPage = ({ params }: PageProps) => {
  const token = useToken()
  const signedIn = params["signedIn"] !== ""
  const queryClient = useQueryClient()
  const [outcome, setOutcome] = useState<Outcome>({ state: "working" })
  useEffect(() => {
    if (token === "") return
    let current = true
    verifyOnce(token)
      .then((message) => {
        if (!current) return
        setOutcome({ state: "done", message })
        // Signed in, the console's context shows the address verified. (Signed out there is none to refresh.)
        if (signedIn) void queryClient.invalidateQueries({ queryKey: ["context"] })
      })
      .catch((error: ConsoleFailure) => current && setOutcome({ state: "failed", error }))
    return () => {
      current = false
    }
  }, [token, queryClient, signedIn])

  if (token === "") return <NoToken title="Verify your e-mail address" />
  return (
    <AuthLayout title={outcome.state === "done" ? "Your e-mail address is verified" : "Verify your e-mail address"}>
      {outcome.state === "working" ? <Loading label="Verifying your address…" /> : null}
      {outcome.state === "done"
        ? <div className="alert alert-success" role="status">{outcome.message}. Thank you: you can use every part of the console.</div>
        : null}
      {outcome.state === "failed"
        ? (
          <div className="alert alert-error" role="alert">
            {outcome.error.message}. {outcome.error.code === "unauthorized" ? "If your address is not verified yet, sign in and ask for a new link." : ""}
          </div>
        )
        : null}
      {outcome.state === "working" ? null : <p className="auth-footer"><Link to="/">{signedIn ? "Continue to the console" : "Sign in to the console"}</Link></p>}
    </AuthLayout>
  )
}

/** Confirms a new address on a press of the button (so a mail scanner that opens links changes nothing). */
export const ConfirmEmailPage = ({ params }: PageProps) => {
  const token = useToken()
  const signedIn = params["signedIn"] !== ""
  const queryClient = useQueryClient()
  const { busy, error, run } = useSubmission()
  const [message, setMessage] = useState<string | undefined>(undefined)
  if (token === "") return <NoToken title="Confirm your new e-mail address" />
  const confirm = () =>
    run(async () => {
      setMessage(await acknowledged(await send("POST", CONSOLE_EMAIL_CHANGE_PATH, { token })))
      if (signedIn) void queryClient.invalidateQueries({ queryKey: ["context"] })
    })
  return (
    <AuthLayout title={message === undefined ? "Confirm your new e-mail address" : "Your e-mail address changed"}>
      {message === undefined
        ? (
          <>
            <p className="muted">Your account's address changes to the one this mail reached once you confirm. You then sign in with it.</p>
            <FormError error={error} fields={[]} />
            <Button kind="primary" onClick={() => void confirm()} busy={busy}>Confirm my new address</Button>
          </>
        )
        : <div className="alert alert-success" role="status">{message}. Sign in with it from now on.</div>}
      <p className="auth-footer"><Link to="/">{signedIn ? "Continue to the console" : "Sign in to the console"}</Link></p>
    </AuthLayout>
  )
}
