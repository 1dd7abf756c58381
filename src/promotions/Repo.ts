/**
 * Promotions' rows and their audit trail; status moves as guarded updates (the row moves only from a
 * status the machine allows, so two racing moves cannot both apply); the simulation and the promotions
 * a paid payment may earn, each one query.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { PaymentId, PromotionId, SegmentId, StoreId, UserId } from "../../domain/Ids.ts"
import { PromotionActions, PromotionStatus, type RuleSet, SIMULATION_WINDOW_DAYS } from "../../domain/Promotions.ts"
import { storePageOf } from "../platform/Pagination.ts"
import { metricsOf, predicateOf } from "../segments/Rules.ts"
import { transactionOf } from "../platform/Transaction.ts"
import { PaymentReads } from "../payments/Reads.ts"
import { PaymentReports } from "../payments/Reports.ts"
import { traced } from "../platform/Traced.ts"

export const PromotionRow = Schema.Struct({
  id: PromotionId,
  store_id: StoreId,
  name: Schema.String,
  segment_id: Schema.NullOr(SegmentId),
  bonus_points: Schema.Number,
  min_amount: Schema.NullOr(Schema.NumberFromString),
  min_currency: Schema.NullOr(Schema.Literal("USD", "KHR")),
  starts_at: Schema.DateFromSelf,
  ends_at: Schema.DateFromSelf,
  status: PromotionStatus,
  rejection_reason: Schema.NullOr(Schema.String),
  submitted_by: Schema.NullOr(UserId),
  approved_by: Schema.NullOr(UserId),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type PromotionRow = typeof PromotionRow.Type

export const AuditRow = Schema.Struct({
  promotion_id: PromotionId,
  action: Schema.Literal(...PromotionActions),
  from_status: Schema.NullOr(PromotionStatus),
  to_status: PromotionStatus,
  user_id: Schema.NullOr(UserId),
  reason: Schema.NullOr(Schema.String),
  at: Schema.DateFromSelf
})
export type AuditRow = typeof AuditRow.Type

/** A paid payment as awarding reads it. */
const Fields = Schema.Struct({
  id: PromotionId,
  name: Schema.String,
  segment_id: Schema.NullOr(SegmentId),
  bonus_points: Schema.Number,
  min_amount: Schema.NullOr(Schema.Number),
  min_currency: Schema.NullOr(Schema.String),
  starts_at: Schema.DateFromSelf,
  ends_at: Schema.DateFromSelf,
  status: PromotionStatus,
  rejection_reason: Schema.NullOr(Schema.String),
  updated_at: Schema.DateFromSelf
})

const Move = Schema.Struct({
  id: PromotionId,
  from: Schema.Array(PromotionStatus),
  to: PromotionStatus,
  at: Schema.DateFromSelf,
  rejection_reason: Schema.NullOr(Schema.String),
  submitted_by: Schema.optional(UserId),
  approved_by: Schema.optional(UserId)
})
export type Move = typeof Move.Type

export interface Simulation {
  readonly eligibleCustomers: number
  readonly qualifyingPayments: number
}

export class PromotionsRepo extends Effect.Service<PromotionsRepo>()("promotions/PromotionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const payments = yield* PaymentReads
    const reports = yield* PaymentReports

    const inTransaction = transactionOf(sql)

    const insert = traced("PromotionsRepo.insert")(
      SqlSchema.single({
        Request: PromotionRow,
        Result: PromotionRow,
        execute: (row) =>
          sql`
            INSERT INTO promotions (id, store_id, name, segment_id, bonus_points, min_amount, min_currency, starts_at,
              ends_at, status, rejection_reason, submitted_by, approved_by, created_at, updated_at)
            VALUES (${row.id}, ${row.store_id}, ${row.name}, ${row.segment_id}, ${row.bonus_points}, ${row.min_amount},
              ${row.min_currency}, ${row.starts_at}, ${row.ends_at}, ${row.status}, ${row.rejection_reason},
              ${row.submitted_by}, ${row.approved_by}, ${row.created_at}, ${row.updated_at})
            RETURNING *`
      }),
      Effect.orDie
    )

    const find = traced("PromotionsRepo.find")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: PromotionRow,
        execute: (id) => sql`SELECT * FROM promotions WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const list = traced("PromotionsRepo.list")(storePageOf(sql, "promotions", PromotionRow))

    /** Rewrites the editable fields if the promotion is still in one of `editable` (else none). */
    const updateFields = traced("PromotionsRepo.updateFields")(
      (row: typeof Fields.Type, editable: ReadonlyArray<PromotionStatus>) =>
        SqlSchema.findOne({
          Request: Fields,
          Result: PromotionRow,
          execute: (fields) =>
            sql`
              UPDATE promotions SET name = ${fields.name}, segment_id = ${fields.segment_id},
                bonus_points = ${fields.bonus_points}, min_amount = ${fields.min_amount},
                min_currency = ${fields.min_currency}, starts_at = ${fields.starts_at}, ends_at = ${fields.ends_at},
                status = ${fields.status}, rejection_reason = ${fields.rejection_reason}, updated_at = ${fields.updated_at}
              WHERE id = ${fields.id} AND status IN ${sql.in(editable)}
              RETURNING *`
        })(row).pipe(Effect.orDie)
    )

    /** Moves the promotion to `to` if it is in one of `from` (else none): the machine's guard in SQL. */
    const move = traced("PromotionsRepo.move")(
      SqlSchema.findOne({
        Request: Move,
        Result: PromotionRow,
        execute: (move) =>
          sql`
            UPDATE promotions SET status = ${move.to}, updated_at = ${move.at},
              rejection_reason = ${move.rejection_reason},
              submitted_by = coalesce(${move.submitted_by ?? null}, submitted_by),
              approved_by = coalesce(${move.approved_by ?? null}, approved_by)
            WHERE id = ${move.id} AND status IN ${sql.in(move.from)}
            RETURNING *`
      }),
      Effect.orDie
    )

    /** Deletes the promotion unless it is in one of `kept` (then false). Its audit trail goes with it. */
    const remove = traced("PromotionsRepo.remove")(function*(id: PromotionId, kept: ReadonlyArray<PromotionStatus>) {
      const rows = yield* sql`DELETE FROM promotions WHERE id = ${id} AND status NOT IN ${sql.in(kept)} RETURNING id`
        .pipe(Effect.orDie)
      return rows.length > 0
    })

    const insertAudit = traced("PromotionsRepo.insertAudit")(
      SqlSchema.void({
        Request: AuditRow,
        execute: (row) =>
          sql`
            INSERT INTO promotion_audit (promotion_id, action, from_status, to_status, user_id, reason, at)
            VALUES (${row.promotion_id}, ${row.action}, ${row.from_status}, ${row.to_status}, ${row.user_id},
              ${row.reason}, ${row.at})`
      }),
      Effect.orDie
    )

    /** The audit trails of the promotions, oldest entry first. */
    const auditsOf = traced("PromotionsRepo.auditsOf")(
      (ids: ReadonlyArray<PromotionId>) =>
        ids.length === 0 ? Effect.succeed([]) : SqlSchema.findAll({
          Request: Schema.Array(PromotionId),
          Result: AuditRow,
          execute: (ids) => sql`SELECT * FROM promotion_audit WHERE promotion_id IN ${sql.in(ids)} ORDER BY promotion_id, seq`
        })(ids).pipe(Effect.orDie)
    )

    /** Active and paused promotions whose end date has passed at `now`: the ones to end. */
    const overdue = traced("PromotionsRepo.overdue")(
      SqlSchema.findAll({
        Request: Schema.DateFromSelf,
        Result: PromotionRow,
        execute: (now) =>
          sql`SELECT * FROM promotions WHERE status IN ('active', 'paused') AND ends_at <= ${now} ORDER BY ends_at LIMIT 500`
      }),
      Effect.orDie
    )

    /** A paid payment's facts, as awarding reads them (its amount in minor units as a number). */
    const findPayment = (id: PaymentId) =>
      Effect.map(payments.factsOf(id), Option.map((payment) => ({ ...payment, amount: Number(payment.amount) })))

    /** Whether the store has an active promotion at all (its payments' events need read nothing else if not). */
    const hasActive = traced("PromotionsRepo.hasActive")(
      SqlSchema.single({
        Request: StoreId,
        Result: Schema.Struct({ active: Schema.Boolean }),
        execute: (storeId) => sql`SELECT EXISTS (SELECT 1 FROM promotions WHERE store_id = ${storeId} AND status = 'active') AS active`
      }),
      Effect.map((row: { readonly active: boolean }) => row.active),
      Effect.orDie
    )

    /**
     * The store's active promotions whose window holds `paidAt` and whose minimum the payment meets: those
     * the payment may earn (segment membership is tested after, per promotion).
     */
    const runningFor = traced("PromotionsRepo.runningFor")(
      SqlSchema.findAll({
        Request: Schema.Struct({ storeId: StoreId, paidAt: Schema.DateFromSelf, amount: Schema.Number, currency: Schema.String }),
        Result: PromotionRow,
        execute: ({ amount, currency, paidAt, storeId }) =>
          sql`
            SELECT * FROM promotions
            WHERE store_id = ${storeId} AND status = 'active'
              AND starts_at <= ${paidAt} AND ends_at > ${paidAt}
              AND (min_amount IS NULL OR (min_currency = ${currency} AND min_amount <= ${amount}))
            ORDER BY created_at, id`
      }),
      Effect.orDie
    )

    /**
     * Over the paid payments of the last 30 days up to `now` of the store's customers of the mode who are in
     * the segment now (every non-erased customer without one): how many customers made a qualifying payment,
     * and how many such payments. One query (the segment's members joined to the payments area's report); reads only.
     */
    const simulate = traced("PromotionsRepo.simulate")(function*(input: {
      readonly storeId: StoreId
      readonly livemode: boolean
      readonly now: Date
      readonly segment: RuleSet | null
      readonly minAmount: number | null
      readonly minCurrency: string | null
    }) {
      const scope = { storeId: input.storeId, livemode: input.livemode, now: input.now }
      const members = input.segment === null
        ? sql`SELECT m.id FROM (${metricsOf(sql, scope)}) m`
        : sql`SELECT m.id FROM (${metricsOf(sql, scope)}) m WHERE ${predicateOf(sql, input.segment)}`
      const paid = yield* reports.membersPaid({
        storeId: input.storeId,
        livemode: input.livemode,
        now: input.now,
        windowDays: SIMULATION_WINDOW_DAYS,
        members,
        minAmount: input.minAmount,
        minCurrency: input.minCurrency
      })
      return {
        eligibleCustomers: paid.customers,
        qualifyingPayments: paid.payments
      } satisfies Simulation
    })

    return {
      inTransaction,
      insert,
      find,
      list,
      updateFields,
      move,
      remove,
      insertAudit,
      auditsOf,
      overdue,
      findPayment,
      runningFor,
      hasActive,
      simulate
    } as const
  }),
  dependencies: [PaymentReads.Default, PaymentReports.Default]
}) {}
