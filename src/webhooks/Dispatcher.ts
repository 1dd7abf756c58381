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
 * 2. Delivery. Each endpoint's jobs go out one at a time, oldest first. A job stays `pending` until an
 *    attempt is recorded, so a crash between the POST and its record sends the event again on restart,
 *    with the same `webhook-id` (the event id): delivery is at least once, and receivers deduplicate by
 *    that id.
 *
 * Ordering is strict per endpoint: a job waiting for its next retry holds back every later job of its
 * endpoint until it succeeds or is given up (after the last retry, about three days later), so a
 * receiver never sees an older event after a newer one. The price: while an endpoint is failing, its
 * later events wait too, and after a long outage its backlog drains one event at a time.
 *
 * Endpoints are independent: each has its own worker fiber, up to `concurrency` at once, and a slow or
 * dead endpoint holds only its own worker (for at most the request timeout per attempt). A worker
 * delivers at most `jobsPerTurn` jobs before giving its slot back, so a busy endpoint cannot keep the
 * others waiting for a slot.
 */
import { Singleton } from "@effect/cluster"
import { HttpClientRequest } from "@effect/platform"
import { Cause, Clock, Context, Duration, Effect, FiberSet, Layer, Option, Queue, Stream } from "effect"
import type { WebhookEndpointId } from "../../domain/Ids.ts"
import { AppConfig } from "../platform/Config.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { newId } from "../platform/Ids.ts"
import { recordWebhookAttempt, type WebhookAttemptOutcome } from "../platform/Metrics.ts"
import { currentDate } from "../platform/Time.ts"
import { checkDestination, hostOf, WebhookResolver } from "./Destination.ts"
import { type AttemptOutcome, type NextJobRow, WebhooksRepo } from "./Repo.ts"
import { webhookHeaders } from "./Signing.ts"
import { makePinnedTransport } from "./Transport.ts"

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
  /** Jobs one endpoint's worker delivers before it gives its slot back. */
  readonly jobsPerTurn: number
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
  concurrency: 32,
  outboxBatch: 500,
  jobsPerTurn: 100
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

/** What is kept of a response body: enough to free the connection for reuse, no more. */
const MAX_DRAINED_BYTES = 64 * 1024
const DRAIN_TIMEOUT = Duration.seconds(1)

interface AttemptResult {
  readonly statusCode: number | null
  readonly error: string | null
}

/** A transport failure in words: the system error code where there is one ("ECONNREFUSED"). */
const describeTransportFailure = (cause: unknown): string => {
  let current: unknown = cause
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") return `could not connect: ${code}`
    current = (current as { cause?: unknown }).cause
  }
  return `could not connect: ${cause instanceof Error ? cause.message : String(cause)}`
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

const run = Effect.gen(function*() {
  const settings = yield* WebhookDeliverySettings
  const repo = yield* WebhooksRepo
  const box = yield* SecretBox
  const config = yield* AppConfig
  const resolve = yield* WebhookResolver
  // Never follows a redirect (its target was not checked against the refused ranges: a 3xx is a failure),
  // and connects only to the addresses each attempt's check approved.
  const transport = yield* makePinnedTransport()
  const timeoutLabel = Duration.format(settings.requestTimeout)

  /** One POST of a job's body to its endpoint, signed with every active secret. */
  const send = (job: NextJobRow): Effect.Effect<AttemptResult> =>
    Effect.gen(function*() {
      // Checked before every attempt, not only at registration: DNS may answer differently now.
      const destination = yield* checkDestination(job.url, config.webhookAllowPrivateNetworks, resolve)
      if (destination._tag === "Refused") return { statusCode: null, error: `not sent: url ${destination.reason}` }
      const secrets = yield* Effect.forEach(job.secrets_sealed, box.open)
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const request = HttpClientRequest.post(destination.url).pipe(
        HttpClientRequest.setHeaders(webhookHeaders(secrets, job.event_id, timestamp, job.body)),
        HttpClientRequest.bodyText(job.body, "application/json")
      )
      // The connection (if a new one is needed) is made while the host is pinned to the checked addresses.
      const pinnedRequest = transport.pinned(hostOf(destination.url), destination.addresses, transport.client.execute(request))
      return yield* pinnedRequest.pipe(
        Effect.timeout(settings.requestTimeout),
        Effect.flatMap((response) =>
          // Read (a bounded part of) the body so the connection can be reused; what it says does not matter.
          response.stream.pipe(
            Stream.runFoldWhile(0, (read) => read < MAX_DRAINED_BYTES, (read, chunk) => read + chunk.length),
            Effect.timeout(DRAIN_TIMEOUT),
            Effect.ignore,
            Effect.as<AttemptResult>({
              statusCode: response.status,
              error: response.status >= 200 && response.status < 300
                ? null
                : response.status >= 300 && response.status < 400
                ? `answered ${response.status}; redirects are not followed`
                : `answered ${response.status}`
            })
          )
        ),
        Effect.catchTags({
          TimeoutException: () => Effect.succeed({ statusCode: null, error: `no answer within ${timeoutLabel}` }),
          RequestError: (error) =>
            Effect.succeed({
              statusCode: null,
              error: error.reason === "Transport" ? describeTransportFailure(error.cause) : `request failed: ${error.message}`
            }),
          ResponseError: (error) => Effect.succeed({ statusCode: null, error: `bad answer: ${error.message}` })
        })
      )
    })

  /** Delivers one job and records the attempt and what follows from it, in one transaction. */
  const deliver = (endpointId: WebhookEndpointId, job: NextJobRow) =>
    Effect.gen(function*() {
      const startedAt = yield* currentDate
      const started = performance.now()
      const result = yield* send(job)
      const durationMs = Math.round(performance.now() - started)
      const outcome = outcomeOf(result, job.attempts, settings)
      yield* repo.recordAttempt({
        deliveryId: newId("whd"),
        endpointId,
        jobId: job.id,
        startedAt,
        settledAt: yield* currentDate,
        statusCode: result.statusCode,
        durationMs,
        error: result.error,
        outcome
      })
      yield* recordWebhookAttempt(attemptOutcomeLabel[outcome._tag])
      if (outcome._tag === "Gone") {
        yield* Effect.logWarning(`webhook endpoint ${endpointId} answered 410 Gone and was disabled`)
      } else if (outcome._tag === "GiveUp") {
        yield* Effect.logWarning(`gave up delivering event ${job.event_id} to webhook endpoint ${endpointId}`)
      }
    })

  /** Delivers an endpoint's due jobs in order; answers whether it stopped only because its turn was up. */
  const drain = (endpointId: WebhookEndpointId) =>
    Effect.gen(function*() {
      for (let delivered = 0; delivered < settings.jobsPerTurn; delivered++) {
        const next = yield* repo.nextJob(endpointId, yield* currentDate)
        // Nothing waiting, or the oldest job waits for its retry: later jobs wait behind it (strict order).
        if (Option.isNone(next) || !next.value.due || !next.value.enabled) return false
        yield* deliver(endpointId, next.value)
      }
      return true
    })

  const busy = new Set<WebhookEndpointId>()
  const workers = yield* FiberSet.make()
  // Wakes the loop before its poll interval is up: a worker gave its slot back with work left over.
  const wake = yield* Queue.sliding<void>(1)

  const startWorker = (endpointId: WebhookEndpointId) => {
    busy.add(endpointId)
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
        Effect.flatMap((turnUsedUp) => (turnUsedUp ? Queue.offer(wake, undefined) : Effect.void))
      )
    )
  }

  const tick = Effect.gen(function*() {
    // Everything waiting in the outbox first, so each endpoint's queue holds its events in order.
    while ((yield* repo.fanOut(settings.outboxBatch, yield* currentDate)) === settings.outboxBatch) {
      // A full batch: there may be more.
    }
    const free = settings.concurrency - busy.size
    if (free <= 0) return
    const due = yield* repo.dueEndpoints([...busy], free, yield* currentDate)
    for (const endpointId of due) yield* startWorker(endpointId)
  })

  yield* Effect.logInfo("webhook dispatcher started")
  while (true) {
    yield* tick.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("webhook dispatch failed; retrying at the next poll", cause))
    )
    yield* Effect.raceFirst(Effect.sleep(settings.pollInterval), Queue.take(wake))
  }
})

export const WebhookDispatcherLive = Singleton.make("webhooks/dispatcher", Effect.scoped(run)).pipe(
  Layer.provide([WebhooksRepo.Default, SecretBox.Default])
)
