/**
 * Retries are bounded: waits double from the first up to the longest, and a mail the server keeps
 * refusing (4xx) is given up once MAIL_GIVE_UP_HOURS have passed since it was queued.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MailQueue } from "../../src/mail/Queue.ts"
import { retryWaitSeconds } from "../../src/mail/Sender.ts"
import { emailVerification } from "../../src/mail/Templates.ts"
import { fastMail, receivedBy, TestSmtp } from "../support/Smtp.ts"
import { testAppLayer } from "../support/TestApp.ts"

// Given up about 5 s after it was queued: with waits of 0.2 to 0.4 s that leaves room for several attempts.
// A window of 1.5 s, with the mail queued as soon as the service was up, saw a single attempt on a loaded
// two-core machine: its first attempt came more than 1.3 s after it was queued, when the next wait already
// ran past the window. The sender is a cluster singleton, started only once its runner holds its shard, so
// a mail queued right after start-up can wait for it: the test first sees a mail delivered, then has the
// server refuse.
const appWithSmtp = Layer.unwrapEffect(
  Effect.map(TestSmtp, (smtp) => testAppLayer({ mail: { ...fastMail(smtp.url), giveUpHours: 5 / 3600 } }))
).pipe(Layer.provideMerge(TestSmtp.layer))

describe("mail retries", () => {
  it("double from the first wait up to the longest, with at most 10 % jitter", () => {
    expect(retryWaitSeconds(1, 30, 1800, 0.5)).toBe(30)
    expect(retryWaitSeconds(2, 30, 1800, 0.5)).toBe(60)
    expect(retryWaitSeconds(4, 30, 1800, 0.5)).toBe(240)
    expect(retryWaitSeconds(20, 30, 1800, 0.5)).toBe(1800)
    expect(retryWaitSeconds(1, 30, 1800, 0)).toBeCloseTo(27)
    expect(retryWaitSeconds(1, 30, 1800, 1)).toBeCloseTo(33)
  })

  layer(appWithSmtp, { timeout: 120_000, excludeTestServices: true })("against a server that keeps refusing", (it) => {
    it.effect("gives the mail up after MAIL_GIVE_UP_HOURS, with the last error", () =>
      Effect.gen(function*() {
        const smtp = yield* TestSmtp
        const sql = yield* SqlClient.SqlClient
        const queue = yield* Effect.provide(MailQueue, MailQueue.Default)
        // The sender is running once a mail gets through.
        const first = `sender-up-${Date.now()}@example.test`
        yield* queue.enqueue({ to: first, kind: "verification", content: emailVerification({ link: "http://localhost/verify" }) })
        yield* receivedBy(smtp, first)
        smtp.mode = "tempfail"
        const to = `give-up-${Date.now()}@example.test`
        yield* queue.enqueue({ to, kind: "verification", content: emailVerification({ link: "http://localhost/verify" }) })
        const deadline = Date.now() + 20_000
        let record: { status: string; attempts: number; last_error: string | null } | undefined
        while (Date.now() < deadline) {
          record = (yield* sql<{ status: string; attempts: number; last_error: string | null }>`
            SELECT status, attempts, last_error FROM outgoing_mail WHERE recipient = ${to}`)[0]
          if (record?.status === "failed") break
          yield* Effect.sleep("100 millis")
        }
        expect(record?.status).toBe("failed")
        expect(record!.attempts).toBeGreaterThanOrEqual(2)
        expect(record!.last_error).toMatch(/^gave up after \d+ attempts: .*451/)
        expect(smtp.to(to)).toEqual([])
      }))
  })
})
