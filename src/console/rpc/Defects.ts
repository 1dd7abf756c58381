/**
 * What every console RPC handler wraps its work in: a defect (a bug, the database down) reaches the
 * client as the REST routes' 500 says it, never with its own message; the cause goes to the log.
 */
import { Cause, Effect, Stream } from "effect"

/**
 * What a client learns of a defect (a bug, the database down): that it happened, as the REST routes' 500
 * says it; the cause goes to the log. Without this the RPC protocol would send the defect's own message.
 */
class InternalError extends Error {
  override readonly name = "InternalError"
  constructor() {
    super("An internal error occurred; it has been logged")
  }
}

const defectOnly = (cause: Cause.Cause<unknown>) => Cause.isDie(cause) && !Cause.isInterruptedOnly(cause)

export const hideDefects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchAllCause(effect, (cause) =>
    defectOnly(cause)
      ? Effect.zipRight(Effect.logError("console RPC failed", cause), Effect.die(new InternalError()))
      : Effect.failCause(cause))

export const hideStreamDefects = <A, E, R>(stream: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
  Stream.catchAllCause(stream, (cause) =>
    defectOnly(cause)
      ? Stream.fromEffect(Effect.zipRight(Effect.logError("console RPC failed", cause), Effect.die(new InternalError())))
      : Stream.failCause(cause))

