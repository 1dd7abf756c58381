/**
 * Sending e-mail. The default sender keeps each message in the `outgoing_mail` table and logs that it
 * was sent (never its body). Bodies carry reset and verification links, bearer secrets in effect, so
 * the table holds them sealed under the master key: a copy of the database does not hand them out. A
 * deployment with a mail provider replaces this layer with one that delivers.
 */
import { Effect } from "effect"
import { SecretBox } from "../platform/Crypto.ts"
import { AccountsRepo } from "./Repo.ts"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly body: string
}

export class MailSender extends Effect.Service<MailSender>()("accounts/MailSender", {
  effect: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const secrets = yield* SecretBox
    const send = Effect.fn("MailSender.send")(function*(mail: Mail) {
      yield* repo.insertMail(mail.to, mail.subject, yield* secrets.seal(mail.body))
      yield* Effect.logInfo("mail queued").pipe(Effect.annotateLogs({ subject: mail.subject }))
    })
    return { send } as const
  }),
  dependencies: [AccountsRepo.Default, SecretBox.Default]
}) {}
