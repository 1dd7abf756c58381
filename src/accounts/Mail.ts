/**
 * Sending e-mail. The default sender keeps each message in the `outgoing_mail` table and logs that it
 * was sent (never its body, which can hold a reset link); a deployment with a mail provider replaces
 * this layer with one that delivers.
 */
import { Effect } from "effect"
import { AccountsRepo } from "./Repo.ts"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly body: string
}

export class MailSender extends Effect.Service<MailSender>()("accounts/MailSender", {
  effect: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const send = Effect.fn("MailSender.send")(function*(mail: Mail) {
      yield* repo.insertMail(mail.to, mail.subject, mail.body)
      yield* Effect.logInfo("mail queued").pipe(Effect.annotateLogs({ subject: mail.subject }))
    })
    return { send } as const
  }),
  dependencies: [AccountsRepo.Default]
}) {}
