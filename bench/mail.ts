/**
 * Mail through the queue to a local SMTP server (`npm run bench:mail`).
 *
 * 1. A fresh database on the PostgreSQL at BENCH_POSTGRES_URL (default: the local server); a local SMTP
 *    server in this process (smtp-server, the real protocol, answering 250 at once); the service as a
 *    child process (from source) with SMTP_URL pointing at it.
 * 2. Throughput: BENCH_MAILS (2,000) mails committed into the queue at once, sealed as MailQueue seals
 *    them, with the commit's notice; the time until the server has accepted every one (mails/s;
 *    target ≥ 200/s).
 * 3. Latency: BENCH_SAMPLES (200) mails committed one at a time at BENCH_RATE (20) a second; for each,
 *    the time from its commit to the server's 250 (p50, p99; target p99 ≤ 1 s).
 * 4. A markdown table for the README; the database is dropped however it ends.
 */
import { randomBytes } from "node:crypto"
import { cpus } from "node:os"
import { encryptSecret } from "../src/platform/Crypto.ts"
import { startLocalSmtp } from "../test/support/Smtp.ts"
import {
  formatInt,
  formatMs,
  log,
  onCleanUp,
  openDatabase,
  percentile,
  positiveNumber,
  runBench,
  setLogPrefix,
  startService,
  withClient,
  writeSummary
} from "./support.ts"

setLogPrefix("bench:mail")

const MAILS = Math.round(positiveNumber("BENCH_MAILS", 2_000))
const SAMPLES = Math.round(positiveNumber("BENCH_SAMPLES", 200))
const RATE = positiveNumber("BENCH_RATE", 20)

const TEXT = "Please confirm that this address is yours by opening this link within 24 hours.\n\nhttp://localhost:3000/auth/verify-email?token=bench\n"
const HTML = `<!doctype html><html><body><p>Please confirm that this address is yours.</p><a href="http://localhost:3000/auth/verify-email?token=bench">Verify</a></body></html>`

/** Mails to `recipients`, written as MailQueue writes them (both parts sealed), with the sender's wake-up notice. */
const queueMails = (key: Uint8Array, recipients: ReadonlyArray<string>) => ({
  text: `
    WITH queued AS (
      INSERT INTO outgoing_mail (recipient, subject, kind, body_sealed, html_sealed)
      SELECT recipient, 'Verify your e-mail address', 'verification', $2, $3 FROM unnest($1::text[]) AS recipient
      RETURNING id
    )
    SELECT pg_notify('outgoing_mail', id::text) FROM queued LIMIT 1`,
  values: [recipients, encryptSecret(key, TEXT), encryptSecret(key, HTML)]
})

const waitUntil = async (done: () => boolean, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

const main = async () => {
  const cores = cpus().length
  log(`machine: ${cores} cores, node ${process.version}`)
  const database = await openDatabase()
  if (database.url === undefined) throw new Error("this bench writes straight into PostgreSQL: set BENCH_POSTGRES_URL")
  log(`database: ${database.description}`)

  const smtp = await startLocalSmtp()
  onCleanUp(() => smtp.stop())
  // When each recipient's mail was accepted (the server answers 250 right after it is noted).
  const accepted = new Map<string, number>()
  const received = smtp.received
  let seen = 0
  const noteAccepted = () => {
    for (; seen < received.length; seen++) accepted.set(received[seen]!.to, received[seen]!.receivedAt)
  }

  const masterKey = randomBytes(32)
  const service = await startService(database, {
    fromSource: true,
    env: { SMTP_URL: smtp.url, MAIL_FROM: "Bench <bench@example.test>", MASTER_KEY: masterKey.toString("base64") }
  })
  log(`service at ${service.baseUrl}, SMTP at ${smtp.url}`)
  const run = randomBytes(3).toString("hex")

  // --- Throughput -----------------------------------------------------------------------------------
  const backlog = Array.from({ length: MAILS }, (_, i) => `backlog-${run}-${i}@example.test`)
  const backlogStarted = Date.now()
  await withClient(database.url, (client) => client.query(queueMails(masterKey, backlog)))
  await waitUntil(() => {
    noteAccepted()
    return backlog.every((to) => accepted.has(to))
  }, 600_000, "the backlog's mails")
  const backlogSeconds = (Math.max(...backlog.map((to) => accepted.get(to)!)) - backlogStarted) / 1000
  const backlogRate = MAILS / backlogSeconds
  log(`backlog of ${formatInt(MAILS)} mails: every one accepted in ${backlogSeconds.toFixed(2)} s (${formatInt(backlogRate)} mails/s)`)

  // --- Latency at a steady rate ---------------------------------------------------------------------
  const committedAt = new Map<string, number>()
  const samples = Array.from({ length: SAMPLES }, (_, i) => `single-${run}-${i}@example.test`)
  await withClient(database.url, async (client) => {
    const interval = 1000 / RATE
    const started = Date.now()
    for (const [i, to] of samples.entries()) {
      const due = started + i * interval
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()))
      await client.query(queueMails(masterKey, [to]))
      committedAt.set(to, Date.now())
    }
  })
  await waitUntil(() => {
    noteAccepted()
    return samples.every((to) => accepted.has(to))
  }, 120_000, "the sampled mails")
  const latencies = samples.map((to) => accepted.get(to)! - committedAt.get(to)!).sort((a, b) => a - b)
  const single = { p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
  log(`at ${RATE} mails/s, commit → SMTP 250: p50 ${formatMs(single.p50)}, p99 ${formatMs(single.p99)}`)

  const duplicates = received.length - new Set(received.map((mail) => mail.to)).size
  if (duplicates > 0) log(`the server received ${duplicates} mails twice`)
  const problems = service.problems()
  if (problems.count > 0) log(`the service logged ${problems.count} warnings or errors, first: ${problems.first.join("\n")}`)

  console.log("")
  console.log(`Mail through the queue to a local SMTP server (${database.description}; ${cores} cores, node ${process.version})`)
  console.log("")
  console.log("| measure | figure | target |")
  console.log("|---|---:|---:|")
  console.log(`| a backlog of ${formatInt(MAILS)} queued mails to SMTP 250 | ${formatInt(backlogRate)} mails/s | ≥ 200/s |`)
  console.log(`| one mail at ${RATE}/s, commit → SMTP 250 | p50 ${formatMs(single.p50)}, p99 ${formatMs(single.p99)} | p99 ≤ 1 s |`)
  console.log("")
  writeSummary({ database: database.description, mails: MAILS, mailsPerSecond: backlogRate, rate: RATE, latency: single, duplicates })
}

runBench(main)
