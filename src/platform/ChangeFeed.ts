/**
 * Database change notifications (`pg_notify` sent inside the transaction that makes a change), fanned
 * out in memory: however many subscribers a process has — thousands of checkout pages — it holds one
 * database listener per channel.
 *
 * On PostgreSQL a dedicated connection LISTENs; if it drops, it is re-established and subscribers get a
 * `Resync` so they can re-read what they follow (notifications sent meanwhile are lost with the
 * connection). The embedded database is a PostgreSQL server too, so the same holds there.
 */
import { Context, Duration, Effect, Layer, PubSub, RcMap, Schedule, Scope, Stream } from "effect"

export type ChangeNotice =
  | { readonly _tag: "Notice"; readonly payload: string }
  | { readonly _tag: "Resync" }

export class ChangeFeed extends Context.Tag("platform/ChangeFeed")<ChangeFeed, {
  /** Every notice on `channel` from now on, and a `Resync` whenever some may have been missed. */
  readonly subscribe: (channel: string) => Effect.Effect<Stream.Stream<ChangeNotice>, never, Scope.Scope>
}>() {}

const RELISTEN = Schedule.exponential(Duration.millis(100)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))

/** How notifications reach this process: a dedicated LISTEN connection per channel streams them. */
export interface ChangeSource {
  readonly listen: (channel: string) => Stream.Stream<string, unknown>
}

export const makeChangeFeed = (source: ChangeSource) =>
  Layer.scoped(
    ChangeFeed,
    Effect.gen(function*() {
      const channels = yield* RcMap.make({
        lookup: (channel: string) =>
          Effect.gen(function*() {
            const hub = yield* Effect.acquireRelease(PubSub.sliding<ChangeNotice>(4096), PubSub.shutdown)
            const listen = source.listen
            let connectedBefore = false
            const listenOnce = Effect.suspend(() => {
              // After a reconnect, notices may have been missed while the connection was down.
              const resync = connectedBefore ? PubSub.publish(hub, { _tag: "Resync" } as const) : Effect.void
              connectedBefore = true
              return Effect.zipRight(
                resync,
                Stream.runForEach(listen(channel), (payload) => PubSub.publish(hub, { _tag: "Notice", payload }))
              )
            })
            yield* listenOnce.pipe(
              Effect.tapErrorCause((cause) => Effect.logWarning(`listening on ${channel} failed; retrying`, cause)),
              Effect.retry(RELISTEN),
              Effect.forkScoped
            )
            return hub
          }),
        idleTimeToLive: Duration.seconds(30)
      })

      return {
        subscribe: (channel) =>
          Effect.gen(function*() {
            const hub = yield* RcMap.get(channels, channel)
            const subscription = yield* PubSub.subscribe(hub)
            return Stream.fromQueue(subscription)
          })
      }
    })
  )
