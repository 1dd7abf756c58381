/**
 * Success responses written by projection (src/platform/WireResponses.ts) must be byte for byte what
 * HttpApi's own encoding writes: for every endpoint of the API whose success schema has a projection,
 * values generated from the schema itself (Arbitrary) are written both ways and compared as JSON text,
 * key order included. Schemas whose encoding transforms are left to HttpApi.
 */
import { HttpApi, HttpApiSchema } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, FastCheck, Schema } from "effect"
import { Api } from "../../domain/Api.ts"
import { Payment, PaymentList } from "../../domain/Payments.ts"
import { projectionOf, wireResponderOf } from "../../src/platform/WireResponses.ts"

interface Served {
  readonly name: string
  readonly schema: Schema.Schema.Any
}

const endpoints = (): { readonly projected: Array<Served>; readonly encoded: Array<string> } => {
  const projected: Array<Served> = []
  const encoded: Array<string> = []
  HttpApi.reflect(Api as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      const name = `${group.identifier}.${endpoint.name}`
      if (wireResponderOf(endpoint.successSchema) === undefined) encoded.push(name)
      else projected.push({ name, schema: endpoint.successSchema as Schema.Schema.Any })
    }
  })
  return { projected, encoded }
}

const sameAsEncoding = (schema: Schema.Schema.Any, runs: number) => {
  const project = projectionOf(schema.ast)!
  const encode = Schema.encodeSync(schema as Schema.Schema<unknown, unknown>)
  FastCheck.assert(
    FastCheck.property(Arbitrary.make(schema), (value) => {
      expect(JSON.stringify(project(value))).toBe(JSON.stringify(encode(value)))
    }),
    { numRuns: runs }
  )
}

describe("responses written by projection", () => {
  it("are written exactly as HttpApi encodes them, for every endpoint that has one", () => {
    const { projected, encoded } = endpoints()
    // Most of the API's answers are JSON values already; the rest keep HttpApi's encoding.
    expect(projected.length).toBeGreaterThan(encoded.length)
    for (const { name, schema } of projected) {
      try {
        sameAsEncoding(schema, 25)
      } catch (error) {
        throw new Error(`${name}: ${String(error)}`)
      }
    }
  })

  it("drop what the schema does not declare and put the declared keys in its order, as encoding does", () => {
    const list = new PaymentList({ object: "list", data: [], has_more: false, next_cursor: null })
    // Built by hand, in another order and with a key the schema does not have, as a careless serializer might.
    const withExtra = Object.assign(Object.create(PaymentList.prototype), { has_more: false, internal: "secret", next_cursor: null, data: [], object: "list" })
    const written = JSON.stringify(projectionOf(PaymentList.ast)!(withExtra))
    expect(written).toBe(JSON.stringify(Schema.encodeSync(PaymentList)(list)))
    expect(written).not.toContain("secret")
  })

  it("are not used where encoding transforms: a date, a default, a union of answers", () => {
    expect(projectionOf(Schema.Struct({ at: Schema.Date }).ast)).toBeUndefined()
    expect(projectionOf(Schema.Struct({ n: Schema.optionalWith(Schema.Number, { default: () => 1 }) }).ast)).toBeUndefined()
    expect(projectionOf(Schema.Struct({ n: Schema.NumberFromString }).ast)).toBeUndefined()
    expect(wireResponderOf(Schema.Union(Payment, PaymentList) as any)).toBeUndefined()
    expect(wireResponderOf(HttpApiSchema.NoContent as any)).toBeUndefined()
    expect(projectionOf(Payment.ast)).toBeDefined()
  })
})
