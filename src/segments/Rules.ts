/**
 * A segment's rules compiled into SQL: one query over per-customer metrics computed in the database,
 * so no customer is ever loaded into memory to be tested. Field names and operators come from closed
 * tables below (the rule schema admits nothing else); every value is a bound parameter.
 *
 * Metrics at a moment `now` (a parameter, so tests can move the clock): lifetime values are the paid
 * amounts less refunds, in minor units; `payments_count` counts paid payments; `payments_last_30d` those
 * paid in the 30 days up to now; `days_since_*` are whole days (floored). A customer who never paid has
 * no `days_since_last_payment`: a condition on it never holds for them. `tier_id` is the highest tier
 * the lifetime points reach (null with none). Erased customers are never members. The customers are the
 * customers area's (`segmentableCustomersOfStore`), the payment figures the payments area's
 * (`paidFiguresOfCustomer`), joined to each customer in the same statement, and the tier the loyalty
 * area's rule (`idOfTierReachedBy`).
 */
import type { Statement } from "@effect/sql"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { ComparisonOp, Rule, RuleField, RuleSet } from "../../domain/Promotions.ts"
import { segmentableCustomersOfStore } from "../customers/Reads.ts"
import { idOfTierReachedBy } from "../loyalty/Tiers.ts"
import { paidFiguresOfCustomer } from "../payments/Reports.ts"

type Sql = SqlClient
type Fragment = Statement.Fragment

const operators: Record<ComparisonOp, string> = { eq: "=", neq: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" }

/** Each field's column in the metrics relation, and the SQL type its values are cast to. */
const columns: Record<RuleField, { readonly column: string; readonly type: string }> = {
  lifetime_value_usd: { column: "lifetime_value_usd", type: "numeric" },
  lifetime_value_khr: { column: "lifetime_value_khr", type: "numeric" },
  payments_count: { column: "payments_count", type: "numeric" },
  payments_last_30d: { column: "payments_last_30d", type: "numeric" },
  days_since_last_payment: { column: "days_since_last_payment", type: "numeric" },
  days_since_created: { column: "days_since_created", type: "numeric" },
  points_balance: { column: "points_balance", type: "numeric" },
  lifetime_points: { column: "lifetime_points", type: "numeric" },
  tier_id: { column: "tier_id", type: "text" },
  marketing_opt_in: { column: "marketing_opt_in", type: "boolean" }
}

const condition = (sql: Sql, rule: Rule): Fragment => {
  const { column, type } = columns[rule.field]
  const target = sql.literal(`m.${column}`)
  const cast = sql.literal(type)
  if (rule.op === "in") {
    const values: ReadonlyArray<string | number> = rule.value
    return sql`${target} IN ${sql.in(values.map((value) => String(value)))}`
  }
  // A null tier compares as "no tier": `eq null` matches customers without one.
  if (rule.field === "tier_id" && rule.value === null) {
    return rule.op === "eq" ? sql`${target} IS NULL` : sql`${target} IS NOT NULL`
  }
  return sql`${target} ${sql.literal(operators[rule.op as ComparisonOp])} CAST(${String(rule.value)} AS ${cast})`
}

/** The predicate of a rule set over the metrics relation `m`. */
export const predicateOf = (sql: Sql, ruleSet: RuleSet): Fragment => {
  const parts = ruleSet.rules.map((rule) => condition(sql, rule))
  return ruleSet.match === "all" ? sql.and(parts) : sql.or(parts)
}

/**
 * The metrics of the store's (non-erased) customers of a mode at `now`, as the relation `m`; with
 * `customerId`, only that customer's.
 */
export const metricsOf = (
  sql: Sql,
  scope: { readonly storeId: string; readonly livemode: boolean; readonly now: Date; readonly customerId?: string }
): Fragment => sql`
  SELECT c.id, c.created_at, c.points_balance, c.lifetime_points, c.prefers_marketing AS marketing_opt_in,
    ${sql.literal(idOfTierReachedBy("c"))} AS tier_id,
    coalesce(p.lifetime_value_usd, 0) AS lifetime_value_usd,
    coalesce(p.lifetime_value_khr, 0) AS lifetime_value_khr,
    coalesce(p.payments_count, 0) AS payments_count,
    coalesce(p.payments_last_30d, 0) AS payments_last_30d,
    floor(extract(epoch FROM (${scope.now}::timestamptz - p.last_paid_at)) / 86400) AS days_since_last_payment,
    floor(extract(epoch FROM (${scope.now}::timestamptz - c.created_at)) / 86400) AS days_since_created
  FROM (${segmentableCustomersOfStore(sql, scope)}) c
  LEFT JOIN LATERAL (${paidFiguresOfCustomer(sql, sql`c.id`, scope.now)}
  ) p ON true`
