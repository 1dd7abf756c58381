/**
 * Service functions with a span each, when someone receives the spans.
 *
 * `Effect.fn(name)` opens a span on every call: an `Error` captured for the span's stack, the span with
 * its clock readings, and the span provided as the parent of everything inside (a copy of the fiber's
 * context, and its undoing). That measured 15–20 µs a call, and a payment's creation makes eight such
 * calls: a fifth of what the request cost. Without an exporter (no OTEL_EXPORTER_OTLP_ENDPOINT,
 * runtime/Telemetry.ts) the spans reach no one, so a function made with `traced(name)` runs its body as
 * `Effect.fnUntraced` does; while the telemetry layer exports spans (`exportingSpans`), every call opens
 * its span exactly as `Effect.fn(name)` would.
 */
import { Effect, type Scope, type Tracer } from "effect"

/** How many tracers that export spans are installed in this process (one per running service). */
let exporters = 0

/** Marks spans as exported for the life of the scope: the telemetry layer, when it installs its tracer. */
export const exportingSpans: Effect.Effect<void, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    exporters++
  }),
  () =>
    Effect.sync(() => {
      exporters--
    })
)

/** Whether a tracer exports spans now: those who would make spans for no one ask (runtime/DirectStatements.ts). */
export const spansExported = (): boolean => exporters > 0

const GeneratorFunction = Object.getPrototypeOf(function*() {}).constructor

type AnyFunction = (...args: Array<any>) => any

/** The body run without a span: a generator as `Effect.fnUntraced` runs it, a function returning an effect as is. */
const untraced = (body: AnyFunction, pipeables: ReadonlyArray<AnyFunction>): AnyFunction =>
  body instanceof GeneratorFunction
    ? (Effect.fnUntraced as AnyFunction)(body, ...pipeables)
    : function(this: unknown, ...args: Array<unknown>) {
      let effect: unknown
      try {
        effect = body.apply(this, args)
      } catch (error) {
        // As `Effect.fn`: a body that throws is a defect of the effect, not of the caller.
        effect = Effect.die(error)
      }
      for (const pipeable of pipeables) effect = pipeable(effect, ...args)
      return effect
    }

/**
 * `Effect.fn(name, options)`, whose calls open their span only while spans are exported: the same
 * signature, the same effect, the same span (name, options, parent) when a tracer exports them.
 */
export const traced = (name: string, options?: Tracer.SpanOptions): Effect.fn.Gen & Effect.fn.NonGen =>
  ((body: AnyFunction, ...pipeables: Array<AnyFunction>) => {
    const withSpan: AnyFunction = (Effect.fn(name, options) as AnyFunction)(body, ...pipeables)
    const withoutSpan = untraced(body, pipeables)
    return function(this: unknown, ...args: Array<unknown>) {
      return spansExported() ? withSpan.apply(this, args) : withoutSpan.apply(this, args)
    }
  }) as unknown as Effect.fn.Gen & Effect.fn.NonGen

/**
 * `Effect.withSpan(name, options)` for an effect made at each call, while spans are exported; the effect
 * itself otherwise (decided when applied). `Effect.withSpan` captures an `Error` for the span's stack and
 * makes the span even when no one receives it: ~2 % of the service's CPU while it fans out a burst of
 * outbox events, one span per event applied.
 */
export const spanWhenExported = (name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  spansExported() ? Effect.withSpan(self, name, options) : self
