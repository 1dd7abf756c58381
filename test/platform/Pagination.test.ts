import { Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, ParseResult, Schema } from "effect"
import * as fc from "fast-check"
import { InvalidRequest } from "../../domain/Errors.ts"
import {
  decodeCursor,
  DEFAULT_LIST_LIMIT,
  encodeCursor,
  keysetAfter,
  ListOf,
  ListParams,
  MAX_LIST_LIMIT,
  newestFirst,
  type PagePosition,
  toPage
} from "../../src/platform/Pagination.ts"

const decodeCursorSync = (cursor: string) => Effect.runSync(Effect.either(decodeCursor(cursor)))
const toCursorText = (content: unknown) => Buffer.from(JSON.stringify(content), "utf8").toString("base64url")

const expectInvalidCursor = (cursor: string) => {
  const result = decodeCursorSync(cursor)
  expect(Either.isLeft(result)).toBe(true)
  if (Either.isLeft(result)) {
    expect(result.left).toBeInstanceOf(InvalidRequest)
    expect(result.left.param).toBe("cursor")
  }
}

const anyPosition: fc.Arbitrary<PagePosition> = fc.record({
  createdAt: fc.date({
    min: new Date("2000-01-01T00:00:00.000Z"),
    max: new Date("2200-01-01T00:00:00.000Z"),
    noInvalidDate: true
  }),
  id: fc.stringMatching(/^[a-z]{2,4}_[0-9A-Za-z]{24}$/)
})

describe("ListParams", () => {
  const decode = (query: Record<string, string>) => Schema.decodeUnknownEither(ListParams)(query)
  const issuesOf = (query: Record<string, string>) => {
    const result = decode(query)
    return Either.isLeft(result) ? ParseResult.ArrayFormatter.formatErrorSync(result.left) : []
  }

  it("defaults limit to 20", () => {
    expect(decode({})).toEqual(Either.right({ limit: DEFAULT_LIST_LIMIT }))
  })

  it("reads limit and cursor", () => {
    expect(decode({ limit: "5", cursor: "abc" })).toEqual(Either.right({ limit: 5, cursor: "abc" }))
    expect(decode({ limit: "1" })).toEqual(Either.right({ limit: 1 }))
    expect(decode({ limit: "100" })).toEqual(Either.right({ limit: 100 }))
  })

  it("clamps a limit above 100 to 100", () => {
    for (const limit of ["101", "1000", "99999999999999999999999999"]) {
      expect(decode({ limit })).toEqual(Either.right({ limit: MAX_LIST_LIMIT }))
    }
  })

  it("rejects zero with a message about the lower bound", () => {
    expect(issuesOf({ limit: "0" })).toEqual([
      { _tag: "Transformation", path: ["limit"], message: "must be at least 1" }
    ])
  })

  it("rejects negative, fractional and non-numeric limits", () => {
    for (const limit of ["-1", "2.5", "1e2", "abc", "", " 5", "0x10"]) {
      expect(issuesOf({ limit })).toEqual([{
        _tag: "Refinement",
        path: ["limit"],
        message: "must be a whole number from 1 to 100, such as \"20\""
      }])
    }
  })

  it("encodes back to query strings", () => {
    expect(Schema.encodeSync(ListParams)({ limit: 20, cursor: "abc" })).toEqual({ limit: "20", cursor: "abc" })
  })
})

describe("cursors", () => {
  it("round-trip any position", () => {
    fc.assert(
      fc.property(anyPosition, (position) => {
        const cursor = encodeCursor(position)
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
        expect(decodeCursorSync(cursor)).toEqual(Either.right(position))
      })
    )
  })

  it("reject what we did not issue", () => {
    const valid = { t: "2024-05-01T10:20:30.123Z", id: "pay_3kTMd92JxQeLp0aZ7yNcB1vW" }
    expect(Either.isRight(decodeCursorSync(toCursorText(valid)))).toBe(true)
    const forged = [
      "",
      "not a cursor",
      "%%%",
      `${toCursorText(valid)}=`,
      Buffer.from(JSON.stringify(valid)).toString("base64"),
      toCursorText(valid).slice(0, -3),
      Buffer.from("not json").toString("base64url"),
      toCursorText(null),
      toCursorText([valid.t, valid.id]),
      toCursorText("2024-05-01T10:20:30.123Z"),
      toCursorText({ t: valid.t }),
      toCursorText({ id: valid.id }),
      toCursorText({ ...valid, extra: 1 }),
      toCursorText({ ...valid, t: 1714558830123 }),
      toCursorText({ ...valid, t: "2024-05-01" }),
      toCursorText({ ...valid, t: "2024-05-01T10:20:30Z" }),
      toCursorText({ ...valid, t: "2024-05-01T10:20:30.123+07:00" }),
      toCursorText({ ...valid, t: "2024-13-01T10:20:30.123Z" }),
      toCursorText({ ...valid, t: "2024-02-30T10:20:30.123Z" }),
      toCursorText({ ...valid, id: "" }),
      toCursorText({ ...valid, id: 42 }),
      toCursorText({ ...valid, id: "pay_1' OR '1'='1" }),
      toCursorText({ ...valid, id: "x".repeat(65) }),
      "A".repeat(10_000)
    ]
    for (const cursor of forged) expectInvalidCursor(cursor)
  })

  it("fail as invalid_request on the cursor parameter for any input, never with a defect", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), fc.string({ unit: "binary" })), (cursor) => {
        const exit = Effect.runSyncExit(decodeCursor(cursor))
        if (exit._tag === "Failure") {
          expect(exit.cause._tag).toBe("Fail")
          expectInvalidCursor(cursor)
        }
      })
    )
  })

  it("explain what to send instead", () => {
    const result = decodeCursorSync("garbage!")
    expect(result).toMatchObject({
      _tag: "Left",
      left: { message: "cursor is not valid: pass the next_cursor of the previous page unchanged", param: "cursor" }
    })
  })
})

interface Row {
  readonly id: string
  readonly created_at: Date
}

const positionOf = (row: Row): PagePosition => ({ createdAt: row.created_at, id: row.id })

const rowsAt = (count: number): Array<Row> =>
  Array.from({ length: count }, (_, index) => ({
    id: `pay_${String(index).padStart(24, "0")}`,
    created_at: new Date(Date.UTC(2024, 0, 1, 0, 0, count - index))
  }))

describe("toPage", () => {
  it("has no more when fewer rows than the limit came back", () => {
    expect(toPage(rowsAt(3), 5, positionOf)).toEqual({
      object: "list",
      data: rowsAt(3),
      has_more: false,
      next_cursor: null
    })
  })

  it("has no more when exactly the limit came back", () => {
    expect(toPage(rowsAt(5), 5, positionOf)).toMatchObject({ has_more: false, next_cursor: null })
  })

  it("drops the extra row and points the cursor at the last row returned", () => {
    const rows = rowsAt(6)
    const page = toPage(rows, 5, positionOf)
    expect(page.data).toEqual(rows.slice(0, 5))
    expect(page.has_more).toBe(true)
    expect(decodeCursorSync(page.next_cursor!)).toEqual(Either.right(positionOf(rows[4]!)))
  })

  it("answers an empty list", () => {
    expect(toPage([], 20, positionOf)).toEqual({ object: "list", data: [], has_more: false, next_cursor: null })
  })
})

describe("ListOf", () => {
  const Item = Schema.Struct({ id: Schema.String, amount: Schema.NumberFromString })
  const Items = ListOf(Item)

  it("encodes a page with the wire's snake_case keys and encoded items", () => {
    const page = toPage([{ id: "pay_1", amount: 5 }], 20, () => ({ createdAt: new Date(0), id: "pay_1" }))
    expect(Schema.encodeSync(Items)(page)).toEqual({
      object: "list",
      data: [{ id: "pay_1", amount: "5" }],
      has_more: false,
      next_cursor: null
    })
  })

  it("decodes what a list route answers", () => {
    const wire = { object: "list", data: [{ id: "pay_1", amount: "5" }], has_more: true, next_cursor: "abc" }
    expect(Schema.decodeUnknownSync(Items)(wire)).toEqual({ ...wire, data: [{ id: "pay_1", amount: 5 }] })
    expect(Schema.is(Items)({ ...wire, object: "payment" })).toBe(false)
  })
})

describe("SQL fragments", () => {
  const sql = Statement.make(Effect.dieMessage("these tests do not query"), PgClient.makeCompiler(), [], undefined)
  const compile = (fragment: Statement.Fragment) =>
    sql`SELECT * FROM payments WHERE ${fragment} ORDER BY ${newestFirst(sql)} LIMIT 21`.compile()

  it("selects every row for the first page", () => {
    expect(compile(keysetAfter(sql, undefined))).toEqual([
      "SELECT * FROM payments WHERE TRUE ORDER BY \"created_at\" DESC, \"id\" DESC LIMIT 21",
      []
    ])
  })

  it("selects the rows after a position, with the position as parameters", () => {
    const position = { createdAt: new Date("2024-05-01T10:20:30.123Z"), id: "pay_3kTMd92JxQeLp0aZ7yNcB1vW" }
    expect(compile(keysetAfter(sql, position))).toEqual([
      "SELECT * FROM payments WHERE (\"created_at\", \"id\") < ($1, $2) " +
      "ORDER BY \"created_at\" DESC, \"id\" DESC LIMIT 21",
      ["2024-05-01T10:20:30.123Z", "pay_3kTMd92JxQeLp0aZ7yNcB1vW"]
    ])
  })

  it("qualifies the columns of a join", () => {
    const columns = { createdAt: "r.created_at", id: "r.id" }
    const position = { createdAt: new Date(0), id: "re_1" }
    const [text] = sql`${keysetAfter(sql, position, columns)} ORDER BY ${newestFirst(sql, columns)}`.compile()
    expect(text).toBe(
      "(\"r\".\"created_at\", \"r\".\"id\") < ($1, $2) ORDER BY \"r\".\"created_at\" DESC, \"r\".\"id\" DESC"
    )
  })
})

describe("paging while newer objects arrive", () => {
  // The in-memory twin of the SQL: ORDER BY created_at DESC, id DESC and (created_at, id) < (t, id).
  const newestFirstOrder = (a: Row, b: Row) =>
    b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
  const isAfter = (row: Row, position: PagePosition | undefined) =>
    position === undefined ||
    row.created_at.getTime() < position.createdAt.getTime() ||
    (row.created_at.getTime() === position.createdAt.getTime() && row.id < position.id)

  const query = (table: ReadonlyArray<Row>, cursor: string | undefined, limit: number) => {
    const position = cursor === undefined ? undefined : Effect.runSync(decodeCursor(cursor))
    const rows = table.filter((row) => isAfter(row, position)).sort(newestFirstOrder).slice(0, limit + 1)
    return toPage(rows, limit, positionOf)
  }

  const BASE_TIME = Date.UTC(2024, 0, 1)
  // Few distinct instants, so many objects share a created_at and the id has to break ties.
  const rowAt = (millisecond: number, id: string): Row => ({ id, created_at: new Date(BASE_TIME + millisecond) })
  const idPart = fc.stringMatching(/^[0-9A-Za-z]{1,6}$/)

  it("never repeats or skips an object that existed when paging began", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 20 }), idPart), {
          maxLength: 60,
          selector: ([, id]) => id
        }),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), idPart), { maxLength: 4 }), { maxLength: 30 }),
        (initial, limit, arrivals) => {
          const table = initial.map(([millisecond, id]) => rowAt(millisecond, `pay_${id}`))
          const expected = [...table].sort(newestFirstOrder).map((row) => row.id)
          const latest = Math.max(20, ...initial.map(([millisecond]) => millisecond))
          const seen: Array<string> = []
          let cursor: string | undefined
          for (let pageNumber = 0; pageNumber <= table.length + arrivals.length + 1; pageNumber++) {
            const page = query(table, cursor, limit)
            seen.push(...page.data.map((row) => row.id))
            if (!page.has_more) break
            cursor = page.next_cursor!
            // Newer objects arrive between two requests, at or after the newest one so far.
            for (const [offset, id] of arrivals[pageNumber] ?? []) {
              const newId = `pay_new${pageNumber}_${id}`
              if (!table.some((row) => row.id === newId)) table.push(rowAt(latest + offset, newId))
            }
          }
          expect(new Set(seen).size).toBe(seen.length)
          expect(seen.filter((id) => expected.includes(id))).toEqual(expected)
        }
      ),
      { numRuns: 300 }
    )
  })
})
