/**
 * Revenue shares: per-store agreements that move a percent of each paid payment to a party (posted by
 * the payment engine, src/ledger/Postings.ts). The active shares of a store sum to at most 100 %: every
 * change that could raise the sum locks the store's row first and sums inside the same transaction, so
 * two concurrent creates are checked one after the other and the second sees the first.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import type { CreateRevenueShare, RevenueShare, UpdateRevenueShare } from "../../domain/RevenueShares.ts"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import { RevenueShareId, StoreId } from "../../domain/Ids.ts"
import type { ListParams } from "../../domain/Lists.ts"
import { AccessService, storeData, touchesStoreData } from "../access/Service.ts"
import { newId } from "../platform/Ids.ts"
import { keysetAfter, newestFirst, type PagePosition, pageAfter } from "../platform/Pagination.ts"
import { currentDate } from "../platform/Time.ts"
import { percentUnits } from "../ledger/Postings.ts"
import { lockStoreRow } from "../stores/Reads.ts"
import { transactionOf } from "../platform/Transaction.ts"
import { traced } from "../platform/Traced.ts"

const ShareRow = Schema.Struct({
  id: RevenueShareId,
  store_id: StoreId,
  party: Schema.String,
  percent: Schema.String,
  active: Schema.Boolean,
  created_at: Schema.DateFromSelf
})
type ShareRow = typeof ShareRow.Type

const COLUMNS = "id, store_id, party, percent::text AS percent, active, created_at"

/** "12.5000" as stored → "12.5" on the wire. */
const percentText = (stored: string) => stored.includes(".") ? stored.replace(/0+$/, "").replace(/\.$/, "") : stored

const toWire = (row: ShareRow): RevenueShare => ({
  id: row.id,
  object: "revenue_share",
  store_id: row.store_id,
  party: row.party,
  percent: percentText(row.percent),
  active: row.active,
  created_at: row.created_at.toISOString()
})

const HUNDRED_PERCENT = 100n * 10_000n

export class RevenueSharesService extends Effect.Service<RevenueSharesService>()("revenue-shares/RevenueSharesService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* AccessService

    const pageQuery = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, limit: Schema.Number, position: Schema.optional(Schema.Any) }),
      Result: ShareRow,
      execute: ({ limit, position, storeId }) =>
        sql`SELECT ${sql.literal(COLUMNS)} FROM revenue_shares
            WHERE store_id = ${storeId} AND ${keysetAfter(sql, position as PagePosition | undefined)}
            ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`
    })
    const findQuery = SqlSchema.findOne({
      Request: RevenueShareId,
      Result: ShareRow,
      execute: (id) => sql`SELECT ${sql.literal(COLUMNS)} FROM revenue_shares WHERE id = ${id}`
    })
    const activeOthersQuery = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, except: Schema.String }),
      Result: Schema.Struct({ percent: Schema.String }),
      execute: ({ except, storeId }) =>
        sql`SELECT percent::text AS percent FROM revenue_shares WHERE store_id = ${storeId} AND active AND id <> ${except}`
    })
    const { activeOthers, find, page } = storeData({ page: pageQuery, find: findQuery, activeOthers: activeOthersQuery })

    const notFound = (id: string) => new NotFound({ message: `No such revenue share: ${id}`, param: "shareId" })

    /** Within the transaction: the store locked, and the active shares other than `except` summed with `percent`. */
    const checkRoom = (storeId: StoreId, except: string, percent: string) =>
      Effect.gen(function*() {
        yield* lockStoreRow(sql, storeId)
        const others = yield* Effect.orDie(activeOthers({ storeId, except }))
        const total = others.reduce((sum, row) => sum + percentUnits(row.percent), 0n) + percentUnits(percent)
        if (total > HUNDRED_PERCENT) {
          const used = others.reduce((sum, row) => sum + percentUnits(row.percent), 0n)
          return yield* new InvalidState({
            message: `The store's active revenue shares would sum to more than 100 %: ${Number(used) / 10_000} % is taken`,
            param: "percent"
          })
        }
      })

    /** The writes below are statements of this service's own, run in a transaction that requires the proof. */
    const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => touchesStoreData(transactionOf(sql)(effect))

    const list = traced("RevenueShares.list")(function*(storeId: StoreId, params: ListParams) {
      yield* access.currentUser
      return yield* access.withStore(storeId, "analytics.read", (store) =>
        Effect.gen(function*() {
          const result = yield* pageAfter(params, (position) => Effect.orDie(page({ storeId: store.storeId, limit: params.limit, position })))
          return { ...result, data: result.data.map(toWire) }
        }))
    })

    const create = traced("RevenueShares.create")(function*(storeId: StoreId, input: CreateRevenueShare) {
      yield* access.currentUser
      return yield* access.withStore(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          const id = newId("rs")
          const at = yield* currentDate
          const active = input.active ?? true
          const row = yield* inTransaction(Effect.gen(function*() {
            if (active) yield* checkRoom(store.storeId, id, input.percent)
            const [inserted] = yield* sql<ShareRow>`
              INSERT INTO revenue_shares (id, store_id, party, percent, active, created_at, updated_at)
              VALUES (${id}, ${store.storeId}, ${input.party}, ${input.percent}::numeric, ${active}, ${at}, ${at})
              RETURNING ${sql.literal(COLUMNS)}`
            return inserted!
          }))
          return toWire(row)
        }))
    })

    const owned = <A, E, R>(id: RevenueShareId, use: (share: ShareRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(Effect.orDie(find(id)), (row) => row.store_id, "marketing.manage", () => notFound(id), use)
      )

    const update = traced("RevenueShares.update")(function*(id: RevenueShareId, input: UpdateRevenueShare) {
      return yield* owned(id, (current) =>
        Effect.gen(function*() {
          const at = yield* currentDate
          const row = yield* inTransaction(Effect.gen(function*() {
            const percent = input.percent ?? current.percent
            const active = input.active ?? current.active
            if (active) yield* checkRoom(current.store_id, id, percent)
            const [updated] = yield* sql<ShareRow>`
              UPDATE revenue_shares SET party = ${input.party ?? current.party}, percent = ${percent}::numeric,
                active = ${active}, updated_at = ${at}
              WHERE id = ${id}
              RETURNING ${sql.literal(COLUMNS)}`
            return Option.fromNullable(updated)
          }))
          if (Option.isNone(row)) return yield* notFound(id)
          return toWire(row.value)
        }))
    })

    const remove = traced("RevenueShares.delete")(function*(id: RevenueShareId) {
      return yield* owned(id, () =>
        Effect.gen(function*() {
          yield* touchesStoreData(Effect.orDie(sql`DELETE FROM revenue_shares WHERE id = ${id}`))
          return { id, object: "revenue_share" as const, deleted: true as const }
        }))
    })

    return { list, create, update, remove } as const
  }),
  dependencies: [AccessService.Default]
}) {}
