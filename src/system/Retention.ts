/**
 * Retention: what has done its job is deleted on a schedule, so tables do not grow without bound —
 * processed cluster messages and their replies, dispatched outbox rows, finished webhook jobs with
 * their delivery records, rate-limit counters whose window and block are over, and outgoing mail: its
 * sealed body soon after it was delivered or given up (it may hold a reset link), its delivery record
 * later. Ages come from configuration (RETENTION_*_DAYS). Deletes go in batches so a
 * large backlog never holds long locks. The cluster's tables are the operations area's own; each other table's
 * owner states which of its rows are done with (the outbox's and the rate limits' in src/platform/, the
 * webhook queue's in src/webhooks/Retention.ts, the mail queue's in src/mail/Retention.ts).
 *
 * Handlers never rely on a purged message for correctness: a message replayed after its record is gone
 * finds its own work (payment_transitions, refunds.request_key) and answers with it.
 */
import { ClusterCron } from "@effect/cluster"
import { Snowflake } from "@effect/cluster"
import { SqlClient, type Statement } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Cron, Effect, Layer, Schema } from "effect"
import { clearFinishedMailBodies, purgeFinishedMail } from "../mail/Retention.ts"
import { AppConfig } from "../platform/Config.ts"
import { purgeDispatchedEvents } from "../platform/OutboxReads.ts"
import { purgeExpiredCounters } from "../platform/RateLimit.ts"
import { addMillis, currentDate } from "../platform/Time.ts"
import { purgeFinishedJobs } from "../webhooks/Retention.ts"
import { traced } from "../platform/Traced.ts"

const BATCH = 5_000
const DAY_MS = 24 * 60 * 60 * 1000

/** Cluster message ids are snowflakes: time-ordered, so "older than" is a comparison of ids. */
export const snowflakeBefore = (date: Date): bigint =>
  BigInt(Math.max(0, date.getTime() - Snowflake.constEpochMillis)) << 22n

export class Retention extends Effect.Service<Retention>()("system/Retention", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig

    /** Runs `deleteBatch` until it deletes less than a full batch; answers how many rows went. */
    const drain = (deleteBatch: Effect.Effect<number>) =>
      Effect.gen(function*() {
        let total = 0
        while (true) {
          const deleted = yield* deleteBatch
          total += deleted
          if (deleted < BATCH) return total
        }
      })

    const findProcessedMessages = SqlSchema.findAll({
      // The snowflake cutoff, as the text of a bigint.
      Request: Schema.String,
      Result: Schema.Struct({ request_id: Schema.String }),
      execute: (cutoff) =>
        sql`
          SELECT request_id FROM cluster_messages
          WHERE processed AND id < ${cutoff}
          LIMIT ${BATCH}`
    })

    const clusterMessages = (before: Date) => {
      const cutoff = snowflakeBefore(before).toString()
      return drain(
        sql.withTransaction(Effect.gen(function*() {
          const old = yield* findProcessedMessages(cutoff)
          if (old.length === 0) return 0
          const ids = old.map((row) => row.request_id)
          yield* sql`DELETE FROM cluster_replies WHERE request_id IN ${sql.in(ids)}`
          yield* sql`DELETE FROM cluster_messages WHERE request_id IN ${sql.in(ids)} AND processed`
          return old.length
        })).pipe(Effect.orDie)
      )
    }

    /**
     * A purge of up to BATCH rows per statement, repeated until one takes fewer. The statements answer their
     * rows only to be counted, so the rows are not decoded (Schema.Unknown).
     */
    const batchedPurge = (statement: (at: Date) => Statement.Statement<unknown>) => {
      const run = SqlSchema.findAll({ Request: Schema.DateFromSelf, Result: Schema.Unknown, execute: statement })
      return (at: Date) => drain(run(at).pipe(Effect.map((rows) => rows.length), Effect.orDie))
    }

    // Each owner states what of its rows is done with; retention runs its purge in batches, on a schedule.
    const outbox = batchedPurge((before) => purgeDispatchedEvents(sql, before, BATCH))
    const webhookJobs = batchedPurge((before) => purgeFinishedJobs(sql, before, BATCH))
    const throttles = batchedPurge((now) => purgeExpiredCounters(sql, now, BATCH))
    const mailBodies = batchedPurge((before) => clearFinishedMailBodies(sql, before, BATCH))
    const mail = batchedPurge((before) => purgeFinishedMail(sql, before, BATCH))

    const purge = traced("Retention.purge")(function*(at?: Date) {
      const now = at ?? (yield* currentDate)
      const ago = (days: number) => addMillis(now, -days * DAY_MS)
      const purged = {
        clusterMessages: yield* clusterMessages(ago(config.retention.clusterMessagesDays)),
        outbox: yield* outbox(ago(config.retention.outboxDays)),
        webhookJobs: yield* webhookJobs(ago(config.retention.webhookDeliveriesDays)),
        throttles: yield* throttles(now),
        mailBodies: yield* mailBodies(addMillis(now, -config.retention.mailBodiesHours * 60 * 60 * 1000)),
        mail: yield* mail(ago(config.retention.mailDays))
      }
      if (Object.values(purged).some((count) => count > 0)) {
        yield* Effect.logInfo("retention purge").pipe(Effect.annotateLogs(purged))
      }
      return purged
    })

    return { purge } as const
  })
}) {}

/** The purge, every 15 minutes, on exactly one runner. */
export const RetentionCronLive = ClusterCron.make({
  name: "system/retention",
  cron: Cron.unsafeParse("*/15 * * * *"),
  execute: Effect.flatMap(Retention, (retention) => Effect.asVoid(retention.purge()))
}).pipe(Layer.provide(Retention.Default))
