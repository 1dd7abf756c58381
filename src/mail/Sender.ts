/**
 * The mail sender: a cluster singleton (one runner sends; another takes over when it goes away) that
 * delivers what the queue holds. It wakes on the notice the statement queuing a mail sends as it
 * commits, and polls besides for retries coming due and for notices missed.
 *
 * Each pass claims a batch of due mails for a lease and attempts them a few at a time. An attempt —
 * the send and the record of its outcome — is never interrupted halfway: a service stopping mid-queue
 * lets the attempts under way finish and be recorded, and gives back the claims of those not started,
 * so a restart neither loses a mail nor sends a recorded one again. Only a crash between the server's
 * `250` and the record sends a mail twice (at least once), with the same Message-ID.
 *
 * A failed attempt (no connection, a 4xx answer) is retried after a wait that doubles from
 * `MAIL_RETRY_FIRST_SECONDS` up to `MAIL_RETRY_MAX_SECONDS`, with jitter; a mail not accepted within
 * `MAIL_GIVE_UP_HOURS` of being queued, or refused with a 5xx answer, is `failed`, for the platform
 * administrators' list (`GET /admin/mail`).
 */
import { Singleton } from "@effect/cluster"
import { Duration, Effect, Layer, Queue, Stream } from "effect"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { AppConfig } from "../platform/Config.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { MAIL_QUEUE_CHANNEL } from "./Names.ts"
import { type ClaimedMail, MailRepo } from "./Repo.ts"
import { MailTransport, type SendOutcome } from "./Transport.ts"
import { spanWhenExported } from "../platform/Traced.ts"

/** Mails claimed per pass; a full batch means more may be due, and the next pass starts at once. */
const CLAIM_BATCH = 40
/** Attempts under way at once: about the SMTP pool's connections, each kept busy. */
const CONCURRENCY = 10

/** The wait before retry number `attempt` (1 for the first), doubling, capped, with ±10 % jitter. */
export const retryWaitSeconds = (attempt: number, first: number, max: number, random: number = Math.random()) =>
  Math.min(max, first * 2 ** Math.max(0, attempt - 1)) * (0.9 + 0.2 * random)

const run = Effect.gen(function*() {
  const repo = yield* MailRepo
  const secrets = yield* SecretBox
  const transport = yield* MailTransport
  const config = yield* AppConfig
  const feed = yield* ChangeFeed
  const { giveUpHours, retryFirstSeconds, retryMaxSeconds, timeoutSeconds } = config.mail
  // Long enough for a whole batch whose every attempt takes its connection, greeting and answer timeouts,
  // so no claim lapses while its sender still means to try it.
  const leaseSeconds = Math.max(60, timeoutSeconds * 3 * Math.ceil(CLAIM_BATCH / CONCURRENCY))
  const pollInterval = Duration.millis(Math.min(1000, retryFirstSeconds * 1000))

  if (transport.kind === "unconfigured") {
    yield* Effect.logWarning(
      "SMTP_URL is not set: mail (verification, password reset, receipts) is queued but not delivered; " +
        "set SMTP_URL to deliver it"
    )
  } else if (transport.kind === "log") {
    yield* Effect.logInfo("SMTP_URL is not set: each mail is written to the log with its links instead of being sent")
  }

  const record = (mail: ClaimedMail, outcome: SendOutcome) => {
    switch (outcome._tag) {
      case "Sent":
        return repo.markSent(mail.id, outcome.providerMessageId)
      case "Reject":
        return Effect.zipRight(
          repo.markFailed(mail.id, outcome.error),
          Effect.logWarning("mail refused by the server").pipe(Effect.annotateLogs({ mail: mail.id, error: outcome.error }))
        )
      case "Retry": {
        const attempt = mail.attempts + 1
        const wait = retryWaitSeconds(attempt, retryFirstSeconds, retryMaxSeconds)
        return mail.age_seconds + wait > giveUpHours * 3600
          ? Effect.zipRight(
            repo.markFailed(mail.id, `gave up after ${attempt} attempts: ${outcome.error}`),
            Effect.logWarning("mail given up").pipe(Effect.annotateLogs({ mail: mail.id, error: outcome.error }))
          )
          : repo.markRetry(mail.id, outcome.error, wait)
      }
    }
  }

  const attempt = (mail: ClaimedMail) =>
    Effect.gen(function*() {
      if (mail.body_sealed === null) return yield* repo.markFailed(mail.id, "the body is gone")
      const outcome = yield* transport.send({
        id: mail.id,
        to: mail.recipient,
        subject: mail.subject,
        text: yield* secrets.open(mail.body_sealed),
        html: mail.html_sealed === null ? null : yield* secrets.open(mail.html_sealed)
      })
      yield* record(mail, outcome)
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("mail attempt failed; it stays queued", cause)),
      spanWhenExported("MailSender.attempt", { attributes: { mail: mail.id } })
    )

  // The claim is not interruptible, and its release on a stop is in place before anything else can be
  // interrupted: a sender stopped while its claim was in flight would otherwise leave what the database
  // claimed for it under a lease nobody holds, and the next start would wait out the lease to send it.
  const pass = Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const claimed = yield* repo.claimDue({ limit: CLAIM_BATCH, leaseSeconds })
      if (claimed.length === 0) return 0
      const started = new Set<string>()
      yield* restore(Effect.forEach(
        claimed,
        (mail) =>
          // Started means finished: the send and its record run to the end even when the sender stops.
          Effect.uninterruptible(Effect.suspend(() => {
            started.add(mail.id)
            return attempt(mail)
          })),
        { concurrency: CONCURRENCY, discard: true }
      )).pipe(
        Effect.onInterrupt(() => repo.release(claimed.filter((mail) => !started.has(mail.id)).map((mail) => mail.id)).pipe(Effect.ignore))
      )
      return claimed.length
    })
  )

  const wake = yield* Queue.sliding<void>(1)
  const notices = yield* feed.subscribe(MAIL_QUEUE_CHANNEL)
  yield* Stream.runForEach(notices, () => Queue.offer(wake, undefined)).pipe(Effect.forkScoped)

  while (true) {
    const read = yield* pass.pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("mail sender pass failed; retrying at the next poll", cause), 0))
    )
    if (read < CLAIM_BATCH) yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(pollInterval))
  }
})

export const MailSenderLive = Singleton.make("mail/sender", Effect.scoped(run)).pipe(
  Layer.provide([MailRepo.Default, SecretBox.Default, MailTransport.layer])
)
