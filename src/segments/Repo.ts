/**
 * Segments' rows, and the one-query preview and membership test compiled from their rules (Rules.ts).
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { Match, Rule, type RuleSet, SAMPLE_SIZE } from "../../domain/Promotions.ts"
import { CustomerId, SegmentId, StoreId } from "../../domain/Ids.ts"
import { tiersOfStoreAmong } from "../loyalty/Tiers.ts"
import { storePageOf } from "../platform/Pagination.ts"
import { metricsOf, predicateOf } from "./Rules.ts"
import { traced } from "../platform/Traced.ts"

export const SegmentRow = Schema.Struct({
  id: SegmentId,
  store_id: StoreId,
  name: Schema.String,
  match: Match,
  rules: Schema.Array(Rule),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type SegmentRow = typeof SegmentRow.Type

export interface Scope {
  readonly storeId: StoreId
  readonly livemode: boolean
  readonly now: Date
}

export class SegmentsRepo extends Effect.Service<SegmentsRepo>()("segments/SegmentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = traced("SegmentsRepo.insert")(
      SqlSchema.single({
        Request: SegmentRow,
        Result: SegmentRow,
        execute: (row) =>
          sql`
            INSERT INTO segments (id, store_id, name, match, rules, created_at, updated_at)
            VALUES (${row.id}, ${row.store_id}, ${row.name}, ${row.match}, ${JSON.stringify(row.rules)}::jsonb,
              ${row.created_at}, ${row.updated_at})
            RETURNING *`
      }),
      Effect.orDie
    )

    const update = traced("SegmentsRepo.update")(
      SqlSchema.single({
        Request: SegmentRow,
        Result: SegmentRow,
        execute: (row) =>
          sql`
            UPDATE segments SET name = ${row.name}, match = ${row.match}, rules = ${JSON.stringify(row.rules)}::jsonb,
              updated_at = ${row.updated_at}
            WHERE id = ${row.id}
            RETURNING *`
      }),
      Effect.orDie
    )

    const find = traced("SegmentsRepo.find")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: SegmentRow,
        execute: (id) => sql`SELECT * FROM segments WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const list = traced("SegmentsRepo.list")(storePageOf(sql, "segments", SegmentRow))

    /**
     * Deletes the segment unless a promotion that has not ended uses it (then false). Ended promotions
     * that used it keep their record and lose the link.
     */
    const remove = traced("SegmentsRepo.remove")(function*(id: SegmentId) {
      const rows = yield* sql<{ deleted: boolean }>`
        WITH in_use AS (
          SELECT 1 FROM promotions WHERE segment_id = ${id} AND status <> 'ended' LIMIT 1
        ), unlinked AS (
          UPDATE promotions SET segment_id = NULL WHERE segment_id = ${id} AND NOT EXISTS (SELECT 1 FROM in_use)
          RETURNING 1
        ), deleted AS (
          DELETE FROM segments WHERE id = ${id} AND NOT EXISTS (SELECT 1 FROM in_use)
            AND (SELECT count(*) FROM unlinked) >= 0
          RETURNING 1
        )
        SELECT EXISTS (SELECT 1 FROM deleted) AS deleted`.pipe(
        // A promotion naming the segment committed after this statement's snapshot: its reference
        // refuses the delete, and the segment is in use after all.
        Effect.catchIf(
          (error) => (error.cause as { readonly code?: string } | undefined)?.code === "23503",
          () => Effect.succeed([{ deleted: false }])
        ),
        Effect.orDie
      )
      return rows[0]?.deleted === true
    })

    /** How many customers the rules match now, and the newest `SAMPLE_SIZE` of them, in one query. */
    const preview = traced("SegmentsRepo.preview")(function*(scope: Scope, ruleSet: RuleSet) {
      const rows = yield* sql<{ id: string; total: string }>`
        WITH m AS (${metricsOf(sql, scope)})
        SELECT m.id, count(*) OVER () AS total FROM m
        WHERE ${predicateOf(sql, ruleSet)}
        ORDER BY m.created_at DESC, m.id DESC
        LIMIT ${SAMPLE_SIZE}`.pipe(Effect.orDie)
      return {
        count: rows.length === 0 ? 0 : Number(rows[0]!.total),
        sample: rows.map((row) => CustomerId.make(row.id))
      }
    })

    /** Whether the customer is in the rules' segment at `scope.now`. */
    const contains = traced("SegmentsRepo.contains")(function*(scope: Scope, ruleSet: RuleSet, customerId: CustomerId) {
      const rows = yield* sql<{ member: boolean }>`
        WITH m AS (${metricsOf(sql, { ...scope, customerId })})
        SELECT EXISTS (SELECT 1 FROM m WHERE ${predicateOf(sql, ruleSet)}) AS member`.pipe(Effect.orDie)
      return rows[0]?.member === true
    })

    /** Which of `ids` are tiers of the store (the loyalty area's read). */
    const tiersOfStore = (storeId: StoreId, ids: ReadonlyArray<string>) => tiersOfStoreAmong(sql, storeId, ids)

    return { insert, update, find, list, remove, preview, contains, tiersOfStore } as const
  })
}) {}
