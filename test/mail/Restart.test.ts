/**
 * The mail queue across a restart: the service is stopped while a backlog is being delivered to a slow
 * SMTP server, then started again on the same database. Every mail arrives exactly once: what was under
 * way at the stop finished and was recorded, what was not yet tried waited for the next start.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { ServiceLive } from "../../runtime/App.ts"
import { MailQueue } from "../../src/mail/Queue.ts"
import { emailVerification } from "../../src/mail/Templates.ts"
import { fastMail, TestSmtp } from "../support/Smtp.ts"
import { testConfigLayer } from "../support/TestConfig.ts"
import { TestDatabase } from "../support/TestDatabase.ts"

const BACKLOG = 60

describe("mail across a restart", () => {
  layer(Layer.merge(TestDatabase.layer, TestSmtp.layer), { timeout: 120_000, excludeTestServices: true })("", (it) => {
    it.effect("stopped mid-queue and started again, the service delivers every mail once", () =>
      Effect.gen(function*() {
        const smtp = yield* TestSmtp
        const masterKey = Option.some(Redacted.make(new Uint8Array(randomBytes(32))))
        const serviceLayer = ServiceLive.pipe(
          Layer.provideMerge(testConfigLayer({ masterKey, mail: fastMail(smtp.url) })),
          Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
        )
        const withService = <A, E>(use: (context: Context.Context<Layer.Layer.Success<typeof serviceLayer>>) => Effect.Effect<A, E>) =>
          Effect.scoped(Effect.flatMap(Layer.build(serviceLayer), use))
        const statuses = (sql: SqlClient.SqlClient) =>
          Effect.map(
            sql<{ status: string; n: number }>`SELECT status, count(*)::int AS n FROM outgoing_mail GROUP BY status`,
            (rows) => Object.fromEntries(rows.map((row) => [row.status, row.n])) as Record<string, number | undefined>
          ).pipe(Effect.orDie)
        const recipients = Array.from({ length: BACKLOG }, (_, i) => `backlog-${i}-${randomBytes(3).toString("hex")}@example.test`)

        // Each message takes the server a while to answer, so the backlog is still being delivered at the stop.
        smtp.delayMs = 150
        yield* withService((context) =>
          Effect.gen(function*() {
            const queue = yield* Effect.provide(MailQueue, MailQueue.Default.pipe(Layer.provide(Layer.succeedContext(context))))
            yield* Effect.forEach(recipients, (to) =>
              queue.enqueue({ to, kind: "verification", content: emailVerification({ link: `http://localhost/verify/${to}` }) }), { discard: true })
            while (smtp.received.length < 5) yield* Effect.sleep("20 millis")
          })
        )

        // Stopped: whatever the server accepted is recorded sent, and part of the backlog is still queued.
        const receivedAtStop = smtp.received.length
        const database = yield* TestDatabase
        if (Option.isSome(database.url)) {
          const afterStop = yield* Effect.promise(() => statusesOver(Redacted.value(database.url.pipe(Option.getOrThrow))))
          expect(afterStop["sent"]).toBe(receivedAtStop)
          expect(afterStop["queued"] ?? 0).toBeGreaterThan(0)
          expect((afterStop["sent"] ?? 0) + (afterStop["queued"] ?? 0)).toBe(BACKLOG)
        }

        smtp.delayMs = 0
        yield* withService((context) =>
          Effect.gen(function*() {
            const sql = Context.get(context, SqlClient.SqlClient)
            const deadline = Date.now() + 30_000
            while ((yield* statuses(sql))["sent"] !== BACKLOG && Date.now() < deadline) yield* Effect.sleep("50 millis")
            expect(yield* statuses(sql)).toEqual({ sent: BACKLOG })
          })
        )
        for (const to of recipients) expect(smtp.to(to)).toHaveLength(1)
        expect(smtp.received).toHaveLength(BACKLOG)
      }))
  })
})

/** The mail records by status, read with the service stopped, over a connection of the test's own. */
const statusesOver = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM outgoing_mail GROUP BY status")
    return Object.fromEntries(rows.map((row) => [row.status, row.n])) as Record<string, number | undefined>
  } finally {
    await client.end()
  }
}
