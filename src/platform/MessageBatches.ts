/**
 * Messages to one entity sent together: one message carries every job a process has waiting for the
 * entity, with a bounded number of such messages in flight per entity.
 *
 * An entity that applies what waits in one pass (src/platform/EntityQueue.ts) already writes a busy
 * entity's jobs together, but each job still travelled as a message of its own: a cluster request, a
 * fiber on each side, a span and a copy of the handler's context on each side, for jobs then applied side
 * by side anyway (a game's play cost a fifth less CPU once its plays went together). Here a job for an
 * entity is sent at once while fewer than `maxInFlight` of its messages are in flight; jobs that come
 * meanwhile wait and go together in the next message (up to `maxBatch`), so a batch grows with the load
 * and an idle entity's job waits for nothing.
 *
 * The entity answers each job of a message with its own answer or refusal, in order; a message that
 * fails as a whole (a defect, the entity's runner going away) answers each of its jobs with that failure.
 * A job once handed over is sent even if its caller stops waiting, as a message to an entity with
 * uninterruptible messages would be; what is still waiting when the scope closes is interrupted.
 *
 * The same lines serve statements as well as messages: the outbox consumers' reads of their queues go
 * together this way, one statement in flight (src/platform/Outbox.ts, `OutboxQueues`).
 */
import { Array as Arr, Deferred, Effect, Either, Exit, FiberId, FiberSet, type Scope } from "effect"

/** A job waiting for its message, and the answer its caller waits for. */
interface Waiting<J, A, E> {
  readonly job: J
  readonly done: Deferred.Deferred<A, E>
}

/** A key's jobs not yet sent, and how many of its messages are in flight. */
interface Line<J, A, E> {
  readonly waiting: Array<Waiting<J, A, E>>
  inFlight: number
}

/** The most jobs one message carries by default: the entity queue's own pass. */
const MAX_BATCH = 256

/** Messages in flight per key by default. */
const MAX_IN_FLIGHT = 2

/**
 * Starts batching for the scope. `send(key, jobs)` sends one message with `jobs` to the entity `key`
 * and answers each job's answer or refusal, in order. At most `maxInFlight` messages per key are in
 * flight: with two, the entity has the next message waiting when it finishes one, and is never idle
 * while its jobs travel. Answers `submit(key, job)`: hands the job over and waits for its answer.
 */
export const makeMessageBatches = <K, J, A, E>(
  send: (key: K, jobs: Arr.NonEmptyReadonlyArray<J>) => Effect.Effect<ReadonlyArray<Either.Either<A, E>>>,
  options: { readonly maxBatch?: number; readonly maxInFlight?: number } = {}
): Effect.Effect<(key: K, job: J) => Effect.Effect<A, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxBatch = options.maxBatch ?? MAX_BATCH
    const maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT
    // A key is here while it has jobs waiting or in flight.
    const lines = new Map<K, Line<J, A, E>>()
    // Messages are sent from the scope's fibers, with the context of the batches' maker, not of a caller.
    const run = yield* FiberSet.runtime(yield* FiberSet.make<void>())<never>()
    // As the scope closes (before the fibers in flight are interrupted, which answers their jobs):
    // nothing more is sent, and what waits is interrupted.
    let closed = false
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        for (const line of lines.values()) {
          for (const waiting of line.waiting.splice(0)) Deferred.unsafeDone(waiting.done, Exit.interrupt(FiberId.none))
        }
      })
    )

    const answer = (sent: ReadonlyArray<Waiting<J, A, E>>, exit: Exit.Exit<ReadonlyArray<Either.Either<A, E>>>) => {
      for (const [index, waiting] of sent.entries()) {
        const answered = Exit.isSuccess(exit) ? exit.value[index] : undefined
        Deferred.unsafeDone(
          waiting.done,
          Exit.isFailure(exit)
            ? Exit.failCause(exit.cause)
            : answered === undefined
            ? Exit.die(new Error("the entity answered fewer jobs than it was sent"))
            : Either.isRight(answered)
            ? Exit.succeed(answered.right)
            : Exit.fail(answered.left)
        )
      }
    }

    /** Sends what waits for `key`, a message at a time, while fewer than `maxInFlight` are in flight. */
    const sendWaiting = (key: K, line: Line<J, A, E>): void => {
      while (!closed && line.inFlight < maxInFlight) {
        const batch = line.waiting.splice(0, maxBatch)
        if (!Arr.isNonEmptyReadonlyArray(batch)) break
        line.inFlight++
        run(send(key, Arr.map(batch, (waiting) => waiting.job)).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              answer(batch, exit)
              line.inFlight--
              sendWaiting(key, line)
              if (line.inFlight === 0 && line.waiting.length === 0) lines.delete(key)
            })
          ),
          Effect.asVoid
        ))
      }
    }

    return (key: K, job: J) =>
      Effect.suspend(() => {
        if (closed) return Effect.interrupt
        const waiting: Waiting<J, A, E> = { job, done: Deferred.unsafeMake<A, E>(FiberId.none) }
        let line = lines.get(key)
        if (line === undefined) {
          line = { waiting: [], inFlight: 0 }
          lines.set(key, line)
        }
        line.waiting.push(waiting)
        sendWaiting(key, line)
        return Deferred.await(waiting.done)
      })
  })
