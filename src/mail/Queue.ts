/**
 * Queuing mail: what every area calls to send one. The mail is sealed (both parts, under the master key:
 * bodies carry reset and verification links, bearer secrets in effect) and written to `outgoing_mail`;
 * the sender (Sender.ts) delivers it after the commit. Queuing never fails the caller: a request that
 * caused a mail answers the same whether or not the mail could be queued, and a failure is logged.
 * Called inside a transaction, the mail is queued exactly when that transaction commits.
 */
import { Effect } from "effect"
import { SecretBox } from "../platform/Crypto.ts"
import { MailRepo } from "./Repo.ts"
import type { RenderedMail } from "./Templates.ts"
import { traced } from "../platform/Traced.ts"

export interface OutgoingMail {
  readonly to: string
  /** What the mail is, for the admin list: `verification`, `password_reset`, `receipt`, … */
  readonly kind: string
  readonly content: RenderedMail
  /** Queues the mail at most once per key (a replayed event or a repeated request asks again). */
  readonly dedupeKey?: string | undefined
  /** The customer the mail is for, whose erasure then clears it. */
  readonly customerId?: string | undefined
}

export class MailQueue extends Effect.Service<MailQueue>()("mail/MailQueue", {
  effect: Effect.gen(function*() {
    const repo = yield* MailRepo
    const secrets = yield* SecretBox

    /**
     * Queues the mail; answers whether it was queued now (false: queued before under its key). A failure
     * fails: for callers that must not lose the mail, such as an outbox consumer, whose event then stays
     * queued and is applied again.
     */
    const enqueueOrFail = traced("MailQueue.enqueueOrFail")(function*(mail: OutgoingMail) {
      const queued = yield* repo.insert({
        recipient: mail.to,
        subject: mail.content.subject,
        kind: mail.kind,
        textSealed: yield* secrets.seal(mail.content.text),
        htmlSealed: yield* secrets.seal(mail.content.html),
        dedupeKey: mail.dedupeKey ?? null,
        customerId: mail.customerId ?? null
      })
      if (queued) yield* Effect.logInfo("mail queued").pipe(Effect.annotateLogs({ kind: mail.kind }))
      return queued
    })

    /** Like `enqueueOrFail`, but never fails its caller (a request): a mail that could not be queued is logged. */
    const enqueue = (mail: OutgoingMail) =>
      enqueueOrFail(mail).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logError("mail could not be queued", cause).pipe(Effect.annotateLogs({ kind: mail.kind })), false)
        )
      )

    return { enqueue, enqueueOrFail } as const
  }),
  dependencies: [MailRepo.Default, SecretBox.Default]
}) {}
