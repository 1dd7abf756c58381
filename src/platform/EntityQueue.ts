/**
 * An entity's own queue of work. An entity that applies its messages one at a time runs at one over the
 * time a message holds it: with a transaction per message that is every round trip of the transaction,
 * lengthened by everything else the process does meanwhile. With this queue the entity takes its messages
 * as they come (`concurrency: "unbounded"`), each handler puts its job here and waits, and one fiber
 * applies them in the order they came: each pass takes everything waiting (up to `maxPass`) and applies it
 * together — in one transaction, for the entities that use it — so a busy entity's rate grows with its load
 * instead of being capped by its round trips. Only the queue's fiber holds a database connection; waiting
 * messages hold none.
 *
 * A pass once taken is applied to its end, even while the entity stops (the pass is uninterruptible); the
 * jobs still waiting then are interrupted, and their callers send them again to the entity's next home,
 * where what each applies is keyed so that it applies once.
 */
import { Array as Arr, Cause, Chunk, Deferred, Effect, Either, Exit, Queue, type Scope } from "effect"

/** A job waiting in the queue, with the answer its handler waits for. */
export interface Pending<J, A, E> {
  readonly job: J
  readonly done: Deferred.Deferred<A, E>
}

/** The most jobs one pass takes by default. */
const MAX_PASS = 256

/** How a handler puts work in the queue. */
export interface EntityQueue<J, A, E> {
  /** Queues a job and waits for its answer. */
  readonly submit: (job: J) => Effect.Effect<A, E>
  /**
   * Queues jobs together, in order and next to each other (a message that carries several:
   * src/platform/MessageBatches.ts), and waits for every one's answer or refusal; fails only if a job's
   * answer is a defect or an interruption, which its whole message then answers.
   */
  readonly submitAll: (jobs: Arr.NonEmptyReadonlyArray<J>) => Effect.Effect<Array<Either.Either<A, E>>>
}

/**
 * Starts the queue's fiber in the entity's scope. `runPass` applies the jobs of one pass in order and
 * completes each one's `done`; a job it leaves unanswered (a defect in the pass) gets the pass's failure.
 */
export const makeEntityQueue = <J, A, E>(
  runPass: (waiting: Arr.NonEmptyReadonlyArray<Pending<J, A, E>>) => Effect.Effect<void>,
  maxPass = MAX_PASS
): Effect.Effect<EntityQueue<J, A, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Pending<J, A, E>>()

    const pass = (taken: Chunk.Chunk<Pending<J, A, E>>) => {
      const waiting = Chunk.toReadonlyArray(taken)
      if (!Arr.isNonEmptyReadonlyArray(waiting)) return Effect.void
      return runPass(waiting).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.forEach(
            waiting,
            (pending) => Deferred.done(pending.done, Exit.isFailure(exit) ? Exit.failCause(exit.cause) : Exit.die(unanswered)),
            { discard: true }
          )
        ),
        Effect.uninterruptible
      )
    }

    yield* Queue.takeBetween(queue, 1, maxPass).pipe(Effect.flatMap(pass), Effect.forever, Effect.forkScoped)
    // Runs before the fiber is interrupted (finalizers run last added first): what still waits is interrupted.
    yield* Effect.addFinalizer(() =>
      Queue.takeAll(queue).pipe(
        Effect.flatMap((left) => Effect.forEach(left, (pending) => Deferred.interrupt(pending.done), { discard: true })),
        Effect.zipRight(Queue.shutdown(queue))
      )
    )

    const submit = (job: J) =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<A, E>()
        yield* Queue.offer(queue, { job, done })
        return yield* Deferred.await(done)
      })

    const submitAll = (jobs: Arr.NonEmptyReadonlyArray<J>) =>
      Effect.gen(function*() {
        const fiberId = yield* Effect.fiberId
        const waiting = Arr.map(jobs, (job): Pending<J, A, E> => ({ job, done: Deferred.unsafeMake<A, E>(fiberId) }))
        yield* Queue.offerAll(queue, waiting)
        const answers: Array<Either.Either<A, E>> = []
        for (const pending of waiting) {
          const exit = yield* Effect.exit(Deferred.await(pending.done))
          if (Exit.isSuccess(exit)) answers.push(Either.right(exit.value))
          // A refusal is the job's own answer; a defect or an interruption is the message's.
          else if (Cause.isFailType(exit.cause)) answers.push(Either.left(exit.cause.error))
          else return yield* Effect.failCause(Cause.stripFailures(exit.cause))
        }
        return answers
      })

    return { submit, submitAll }
  })

/** What a job left unanswered by a pass that ended normally gets: a bug in the pass, not a refusal. */
const unanswered = new Cause.RuntimeException("the entity's queue ended a pass without answering this job")
