/**
 * The AI area's SQL: usage records and their sums, and the read-only facts of the store the features
 * and the assistant's tools talk about (payments, customers, loyalty); the figures of payments are the
 * payments area's reports, and what they read of customers and stores those areas' reads. Every query is
 * parameterized; nothing a model answers ever reaches SQL.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { AiFeature } from "../../domain/Ai.ts"
import { customerNames, marketingReachOfStore, pointsHeldInStore } from "../customers/Reads.ts"
import { PaymentReports } from "../payments/Reports.ts"
import { joinableStores, nameOfStore } from "../stores/Reads.ts"

const StoreWindow = Schema.Struct({ storeId: Schema.String, livemode: Schema.Boolean, since: Schema.DateFromSelf, until: Schema.DateFromSelf })

const Totals = {
  calls: Schema.Number,
  failed_calls: Schema.Number,
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cost_micro_usd: Schema.BigInt
}
const totalsSelect = (sql: SqlClient.SqlClient) =>
  sql`
    count(*)::int AS calls,
    (count(*) FILTER (WHERE outcome = 'failed'))::int AS failed_calls,
    COALESCE(sum(input_tokens), 0)::int AS input_tokens,
    COALESCE(sum(output_tokens), 0)::int AS output_tokens,
    COALESCE(sum(cost_micro_usd), 0)::text AS cost_micro_usd`

export const UsageRecord = Schema.Struct({
  storeId: Schema.String,
  feature: AiFeature,
  model: Schema.Literal("builtin", "openai_compatible"),
  modelName: Schema.String,
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  costMicroUsd: Schema.BigInt,
  latencyMs: Schema.Number,
  outcome: Schema.Literal("succeeded", "failed"),
  error: Schema.NullOr(Schema.String),
  at: Schema.DateFromSelf
})
export type UsageRecord = typeof UsageRecord.Type

export class AiRepo extends Effect.Service<AiRepo>()("ai/AiRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reports = yield* PaymentReports

    const record = SqlSchema.void({
      Request: UsageRecord,
      execute: (r) =>
        sql`
          INSERT INTO ai_usage (store_id, feature, model, model_name, input_tokens, output_tokens, cost_micro_usd,
                                latency_ms, outcome, error, created_at)
          VALUES (${r.storeId}, ${r.feature}, ${r.model}, ${r.modelName}, ${r.inputTokens}, ${r.outputTokens},
                  ${r.costMicroUsd.toString()}, ${r.latencyMs}, ${r.outcome}, ${r.error}, ${r.at})`
    })

    const storeCost = SqlSchema.single({
      Request: Schema.Struct({ storeId: Schema.String, since: Schema.DateFromSelf }),
      Result: Schema.Struct({ cost_micro_usd: Schema.BigInt }),
      execute: ({ since, storeId }) =>
        sql`
          SELECT COALESCE(sum(cost_micro_usd), 0)::text AS cost_micro_usd FROM ai_usage
          WHERE store_id = ${storeId} AND created_at >= ${since}`
    })

    const storeByFeature = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: Schema.String, since: Schema.DateFromSelf }),
      Result: Schema.Struct({ feature: AiFeature, ...Totals }),
      execute: ({ since, storeId }) =>
        sql`
          SELECT feature, ${totalsSelect(sql)} FROM ai_usage
          WHERE store_id = ${storeId} AND created_at >= ${since}
          GROUP BY feature ORDER BY feature`
    })

    const platformByFeature = SqlSchema.findAll({
      Request: Schema.Struct({ since: Schema.DateFromSelf }),
      Result: Schema.Struct({ feature: AiFeature, ...Totals }),
      execute: ({ since }) =>
        sql`SELECT feature, ${totalsSelect(sql)} FROM ai_usage WHERE created_at >= ${since} GROUP BY feature ORDER BY feature`
    })

    const platformByStore = SqlSchema.findAll({
      Request: Schema.Struct({ since: Schema.DateFromSelf }),
      Result: Schema.Struct({ store_id: Schema.String, store_name: Schema.NullOr(Schema.String), ...Totals }),
      execute: ({ since }) =>
        sql`
          SELECT store_id, (SELECT s.name FROM (${joinableStores(sql)}) s WHERE s.id = ai_usage.store_id) AS store_name,
            ${totalsSelect(sql)}
          FROM ai_usage WHERE created_at >= ${since}
          GROUP BY store_id ORDER BY sum(cost_micro_usd) DESC, store_id`
    })

    // -------------------------------------------------------------------------------------------
    // Facts
    // -------------------------------------------------------------------------------------------

    /** The store's name (none when there is no such store). */
    const storeName = (storeId: string) => nameOfStore(sql, storeId)

    /** Paid revenue (payments paid in the window, by currency) and refunds made in it. */
    const revenue = (window: typeof StoreWindow.Type) => reports.windowRevenue(window)

    /** The customers who paid the most in the window, per currency (names are quoted data). */
    const topCustomers = (window: typeof StoreWindow.Type & { readonly limit: number }) =>
      reports.topPayers({ ...window, customers: customerNames(sql) })

    /** The points the store's customers of the mode hold, and how many of them hold some. */
    const pointsLiability = (scope: { readonly storeId: string; readonly livemode: boolean }) => pointsHeldInStore(sql, scope)

    /**
     * Customers by how recently they paid: `active` paid in the window, `lapsed` paid in the 60 days
     * before it but not in it; `reachable` counts those who agreed to marketing. Erased customers are left out.
     */
    const segments = (w: { readonly storeId: string; readonly livemode: boolean; readonly since: Date; readonly before: Date }) =>
      reports.recency({
        customers: marketingReachOfStore(sql, w),
        since: w.since,
        before: w.before
      })

    return {
      record,
      storeCost,
      storeByFeature,
      platformByFeature,
      platformByStore,
      storeName,
      revenue,
      topCustomers,
      pointsLiability,
      segments
    } as const
  }),
  dependencies: [PaymentReports.Default]
}) {}

export type TotalsRow = { readonly calls: number; readonly failed_calls: number; readonly input_tokens: number; readonly output_tokens: number; readonly cost_micro_usd: bigint }
