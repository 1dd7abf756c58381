import { describe, expect, it } from "@effect/vitest"
import { Either, JSONSchema, ParseResult, Schema } from "effect"
import * as fc from "fast-check"
import { IdOf, IdPrefixes, isIdOf, newId, StrictIdOf } from "../../src/platform/Ids.ts"

const anyPrefix = fc.constantFrom(...IdPrefixes)
const randomPart = fc.stringMatching(/^[0-9A-Za-z]{24}$/)

describe("newId", () => {
  it("is the prefix, an underscore and 24 base62 characters", () => {
    for (const prefix of IdPrefixes) {
      const id = newId(prefix)
      expect(id).toMatch(new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`))
      expect(isIdOf(prefix, id)).toBe(true)
    }
  })

  it("does not repeat", () => {
    const ids = Array.from({ length: 10_000 }, () => newId("pay"))
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("knows every prefix of the wire conventions", () => {
    // Those of API.md and the areas' own; each once.
    expect([...IdPrefixes]).toEqual(expect.arrayContaining(
      ["br", "cns", "cus", "evt", "inv", "je", "key", "kyc", "lnk", "lpe", "org", "pay", "rdm", "re", "rwd", "sess", "str", "tier", "usr", "we", "whd", "rs", "risk", "ref", "com"]
    ))
    expect(new Set(IdPrefixes).size).toBe(IdPrefixes.length)
  })
})

describe("isIdOf", () => {
  it("accepts any well-formed id of its kind", () => {
    fc.assert(fc.property(anyPrefix, randomPart, (prefix, random) => isIdOf(prefix, `${prefix}_${random}`)))
  })

  it("rejects an id of another kind", () => {
    fc.assert(
      fc.property(anyPrefix, anyPrefix, (expected, actual) => {
        fc.pre(expected !== actual)
        expect(isIdOf(expected, newId(actual))).toBe(false)
      })
    )
  })

  it("rejects malformed values", () => {
    const random = "3kTMd92JxQeLp0aZ7yNcB1vW"
    const malformed: ReadonlyArray<unknown> = [
      undefined,
      null,
      42,
      { id: `pay_${random}` },
      "",
      "pay_",
      `pay${random}`,
      `pay-${random}`,
      `PAY_${random}`,
      `pay_${random.slice(1)}`,
      `pay_${random}x`,
      `pay_${random.slice(1)}_`,
      `pay_${random.slice(1)}-`,
      `pay_${random}\n`,
      ` pay_${random}`,
      `xpay_${random}`
    ]
    for (const value of malformed) expect(isIdOf("pay", value)).toBe(false)
  })

  it("does not confuse prefixes that start alike", () => {
    const random = "3kTMd92JxQeLp0aZ7yNcB1vW"
    expect(isIdOf("re", `re_${random}`)).toBe(true)
    expect(isIdOf("re", `ref_${random}`)).toBe(false)
    expect(isIdOf("we", `whd_${random}`)).toBe(false)
  })
})

describe("IdOf", () => {
  it("decodes a well-formed id unchanged", () => {
    const id = newId("cus")
    expect(Schema.decodeUnknownSync(IdOf("cus"))(id)).toBe(id)
  })

  it("lets an id of another shape through, to be answered as unknown (404), and refuses an absurd one", () => {
    expect(Schema.decodeUnknownSync(IdOf("cus"))("pay_whatever")).toBe("pay_whatever")
    expect(Either.isLeft(Schema.decodeUnknownEither(IdOf("cus"))("x".repeat(65)))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(IdOf("cus"))("cus_\u0000"))).toBe(true)
  })

  it("documents itself for OpenAPI with a description and a valid example", () => {
    for (const prefix of IdPrefixes) {
      const jsonSchema = JSONSchema.make(IdOf(prefix)) as { readonly description: string; readonly examples: ReadonlyArray<string> }
      expect(jsonSchema.description).toContain(`"${prefix}_"`)
      for (const example of jsonSchema.examples) expect(isIdOf(prefix, example)).toBe(true)
    }
  })
})

describe("StrictIdOf", () => {

  it("explains what it expected", () => {
    const result = Schema.decodeUnknownEither(Schema.Struct({ customer_id: StrictIdOf("cus") }))({
      customer_id: newId("pay")
    })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(ParseResult.ArrayFormatter.formatErrorSync(result.left)).toEqual([{
        _tag: "Refinement",
        path: ["customer_id"],
        message: "must be an id starting with \"cus_\" followed by 24 letters or digits"
      }])
    }
  })

  it("documents itself for OpenAPI with a pattern, a description and a valid example", () => {
    for (const prefix of IdPrefixes) {
      const jsonSchema = JSONSchema.make(StrictIdOf(prefix)) as {
        readonly type: string
        readonly pattern: string
        readonly description: string
        readonly examples: ReadonlyArray<string>
      }
      expect(jsonSchema.type).toBe("string")
      expect(jsonSchema.pattern).toBe(`^${prefix}_[0-9A-Za-z]{24}$`)
      expect(jsonSchema.description).toContain(`"${prefix}_"`)
      expect(jsonSchema.examples.length).toBeGreaterThan(0)
      for (const example of jsonSchema.examples) expect(isIdOf(prefix, example)).toBe(true)
    }
  })
})
