/**
 * The mail queue across a restart of the service as a process (as `npm start` runs it): SIGTERM while a
 * backlog of verification mails is being delivered to a slow SMTP server, then a start on the same
 * database. Every mail the server accepted before the stop is recorded sent, the rest waited, and after
 * the restart each address has received its mail exactly once.
 */
import { describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { freshServerDatabase, serverAnswers, startService } from "../support/Durability.ts"
import { startLocalSmtp } from "../support/Smtp.ts"

const USERS = 40

const statuses = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM outgoing_mail WHERE kind = 'verification' GROUP BY status"
    )
    return Object.fromEntries(rows.map((row) => [row.status, row.n])) as Record<string, number | undefined>
  } finally {
    await client.end()
  }
}

const waitFor = async (done: () => boolean | Promise<boolean>, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("mail across a restart of the service process", () => {
  it("SIGTERM mid-queue loses no mail and sends none twice", async () => {
    // It reads the queue between the two runs, so it needs the database outside the service.
    if (!(await serverAnswers())) return
    const database = await freshServerDatabase("mail_restart")
    const dataDir = mkdtempSync(join(tmpdir(), "mail-restart-"))
    const smtp = await startLocalSmtp()
    try {
      const options = {
        dataDir,
        databaseUrl: database.url,
        env: {
          SMTP_URL: smtp.url,
          MAIL_RETRY_FIRST_SECONDS: "0.3",
          MAIL_RETRY_MAX_SECONDS: "0.3",
          REGISTRATIONS_PER_ADDRESS_PER_HOUR: "10000"
        }
      }
      // The server refuses (4xx) while the backlog is made, so it builds up in the queue.
      smtp.mode = "tempfail"
      const first = await startService(options, "mail-first")
      const emails = Array.from({ length: USERS }, (_, i) => `restart-${i}-${randomBytes(3).toString("hex")}@example.test`)
      for (let i = 0; i < emails.length; i += 8) {
        await Promise.all(emails.slice(i, i + 8).map(async (email) => {
          const response = await fetch(`${first.baseUrl}/auth/register`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email, password: "correct horse battery staple" })
          })
          expect(response.status).toBe(201)
        }))
      }
      // Now it accepts, slowly: the stop lands while deliveries are under way.
      smtp.delayMs = 300
      smtp.mode = "accept"
      await waitFor(() => smtp.received.length >= 5, 30_000, "the first deliveries")
      await first.process.stop(20_000)

      const accepted = smtp.received.length
      const afterStop = await statuses(database.url)
      expect(afterStop["sent"]).toBe(accepted)
      expect(afterStop["queued"] ?? 0).toBeGreaterThan(0)
      expect((afterStop["sent"] ?? 0) + (afterStop["queued"] ?? 0)).toBe(USERS)

      smtp.delayMs = 0
      const second = await startService(options, "mail-second")
      try {
        await waitFor(async () => (await statuses(database.url))["sent"] === USERS, 60_000, "every mail sent")
      } finally {
        await second.process.stop(20_000)
      }
      for (const email of emails) expect(smtp.to(email)).toHaveLength(1)
      expect(smtp.received).toHaveLength(USERS)
    } finally {
      await smtp.stop()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 180_000)
})
