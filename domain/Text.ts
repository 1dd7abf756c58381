/**
 * Text on the wire: the bounds every request string has, the free-text schemas built on them (the id
 * schemas of Ids.ts too), request bodies that refuse fields they do not name, and the characters the
 * database cannot store.
 *
 * PostgreSQL refuses the NUL character (U+0000) in `text` and `jsonb`, and `jsonb` refuses an unpaired
 * UTF-16 surrogate (`"\ud800"`, which JSON allows but Unicode does not). The HTTP layer refuses both
 * anywhere in a request (runtime/RequestGuard.ts); the id schemas refuse them too, for the console RPC.
 */
import { Schema } from "effect"

export const MAX_ID_LENGTH = 64
export const MAX_EMAIL_LENGTH = 254
export const MAX_NAME_LENGTH = 200
export const MAX_PASSWORD_LENGTH = 256
/** Reset and verification tokens, list cursors: opaque strings the service made, far shorter than this. */
export const MAX_TOKEN_LENGTH = 512

// With the `u` flag a surrogate pair reads as one code point, so only an unpaired surrogate matches.
const LONE_SURROGATE = /\p{Surrogate}/u

/** What makes `text` unstorable, if anything. */
export const textProblem = (text: string): string | undefined => {
  if (text.includes("\u0000")) return "must not contain the NUL character (\\u0000)"
  if (LONE_SURROGATE.test(text)) return "must be valid Unicode: an unpaired UTF-16 surrogate such as \\ud800 is not"
  return undefined
}

/**
 * A string of at most `max` characters (and none the database cannot store). Filters here and in the
 * other domain modules carry `jsonSchema: {}`: without it the OpenAPI generator skips the filter's node,
 * and with it any description or example given to the schema later.
 */
export const maxText = (max: number) =>
  Schema.String.pipe(
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` }),
    Schema.filter((text) => textProblem(text) ?? true, { jsonSchema: {} })
  )

/**
 * A request body: a field the schema does not name is refused with 400 naming it, rather than silently
 * dropped (a misspelt optional field would otherwise look accepted). Nested objects inherit the rule.
 */
export const closed = <S extends Schema.Schema.All>(schema: S, identifier: string): S =>
  schema.annotations({ identifier, parseOptions: { onExcessProperty: "error" } }) as S

/**
 * A literal union whose error names every allowed value ("must be USD or KHR"), instead of the
 * schema's own rendering.
 */
export const oneOf = <const Values extends ReadonlyArray<string>>(...values: Values) => {
  const listed = values.length <= 1 ? values.join("") : `${values.slice(0, -1).join(", ")} or ${values[values.length - 1]}`
  return Schema.Literal(...values).annotations({
    // `override`: without it a union of literals reports its first member only.
    message: () => ({ message: `must be ${listed}`, override: true })
  })
}

export interface UnsafeText {
  /** Where the text is, as the error's `param` names fields: `metadata.note`, `documents.0.url`. */
  readonly path: ReadonlyArray<string | number>
  readonly problem: string
}

/**
 * How deeply a request body may nest arrays and objects. Far beyond any request schema, and well short
 * of what would exhaust the stack of code that walks a value recursively (error rendering does).
 */
export const MAX_JSON_DEPTH = 32

/** A place in a JSON value: its key under its parent; paths are built only for the one place reported. */
interface Place {
  readonly value: unknown
  readonly key: string | number | undefined
  readonly parent: Place | undefined
  readonly depth: number
}

const pathTo = (place: Place): ReadonlyArray<string | number> => {
  const path: Array<string | number> = []
  for (let at: Place | undefined = place; at !== undefined && at.key !== undefined; at = at.parent) path.push(at.key)
  return path.reverse()
}

/**
 * The first string (or object key) in a parsed JSON value that cannot be stored, or the first place
 * nested deeper than MAX_JSON_DEPTH. The walk keeps its
 * own stack rather than recursing, and links each place to its parent rather than copying paths: a
 * body is bounded in size, not in nesting depth, and must cost time in proportion to its size.
 */
export const findUnsafeText = (value: unknown): UnsafeText | undefined => {
  const pending: Array<Place> = [{ value, key: undefined, parent: undefined, depth: 0 }]
  while (pending.length > 0) {
    const place = pending.pop()!
    const current = place.value
    const depth = place.depth + 1
    if (typeof current === "object" && current !== null && depth > MAX_JSON_DEPTH) {
      return { path: pathTo(place), problem: `must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }
    }
    if (typeof current === "string") {
      const problem = textProblem(current)
      if (problem !== undefined) return { path: pathTo(place), problem }
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) pending.push({ value: current[index], key: index, parent: place, depth })
    } else if (typeof current === "object" && current !== null) {
      const entries = Object.entries(current)
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, child] = entries[index]!
        const keyProblem = textProblem(key)
        if (keyProblem !== undefined) return { path: [...pathTo(place), key], problem: `keys ${keyProblem}` }
        pending.push({ value: child, key, parent: place, depth })
      }
    }
  }
  return undefined
}

// A key that is itself the problem is named with the offending characters replaced, so the answer
// never echoes them.
const UNSAFE_CHARACTERS = /\u0000|\p{Surrogate}/gu

/** A path as an error's `param`: the keys and indexes joined with dots. */
export const paramOf = (path: ReadonlyArray<string | number>): string | undefined =>
  path.length === 0 ? undefined : path.map((key) => String(key).replace(UNSAFE_CHARACTERS, "\uFFFD")).join(".")
