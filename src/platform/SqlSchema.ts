/**
 * The repos' typed queries: `@effect/sql`'s SqlSchema (findAll, findOne, single, void), the same
 * signatures and results, with the request handed to the statement as it is wherever encoding it would
 * hand over the same values.
 *
 * SqlSchema encodes every request through its schema before building the statement: a parse of a value
 * the repo's own typed code just made. For most requests — ids, strings, numbers, booleans, dates given as
 * `Date`, optional and nullable ones of those — encoding answers the very same values and only checks them
 * again (~13 µs of a payment list's request, as much again for a payment's creation). Such requests go
 * to `execute` unchanged. A request schema with a real transformation (a bigint to its decimal string, a
 * default, a renamed key, a class) keeps its encoding. Rows are decoded exactly as SqlSchema decodes them.
 * test/platform/SqlSchema.test.ts checks which schemas pass unchanged and that the others are encoded.
 */
import { Cause, Effect, type Option, type ParseResult, Schema, SchemaAST } from "effect"

/**
 * Whether encoding a valid value of `ast` answers the same values (undeclared keys aside, which a
 * statement never reads, and an own `__proto__` key, which decoding at the API's edge has already
 * dropped): no transformation anywhere, only checks.
 */
export const encodesUnchanged = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Literal":
    case "UniqueSymbol":
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "BigIntKeyword":
    case "SymbolKeyword":
    case "UndefinedKeyword":
    case "VoidKeyword":
    case "UnknownKeyword":
    case "AnyKeyword":
    case "ObjectKeyword":
    case "TemplateLiteral":
    case "Enums":
      return true
    case "Declaration":
      // `DateFromSelf` and the like: a check of the value itself. With type parameters (`OptionFromSelf(…)`)
      // its members are encoded too.
      return ast.typeParameters.length === 0
    case "Refinement":
      return encodesUnchanged(ast.from)
    case "TypeLiteral":
      return ast.propertySignatures.every((signature) => encodesUnchanged(signature.type)) &&
        ast.indexSignatures.every((signature) => encodesUnchanged(signature.type))
    case "TupleType":
      return ast.elements.every((element) => encodesUnchanged(element.type)) &&
        ast.rest.every((rest) => encodesUnchanged(rest.type))
    case "Union":
      return ast.types.every(encodesUnchanged)
    default:
      // Transformations, and recursive schemas (rare in a request): encoded.
      return false
  }
}

/** The request as `execute` takes it: unchanged where encoding would not change it, encoded otherwise. */
const statementOf = <IA, II, IR, B, E, R>(
  Request: Schema.Schema<IA, II, IR>,
  execute: (request: II) => Effect.Effect<B, E, R>
): (request: IA) => Effect.Effect<B, E | ParseResult.ParseError, R | IR> => {
  if (encodesUnchanged(Request.ast)) return (request) => execute(request as unknown as II)
  const encode = Schema.encode(Request)
  return (request) => Effect.flatMap(encode(request), execute)
}

/** A query whose rows are decoded as `Result`. */
export interface RowsQuery<IR, II, IA, AR, AI, A, R, E> {
  readonly Request: Schema.Schema<IA, II, IR>
  readonly Result: Schema.Schema<A, AI, AR>
  readonly execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}

/** Every row, decoded. */
export const findAll = <IR, II, IA, AR, AI, A, R, E>(options: RowsQuery<IR, II, IA, AR, AI, A, R, E>) => {
  const statement = statementOf(options.Request, options.execute)
  const decode = Schema.decodeUnknown(Schema.Array(options.Result))
  return (request: IA): Effect.Effect<ReadonlyArray<A>, E | ParseResult.ParseError, R | IR | AR> =>
    Effect.flatMap(statement(request), decode)
}

/** The first row, decoded, if there is one. */
export const findOne = <IR, II, IA, AR, AI, A, R, E>(options: RowsQuery<IR, II, IA, AR, AI, A, R, E>) => {
  const statement = statementOf(options.Request, options.execute)
  const decode = Schema.decodeUnknown(options.Result)
  return (request: IA): Effect.Effect<Option.Option<A>, E | ParseResult.ParseError, R | IR | AR> =>
    Effect.flatMap(
      statement(request),
      (rows) => Array.isArray(rows) && rows.length > 0 ? Effect.asSome(decode(rows[0])) : Effect.succeedNone
    )
}

/** The first row, decoded; none is a NoSuchElementException. */
export const single = <IR, II, IA, AR, AI, A, R, E>(options: RowsQuery<IR, II, IA, AR, AI, A, R, E>) => {
  const statement = statementOf(options.Request, options.execute)
  const decode = Schema.decodeUnknown(options.Result)
  return (request: IA): Effect.Effect<A, E | ParseResult.ParseError | Cause.NoSuchElementException, R | IR | AR> =>
    Effect.flatMap(
      statement(request),
      (rows): Effect.Effect<A, ParseResult.ParseError | Cause.NoSuchElementException, AR> =>
        Array.isArray(rows) && rows.length > 0 ? decode(rows[0]) : Effect.fail(new Cause.NoSuchElementException())
    )
}

const void_ = <IR, II, IA, R, E>(options: {
  readonly Request: Schema.Schema<IA, II, IR>
  readonly execute: (request: II) => Effect.Effect<unknown, E, R>
}) => {
  const statement = statementOf(options.Request, options.execute)
  return (request: IA): Effect.Effect<void, E | ParseResult.ParseError, R | IR> => Effect.asVoid(statement(request))
}

export {
  /** The statement run for its effect; its rows are not read. */
  void_ as void
}
