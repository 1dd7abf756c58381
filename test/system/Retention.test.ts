/**
 * Retention deletes what has done its job — processed cluster messages with their replies, dispatched
 * outbox rows — and nothing that is still needed; the payments it touched still answer replays.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { Retention, snowflakeBefore } from "../../src/system/Retention.ts"
import { newMerchant, paidPayment, refund, retrievePayment } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const DAY_MS = 24 * 60 * 60 * 1000

const count = (sql: SqlClient.SqlClient, query: string) =>
  Effect.map(sql.unsafe<{ n: string }>(query), (rows) => Number(rows[0]?.n ?? 0)).pipe(Effect.orDie)

describe("retention", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("purge", (it) => {
    it.effect("orders snowflake cut-offs by time", () =>
      Effect.sync(() => {
        const earlier = snowflakeBefore(new Date("2026-01-01T00:00:00Z"))
        const later = snowflakeBefore(new Date("2026-01-02T00:00:00Z"))
        expect(later - earlier).toBe(BigInt(DAY_MS) << 22n)
      }))

    it.effect("deletes processed messages and dispatched outbox rows past their age, and keeps the rest", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const sql = yield* SqlClient.SqlClient
        const { key } = yield* newMerchant(app)
        const payment = yield* paidPayment(app, key, { amount: "5.00" })
        // The webhook dispatcher marks outbox rows dispatched; wait for it.
        yield* count(sql, "SELECT count(*) AS n FROM outbox WHERE dispatched_at IS NULL").pipe(
          Effect.filterOrFail((n) => n === 0),
          Effect.retry(Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(100)))
        )
        // The merchant's verification mail, delivered (to the log here): its body is kept only a while.
        const sentMail = yield* count(sql, "SELECT count(*) AS n FROM outgoing_mail WHERE status = 'sent' AND body_sealed IS NOT NULL").pipe(
          Effect.filterOrFail((n) => n > 0),
          Effect.retry(Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(100)))
        )
        const before = {
          messages: yield* count(sql, "SELECT count(*) AS n FROM cluster_messages WHERE processed"),
          outbox: yield* count(sql, "SELECT count(*) AS n FROM outbox")
        }
        expect(before.messages).toBeGreaterThan(0)
        expect(before.outbox).toBeGreaterThan(0)

        // Rate-limit counters: one whose window is current, one whose window and block are over, one whose
        // window is over but whose block is not.
        const hour = 60 * 60 * 1000
        const at = (offset: number) => new Date(Date.now() + offset)
        yield* sql`DELETE FROM rate_limits`
        yield* sql`
          INSERT INTO rate_limits (key, hits, window_started, blocked_until, expires_at) VALUES
            ('retention:current', 1, ${at(0)}, NULL, ${at(hour)}),
            ('retention:over', 3, ${at(-48 * hour)}, ${at(-47 * hour)}, ${at(-47 * hour)}),
            ('retention:blocked', 0, ${at(-48 * hour)}, ${at(hour)}, ${at(hour)})`

        const retention = yield* Effect.provide(Retention, Retention.Default)
        // Today nothing is old enough but the counter whose window and block are over.
        const today = yield* retention.purge(new Date())
        expect(today).toEqual({ clusterMessages: 0, outbox: 0, webhookJobs: 0, throttles: 1, mailBodies: 0, mail: 0 })
        const throttleKeys = yield* sql<{ key: string }>`SELECT key FROM rate_limits ORDER BY key`
        expect(throttleKeys.map((row) => row.key)).toEqual(["retention:blocked", "retention:current"])
        // Two hours on, delivered mail has lost its body and kept its record.
        const soon = yield* retention.purge(new Date(Date.now() + 2 * 60 * 60 * 1000))
        expect(soon.mailBodies).toBeGreaterThanOrEqual(sentMail)
        expect(soon.mail).toBe(0)
        expect(yield* count(sql, "SELECT count(*) AS n FROM outgoing_mail WHERE status = 'sent' AND body_sealed IS NOT NULL")).toBe(0)
        expect(yield* count(sql, "SELECT count(*) AS n FROM outgoing_mail WHERE status = 'sent'")).toBeGreaterThan(0)
        // Thirty-one days on, everything finished is.
        const later = yield* retention.purge(new Date(Date.now() + 31 * DAY_MS))
        expect(later.mail).toBeGreaterThanOrEqual(sentMail)
        expect(later.clusterMessages).toBeGreaterThanOrEqual(before.messages)
        expect(later.outbox).toBe(before.outbox)
        expect(yield* count(sql, "SELECT count(*) AS n FROM cluster_messages WHERE processed")).toBe(0)
        expect(yield* count(
          sql,
          "SELECT count(*) AS n FROM cluster_replies r WHERE NOT EXISTS (SELECT 1 FROM cluster_messages m WHERE m.request_id = r.request_id)"
        )).toBe(0)
        expect(yield* count(sql, "SELECT count(*) AS n FROM outbox")).toBe(0)

        // The payment and its history are untouched, and it still changes normally.
        expect((yield* refund(app, key, payment.id, { amount: "1.00" })).amount).toBe("1.00")
        const after = yield* retrievePayment(app, key, payment.id)
        expect(after).toMatchObject({ status: "partially_refunded", amount_refunded: "1.00" })
      }))
  })
})
