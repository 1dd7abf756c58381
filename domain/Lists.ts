/**
 * The wire shape of lists (API.md "Lists"): the query parameters every list route takes and the page
 * it answers. The cursor logic and its SQL live in src/platform/Pagination.ts.
 */
import { ParseResult, Schema } from "effect"
import { MAX_TOKEN_LENGTH, maxText } from "./Text.ts"

export const DEFAULT_LIST_LIMIT = 20
export const MAX_LIST_LIMIT = 100

const WHOLE_NUMBER = /^\d+$/

const LIMIT_DESCRIPTION = `How many objects to return, from 1 to ${MAX_LIST_LIMIT} ` +
  `(default ${DEFAULT_LIST_LIMIT}; a larger value is treated as ${MAX_LIST_LIMIT}).`

/** The `limit` query parameter: a decimal string on the wire, a number from 1 to 100 once decoded. */
export const ListLimit = Schema.transformOrFail(
  Schema.String.pipe(
    Schema.maxLength(64, { message: () => `must be a whole number from 1 to ${MAX_LIST_LIMIT}, such as "20"` }),
    Schema.pattern(WHOLE_NUMBER, { message: () => `must be a whole number from 1 to ${MAX_LIST_LIMIT}, such as "20"` })
  ).annotations({
    // A query parameter is text on the wire, but what it holds is an integer: documented as one, so
    // generated clients take a number. (A value above the maximum is accepted and clamped.)
    jsonSchema: { type: "integer", minimum: 1, default: DEFAULT_LIST_LIMIT }
  }),
  // The OpenAPI generator documents a defaulted property from this side, so the description goes here too.
  Schema.Int.pipe(Schema.between(1, MAX_LIST_LIMIT)).annotations({ title: "limit", description: LIMIT_DESCRIPTION }),
  {
    strict: true,
    decode: (raw, _options, ast) => {
      const requested = Number(raw)
      if (requested === 0) {
        return ParseResult.fail(new ParseResult.Type(ast, raw, "must be at least 1"))
      }
      // Asking for more than the maximum is not an error: the client gets the largest page there is.
      return ParseResult.succeed(Math.min(requested, MAX_LIST_LIMIT))
    },
    encode: (limit) => ParseResult.succeed(String(limit))
  }
).annotations({ description: LIMIT_DESCRIPTION })

/** The query parameters every list route takes. */
export const ListParams = Schema.Struct({
  limit: Schema.optionalWith(ListLimit, { exact: true, default: () => DEFAULT_LIST_LIMIT }),
  cursor: Schema.optional(
    maxText(MAX_TOKEN_LENGTH).annotations({
      description: "The `next_cursor` of the previous page, unchanged. Omit it for the first page."
    })
  )
})
export type ListParams = typeof ListParams.Type

/** The schema of a page of `item`s, as list routes answer it. */
export const ListOf = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({
    object: Schema.Literal("list"),
    data: Schema.Array(item),
    has_more: Schema.Boolean,
    next_cursor: Schema.NullOr(Schema.String)
  }).annotations({
    description: "A page of objects, newest first. Pass `next_cursor` as `cursor` to get the next page."
  })

