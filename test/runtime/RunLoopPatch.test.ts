/**
 * patches/effect+3.22.4.patch: the fiber's run loop evaluates each operation without a closure made for it
 * when the tracer is the native one, whose `context` only calls its function; any other tracer still has
 * every operation run inside its `context` (an OpenTelemetry tracer makes its span the active one there).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Tracer } from "effect"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

describe("the run loop (patched)", () => {
  it("is the patched one in both builds of the library (the bundle is made from the ESM one)", () => {
    const require = createRequire(import.meta.url)
    const esm = require.resolve("effect").replace(/dist\/cjs\/index\.js$/, "dist/esm/internal/fiberRuntime.js")
    const cjs = require.resolve("effect").replace(/index\.js$/, "internal/fiberRuntime.js")
    for (const file of [esm, cjs]) expect(readFileSync(file, "utf8")).toContain("this.currentTracer.context === nativeTracerContext")
  })

  it.effect("runs every operation inside another tracer's context, as the library does", () =>
    Effect.gen(function*() {
      let calls = 0
      let inside = false
      const native = yield* Effect.tracer
      const tracer = Tracer.make({
        span: (...args) => native.span(...args),
        context: (f) => {
          calls++
          inside = true
          try {
            return f()
          } finally {
            inside = false
          }
        }
      })
      const seenInside = yield* Effect.sync(() => inside).pipe(
        Effect.zipLeft(Effect.yieldNow()),
        Effect.provide(Layer.setTracer(tracer))
      )
      expect(seenInside).toBe(true)
      expect(calls).toBeGreaterThan(2)
    }))

  it.effect("answers under the native tracer, failures and defects included", () =>
    Effect.gen(function*() {
      expect(yield* Effect.map(Effect.succeed(20), (n) => n + 1)).toBe(21)
      expect(yield* Effect.flip(Effect.fail("refused"))).toBe("refused")
      const died = yield* Effect.exit(Effect.sync(() => {
        throw new Error("broken")
      }))
      expect(died._tag).toBe("Failure")
    }))
})
