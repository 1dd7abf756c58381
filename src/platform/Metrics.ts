/**
 * The service's own metrics, kept in Effect's metric registry (one per process) and served at
 * `GET /metrics` in Prometheus text format. Each is recorded where the fact it counts became true: a
 * request once its response is known, a payment change after its transaction committed, a webhook
 * attempt once it was recorded. Labels take a small, fixed set of values (route patterns, not paths),
 * so the number of series stays bounded.
 */
import { Effect, Metric, MetricBoundaries, MetricLabel, type Tracer } from "effect"

const httpRequests = Metric.counter("http_server_requests_total", {
  description: "HTTP requests answered, by method, route pattern and status class",
  incremental: true
})

const httpRequestDuration = Metric.histogram(
  "http_server_request_duration_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Time from a request's arrival to its response, by method, route pattern and status class"
)

const paymentTransitions = Metric.counter("payment_status_transitions_total", {
  description: "Payment status changes by from, to and mode; a created payment counts as from=\"none\" to=\"pending\"",
  incremental: true
})

const webhookAttempts = Metric.counter("webhook_delivery_attempts_total", {
  description: "Webhook delivery attempts by outcome: delivered (2xx), retrying (another attempt is scheduled), " +
    "gave_up (no retry left), gone (410, the endpoint was disabled)",
  incremental: true
})

const outboxLag = Metric.gauge("outbox_oldest_undispatched_age_seconds", {
  description: "Age of the oldest outbox event not yet dispatched (0 when none waits, NaN when the database " +
    "did not answer); measured at each scrape"
})

/**
 * The route pattern (`/v1/payments/:id`) the router wrote on a request's span as `http.route`, if it did.
 * Middleware around the router cannot see the router's own context, but it runs inside that span; Effect
 * keeps spans (and their attributes) whether or not a tracer exports them.
 */
export const spanRouteOf = (span: Tracer.AnySpan | undefined): string | undefined => {
  const route = span?._tag === "Span" ? span.attributes.get("http.route") : undefined
  return typeof route === "string" ? route : undefined
}

/** `2xx`, `4xx`, …: the status class keeps one series per outcome kind rather than one per code. */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`

// Requests per second of the last minute, for the monitoring route's throughput (this process only).
const requestSeconds = new Array<number>(60).fill(0)
const requestCounts = new Array<number>(60).fill(0)
const countRequest = () => {
  const second = Math.floor(Date.now() / 1000)
  const slot = second % 60
  if (requestSeconds[slot] !== second) {
    requestSeconds[slot] = second
    requestCounts[slot] = 0
  }
  requestCounts[slot]!++
}
/** Requests this process answered in the last 60 seconds. */
export const requestsLastMinute = (): number => {
  const now = Math.floor(Date.now() / 1000)
  let total = 0
  for (let slot = 0; slot < 60; slot++) if (now - requestSeconds[slot]! < 60) total += requestCounts[slot]!
  return total
}

// The labels of each series seen, kept so that every update of a series passes the same array: a metric
// keeps the registry's entry per labels array it has been given, and a fresh array per update would hash
// the metric's key and look it up in the registry on every request or payment. Bounded like the series
// themselves (route patterns, not paths; statuses, not payments).
const seriesLabels = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
/** The labels of the series `key` names (its label values, unique per metric), made by `make` the first time. */
const labelsOf = (key: string, make: () => ReadonlyArray<readonly [name: string, value: string]>) => {
  let labels = seriesLabels.get(key)
  if (labels === undefined) {
    labels = make().map(([name, value]) => MetricLabel.make(name, value))
    seriesLabels.set(key, labels)
  }
  return labels
}

const requestLabelsOf = (method: string, route: string, status: number): ReadonlyArray<MetricLabel.MetricLabel> => {
  const statusLabel = statusClass(status)
  return labelsOf(`http ${method} ${route} ${statusLabel}`, () => [["method", method], ["route", route], ["status_class", statusLabel]])
}

/** Counts a request answered and its duration; synchronous, for the HTTP layer's one step per answer. */
export const unsafeRecordHttpRequest = (request: {
  readonly method: string
  readonly route: string
  readonly status: number
  readonly durationSeconds: number
}): void => {
  const labels = requestLabelsOf(request.method, request.route, request.status)
  countRequest()
  httpRequests.unsafeUpdate(1, labels)
  httpRequestDuration.unsafeUpdate(request.durationSeconds, labels)
}

/** A payment moved from `from` to `to` (`from` is `"none"` for a payment just created). */
export const recordPaymentTransition = (change: {
  readonly from: string
  readonly to: string
  readonly livemode: boolean
}): Effect.Effect<void> =>
  Effect.sync(() =>
    paymentTransitions.unsafeUpdate(
      1,
      labelsOf(
        `transition ${change.from} ${change.to} ${change.livemode}`,
        () => [["from", change.from], ["to", change.to], ["mode", change.livemode ? "live" : "test"]]
      )
    )
  )

export type WebhookAttemptOutcome = "delivered" | "retrying" | "gave_up" | "gone"

export const recordWebhookAttempt = (outcome: WebhookAttemptOutcome): Effect.Effect<void> =>
  Effect.sync(() => webhookAttempts.unsafeUpdate(1, labelsOf(`webhook ${outcome}`, () => [["outcome", outcome]])))

export const setOutboxLag = (seconds: number): Effect.Effect<void> => Metric.set(outboxLag, seconds)
