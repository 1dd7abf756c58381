/** What spans an effect makes: for the tests of when spans are made and when they are left out. */
import { Effect, Tracer } from "effect"

/** Runs `effect` under a tracer that records the name of every span made, and answers the names. */
export const spanNames = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const native = yield* Effect.tracer
    const names: Array<string> = []
    const recording = Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return native.span(name, ...rest)
      },
      context: (f, fiber) => native.context(f, fiber)
    })
    const result = yield* Effect.withTracer(effect, recording)
    return { result, names }
  })
