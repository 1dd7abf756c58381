/**
 * Signing in, registering and signing out: the three calls that set or clear the session cookie, which
 * only an HTTP response can do (the cookie is HttpOnly). Their forms are the schemas of domain/Console.ts,
 * and their failures the API's envelope, read into a ConsoleFailure like the RPC's.
 */
import { Schema } from "effect"
import { useState } from "react"
import { Acknowledgement } from "../../../domain/Accounts.ts"
import {
  CONSOLE_PASSWORD_RESET_PATH,
  CONSOLE_REGISTER_PATH,
  CONSOLE_SESSION_PATH,
  type ConsoleForgotPassword,
  type ConsoleRegister,
  ConsoleSignedIn,
  type ConsoleSignIn
} from "../../../domain/console/Core.ts"
import { ConsoleFailure } from "./rpc.ts"

const readFailure = async (response: Response): Promise<ConsoleFailure> => {
  try {
    const body = await response.json() as { error?: { code?: string; message?: string; param?: string } }
    if (body.error?.code !== undefined) return new ConsoleFailure(body.error.code, body.error.message ?? body.error.code, body.error.param)
  } catch {
    // Not the envelope: said below.
  }
  return new ConsoleFailure("internal_error", `The service answered ${response.status}; try again in a moment`)
}

/** A call to one of the console's own routes; a failure is a ConsoleFailure read from the envelope. */
export const send = async (method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<Response> => {
  let response: Response
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  } catch {
    throw new ConsoleFailure("connection_lost", "The service cannot be reached; check your connection and try again")
  }
  if (!response.ok) throw await readFailure(response)
  return response
}

const decodeSignedIn = Schema.decodeUnknownSync(ConsoleSignedIn)

export const signIn = async (form: typeof ConsoleSignIn.Type) =>
  decodeSignedIn(await (await send("POST", CONSOLE_SESSION_PATH, form)).json())

export const register = async (form: typeof ConsoleRegister.Type) =>
  decodeSignedIn(await (await send("POST", CONSOLE_REGISTER_PATH, form)).json())

/** Asks for a password-reset e-mail; the answer is the same whether or not the address has an account. */
export const requestPasswordReset = async (form: typeof ConsoleForgotPassword.Type) =>
  Schema.decodeUnknownSync(Acknowledgement)(await (await send("POST", CONSOLE_PASSWORD_RESET_PATH, form)).json())

export const signOut = async () => {
  await send("DELETE", CONSOLE_SESSION_PATH)
}

/**
 * A form's call that is not a console RPC (the session's own endpoints): `busy` while it runs, its failure
 * kept for the form. With `busyAfterSuccess` the page moves on after a success, so `busy` stays on meanwhile.
 */
export const useSubmission = (options: { readonly busyAfterSuccess?: boolean } = {}) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ConsoleFailure | null>(null)
  const run = async (step: () => Promise<unknown>) => {
    setBusy(true)
    setError(null)
    try {
      await step()
      if (options.busyAfterSuccess !== true) setBusy(false)
    } catch (failure) {
      setError(failure as ConsoleFailure)
      setBusy(false)
    }
  }
  return { busy, error, run }
}

/**
 * The sign-in steps both sign-in forms share (the sign-in page, an invitation's "sign in to accept"): the
 * password first, then, when the account has two-step verification, the authenticator code. `after` runs
 * once signed in; a failure is kept for the form, and `busy` stays on after success while the page moves on.
 */
export const useSignInSteps = (after: () => Promise<void>) => {
  const [code, setCode] = useState("")
  const [mfaStep, setMfaStep] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ConsoleFailure | null>(null)
  const submit = async (credentials: { readonly email: string; readonly password: string }) => {
    setBusy(true)
    setError(null)
    try {
      await signIn(mfaStep ? { ...credentials, mfa_code: code } : credentials)
      await after()
    } catch (failure) {
      const consoleFailure = failure as ConsoleFailure
      if (consoleFailure.code === "mfa_required") setMfaStep(true)
      else setError(consoleFailure)
      setBusy(false)
    }
  }
  return { code, setCode, mfaStep, busy, error, submit }
}
