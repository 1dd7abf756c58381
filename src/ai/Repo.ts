/**
 * The AI area's SQL: usage records and their sums, and the read-only facts of the store the features
 * and the assistant's tools talk about (payments, customers, loyalty). Every query is parameterized;
 * nothing a model answers ever reaches SQL.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AiFeature } from "../../domain/Ai.ts"

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
          SELECT store_id, (SELECT name FROM stores WHERE stores.id = ai_usage.store_id) AS store_name, ${totalsSelect(sql)}
          FROM ai_usage WHERE created_at >= ${since}
          GROUP BY store_id ORDER BY sum(cost_micro_usd) DESC, store_id`
    })

    // -------------------------------------------------------------------------------------------
    // Facts
    // -------------------------------------------------------------------------------------------

    const storeName = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ name: Schema.String }),
      execute: (storeId) => sql`SELECT name FROM stores WHERE id = ${storeId}`
    })

    /** Paid revenue (payments paid in the window, by currency) and refunds made in it. */
    const revenue = SqlSchema.findAll({
      Request: StoreWindow,
      Result: Schema.Struct({ currency: Schema.Literal("USD", "KHR"), payments: Schema.Number, amount: Schema.BigInt, refunded: Schema.BigInt }),
      execute: (w) =>
        sql`
          SELECT currency, count(*)::int AS payments, COALESCE(sum(amount), 0)::text AS amount,
                 COALESCE(sum(amount_refunded), 0)::text AS refunded
          FROM payments
          WHERE store_id = ${w.storeId} AND livemode = ${w.livemode} AND paid_at IS NOT NULL
            AND paid_at >= ${w.since} AND paid_at < ${w.until}
          GROUP BY currency ORDER BY currency DESC`
    })

    /** The customers who paid the most in the window, per currency (names are quoted data). */
    const topCustomers = SqlSchema.findAll({
      Request: Schema.Struct({ ...StoreWindow.fields, limit: Schema.Number }),
      Result: Schema.Struct({
        customer_id: Schema.String,
        name: Schema.NullOr(Schema.String),
        currency: Schema.Literal("USD", "KHR"),
        payments: Schema.Number,
        amount: Schema.BigInt
      }),
      execute: (w) =>
        sql`
          SELECT c.id AS customer_id, c.name, p.currency, count(*)::int AS payments, sum(p.amount - p.amount_refunded)::text AS amount
          FROM payments p JOIN customers c ON c.id = p.customer_id
          WHERE p.store_id = ${w.storeId} AND p.livemode = ${w.livemode} AND p.paid_at IS NOT NULL
            AND p.paid_at >= ${w.since} AND p.paid_at < ${w.until}
          GROUP BY c.id, c.name, p.currency
          ORDER BY p.currency DESC, sum(p.amount - p.amount_refunded) DESC, c.id
          LIMIT ${w.limit}`
    })

    const pointsLiability = SqlSchema.single({
      Request: Schema.Struct({ storeId: Schema.String, livemode: Schema.Boolean }),
      Result: Schema.Struct({ points: Schema.BigInt, customers: Schema.Number }),
      execute: ({ livemode, storeId }) =>
        sql`
          SELECT COALESCE(sum(points_balance), 0)::text AS points, (count(*) FILTER (WHERE points_balance > 0))::int AS customers
          FROM customers WHERE store_id = ${storeId} AND livemode = ${livemode}`
    })

    /**
     * Customers by how recently they paid: `active` paid in the window, `lapsed` paid in the 60 days
     * before it but not in it; `reachable` counts those who agreed to marketing.
     */
    const segments = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: Schema.String, livemode: Schema.Boolean, since: Schema.DateFromSelf, before: Schema.DateFromSelf }),
      Result: Schema.Struct({ segment: Schema.Literal("active", "lapsed"), customers: Schema.Number, reachable: Schema.Number }),
      execute: (w) =>
        sql`
          WITH last_paid AS (
            SELECT c.id, c.prefers_marketing, max(p.paid_at) AS paid_at
            FROM customers c JOIN payments p ON p.customer_id = c.id AND p.paid_at IS NOT NULL
            WHERE c.store_id = ${w.storeId} AND c.livemode = ${w.livemode} AND c.erased_at IS NULL AND p.paid_at >= ${w.before}
            GROUP BY c.id, c.prefers_marketing
          )
          SELECT CASE WHEN paid_at >= ${w.since} THEN 'active' ELSE 'lapsed' END AS segment,
                 count(*)::int AS customers, (count(*) FILTER (WHERE prefers_marketing))::int AS reachable
          FROM last_paid GROUP BY 1 ORDER BY 1`
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
  })
}) {}

export type TotalsRow = { readonly calls: number; readonly failed_calls: number; readonly input_tokens: number; readonly output_tokens: number; readonly cost_micro_usd: bigint }
