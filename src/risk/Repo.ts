/**
 * SQL of risk cases and of the facts the rules read. A case is opened with an insert that does nothing
 * when an open (or investigating) case of the same store, mode, kind and subject exists: the partial
 * unique index of migration 0014 makes that hold under races, so a rule firing twice opens one case.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { RiskKind, RiskStatus } from "../../domain/Risk.ts"
import { RiskCaseId, StoreId } from "../../domain/Ids.ts"
import { keysetAfter, newestFirst, type PagePosition } from "../platform/Pagination.ts"
import { transactionOf } from "../platform/Transaction.ts"
import { PaymentReads } from "../payments/Reads.ts"

export const RiskCaseRow = Schema.Struct({
  id: RiskCaseId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  kind: RiskKind,
  subject_type: Schema.String,
  subject_id: Schema.String,
  status: RiskStatus,
  resolution: Schema.NullOr(Schema.String),
  details: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type RiskCaseRow = typeof RiskCaseRow.Type

export interface NewCase {
  readonly id: RiskCaseId
  readonly storeId: StoreId
  readonly livemode: boolean
  readonly kind: RiskKind
  readonly subjectType: string
  readonly subjectId: string
  readonly details: Record<string, unknown>
  readonly at: Date
}

export class RiskRepo extends Effect.Service<RiskRepo>()("risk/RiskRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const payments = yield* PaymentReads

    const insertCase = SqlSchema.findOne({
      Request: Schema.Any,
      Result: RiskCaseRow,
      execute: (input: NewCase) =>
        sql`
          INSERT INTO risk_cases (id, store_id, livemode, kind, subject_type, subject_id, status, details, created_at, updated_at)
          VALUES (${input.id}, ${input.storeId}, ${input.livemode}, ${input.kind}, ${input.subjectType}, ${input.subjectId},
            'open', ${JSON.stringify(input.details)}::jsonb, ${input.at}, ${input.at})
          ON CONFLICT (store_id, livemode, kind, subject_type, subject_id) WHERE status IN ('open', 'investigating')
          DO NOTHING
          RETURNING *`
    })

    const find = SqlSchema.findOne({
      Request: RiskCaseId,
      Result: RiskCaseRow,
      execute: (id) => sql`SELECT * FROM risk_cases WHERE id = ${id}`
    })
    const findForUpdate = SqlSchema.findOne({
      Request: RiskCaseId,
      Result: RiskCaseRow,
      execute: (id) => sql`SELECT * FROM risk_cases WHERE id = ${id} FOR UPDATE`
    })
    const setStatus = SqlSchema.single({
      Request: Schema.Struct({
        id: RiskCaseId,
        status: RiskStatus,
        resolution: Schema.NullOr(Schema.String),
        at: Schema.DateFromSelf
      }),
      Result: RiskCaseRow,
      execute: ({ at, id, resolution, status }) =>
        sql`UPDATE risk_cases SET status = ${status}, resolution = ${resolution}, updated_at = ${at} WHERE id = ${id} RETURNING *`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({
        storeId: StoreId,
        livemode: Schema.Boolean,
        status: Schema.NullOr(RiskStatus),
        limit: Schema.Number,
        position: Schema.optional(Schema.Any)
      }),
      Result: RiskCaseRow,
      execute: ({ limit, livemode, position, status, storeId }) =>
        sql`
          SELECT * FROM risk_cases
          WHERE store_id = ${storeId} AND livemode = ${livemode}
            AND ${status === null ? sql`TRUE` : sql`status = ${status}`}
            AND ${keysetAfter(sql, position as PagePosition | undefined)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })

    const countsByStatus = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, livemode: Schema.Boolean }),
      Result: Schema.Struct({ status: RiskStatus, n: Schema.Number }),
      execute: ({ livemode, storeId }) =>
        sql`SELECT status, count(*)::int AS n FROM risk_cases WHERE store_id = ${storeId} AND livemode = ${livemode} GROUP BY status`
    })

    return {
      insertCase: (input: NewCase) => Effect.orDie(insertCase(input)),
      find: (id: RiskCaseId) => Effect.orDie(find(id)),
      findForUpdate: (id: RiskCaseId) => Effect.orDie(findForUpdate(id)),
      setStatus: (input: Parameters<typeof setStatus>[0]) => Effect.orDie(setStatus(input)),
      page: (input: Parameters<typeof page>[0]) => Effect.orDie(page(input)),
      countsByStatus: (input: Parameters<typeof countsByStatus>[0]) => Effect.orDie(countsByStatus(input)),
      paymentFacts: payments.factsOf,
      customerPaidSince: payments.customerPaidBetween,
      storeWindowTotals: payments.storeWindowTotals,
      inTransaction: transactionOf(sql)
    } as const
  }),
  dependencies: [PaymentReads.Default]
}) {}
