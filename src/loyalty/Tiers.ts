/**
 * The reads other areas make of loyalty tiers. The loyalty area owns the table; a customer's tier is the highest
 * of its store's tiers whose threshold its lifetime points reach, and other areas show or test it within their
 * own statements: the customer row carries it, a segment's rules compare it. So the loyalty area states that
 * rule here, as the expression those statements select, and answers which ids are its store's tiers. The
 * expressions refer only to columns of the customer row they are written against (`store_id`,
 * `lifetime_points`); they hold no values, so they are SQL text.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { StoreId } from "../../domain/Ids.ts"
import { spanWhenExported } from "../platform/Traced.ts"

const reachedBy = (customer: string, selected: string) =>
  `(SELECT ${selected} FROM loyalty_tiers t
  WHERE t.store_id = ${customer}.store_id AND t.threshold <= ${customer}.lifetime_points
  ORDER BY t.threshold DESC LIMIT 1)`

/** The tier the customer row `customer` (a table or alias) reaches, as JSON `{ id, name }`; null with none. */
export const tierReachedBy = (customer: string): string => reachedBy(customer, "json_build_object('id', t.id, 'name', t.name)")

/** The id of the tier the customer row `customer` (a table or alias) reaches; null with none. */
export const idOfTierReachedBy = (customer: string): string => reachedBy(customer, "t.id")

/** Which of `ids` are tiers of the store. */
export const tiersOfStoreAmong = (sql: SqlClient.SqlClient, storeId: StoreId, ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (ids.length === 0) return new Set<string>()
    const rows = yield* sql<{ id: string }>`
      SELECT id FROM loyalty_tiers WHERE store_id = ${storeId} AND id IN ${sql.in(ids)}`.pipe(Effect.orDie)
    return new Set(rows.map((row) => row.id))
  }).pipe(spanWhenExported("LoyaltyTiers.tiersOfStoreAmong"))
