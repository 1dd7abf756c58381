/**
 * The sender wakes on the notice the queuing statement sends as it commits, rather than at its next
 * poll (every second here): a mail reaches the SMTP server in a small fraction of that.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { emailVerification } from "../../src/mail/Templates.ts"
import { MailQueue } from "../../src/mail/Queue.ts"
import { fastMail, receivedBy, TestSmtp } from "../support/Smtp.ts"
import { testAppLayer } from "../support/TestApp.ts"

// Retries (and so the poll) a second and more apart: only the notice can be quicker.
const appWithSmtp = Layer.unwrapEffect(
  Effect.map(TestSmtp, (smtp) => testAppLayer({ mail: { ...fastMail(smtp.url), retryFirstSeconds: 30, retryMaxSeconds: 60 } }))
).pipe(Layer.provideMerge(TestSmtp.layer))

describe("mail sender wake-up", () => {
  layer(appWithSmtp, { timeout: 120_000, excludeTestServices: true })("", (it) => {
    it.effect("delivers a queued mail on its commit's notice, not at the next poll", () =>
      Effect.gen(function*() {
        const smtp = yield* TestSmtp
        const queue = yield* Effect.provide(MailQueue, MailQueue.Default)
        const latencies: Array<number> = []
        for (let i = 0; i < 7; i++) {
          const to = `wake-${i}-${Date.now()}@example.test`
          const started = Date.now()
          yield* queue.enqueue({ to, kind: "verification", content: emailVerification({ link: "http://localhost/verify" }) })
          const [mail] = yield* receivedBy(smtp, to)
          latencies.push(mail!.receivedAt - started)
          // Off the poll's rhythm, so a sender that only polled would show its wait.
          yield* Effect.sleep("230 millis")
        }
        latencies.sort((a, b) => a - b)
        expect(latencies[3]).toBeLessThan(400)
      }))
  })
})
