/**
 * src/platform/Traced.ts: service functions (`traced`) and per-call spans (`spanWhenExported`) make their
 * span only while a tracer exports spans, and otherwise run the same effect without one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { exportingSpans, spanWhenExported, traced } from "../../src/platform/Traced.ts"
import { spanNames } from "../support/Spans.ts"

const double = traced("Numbers.double")(function*(n: number) {
  return n * 2
})
const triple = (n: number) => Effect.succeed(n * 3).pipe(spanWhenExported("Numbers.triple"))
// Both decide when called: a call made while the exporter is installed makes its span.
const both = Effect.suspend(() => Effect.all([double(2), triple(2)]))

describe("spans only when exported", () => {
  it.effect("makes no span while none is exported, and the same result", () =>
    Effect.gen(function*() {
      const { names, result } = yield* spanNames(both)
      expect(result).toEqual([4, 6])
      expect(names).toEqual([])
    }))

  it.effect("makes each span while a tracer exports them", () =>
    Effect.gen(function*() {
      const { names, result } = yield* Effect.scoped(Effect.zipRight(exportingSpans, spanNames(both)))
      expect(result).toEqual([4, 6])
      expect(names).toEqual(["Numbers.double", "Numbers.triple"])
    }))
})
