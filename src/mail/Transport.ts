/**
 * How a mail leaves the box, chosen from the configuration once:
 *
 * - `SMTP_URL` set: SMTP through nodemailer, over a small pool of kept-alive connections. `smtps://` is
 *   TLS from the first byte; `smtp://` upgrades with STARTTLS whenever the server offers it.
 * - unset outside production: the log. Each mail is written out readably with its links, and counts as
 *   sent, so a newcomer running `npm start` can open the verification link it printed.
 * - unset in production: nothing is delivered. Each attempt fails ("SMTP_URL is not set") and the mail
 *   waits on the retry schedule, so mail queued before an operator configures SMTP goes out once they
 *   do (within the give-up time); the security posture shows the gap.
 *
 * An attempt's outcome says what the queue does next: `Sent` (with the provider's message id),
 * `Retry` (the connection failed or the server answered 4xx: try again later) or `Reject` (a 5xx answer:
 * the server will never take it).
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"
import { AppConfig } from "../platform/Config.ts"

export interface Envelope {
  readonly id: string
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string | null
}

export type SendOutcome =
  | { readonly _tag: "Sent"; readonly providerMessageId: string }
  | { readonly _tag: "Retry"; readonly error: string }
  | { readonly _tag: "Reject"; readonly error: string }

export interface MailTransportShape {
  readonly kind: "smtp" | "log" | "unconfigured"
  readonly send: (mail: Envelope) => Effect.Effect<SendOutcome>
}

export class MailTransport extends Context.Tag("mail/MailTransport")<MailTransport, MailTransportShape>() {
  static readonly layer = Layer.scoped(MailTransport, Effect.suspend(() => makeTransport))
}

const LINK = /https?:\/\/[^\s<>"')]+/g

/** The domain of the sender's address, for Message-IDs. */
const domainOf = (from: string): string => from.match(/@([^>\s]+)>?\s*$/)?.[1] ?? "localhost"

/**
 * What an SMTP failure means. A 5xx answer is final (no such mailbox, refused content); an
 * authentication failure is the operator's to fix, and everything else — no connection, a timeout, a
 * 4xx answer (greylisting, a full queue) — may pass: those are retried.
 */
export const classifySmtpFailure = (cause: unknown): SendOutcome => {
  const error = cause as { readonly responseCode?: unknown; readonly code?: unknown; readonly response?: unknown; readonly message?: unknown }
  const responseCode = typeof error?.responseCode === "number" ? error.responseCode : null
  const code = typeof error?.code === "string" ? error.code : null
  const answer = typeof error?.response === "string" ? error.response : typeof error?.message === "string" ? error.message : String(cause)
  const description = `${code === null ? "" : `${code}: `}${answer}`.slice(0, 500)
  if (responseCode !== null && responseCode >= 500 && code !== "EAUTH" && code !== "ENOAUTH") {
    return { _tag: "Reject", error: description }
  }
  return { _tag: "Retry", error: description }
}

/** The provider's id of an accepted mail: its queue id in the `250` answer when it gives one, else our Message-ID. */
const providerIdOf = (info: { readonly response?: unknown; readonly messageId?: unknown }): string => {
  const response = typeof info.response === "string" ? info.response : ""
  const queued = response.match(/queued as\s+([^\s>]+)/i)?.[1] ?? response.match(/^250[ -](?:\d\.\d\.\d\s+)?(?:ok\s+)?([A-Za-z0-9._-]{8,})\b/i)?.[1]
  return queued ?? (typeof info.messageId === "string" ? info.messageId : response.slice(0, 200))
}

const makeTransport = Effect.gen(function*() {
  const config = yield* AppConfig
  const { from } = config.mail
  const messageDomain = domainOf(from)

  const smtpUrl = config.mail.smtpUrl
  if (Option.isSome(smtpUrl)) {
    const timeout = Math.round(config.mail.timeoutSeconds * 1000)
    const transporter = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nodemailer.createTransport({
          url: Redacted.value(smtpUrl.value),
          pool: true,
          maxConnections: 5,
          maxMessages: 1000,
          connectionTimeout: timeout,
          greetingTimeout: timeout,
          socketTimeout: timeout
        })
      ),
      (transporter) => Effect.sync(() => transporter.close())
    )
    const send = (mail: Envelope) =>
      Effect.tryPromise(() =>
        transporter.sendMail({
          from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          ...(mail.html === null ? {} : { html: mail.html }),
          // The same id on every attempt: a copy sent again after a crash is recognizably the same mail.
          messageId: `<mail-${mail.id}@${messageDomain}>`
        })
      ).pipe(
        Effect.map((info): SendOutcome => ({ _tag: "Sent", providerMessageId: providerIdOf(info) })),
        Effect.catchAll((error) => Effect.succeed(classifySmtpFailure(error.error)))
      )
    return { kind: "smtp", send } satisfies MailTransportShape
  }

  if (!config.production) {
    const send = (mail: Envelope) =>
      Effect.gen(function*() {
        const links = [...new Set(mail.text.match(LINK) ?? [])]
        yield* Effect.logInfo(`mail (SMTP_URL is unset, so it is written here instead of sent)\n${mail.text}`).pipe(
          Effect.annotateLogs({ to: mail.to, subject: mail.subject })
        )
        // One line per link, so a terminal shows each as something to click.
        for (const link of links) yield* Effect.logInfo("mail link").pipe(Effect.annotateLogs({ to: mail.to, link }))
        return { _tag: "Sent", providerMessageId: `log:${mail.id}` } satisfies SendOutcome
      })
    return { kind: "log", send } satisfies MailTransportShape
  }

  return {
    kind: "unconfigured",
    send: () => Effect.succeed({ _tag: "Retry", error: "SMTP_URL is not set" } satisfies SendOutcome)
  } satisfies MailTransportShape
})
