/**
 * Cursor pagination of every list route (API.md "Lists"):
 *
 *   { "object": "list", "data": [ … ], "has_more": true, "next_cursor": "…" }
 *
 * Lists are newest first, ordered by `(created_at DESC, id DESC)`; the id breaks ties between objects
 * created in the same instant. A cursor names the position of the last object of a page, and the next
 * page is everything strictly after it in that order: `(created_at, id) < (t, id)`. Unlike an offset,
 * this position does not move when newer objects are inserted between two requests, so paging never
 * repeats or skips an object.
 *
 * The timestamp in a cursor has millisecond precision (it travels through a JavaScript `Date`), so
 * `created_at` columns must hold no more than that — `timestamptz(3)` — or objects created in the same
 * millisecond as a page's last object could be skipped.
 */
import { type Statement } from "@effect/sql"
import * as SqlSchema from "./SqlSchema.ts"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Either, Schema } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"

// The wire schemas of lists live in the domain, where the typed client can see them.
export { DEFAULT_LIST_LIMIT, ListLimit, ListOf, ListParams, MAX_LIST_LIMIT } from "../../domain/Lists.ts"

// ---------------------------------------------------------------------------------------------
// Cursors
// ---------------------------------------------------------------------------------------------

/** Where a page ended: the `created_at` and `id` of its last object. */
export interface PagePosition {
  readonly createdAt: Date
  readonly id: string
}

/** `PagePosition` as a schema, for the request schemas of the repos' list queries (SqlSchema). */
export const PagePositionSchema: Schema.Schema<PagePosition> = Schema.Struct({
  createdAt: Schema.DateFromSelf,
  id: Schema.String
})

/**
 * What every list query is asked for: a page of `limit` after `position` (the first page without one).
 * Repos spread its `fields` into their request schemas and fetch `limit + 1` rows to tell if more follow.
 */
export const PageRequest = Schema.Struct({
  limit: Schema.Number,
  position: Schema.optional(PagePositionSchema)
})

// Far longer than any cursor we issue; it spares us parsing whatever a client might paste.
const MAX_CURSOR_LENGTH = 512

// Exactly what `Date.prototype.toISOString` writes, so one position has one cursor.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const CursorContent = Schema.Struct({
  t: Schema.String.pipe(Schema.pattern(ISO_INSTANT)),
  id: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/))
})
const decodeCursorContent = Schema.decodeUnknownEither(CursorContent, { onExcessProperty: "error" })

/** The opaque `next_cursor` for a page that ended at `position`. */
export const encodeCursor = (position: PagePosition): string =>
  Buffer.from(JSON.stringify({ t: position.createdAt.toISOString(), id: position.id }), "utf8").toString("base64url")

/** Reads a cursor a client sent back; anything we did not issue fails as an invalid `cursor` parameter. */
export const decodeCursor = (cursor: string): Effect.Effect<PagePosition, InvalidRequest> => {
  const invalid = Effect.fail(
    new InvalidRequest({
      message: "cursor is not valid: pass the next_cursor of the previous page unchanged",
      param: "cursor"
    })
  )
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) return invalid
  const bytes = Buffer.from(cursor, "base64url")
  // Only the canonical spelling is ours; Node's decoder would also accept variants of it.
  if (bytes.toString("base64url") !== cursor) return invalid

  let json: unknown
  try {
    json = JSON.parse(bytes.toString("utf8"))
  } catch {
    return invalid
  }
  const content = decodeCursorContent(json)
  if (Either.isLeft(content)) return invalid
  const createdAt = new Date(content.right.t)
  // The pattern admits impossible dates such as month 13; a round trip rules them out.
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== content.right.t) return invalid
  return Effect.succeed({ createdAt, id: content.right.id })
}

// ---------------------------------------------------------------------------------------------
// Pages
// ---------------------------------------------------------------------------------------------

export interface Page<A> {
  readonly object: "list"
  readonly data: ReadonlyArray<A>
  readonly has_more: boolean
  readonly next_cursor: string | null
}

/**
 * Turns the rows of a query run with `LIMIT limit + 1` into a page: the extra row, if it came back,
 * only tells that there is more, and is not returned.
 */
export const toPage = <A>(
  rows: ReadonlyArray<A>,
  limit: number,
  positionOf: (row: A) => PagePosition
): Page<A> => {
  const data = rows.slice(0, limit)
  const last = data[data.length - 1]
  const hasMore = rows.length > limit && last !== undefined
  return {
    object: "list",
    data,
    has_more: hasMore,
    next_cursor: hasMore ? encodeCursor(positionOf(last)) : null
  }
}

// ---------------------------------------------------------------------------------------------
// SQL
// ---------------------------------------------------------------------------------------------

/** The columns that order a list; qualify them (`"p.created_at"`) when the query joins tables. */
export interface ListColumns {
  readonly createdAt: string
  readonly id: string
}

const DEFAULT_LIST_COLUMNS: ListColumns = { createdAt: "created_at", id: "id" }

/**
 * The WHERE condition selecting the rows after `position` in newest-first order (all rows for the
 * first page). Use it together with `newestFirst` and `LIMIT limit + 1`.
 *
 * `sql` is the `SqlClient` (any statement constructor will do).
 */
export const keysetAfter = (
  sql: Statement.Constructor,
  position: PagePosition | undefined,
  columns: ListColumns = DEFAULT_LIST_COLUMNS
): Statement.Fragment =>
  position === undefined
    ? sql`TRUE`
    : sql`(${sql(columns.createdAt)}, ${sql(columns.id)}) < (${position.createdAt.toISOString()}, ${position.id})`

/** The ORDER BY terms of every list: newest first, ties broken by id, matching `keysetAfter`. */
export const newestFirst = (
  sql: Statement.Constructor,
  columns: ListColumns = DEFAULT_LIST_COLUMNS
): Statement.Fragment => sql`${sql(columns.createdAt)} DESC, ${sql(columns.id)} DESC`

/**
 * The newest-first page reader of a table whose rows belong to a store (`store_id`) and are served
 * whole: `(storeId, limit, position)` → up to `limit + 1` rows decoded as `Row`. `table` is a name
 * written in the code, never input.
 */
export const storePageOf = <A, I>(sql: SqlClient, table: string, Row: Schema.Schema<A, I>) => {
  const page = SqlSchema.findAll({
    Request: Schema.Struct({ storeId: Schema.String, ...PageRequest.fields }),
    Result: Row,
    execute: ({ limit, position, storeId }) =>
      sql`
        SELECT * FROM ${sql(table)} WHERE store_id = ${storeId} AND ${keysetAfter(sql, position)}
        ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`
  })
  return (storeId: string, limit: number, position?: PagePosition) => page({ storeId, limit, position }).pipe(Effect.orDie)
}

/** Where a row of a list stands: its `created_at` and `id`, the columns every list is ordered by. */
const positionOfRow = (row: { readonly created_at: Date; readonly id: string }): PagePosition => ({
  createdAt: row.created_at,
  id: row.id
})

/** The page after `params.cursor` (the first without one), read by `read` with its position. */
export const pageAfter = <A extends { readonly created_at: Date; readonly id: string }, E, R>(
  params: { readonly limit: number; readonly cursor?: string | undefined },
  read: (position: PagePosition | undefined) => Effect.Effect<ReadonlyArray<A>, E, R>
) =>
  Effect.gen(function*() {
    const position = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
    return toPage(yield* read(position), params.limit, positionOfRow)
  })
