/**
 * Live status streams (`GET /checkout/{id}/events`), many thousands per process: one plain Node
 * `Readable` per connection, fed from one process-wide subscription to the payment change notices.
 *
 * Each notice is parsed once, as it is read (a function call: the process hears every payment's change),
 * and handed to the streams that follow its payment (a map from payment id to streams); one timer pings
 * every stream; a stream is forgotten when it ends or its client goes
 * away. An Effect stream pipeline per connection (a PubSub subscription, a merge with a ticker, the
 * frames' fibers) held ~200 KiB per connection; this holds a small object and the frames in flight.
 *
 * Order and completeness are those of API.md "Live status": a stream is registered before the current
 * status is read, so no change falls between the two; a frame goes out only for a version newer than the
 * last one sent (or than `Last-Event-ID`), so a resync or a duplicate notice repeats nothing; after a
 * terminal status the stream ends. Every followed payment is also read again with each ping (a batch of
 * them in one statement): a notice lost with the process that made the change, between its commit and
 * the notice's send (platform/ChangeFeed.ts), is late by a ping interval, never missing.
 */
import * as Sse from "@effect/experimental/Sse"
import { Array as Arr, Duration, Effect, Option, Runtime, Schedule } from "effect"
import { Readable } from "node:stream"
import type { PaymentId } from "../../domain/Ids.ts"
import { type PaymentStatus, TerminalStatuses } from "../../domain/Payments.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { AppConfig } from "../platform/Config.ts"
import { followPaymentChanges, type PaymentChange, paymentChangeOf } from "../payments/Changes.ts"
import { PaymentReads } from "../payments/Reads.ts"
import { traced } from "../platform/Traced.ts"

/** After these the stream has nothing more to say (refunds come later, but the checkout is over). */
const TERMINAL: ReadonlySet<PaymentStatus> = new Set(TerminalStatuses)

const RECONNECT_AFTER = Duration.millis(3000)
/** Followed payments are read again this many to a statement. */
const REREAD_BATCH = 500

/** One Server-Sent Events frame (API.md "Live status"). */
export const statusFrame = (change: PaymentChange): string =>
  Sse.encoder.write({
    _tag: "Event",
    id: String(change.version),
    event: "payment.status",
    data: JSON.stringify({
      id: change.id,
      status: change.status,
      amount: change.amount,
      currency: change.currency,
      amount_refunded: change.amount_refunded
    })
  })

/** How soon a client reconnects when the connection drops: `retry: 3000`. */
const RECONNECT_FRAME = Sse.encoder.write(new Sse.Retry({ duration: RECONNECT_AFTER, lastEventId: undefined }))

/** A comment line that keeps proxies from closing an idle stream; Sse's encoder writes events and retries only. */
const PING = ": ping\n\n"

/** One open stream: what it has sent, and its body. */
interface Watcher {
  readonly paymentId: PaymentId
  lastSent: number
  readonly body: Readable
}

export class LiveStatus extends Effect.Service<LiveStatus>()("checkout/LiveStatus", {
  scoped: Effect.gen(function*() {
    const feed = yield* ChangeFeed
    const payments = yield* PaymentReads
    // SSE_PING_SECONDS: a ping keeps proxies from closing a quiet stream, and brings a lost notice's change.
    const pingInterval = Duration.seconds((yield* AppConfig).ssePingSeconds)
    const watchersByPayment = new Map<PaymentId, Set<Watcher>>()

    const forget = (watcher: Watcher) => {
      const watchers = watchersByPayment.get(watcher.paymentId)
      if (watchers === undefined) return
      watchers.delete(watcher)
      if (watchers.size === 0) watchersByPayment.delete(watcher.paymentId)
    }

    const end = (watcher: Watcher) => {
      forget(watcher)
      watcher.body.push(null)
    }

    /** Sends `change` if it is news to this stream; ends the stream after a terminal status. */
    const deliver = (watcher: Watcher, change: PaymentChange) => {
      if (watcher.body.destroyed || watcher.body.readableEnded) return
      if (change.version > watcher.lastSent) {
        watcher.lastSent = change.version
        watcher.body.push(statusFrame(change))
        if (TERMINAL.has(change.status)) end(watcher)
      }
    }

    const readCurrent = (paymentId: PaymentId) =>
      Effect.map(payments.paymentById(paymentId), Option.map(paymentChangeOf))

    /**
     * Every followed payment read again and sent where it is news: after a reconnect of the listener
     * (notices may have been lost meanwhile) and with every ping.
     */
    const rereadAll = Effect.suspend(() =>
      Effect.forEach(
        Arr.chunksOf([...watchersByPayment.keys()], REREAD_BATCH),
        (ids) =>
          Effect.map(payments.paymentsByIds(ids), (rows) => {
            for (const row of rows) {
              const change = paymentChangeOf(row)
              watchersByPayment.get(row.id)?.forEach((watcher) => deliver(watcher, change))
            }
          }),
        { discard: true }
      )
    ).pipe(Effect.catchAllCause((cause) => Effect.logWarning("re-reading followed payments failed", cause)))

    // Called as each notice is read; a resync's re-read runs on a fiber of its own.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    yield* followPaymentChanges(feed, (change) => watchersByPayment.has(change.id), (notice) => {
      if (notice._tag === "Resync") runFork(rereadAll)
      else watchersByPayment.get(notice.change.id)?.forEach((watcher) => deliver(watcher, notice.change))
    })

    const pinger = setInterval(() => {
      for (const watchers of watchersByPayment.values()) for (const watcher of watchers) watcher.body.push(PING)
    }, Duration.toMillis(pingInterval))
    pinger.unref()
    yield* Effect.forkScoped(Effect.schedule(rereadAll, Schedule.spaced(pingInterval)))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        clearInterval(pinger)
        for (const watchers of [...watchersByPayment.values()]) for (const watcher of [...watchers]) end(watcher)
      })
    )

    /**
     * The live status of the payment `paymentId` as the body of an SSE response: the reconnect delay at
     * once, the current status (unless `lastEventId` says the client has it), then one frame per change
     * and a ping every SSE_PING_SECONDS (15 s), until a terminal status. None when there is no such
     * payment: the one read of the current status also tells whether it exists.
     */
    const open = traced("LiveStatus.open")(function*(paymentId: PaymentId, lastEventId: number | undefined) {
      const watcher: Watcher = {
        paymentId,
        lastSent: lastEventId ?? 0,
        // Frames are pushed as they come; the client going away destroys the body, which forgets it.
        body: new Readable({
          read() {},
          destroy(error, callback) {
            forget(watcher)
            callback(error)
          }
        })
      }
      // Registered before the current status is read, so no change falls between the two.
      const watchers = watchersByPayment.get(paymentId) ?? new Set<Watcher>()
      watchersByPayment.set(paymentId, watchers.add(watcher))
      // Something goes out at once, even to an up-to-date client: the response starts, and the client
      // learns how soon to reconnect if the connection drops.
      watcher.body.push(RECONNECT_FRAME)
      const current = yield* readCurrent(paymentId).pipe(Effect.onError(() => Effect.sync(() => watcher.body.destroy())))
      if (Option.isNone(current)) {
        watcher.body.destroy()
        return Option.none<Readable>()
      }
      deliver(watcher, current.value)
      // A client that has the terminal status already gets the reconnect delay and the end.
      if (TERMINAL.has(current.value.status)) end(watcher)
      return Option.some(watcher.body)
    })

    return { open } as const
  }),
  dependencies: [PaymentReads.Default]
}) {}
