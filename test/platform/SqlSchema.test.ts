/**
 * src/platform/SqlSchema.ts: which request schemas reach the statement unchanged (encoding would answer
 * the same values) and which are still encoded, and that each query shape answers as @effect/sql's does.
 */
import { SqlSchema as LibrarySqlSchema } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, FastCheck, Option, Schema } from "effect"
import { PaymentId, StoreId } from "../../domain/Ids.ts"
import { PageRequest } from "../../src/platform/Pagination.ts"
import * as SqlSchema from "../../src/platform/SqlSchema.ts"

class Point extends Schema.Class<Point>("Point")({ x: Schema.Number }) {}

const unchanged = {
  "ids, strings, numbers, booleans": Schema.Struct({ id: PaymentId, store: StoreId, name: Schema.String, n: Schema.Number, on: Schema.Boolean }),
  "optional and nullable ones, dates as Date, bigints as bigint": Schema.Struct({
    branch: Schema.NullOr(Schema.String),
    status: Schema.optional(Schema.Literal("pending", "paid")),
    at: Schema.DateFromSelf,
    amount: Schema.BigIntFromSelf
  }),
  "a page request": Schema.Struct({ storeId: StoreId, ...PageRequest.fields }),
  "arrays and records of such": Schema.Struct({ keys: Schema.Array(Schema.String), metadata: Schema.Record({ key: Schema.String, value: Schema.String }) }),
  "a refined scalar": Schema.Number.pipe(Schema.int(), Schema.positive())
}

const encoded = {
  "a bigint as its decimal string": Schema.Struct({ amount: Schema.BigInt }),
  "a Date as its ISO string": Schema.Struct({ at: Schema.Date }),
  "a default": Schema.Struct({ limit: Schema.optionalWith(Schema.Number, { default: () => 10 }) }),
  "a renamed key": Schema.Struct({ storeId: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("store_id")) }),
  "a class": Schema.Struct({ point: Point }),
  "an Option": Schema.Struct({ maybe: Schema.OptionFromSelf(Schema.String) })
}

const hasOwnProtoKey = (value: unknown): boolean =>
  value !== null && typeof value === "object" &&
  (Object.hasOwn(value, "__proto__") || Object.values(value).some(hasOwnProtoKey))

describe("a request's encoding", () => {
  for (const [name, schema] of Object.entries(unchanged)) {
    it(`is skipped for ${name}: encoding answers the same values`, () => {
      expect(SqlSchema.encodesUnchanged(schema.ast)).toBe(true)
      // What skipping relies on, checked on generated values.
      const encode = Schema.encodeSync(schema as Schema.Schema<unknown, unknown>)
      FastCheck.assert(
        FastCheck.property(Arbitrary.make(schema as Schema.Schema<unknown, unknown>), (value) => {
          // An own `__proto__` key is the one difference: encoding drops it (as decoding at the API's edge
          // already has, so no request a repo gets holds one).
          FastCheck.pre(!hasOwnProtoKey(value))
          expect(encode(value)).toStrictEqual(value)
        }),
        { numRuns: 50 }
      )
    })
  }
  for (const [name, schema] of Object.entries(encoded)) {
    it(`is kept for ${name}`, () => {
      expect(SqlSchema.encodesUnchanged(schema.ast)).toBe(false)
    })
  }
})

describe("the query shapes", () => {
  const Request = Schema.Struct({ amount: Schema.BigInt, id: Schema.String })
  const Result = Schema.Struct({ total: Schema.NumberFromString })
  const seen: Array<unknown> = []
  const execute = (rows: ReadonlyArray<unknown>) => (request: unknown) =>
    Effect.sync(() => {
      seen.push(request)
      return rows
    })

  it.effect("encode a request that needs it, and decode rows as @effect/sql does", () =>
    Effect.gen(function*() {
      const rows = [{ total: "1.5" }, { total: "2" }]
      for (const [ours, library] of [
        [SqlSchema.findAll, LibrarySqlSchema.findAll],
        [SqlSchema.findOne, LibrarySqlSchema.findOne],
        [SqlSchema.single, LibrarySqlSchema.single]
      ] as const) {
        seen.length = 0
        const a = yield* ours({ Request, Result, execute: execute(rows) })({ amount: 5n, id: "x" })
        const b = yield* library({ Request, Result, execute: execute(rows) })({ amount: 5n, id: "x" })
        expect(a).toStrictEqual(b)
        expect(seen).toStrictEqual([{ amount: "5", id: "x" }, { amount: "5", id: "x" }])
      }
      expect(yield* SqlSchema.findOne({ Request, Result, execute: execute([]) })({ amount: 1n, id: "y" })).toStrictEqual(Option.none())
      const none = yield* Effect.flip(SqlSchema.single({ Request, Result, execute: execute([]) })({ amount: 1n, id: "y" }))
      expect(none._tag).toBe("NoSuchElementException")
      const badRow = yield* Effect.flip(SqlSchema.findAll({ Request, Result, execute: execute([{ total: "many" }]) })({ amount: 1n, id: "y" }))
      expect(badRow._tag).toBe("ParseError")
    }))

  it.effect("hand a request encoding would not change to the statement as it is", () =>
    Effect.gen(function*() {
      seen.length = 0
      const request = { id: "z", at: new Date(0) }
      yield* SqlSchema.void({ Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }), execute: execute([]) })(request)
      expect(seen[0]).toBe(request)
    }))
})
