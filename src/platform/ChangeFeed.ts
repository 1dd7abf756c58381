/**
 * Database change notifications (`pg_notify`), fanned out in memory: however many subscribers a process
 * has — thousands of checkout pages — it holds one database listener per channel, and a notice read from
 * it is handed to each subscriber as it is read (a function call, not a fiber's turn: every process reads
 * every payment's change, and most are nobody's here).
 *
 * On PostgreSQL a dedicated connection LISTENs; if it drops, it is re-established and subscribers get a
 * `Resync` so they can re-read what they follow (notifications sent meanwhile are lost with the
 * connection). The embedded database is a PostgreSQL server too, so the same holds there.
 *
 * A change is announced after its transaction commits (src/platform/AfterCommit.ts says why not inside
 * it): `announce` queues the notice once the commit is done, and one sender sends whatever has queued
 * in one statement, the next batch while the previous is on its way, so a burst of changes costs a few
 * statements rather than one each. That statement's own commit does not wait for its WAL flush: it
 * writes nothing but the notices, which PostgreSQL delivers at commit and never keeps. A notice is
 * lost if this process dies between the change's commit and the send (a millisecond or so): who follows
 * a change must not depend on every notice — the live status re-reads what it follows now and then
 * (src/checkout/LiveStatus.ts).
 */
import { SqlClient } from "@effect/sql"
import { Chunk, Context, Duration, Effect, Layer, Queue, RcMap, Schedule, Scope, Stream } from "effect"
import { afterCommit } from "./AfterCommit.ts"

export type ChangeNotice =
  | { readonly _tag: "Notice"; readonly payload: string }
  | { readonly _tag: "Resync" }

export class ChangeFeed extends Context.Tag("platform/ChangeFeed")<ChangeFeed, {
  /** Every notice on `channel` from now on, and a `Resync` whenever some may have been missed. */
  readonly subscribe: (channel: string) => Effect.Effect<Stream.Stream<ChangeNotice>, never, Scope.Scope>
  /**
   * `onNotice` called with every notice on `channel` (and every `Resync`), from now on until the scope
   * closes: synchronously, as the notice is read, for a subscriber that hears every change of the
   * process and keeps few (the live status streams). It must not throw.
   */
  readonly follow: (channel: string, onNotice: (notice: ChangeNotice) => void) => Effect.Effect<void, never, Scope.Scope>
  /**
   * Sends `payload` to every process's subscribers of `channel` once the caller's transaction has
   * committed (never, if it rolls back); outside a transaction, right away. Does not wait for the send.
   */
  readonly announce: (channel: string, payload: string) => Effect.Effect<void>
  /** `announce` of each of `payloads` on `channel`, in order, held for the commit together. */
  readonly announceAll: (channel: string, payloads: ReadonlyArray<string>) => Effect.Effect<void>
}>() {}

/** At most this many notices go in one statement; more wait for the next. */
const NOTICES_PER_STATEMENT = 1000

/** A send that failed (the database restarting) is tried again a few times before its notices are dropped. */
const RESEND = Schedule.exponential(Duration.millis(50)).pipe(Schedule.compose(Schedule.recurs(5)))

const RELISTEN = Schedule.exponential(Duration.millis(100)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))

/** How notifications reach this process: a dedicated LISTEN connection. */
export interface ChangeSource {
  /**
   * Listens on `channel`, calling `onPayload` with each notice as it is read, until interrupted; fails
   * when the connection is lost (notices may have been missed).
   */
  readonly listen: (channel: string, onPayload: (payload: string) => void) => Effect.Effect<never, unknown>
}

/** A stream subscriber this many notices behind misses the next ones. */
const STREAM_BUFFER = 4096

export const makeChangeFeed = (source: ChangeSource) =>
  Layer.scoped(
    ChangeFeed,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outgoing = yield* Queue.unbounded<readonly [channel: string, payload: string]>()

      // The notices in the order queued (the array's). `synchronous_commit` off for this statement's transaction only:
      // PostgreSQL holds its cluster-wide notify lock from before the commit until after it, and a commit
      // that writes nothing durable need not wait for the disk.
      const send = (notices: Chunk.Chunk<readonly [string, string]>) =>
        sql`
          WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
          SELECT pg_notify(n.notice->>0, n.notice->>1)
          FROM relaxed, jsonb_array_elements(${JSON.stringify(Chunk.toReadonlyArray(notices))}::jsonb) AS n(notice)`.pipe(
          Effect.retry(RESEND),
          Effect.catchAllCause((cause) => Effect.logWarning(`${notices.length} change notices could not be sent`, cause))
        )
      const sendQueued = Effect.flatMap(Queue.takeBetween(outgoing, 1, NOTICES_PER_STATEMENT), send)
      yield* Effect.forkScoped(Effect.forever(sendQueued))
      // What is queued when the process stops still goes (the client closes after this layer).
      yield* Effect.addFinalizer(() => Effect.flatMap(Queue.takeAll(outgoing), (notices) => notices.length === 0 ? Effect.void : send(notices)))

      // Per channel: its subscribers, called as each notice is read, and the one listener behind them.
      const channels = yield* RcMap.make({
        lookup: (channel: string) =>
          Effect.gen(function*() {
            const subscribers = new Set<(notice: ChangeNotice) => void>()
            const tell = (notice: ChangeNotice) => {
              for (const subscriber of subscribers) {
                try {
                  subscriber(notice)
                } catch {
                  // One subscriber's mistake must not keep the notice from the others.
                }
              }
            }
            let connectedBefore = false
            const listenOnce = Effect.suspend(() => {
              // After a reconnect, notices may have been missed while the connection was down.
              if (connectedBefore) tell({ _tag: "Resync" })
              connectedBefore = true
              return source.listen(channel, (payload) => tell({ _tag: "Notice", payload }))
            })
            yield* listenOnce.pipe(
              Effect.tapErrorCause((cause) => Effect.logWarning(`listening on ${channel} failed; retrying`, cause)),
              Effect.retry(RELISTEN),
              Effect.forkScoped
            )
            return subscribers
          }),
        idleTimeToLive: Duration.seconds(30)
      })

      const follow = (channel: string, onNotice: (notice: ChangeNotice) => void) =>
        Effect.flatMap(RcMap.get(channels, channel), (subscribers) =>
          Effect.acquireRelease(
            Effect.sync(() => subscribers.add(onNotice)),
            () => Effect.sync(() => subscribers.delete(onNotice))
          ))

      return {
        follow,
        subscribe: (channel) =>
          Effect.gen(function*() {
            const queue = yield* Effect.acquireRelease(Queue.dropping<ChangeNotice>(STREAM_BUFFER), Queue.shutdown)
            yield* follow(channel, (notice) => void queue.unsafeOffer(notice))
            return Stream.fromQueue(queue)
          }),
        announce: (channel, payload) => afterCommit(Queue.offer(outgoing, [channel, payload])),
        announceAll: (channel, payloads) =>
          payloads.length === 0
            ? Effect.void
            : afterCommit(Queue.offerAll(outgoing, payloads.map((payload) => [channel, payload] as const)))
      }
    })
  )
