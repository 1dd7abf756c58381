/**
 * The webhook dispatcher: a cluster singleton (exactly one runner runs it; another takes over when that
 * runner goes away) that turns outbox events into signed HTTP deliveries.
 *
 * Two steps, both driven by the database so that a crash loses nothing:
 *
 * 1. Fan-out. Undispatched outbox rows, in `position` order, become one job per enabled endpoint of the
 *    event's store subscribed to its type (`webhook_jobs`). The jobs and the outbox row's
 *    `dispatched_at` commit in one statement: an event is either still in the outbox or queued for
 *    every endpoint that wants it.
 * 2. Delivery, in batches. An endpoint's oldest due jobs are read in one query and sent one after
 *    another, oldest first, over a kept-alive connection; the batch's attempts are then recorded in one
 *    statement. A job stays `pending` until its attempt is recorded, so a crash before the record sends
 *    the batch's unrecorded jobs again on restart, with the same `webhook-id` (the event id): delivery is
 *    at least once, and receivers deduplicate by that id. (A stop that is not a crash records what was
 *    answered before it lets go.)
 *
 * Ordering is strict per endpoint: a batch stops at the first attempt to be retried, and a job waiting
 * for its next retry holds back every later job of its endpoint until it succeeds or is given up (after
 * the last retry, about three days later), so a receiver never sees an older event after a newer one —
 * but for the copies a crash sends again: a batch's jobs that were answered but not yet recorded are
 * sent again after the crash, after later jobs of that batch, and the receiver drops them by their
 * webhook-id. The price of strict order: while an endpoint is failing, its later events wait too, and
 * after a long outage its backlog drains only once the head is through.
 *
 * What a batch reads is what it sends: jobs read before their endpoint was disabled or its URL changed
 * still go out to the URL read with them, as an attempt already under way would; the turn's time
 * (`turnTime`) bounds how long that can last. The destination is checked once per batch, and the batch's
 * new connections go only to the addresses that check approved.
 *
 * The dispatcher looks at the outbox and the queue when an event commits — it LISTENs for the notices
 * announced once outbox rows commit, and sent by the statements that queue jobs — and every
 * `pollInterval` besides, for anything a notice misses.
 *
 * Endpoints are independent: each has its own worker fiber, up to `concurrency` at once, and a slow or
 * dead endpoint holds only its own worker. A worker gives its slot back after `jobsPerTurn` jobs or
 * `turnTime` (and the attempt under way then), so a busy or slow endpoint cannot keep the others waiting
 * for a slot; a failing one gives it back at its first failure.
 */
import { Singleton } from "@effect/cluster"
import { Cause, Clock, Context, Duration, Effect, FiberSet, Layer, Queue, Stream } from "effect"
import type { KeyObject } from "node:crypto"
import type { WebhookEndpointId } from "../../domain/Ids.ts"
import { OUTBOX_CHANNEL } from "../platform/Outbox.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { AppConfig } from "../platform/Config.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { newId } from "../platform/Ids.ts"
import { recordWebhookAttempt, type WebhookAttemptOutcome } from "../platform/Metrics.ts"
import { currentDate } from "../platform/Time.ts"
import { cachedResolver, checkDestination, hostOf, WebhookResolver } from "./Destination.ts"
import { type AttemptOutcome, type AttemptRecord, type PendingJobRow, WEBHOOK_QUEUE_CHANNEL, WebhooksRepo } from "./Repo.ts"
import { signingKey, webhookHeaders } from "./Signing.ts"
import { makePinnedTransport, type PostOutcome } from "./Transport.ts"

export interface WebhookDeliverySettingsShape {
  /** The wait before each retry; after the last one fails the job is given up. */
  readonly retrySchedule: ReadonlyArray<Duration.Duration>
  /** Each wait is randomly up to this fraction shorter or longer, so retries of many jobs spread out. */
  readonly jitter: number
  /** How long a receiver has to answer (status line and headers) before the attempt counts as failed. */
  readonly requestTimeout: Duration.Duration
  /** How often the outbox and the queue are looked at when nothing wakes the dispatcher sooner. */
  readonly pollInterval: Duration.Duration
  /** How many endpoints are delivered to at once. */
  readonly concurrency: number
  /** Outbox rows moved into the queue per transaction. */
  readonly outboxBatch: number
  /** Jobs of one endpoint read in one query, sent one after another and recorded in one statement. */
  readonly batchSize: number
  /** Jobs one endpoint's worker delivers before it gives its slot back. */
  readonly jobsPerTurn: number
  /** How long one endpoint's worker may start new attempts before it gives its slot back. */
  readonly turnTime: Duration.Duration
}

export const DEFAULT_RETRY_SCHEDULE: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10),
  Duration.hours(14),
  Duration.hours(20),
  Duration.hours(24)
]

const defaultSettings: WebhookDeliverySettingsShape = {
  retrySchedule: DEFAULT_RETRY_SCHEDULE,
  jitter: 0.1,
  requestTimeout: Duration.seconds(15),
  pollInterval: Duration.millis(500),
  concurrency: 64,
  outboxBatch: 500,
  batchSize: 100,
  jobsPerTurn: 1000,
  turnTime: Duration.seconds(2)
}

/**
 * The dispatcher's timing, with production defaults. Tests and benchmarks provide their own (a retry
 * schedule in milliseconds, a short timeout) around the layer that starts the service.
 */
export class WebhookDeliverySettings extends Context.Reference<WebhookDeliverySettings>()(
  "webhooks/DeliverySettings",
  { defaultValue: () => defaultSettings }
) {
  static readonly layer = (overrides: Partial<WebhookDeliverySettingsShape>) =>
    Layer.succeed(WebhookDeliverySettings, { ...defaultSettings, ...overrides })
}

interface AttemptResult {
  readonly statusCode: number | null
  readonly error: string | null
}

/**
 * A transport failure in words: an answer that could not be parsed, or else the system error code where
 * there is one ("could not connect: ECONNREFUSED").
 */
const describeTransportFailure = (cause: unknown): string => {
  let current: unknown = cause
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") {
      // The HTTP parser's codes: something answered, but not HTTP.
      return code.startsWith("HPE_") ? `bad answer: ${(current as { message?: unknown }).message ?? code}` : `could not connect: ${code}`
    }
    current = (current as { cause?: unknown }).cause
  }
  return `could not connect: ${cause instanceof Error ? cause.message : String(cause)}`
}

/** What an attempt's POST came to, as its delivery record says it. */
const resultOf = (outcome: PostOutcome, timeoutLabel: string): AttemptResult => {
  switch (outcome._tag) {
    case "TimedOut":
      return { statusCode: null, error: `no answer within ${timeoutLabel}` }
    case "Failed":
      return { statusCode: null, error: describeTransportFailure(outcome.cause) }
    case "Answered": {
      const status = outcome.status
      return {
        statusCode: status,
        error: status >= 200 && status < 300
          ? null
          : status >= 300 && status < 400
          ? `answered ${status}; redirects are not followed`
          : `answered ${status}`
      }
    }
  }
}

const withJitter = (duration: Duration.Duration, jitter: number) =>
  Math.max(0, Math.round(Duration.toMillis(duration) * (1 + jitter * (2 * Math.random() - 1))))

/** The metric label of each outcome of an attempt. */
const attemptOutcomeLabel: Record<AttemptOutcome["_tag"], WebhookAttemptOutcome> = {
  Delivered: "delivered",
  RetryIn: "retrying",
  GiveUp: "gave_up",
  Gone: "gone"
}

const outcomeOf = (
  result: AttemptResult,
  attemptsBefore: number,
  settings: WebhookDeliverySettingsShape
): AttemptOutcome => {
  const status = result.statusCode
  if (status !== null && status >= 200 && status < 300) return { _tag: "Delivered" }
  if (status === 410) return { _tag: "Gone" }
  const wait = settings.retrySchedule[attemptsBefore]
  return wait === undefined ? { _tag: "GiveUp" } : { _tag: "RetryIn", millis: withJitter(wait, settings.jitter) }
}

/**
 * Whether the job of an attempt with this outcome holds back the endpoint's later jobs: one waiting for
 * its retry does, and after a 410 nothing more is sent. A delivered or given-up job is out of the way.
 */
const holdsTheQueue = (outcome: AttemptOutcome): boolean => outcome._tag === "RetryIn" || outcome._tag === "Gone"

/** How long a stopping dispatcher may take to record the attempts of the batch it was sending. */
const SETTLE_ON_STOP_TIMEOUT = Duration.seconds(2)

/**
 * How long a host's DNS answer is reused by the checks before batches. The check still runs on the reused
 * addresses, and connections still go only to the addresses it approved (see `cachedResolver`).
 */
const DNS_ANSWER_TTL = Duration.seconds(5)

/** What a batch did: how many attempts it made, and whether the endpoint may have more due right away. */
interface BatchResult {
  readonly attempts: number
  readonly more: boolean
}

/**
 * The dispatcher's loop, until its scope ends: fan-out, the endpoints due, a worker per due endpoint.
 * Run by `WebhookDispatcherLive` as the cluster's one dispatcher; exported for the tests of the loop.
 */
export const dispatchWebhooks = Effect.gen(function*() {
  const settings = yield* WebhookDeliverySettings
  const repo = yield* WebhooksRepo
  const box = yield* SecretBox
  const config = yield* AppConfig
  const feed = yield* ChangeFeed
  const resolve = cachedResolver(yield* WebhookResolver, Duration.toMillis(DNS_ANSWER_TTL))
  // Never follows a redirect (its target was not checked against the refused ranges: a 3xx is a failure),
  // and connects only to the addresses the batch's check approved. Connections are kept alive between
  // deliveries, so a batch to one endpoint usually goes over one connection.
  const transport = yield* makePinnedTransport()
  const timeoutMillis = Duration.toMillis(settings.requestTimeout)
  const timeoutLabel = Duration.format(settings.requestTimeout)
  const turnMillis = Duration.toMillis(settings.turnTime)

  /** One POST of a job's body to its endpoint's checked URL, signed with every key. */
  const post = (url: URL, keys: ReadonlyArray<KeyObject>, job: PendingJobRow): Effect.Effect<AttemptResult> =>
    Effect.gen(function*() {
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const headers = webhookHeaders(keys, job.event_id, timestamp, job.body)
      const outcome = yield* transport.post(url, headers, job.body, timeoutMillis)
      return resultOf(outcome, timeoutLabel)
    })

  /** The record of one attempt at `job`, begun at `startedAt`, and what follows from its result. */
  const attemptRecord = (endpointId: WebhookEndpointId, job: PendingJobRow, startedAt: Date, durationMs: number, result: AttemptResult) =>
    Effect.map(currentDate, (settledAt): AttemptRecord => ({
      deliveryId: newId("whd"),
      endpointId,
      jobId: job.id,
      startedAt,
      settledAt,
      statusCode: result.statusCode,
      durationMs,
      error: result.error,
      outcome: outcomeOf(result, job.attempts, settings)
    }))

  /**
   * Sends `due` (one endpoint's jobs, in order) one after another, appending each attempt's record to
   * `attempts` as soon as it is known. Stops at the first attempt that is to be retried — the jobs after
   * it wait behind it — or that disabled the endpoint, and once the turn is over.
   */
  const sendInOrder = (
    endpointId: WebhookEndpointId,
    due: ReadonlyArray<PendingJobRow>,
    turnEnds: number,
    attempts: Array<AttemptRecord>
  ) =>
    Effect.gen(function*() {
      const first = due[0]!
      // Checked before every batch, not only at registration: DNS may answer differently now. Every job
      // of the batch goes to this URL, read with the jobs.
      const destination = yield* checkDestination(first.url, config.webhookAllowPrivateNetworks, resolve)
      if (destination._tag === "Refused") {
        const error = `not sent: url ${destination.reason}`
        attempts.push(yield* attemptRecord(endpointId, first, yield* currentDate, 0, { statusCode: null, error }))
        return
      }
      // Opened and decoded once for the batch: every job of it is signed with the same secrets.
      const keys = yield* Effect.forEach(first.secrets_sealed, (sealed) => Effect.map(box.open(sealed), signingKey))
      // New connections made during the batch go only to the addresses its check approved.
      yield* transport.pinned(
        hostOf(destination.url),
        destination.addresses,
        Effect.gen(function*() {
          for (const job of due) {
            const startedAt = yield* currentDate
            const started = performance.now()
            const result = yield* post(destination.url, keys, job)
            const record = yield* attemptRecord(endpointId, job, startedAt, Math.round(performance.now() - started), result)
            attempts.push(record)
            if (holdsTheQueue(record.outcome) || performance.now() >= turnEnds) return
          }
        })
      )
    })

  /** Records the attempts at a batch's jobs together, then counts and reports them. */
  const settle = (endpointId: WebhookEndpointId, jobs: ReadonlyArray<PendingJobRow>, attempts: ReadonlyArray<AttemptRecord>) =>
    Effect.gen(function*() {
      yield* repo.recordAttempts(attempts)
      for (const [index, attempt] of attempts.entries()) {
        yield* recordWebhookAttempt(attemptOutcomeLabel[attempt.outcome._tag])
        if (attempt.outcome._tag === "Gone") {
          yield* Effect.logWarning(`webhook endpoint ${endpointId} answered 410 Gone and was disabled`)
        } else if (attempt.outcome._tag === "GiveUp") {
          yield* Effect.logWarning(`gave up delivering event ${jobs[index]!.event_id} to webhook endpoint ${endpointId}`)
        }
      }
    })

  /**
   * One batch of an endpoint: its oldest due jobs read in one query, sent in order, their attempts
   * recorded in one statement. A crash before the record sends the batch's unrecorded jobs again, with
   * the same webhook-ids (at least once); a stop (the singleton moving, a shutdown) still records what
   * was answered.
   */
  const deliverBatch = (endpointId: WebhookEndpointId, limit: number, turnEnds: number) =>
    Effect.gen(function*() {
      const pending = yield* repo.pendingJobs(endpointId, yield* currentDate, limit)
      // Only the leading due jobs: one waiting for its retry holds back every job after it (strict order).
      const firstNotDue = pending.findIndex((job) => !job.due || !job.enabled)
      const due = firstNotDue === -1 ? pending : pending.slice(0, firstNotDue)
      if (due.length === 0) return { attempts: 0, more: false } satisfies BatchResult
      const attempts: Array<AttemptRecord> = []
      yield* sendInOrder(endpointId, due, turnEnds, attempts).pipe(
        Effect.onInterrupt(() =>
          settle(endpointId, due, attempts).pipe(Effect.timeout(SETTLE_ON_STOP_TIMEOUT), Effect.ignore)
        )
      )
      yield* settle(endpointId, due, attempts)
      const last = attempts.at(-1)
      return { attempts: attempts.length, more: last !== undefined && !holdsTheQueue(last.outcome) } satisfies BatchResult
    })

  /**
   * An endpoint's turn: batches until nothing is due, an attempt is to be retried (or disabled the
   * endpoint), or the turn's jobs or time are used up; answers whether it stopped only because its turn
   * was up.
   */
  const drain = (endpointId: WebhookEndpointId) =>
    Effect.gen(function*() {
      const turnEnds = performance.now() + turnMillis
      let attempted = 0
      while (attempted < settings.jobsPerTurn) {
        const batch = yield* deliverBatch(endpointId, Math.min(settings.batchSize, settings.jobsPerTurn - attempted), turnEnds)
        attempted += batch.attempts
        if (!batch.more) return false
        if (performance.now() >= turnEnds) return true
      }
      return true
    })

  const busy = new Set<WebhookEndpointId>()
  const workers = yield* FiberSet.make()
  // Wakes the loop before its poll interval is up: an event committed, or a worker gave its slot back
  // with work left over. Sliding, so a burst of wake-ups is one more look.
  const wake = yield* Queue.sliding<void>(1)
  // Endpoints whose last turn was used up with work left: they queue behind due endpoints that have not
  // just had a turn, in the order their turns ended. Otherwise an endpoint with a long backlog, whose
  // oldest job is always the oldest, would win every free slot back at once.
  const servedTurn = new Set<WebhookEndpointId>()
  // Counts the loop's looks. A look that found an endpoint busy skipped it; if one happened while a
  // worker ran, the worker's last read may predate a job that look was for, so the worker wakes the loop
  // once more when it ends.
  let looks = 0
  // Whether the next tick looks for due endpoints: only when a job may have become due since the last
  // look — the fan-out queued one, one was queued directly (a test event, a resend), a worker gave its
  // slot back with work left, or the poll came (retries come due with time). Every committed outbox
  // event wakes the loop, and most events of most stores queue no job: the look cost each of them a
  // second statement, at a steady 200 events a second about half a millisecond of CPU per event.
  let lookForDue = true

  const startWorker = (endpointId: WebhookEndpointId) => {
    busy.add(endpointId)
    const looksAtStart = looks
    return FiberSet.run(
      workers,
      drain(endpointId).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(
            Cause.isInterruptedOnly(cause)
              ? Effect.void
              : Effect.logWarning(`webhook deliveries to endpoint ${endpointId} failed; retrying at the next poll`, cause),
            false
          )
        ),
        Effect.ensuring(Effect.sync(() => busy.delete(endpointId))),
        // Only once the endpoint is free again, so the woken loop can pick it up at once.
        Effect.flatMap((turnUsedUp) => {
          servedTurn.delete(endpointId)
          if (turnUsedUp) servedTurn.add(endpointId)
          if (!turnUsedUp && looks === looksAtStart) return Effect.void
          lookForDue = true
          return Queue.offer(wake, undefined)
        })
      )
    )
  }

  const tick = Effect.gen(function*() {
    // Everything waiting in the outbox first, so each endpoint's queue holds its events in order.
    for (;;) {
      const moved = yield* repo.fanOut(settings.outboxBatch, yield* currentDate)
      if (moved.jobs > 0) lookForDue = true
      // A full batch: there may be more.
      if (moved.events < settings.outboxBatch) break
    }
    if (!lookForDue) return
    lookForDue = false
    looks++
    const free = settings.concurrency - busy.size
    if (free <= 0) return
    const due = yield* repo.dueEndpoints([...busy], free + servedTurn.size, yield* currentDate)
    const waiting = new Set(due)
    // One that is no longer due (waiting for a retry, disabled, deleted) has no turn to queue for.
    for (const endpointId of servedTurn) if (!waiting.has(endpointId)) servedTurn.delete(endpointId)
    const fresh = due.filter((endpointId) => !servedTurn.has(endpointId))
    // A set keeps insertion order, which is the order the turns ended in.
    const again = [...servedTurn]
    for (const endpointId of [...fresh, ...again].slice(0, free)) yield* startWorker(endpointId)
  })

  // Wake on commit: an outbox event is announced once it commits, and a job queued directly (a test
  // event, a resend) by the statement that queues it. The poll stays, for anything a notice misses (a
  // listener reconnecting, a process that died between a commit and its notice, a row written some other way).
  const outboxNotices = yield* feed.subscribe(OUTBOX_CHANNEL)
  yield* Stream.runForEach(outboxNotices, () => Queue.offer(wake, undefined)).pipe(Effect.forkScoped)
  const queueNotices = yield* feed.subscribe(WEBHOOK_QUEUE_CHANNEL)
  yield* Stream.runForEach(queueNotices, () =>
    Effect.suspend(() => {
      lookForDue = true
      return Queue.offer(wake, undefined)
    })).pipe(Effect.forkScoped)

  yield* Effect.logInfo("webhook dispatcher started")
  while (true) {
    yield* tick.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("webhook dispatch failed; retrying at the next poll", cause))
    )
    const woken = yield* Effect.raceFirst(Effect.as(Effect.sleep(settings.pollInterval), false), Effect.as(Queue.take(wake), true))
    if (!woken) lookForDue = true
  }
})

export const WebhookDispatcherLive = Singleton.make("webhooks/dispatcher", Effect.scoped(dispatchWebhooks)).pipe(
  Layer.provide([WebhooksRepo.Default, SecretBox.Default])
)
