/**
 * The mail queue's SQL (`outgoing_mail`). Every time the queue keeps — when a mail is due, how long a
 * claim lasts, how old a mail is — is the database's clock, so the sender on any runner and the request
 * that queued the mail agree on it.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import type { PagePosition } from "../platform/Pagination.ts"
import { MAIL_QUEUE_CHANNEL } from "./Names.ts"

export type MailStatus = "queued" | "sent" | "failed"

export interface QueuedMail {
  readonly recipient: string
  readonly subject: string
  readonly kind: string
  readonly textSealed: string
  readonly htmlSealed: string
  /** A mail asked for again with the same key (a replayed event, a repeated request) is not queued twice. */
  readonly dedupeKey: string | null
  /** The customer a mail is for: their erasure clears its address and body (a trigger of the migration). */
  readonly customerId: string | null
}

/** A mail the sender claimed for an attempt. */
export interface ClaimedMail {
  readonly id: string
  readonly recipient: string
  readonly subject: string
  readonly body_sealed: string | null
  readonly html_sealed: string | null
  readonly attempts: number
  /** Seconds since it was queued, by the database's clock. */
  readonly age_seconds: number
}

export interface MailRow {
  readonly id: string
  readonly recipient: string
  readonly subject: string
  readonly kind: string
  readonly status: MailStatus
  readonly attempts: number
  readonly last_error: string | null
  readonly provider_message_id: string | null
  readonly next_attempt_at: Date
  readonly finished_at: Date | null
  readonly created_at: Date
}

const ClaimedMailRow = Schema.Struct({
  id: Schema.String,
  recipient: Schema.String,
  subject: Schema.String,
  body_sealed: Schema.NullOr(Schema.String),
  html_sealed: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  age_seconds: Schema.Number
})

export class MailRepo extends Effect.Service<MailRepo>()("mail/MailRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Queues a mail and wakes the sender as the statement commits (inside a caller's transaction, when
     * it commits). Answers whether it was queued (false: its deduplication key was taken).
     */
    const insert = (mail: QueuedMail) =>
      Effect.map(
        sql<{ id: string }>`
          WITH queued AS (
            INSERT INTO outgoing_mail (recipient, subject, kind, body_sealed, html_sealed, dedupe_key, customer_id)
            VALUES (${mail.recipient}, ${mail.subject}, ${mail.kind}, ${mail.textSealed}, ${mail.htmlSealed}, ${mail.dedupeKey},
              ${mail.customerId})
            ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
            RETURNING id
          )
          -- A notice needs a payload: the driver drops empty ones.
          SELECT id::text, pg_notify(${MAIL_QUEUE_CHANNEL}, id::text) FROM queued`,
        (rows) => rows.length > 0
      )

    /**
     * Claims up to `limit` due mails for `leaseSeconds`: another sender (a runner taking over the
     * singleton) leaves them alone until the claim is recorded, released or runs out.
     */
    const claimDue = SqlSchema.findAll({
      Request: Schema.Struct({ limit: Schema.Number, leaseSeconds: Schema.Number }),
      Result: ClaimedMailRow,
      execute: ({ leaseSeconds, limit }) =>
        sql`
          UPDATE outgoing_mail m SET claimed_until = now() + make_interval(secs => ${leaseSeconds})
          FROM (
            SELECT id FROM outgoing_mail
            WHERE status = 'queued' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
            ORDER BY next_attempt_at, id
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          ) due
          WHERE m.id = due.id
          RETURNING m.id::text AS id, m.recipient, m.subject, m.body_sealed, m.html_sealed, m.attempts,
            extract(epoch FROM now() - m.created_at)::float8 AS age_seconds`
    })

    const markSent = (id: string, providerMessageId: string) =>
      sql`
        UPDATE outgoing_mail SET status = 'sent', attempts = attempts + 1, provider_message_id = ${providerMessageId},
          last_error = NULL, claimed_until = NULL, finished_at = now()
        WHERE id = ${id} AND status = 'queued'`.pipe(Effect.asVoid)

    const markRetry = (id: string, error: string, waitSeconds: number) =>
      sql`
        UPDATE outgoing_mail SET attempts = attempts + 1, last_error = ${error}, claimed_until = NULL,
          next_attempt_at = now() + make_interval(secs => ${waitSeconds})
        WHERE id = ${id} AND status = 'queued'`.pipe(Effect.asVoid)

    const markFailed = (id: string, error: string) =>
      sql`
        UPDATE outgoing_mail SET status = 'failed', attempts = attempts + 1, last_error = ${error}, claimed_until = NULL,
          finished_at = now()
        WHERE id = ${id} AND status = 'queued'`.pipe(Effect.asVoid)

    /** Gives back claims whose attempt never started (the sender is stopping). */
    const release = (ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.void
        : sql`UPDATE outgoing_mail SET claimed_until = NULL WHERE id IN ${sql.in(ids)} AND status = 'queued'`.pipe(Effect.asVoid)

    const list = (input: { readonly status: MailStatus | undefined; readonly limit: number; readonly position: PagePosition | undefined }) => {
      const status = input.status === undefined ? sql`TRUE` : sql`status = ${input.status}`
      const after = input.position === undefined
        ? sql`TRUE`
        : sql`(created_at, id) < (${input.position.createdAt}, ${input.position.id.replace(/^eml_/, "")}::bigint)`
      return sql<MailRow>`
        SELECT id::text AS id, recipient, subject, kind, status, attempts, last_error, provider_message_id, next_attempt_at,
          finished_at, created_at
        FROM outgoing_mail WHERE ${status} AND ${after}
        ORDER BY created_at DESC, id DESC
        LIMIT ${input.limit + 1}`
    }

    const counts = Effect.map(
      sql<{ queued: number; failed: number }>`
        SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued, count(*) FILTER (WHERE status = 'failed')::int AS failed
        FROM outgoing_mail`,
      (rows) => rows[0] ?? { queued: 0, failed: 0 }
    )

    return { insert, claimDue, markSent, markRetry, markFailed, release, list, counts } as const
  })
}) {}
