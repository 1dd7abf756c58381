/**
 * The process's logfmt lines (runtime/Logging.ts) are Effect's `Logger.logfmtLogger` lines, written by a
 * formatter of our own for speed: on generated entries — messages of any kind, labels and values with
 * spaces, quotes, `=` and newlines, spans, causes, every kind of fiber id — both must give the same text.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, FastCheck as fc, FiberId, FiberRefs, HashMap, List, Logger, LogLevel, LogSpan } from "effect"
import { logfmtLogger } from "../../runtime/Logging.ts"

const text = fc.oneof(
  fc.string(),
  fc.constantFrom("plain", "with space", "quote\"d", "a=b", "line\nbreak", "tab\there", "", "back\\slash", "ünï 😀")
)
const value = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer())),
  fc.array(fc.oneof(fc.string(), fc.integer()))
)
const fiberId = fc.oneof(
  fc.nat().map((id) => FiberId.runtime(id, 0)),
  fc.constant(FiberId.none),
  fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => FiberId.composite(FiberId.runtime(a, 0), FiberId.runtime(b, 0)))
)
const cause = fc.oneof(
  fc.constant(Cause.empty),
  text.map((message) => Cause.fail(message)),
  text.map((message) => Cause.die(new Error(message))),
  fc.constant(Cause.interrupt(FiberId.runtime(7, 0)))
)
const entry = fc.record({
  fiberId,
  logLevel: fc.constantFrom(LogLevel.Trace, LogLevel.Debug, LogLevel.Info, LogLevel.Warning, LogLevel.Error, LogLevel.Fatal),
  message: fc.oneof(value, fc.array(value, { maxLength: 3 })),
  cause,
  spans: fc.array(fc.tuple(text, fc.nat({ max: 10_000 })), { maxLength: 3 }),
  annotations: fc.array(fc.tuple(text, value), { maxLength: 5 }),
  date: fc.date({ min: new Date(0), max: new Date(4_102_444_800_000), noInvalidDate: true })
})

describe("logfmt lines", () => {
  it("are Effect's logfmt lines, character for character", () => {
    fc.assert(
      fc.property(entry, (generated) => {
        const options = {
          ...generated,
          context: FiberRefs.empty(),
          spans: List.fromIterable(generated.spans.map(([label, age]) => LogSpan.make(label, generated.date.getTime() - age))),
          annotations: HashMap.fromIterable(generated.annotations)
        }
        expect(logfmtLogger.log(options)).toBe(Logger.logfmtLogger.log(options))
      }),
      { numRuns: 2_000 }
    )
  })

  it("writes an access line as the service does", () => {
    const line = logfmtLogger.log({
      fiberId: FiberId.runtime(12, 0),
      logLevel: LogLevel.Info,
      message: ["GET /health 200 0.4ms"],
      cause: Cause.empty,
      context: FiberRefs.empty(),
      spans: List.empty(),
      annotations: HashMap.make(["request_id", "req-1"], ["status", 200], ["duration_ms", 0.4]),
      date: new Date("2026-11-28T10:00:00.000Z")
    })
    expect(line).toMatch(/^timestamp=2026-11-28T10:00:00\.000Z level=INFO fiber=#12 message="GET \/health 200 0\.4ms" /)
    expect(line).toContain("request_id=req-1")
    expect(line).toContain("status=200")
    expect(line).toContain("duration_ms=0.4")
  })
})
