/**
 * Success responses written from their schema's shape, without re-validating what the handler returns.
 *
 * HttpApi encodes every success value through its schema before writing it: a full parse of a value the
 * entity's serializer built and the compiler already typed, every field checked again, every nested object
 * rebuilt through Either steps. For a payment list that was the largest single cost of the request after
 * the database. Where a schema's encoding changes nothing but the container (classes to plain objects,
 * undeclared keys dropped, declared keys in declaration order) — true of every response schema whose
 * fields are JSON values already — that encoding is compiled once here into a projection that does
 * exactly that and nothing else, and the handler's value is answered with it. A schema with any real
 * transformation (a Date to a string, a default, a rename) or an endpoint with several success schemas
 * keeps HttpApi's own encoding. The schemas stay the one description of every response: the OpenAPI
 * document, the projection and the fallback all read them (test/platform/WireResponses.test.ts checks the
 * projection against Schema.encode on generated values of every endpoint it serves).
 */
import { HttpApiBuilder, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import type { HttpApiEndpoint } from "@effect/platform"
import { Chunk, Effect, Option, SchemaAST } from "effect"

/** What a value becomes on the wire: a copy holding only what the schema declares, in its order. */
export type Projection = (value: unknown) => unknown

const identity: Projection = (value) => value

/**
 * The projection equal to `Schema.encode` on every valid value of `ast`, or none where encoding does more
 * than project (a transformation other than a class's own, a declaration, a key pattern, a bigint).
 */
export const projectionOf = (ast: SchemaAST.AST): Projection | undefined => compile(ast, new Map())

const compile = (ast: SchemaAST.AST, recursive: Map<SchemaAST.AST, Projection>): Projection | undefined => {
  switch (ast._tag) {
    case "Literal":
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "UndefinedKeyword":
    case "VoidKeyword":
    case "UnknownKeyword":
    case "AnyKeyword":
    case "TemplateLiteral":
    case "Enums":
      return identity
    case "Refinement":
      // A refinement only checks: encoding answers its `from` unchanged.
      return compile(ast.from, recursive)
    case "Transformation":
      return isClass(ast) ? compile(ast.from, recursive) : undefined
    case "TypeLiteral":
      return compileObject(ast, recursive)
    case "TupleType":
      return compileArray(ast, recursive)
    case "Union":
      return compileUnion(ast, recursive)
    case "Suspend": {
      // A recursive schema: its projection refers to itself through the one being compiled.
      const known = recursive.get(ast)
      if (known !== undefined) return known
      let resolved: Projection | undefined
      const late: Projection = (value) => resolved!(value)
      recursive.set(ast, late)
      resolved = compile(ast.f(), recursive)
      return resolved === undefined ? undefined : late
    }
    default:
      return undefined
  }
}

/**
 * A Schema.Class: its encoding is the identity from the instance to its fields' struct (Schema.ts
 * `makeClass`), which then encodes as its fields' schema does. Recognised by its shape: a final
 * transformation to the class's declaration, carrying the surrogate the class gives its transformation.
 */
const isClass = (ast: SchemaAST.Transformation): boolean =>
  ast.transformation._tag === "FinalTransformation" &&
  ast.to._tag === "Declaration" &&
  Option.isSome(SchemaAST.getSurrogateAnnotation(ast))

const compileObject = (ast: SchemaAST.TypeLiteral, recursive: Map<SchemaAST.AST, Projection>): Projection | undefined => {
  const fields: Array<{ readonly name: PropertyKey; readonly optional: boolean; readonly project: Projection }> = []
  for (const signature of ast.propertySignatures) {
    const project = compile(signature.type, recursive)
    if (project === undefined) return undefined
    fields.push({ name: signature.name, optional: signature.isOptional, project })
  }
  // A record of the caller's own keys (metadata): every string key, after the declared ones, as encoding does.
  let rest: Projection | undefined
  if (ast.indexSignatures.length > 1) return undefined
  const [index] = ast.indexSignatures
  if (index !== undefined) {
    if (index.parameter._tag !== "StringKeyword") return undefined
    rest = compile(index.type, recursive)
    if (rest === undefined) return undefined
  }
  const declared = new Set(fields.map((field) => field.name))
  return (value) => {
    if (value === null || typeof value !== "object") return value
    const input = value as Record<PropertyKey, unknown>
    const output: Record<PropertyKey, unknown> = {}
    for (const field of fields) {
      if (!Object.hasOwn(input, field.name) && field.optional) continue
      output[field.name] = field.project(input[field.name])
    }
    if (rest !== undefined) {
      for (const key of Object.keys(input)) if (!declared.has(key)) output[key] = rest(input[key])
    }
    return output
  }
}

const compileArray = (ast: SchemaAST.TupleType, recursive: Map<SchemaAST.AST, Projection>): Projection | undefined => {
  const elements: Array<Projection> = []
  for (const element of ast.elements) {
    const project = compile(element.type, recursive)
    if (project === undefined) return undefined
    elements.push(project)
  }
  // Elements, then at most a rest (`Schema.Array` is a rest alone); elements after a rest are rare enough to leave to encoding.
  if (ast.rest.length > 1) return undefined
  const rest = ast.rest.length === 1 ? compile(ast.rest[0]!.type, recursive) : identity
  if (rest === undefined) return undefined
  if (elements.every((project) => project === identity) && rest === identity) return identity
  return (value) => {
    if (!Array.isArray(value)) return value
    return value.map((item, position) => (position < elements.length ? elements[position]! : rest)(item))
  }
}

/**
 * A union of JSON scalars is answered as it is; one object member beside `null` or `undefined` (a nullable
 * or optional object) is projected when present. A union of several object shapes would need encoding's
 * own choice of member, so it keeps encoding.
 */
const compileUnion = (ast: SchemaAST.Union, recursive: Map<SchemaAST.AST, Projection>): Projection | undefined => {
  const projections: Array<Projection> = []
  for (const member of ast.types) {
    const project = compile(member, recursive)
    if (project === undefined) return undefined
    if (project !== identity) projections.push(project)
  }
  if (projections.length === 0) return identity
  if (projections.length > 1) return undefined
  const [project] = projections as [Projection]
  return (value) => (value === null || value === undefined ? value : project(value))
}

/** How an endpoint's success value is answered without HttpApi's encoding, if its one success schema allows it. */
export const wireResponderOf = (
  successSchema: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps["successSchema"]
): ((value: unknown) => HttpServerResponse.HttpServerResponse) | undefined => {
  const ast = successSchema.ast
  // HttpApi answers a union member by member, each with its own status and encoding: left to it.
  if (ast._tag === "Union") return undefined
  if (HttpApiSchema.isVoid(ast)) return undefined
  const encoding = HttpApiSchema.getEncoding(ast)
  if (encoding.kind !== "Json") return undefined
  const project = projectionOf(ast)
  if (project === undefined) return undefined
  const status = HttpApiSchema.getStatusSuccess(successSchema)
  return (value) => HttpServerResponse.unsafeJson(project(value), { status, contentType: encoding.contentType })
}

/** A group's handlers with every success value its schema allows answered by projection (`wireResponderOf`). */
const withWireResponses = (handlers: HttpApiBuilder.Handlers<any, any, any>): HttpApiBuilder.Handlers<any, any, any> => ({
  ...handlers,
  handlers: Chunk.map(handlers.handlers, (item) => {
    const respond = wireResponderOf((item.endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps).successSchema)
    if (respond === undefined) return item
    return {
      ...item,
      handler: (request: any) =>
        Effect.map(item.handler(request), (value) => HttpServerResponse.isServerResponse(value) ? value : respond(value))
    }
  })
})

/**
 * HttpApiBuilder.group, with its successes answered by projection where the schema allows
 * (`withWireResponses`): every area's handlers are built with it.
 */
export const apiGroup: typeof HttpApiBuilder.group = (api, groupName, build) =>
  HttpApiBuilder.group(api, groupName, (handlers) => {
    const built: unknown = build(handlers)
    return (Effect.isEffect(built)
      ? Effect.map(built as Effect.Effect<HttpApiBuilder.Handlers<any, any, any>>, withWireResponses)
      : withWireResponses(built as HttpApiBuilder.Handlers<any, any, any>)) as any
  }) as any
