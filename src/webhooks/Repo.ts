/**
 * SQL of webhooks: endpoints and their sealed secrets for the service, and the delivery queue for the
 * dispatcher. Secrets come and go sealed; only the service and the dispatcher open them.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { EventId, StoreId, WebhookDeliveryId, WebhookEndpointId } from "../../domain/Ids.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { addMillis } from "../platform/Time.ts"
import { traced } from "../platform/Traced.ts"

export const EndpointRow = Schema.Struct({
  id: WebhookEndpointId,
  store_id: StoreId,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  enabled: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type EndpointRow = typeof EndpointRow.Type

export const DeliveryRow = Schema.Struct({
  id: WebhookDeliveryId,
  endpoint_id: WebhookEndpointId,
  event_id: EventId,
  event_type: Schema.String,
  attempt: Schema.Number,
  status_code: Schema.NullOr(Schema.Number),
  duration_ms: Schema.Number,
  error: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})
export type DeliveryRow = typeof DeliveryRow.Type

/** A waiting job of an endpoint, with what it takes to deliver it. */
export const PendingJobRow = Schema.Struct({
  id: Schema.String,
  event_id: EventId,
  event_type: Schema.String,
  body: Schema.String,
  attempts: Schema.Number,
  due: Schema.Boolean,
  url: Schema.String,
  enabled: Schema.Boolean,
  secrets_sealed: Schema.Array(Schema.String)
})
export type PendingJobRow = typeof PendingJobRow.Type

/** How an attempt ended, for the job: done, to be tried again after a delay, or over. */
export type AttemptOutcome =
  | { readonly _tag: "Delivered" }
  | { readonly _tag: "RetryIn"; readonly millis: number }
  | { readonly _tag: "GiveUp" }
  /** The receiver answered 410 Gone: the endpoint is disabled and its waiting jobs dropped. */
  | { readonly _tag: "Gone" }

export interface AttemptRecord {
  readonly deliveryId: WebhookDeliveryId
  readonly endpointId: WebhookEndpointId
  readonly jobId: string
  readonly startedAt: Date
  /** When the attempt ended: a retry's wait counts from here. */
  readonly settledAt: Date
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly outcome: AttemptOutcome
}

/**
 * The LISTEN/NOTIFY channel on which a job queued outside the outbox (a test event, a resend) is announced
 * with its endpoint's id, so the dispatcher starts on it at once rather than at its next poll.
 */
export const WEBHOOK_QUEUE_CHANNEL = "webhook_jobs"

const ENDPOINT_COLUMNS = "id, store_id, url, events, enabled, created_at, updated_at"
const DELIVERY_COLUMNS = "id, endpoint_id, event_id, event_type, attempt, status_code, duration_ms, error, created_at"

export class WebhooksRepo extends Effect.Service<WebhooksRepo>()("webhooks/WebhooksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Times that rules compare (secret windows, when a job is due, retention of finished jobs and
    // dispatched events) are the service's Clock, passed in as `now`, never the database's now(): so the
    // rules are tested under TestClock. Nodes keep NTP time; the shortest wait is seconds.
    const endpointColumns = sql.literal(ENDPOINT_COLUMNS)
    const deliveryColumns = sql.literal(DELIVERY_COLUMNS)

    // -------------------------------------------------------------------------------------------
    // Endpoints
    // -------------------------------------------------------------------------------------------

    const insertEndpointRow = SqlSchema.single({
      Request: Schema.Struct({
        id: WebhookEndpointId,
        storeId: StoreId,
        url: Schema.String,
        events: Schema.Array(Schema.String),
        enabled: Schema.Boolean
      }),
      Result: EndpointRow,
      execute: (endpoint) =>
        sql`
          INSERT INTO webhook_endpoints (id, store_id, url, events, enabled)
          VALUES (${endpoint.id}, ${endpoint.storeId}, ${endpoint.url}, ${endpoint.events}::text[], ${endpoint.enabled})
          RETURNING ${endpointColumns}`
    })

    const insertEndpoint = traced("WebhooksRepo.insertEndpoint")((endpoint: {
      readonly id: WebhookEndpointId
      readonly storeId: StoreId
      readonly url: string
      readonly events: ReadonlyArray<string>
      readonly enabled: boolean
      readonly secretSealed: string
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        const inserted = yield* insertEndpointRow(endpoint)
        yield* sql`
          INSERT INTO webhook_endpoint_secrets (endpoint_id, secret_sealed)
          VALUES (${endpoint.id}, ${endpoint.secretSealed})`
        return inserted
      })).pipe(
        Effect.catchTag("NoSuchElementException", () => Effect.dieMessage("INSERT … RETURNING gave no row")),
        Effect.orDie
      )
    )

    const findEndpointRow = SqlSchema.findOne({
      Request: WebhookEndpointId,
      Result: EndpointRow,
      execute: (id) => sql`SELECT ${endpointColumns} FROM webhook_endpoints WHERE id = ${id}`
    })
    const findEndpoint = traced("WebhooksRepo.findEndpoint")(findEndpointRow, Effect.orDie)

    const endpointsOfStore = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, ...PageRequest.fields }),
      Result: EndpointRow,
      execute: ({ limit, position, storeId }) =>
        sql`
          SELECT ${endpointColumns} FROM webhook_endpoints
          WHERE store_id = ${storeId} AND NOT connector AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })
    /** One page of a store's endpoints, newest first; `limit + 1` rows so the caller can tell if there is more. */
    const listEndpoints = traced("WebhooksRepo.listEndpoints")(
      (storeId: StoreId, limit: number, after: PagePosition | undefined) =>
        endpointsOfStore({ storeId, limit, position: after }).pipe(Effect.orDie)
    )

    const updateEndpointRow = SqlSchema.findOne({
      Request: Schema.Struct({
        id: WebhookEndpointId,
        url: Schema.optional(Schema.String),
        events: Schema.optional(Schema.Array(Schema.String)),
        enabled: Schema.optional(Schema.Boolean),
        now: Schema.DateFromSelf
      }),
      Result: EndpointRow,
      execute: (changes) =>
        sql`
          UPDATE webhook_endpoints SET
            url = COALESCE(${changes.url ?? null}, url),
            events = COALESCE(${changes.events ?? null}::text[], events),
            enabled = COALESCE(${changes.enabled ?? null}::boolean, enabled),
            updated_at = ${changes.now}
          WHERE id = ${changes.id}
          RETURNING ${endpointColumns}`
    })

    /**
     * Changes the fields given, at `now`. Disabling drops the endpoint's waiting jobs in the same
     * transaction, so a later enable does not replay a backlog from the time it was off.
     */
    const updateEndpoint = traced("WebhooksRepo.updateEndpoint")((id: WebhookEndpointId, changes: {
      readonly url?: string | undefined
      readonly events?: ReadonlyArray<string> | undefined
      readonly enabled?: boolean | undefined
    }, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const updated = yield* updateEndpointRow({ id, ...changes, now })
        if (Option.isSome(updated) && !updated.value.enabled) yield* cancelWaitingJobs(id, now)
        return updated
      })).pipe(Effect.orDie)
    )

    // A step of the transactions that disable an endpoint; the caller decides what its failure means.
    const cancelWaitingJobs = (endpointId: WebhookEndpointId, now: Date) =>
      sql`
        UPDATE webhook_jobs SET status = 'cancelled', updated_at = ${now}
        WHERE endpoint_id = ${endpointId} AND status = 'pending'`

    const deleteEndpointRow = SqlSchema.findOne({
      Request: WebhookEndpointId,
      Result: Schema.Struct({ id: WebhookEndpointId }),
      execute: (id) => sql`DELETE FROM webhook_endpoints WHERE id = ${id} RETURNING id`
    })
    /** Deletes the endpoint with its secrets, jobs and delivery records; false when there was none. */
    const deleteEndpoint = traced("WebhooksRepo.deleteEndpoint")((id: WebhookEndpointId) =>
      deleteEndpointRow(id).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    const findActiveSecret = SqlSchema.findOne({
      Request: WebhookEndpointId,
      Result: Schema.Struct({ secret_sealed: Schema.String }),
      execute: (endpointId) =>
        sql`
          SELECT secret_sealed FROM webhook_endpoint_secrets
          WHERE endpoint_id = ${endpointId} AND expires_at IS NULL`
    })
    /** The sealed secret that new rotations replace and reveal shows. */
    const activeSecret = traced("WebhooksRepo.activeSecret")((endpointId: WebhookEndpointId) =>
      findActiveSecret(endpointId).pipe(Effect.map(Option.map((row) => row.secret_sealed)), Effect.orDie)
    )

    const lockEndpoint = SqlSchema.findOne({
      Request: WebhookEndpointId,
      Result: EndpointRow,
      execute: (endpointId) => sql`SELECT ${endpointColumns} FROM webhook_endpoints WHERE id = ${endpointId} FOR UPDATE`
    })

    /**
     * Makes `secretSealed` the active secret at `now`; the one it replaces keeps signing for
     * `overlapMillis`. Secrets whose window has passed are removed on the way. The endpoint row is locked
     * first, so two racing rotations apply one after the other and each leaves exactly one active secret.
     */
    const rotateSecret = traced("WebhooksRepo.rotateSecret")(
      (endpointId: WebhookEndpointId, secretSealed: string, overlapMillis: number, now: Date) =>
        sql.withTransaction(Effect.gen(function*() {
          const endpoint = yield* lockEndpoint(endpointId)
          if (Option.isNone(endpoint)) return endpoint
          yield* sql`
            DELETE FROM webhook_endpoint_secrets
            WHERE endpoint_id = ${endpointId} AND expires_at IS NOT NULL AND expires_at <= ${now}`
          yield* sql`
            UPDATE webhook_endpoint_secrets SET expires_at = ${addMillis(now, overlapMillis)}
            WHERE endpoint_id = ${endpointId} AND expires_at IS NULL`
          yield* sql`
            INSERT INTO webhook_endpoint_secrets (endpoint_id, secret_sealed)
            VALUES (${endpointId}, ${secretSealed})`
          return endpoint
        })).pipe(Effect.orDie)
    )

    /** Marks the endpoint as a connector's, in the transaction that makes the connector. */
    const markConnectorEndpoint = traced("WebhooksRepo.markConnectorEndpoint")((endpointId: WebhookEndpointId) =>
      sql`UPDATE webhook_endpoints SET connector = true WHERE id = ${endpointId}`.pipe(Effect.asVoid, Effect.orDie)
    )

    // -------------------------------------------------------------------------------------------
    // Deliveries
    // -------------------------------------------------------------------------------------------

    const deliveriesOfEndpoint = SqlSchema.findAll({
      Request: Schema.Struct({ endpointId: WebhookEndpointId, ...PageRequest.fields }),
      Result: DeliveryRow,
      execute: ({ endpointId, limit, position }) =>
        sql`
          SELECT ${deliveryColumns} FROM webhook_deliveries
          WHERE endpoint_id = ${endpointId} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })
    const listDeliveries = traced("WebhooksRepo.listDeliveries")(
      (endpointId: WebhookEndpointId, limit: number, after: PagePosition | undefined) =>
        deliveriesOfEndpoint({ endpointId, limit, position: after }).pipe(Effect.orDie)
    )

    // The events of a payment name it as their object (payment.*) or as the refunded payment (refund.*).
    // Read from the queued bodies of the store's endpoints, newest first; a payment has a handful.
    const deliveriesOfPaymentRows = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, paymentId: Schema.String, limit: Schema.Number }),
      Result: DeliveryRow,
      execute: ({ limit, paymentId, storeId }) =>
        sql`
          SELECT ${sql.literal(DELIVERY_COLUMNS.split(", ").map((column) => `d.${column}`).join(", "))} FROM webhook_deliveries d JOIN webhook_jobs j ON j.id = d.job_id
          WHERE d.endpoint_id IN (SELECT id FROM webhook_endpoints WHERE store_id = ${storeId})
            AND (j.body::jsonb #>> '{data,object,id}' = ${paymentId} OR j.body::jsonb #>> '{data,object,payment_id}' = ${paymentId})
          ORDER BY d.created_at DESC, d.id DESC
          LIMIT ${limit}`
    })
    const deliveriesOfPayment = traced("WebhooksRepo.deliveriesOfPayment")(
      (storeId: StoreId, paymentId: string, limit: number) => deliveriesOfPaymentRows({ storeId, paymentId, limit }).pipe(Effect.orDie)
    )

    /** The endpoint's first attempt at delivering the event, if there was one yet (a connector's test waits for it). */
    const firstDeliveryOfEvent = traced("WebhooksRepo.firstDeliveryOfEvent")((endpointId: WebhookEndpointId, eventId: EventId) =>
      Effect.map(
        sql<{ id: string; status_code: number | null; error: string | null; created_at: Date }>`
          SELECT id, status_code, error, created_at FROM webhook_deliveries
          WHERE endpoint_id = ${endpointId} AND event_id = ${eventId} ORDER BY created_at LIMIT 1`,
        (rows) => Option.fromNullable(rows[0])
      ).pipe(Effect.orDie)
    )

    const findDelivery = traced("WebhooksRepo.findDelivery")(
      SqlSchema.findOne({
        Request: WebhookDeliveryId,
        Result: DeliveryRow,
        execute: (id) => sql`SELECT ${deliveryColumns} FROM webhook_deliveries WHERE id = ${id}`
      }),
      Effect.orDie
    )

    // A queued job is due at once: its first attempt waits for nothing but the jobs ahead of it. The
    // notice, sent in the statement that queues it, wakes the dispatcher when the job commits.
    const insertJob = SqlSchema.void({
      Request: Schema.Struct({
        endpointId: WebhookEndpointId,
        eventId: EventId,
        eventType: Schema.String,
        body: Schema.String,
        now: Schema.DateFromSelf
      }),
      execute: (job) =>
        sql`
          WITH queued AS (
            INSERT INTO webhook_jobs (endpoint_id, event_id, event_type, body, next_attempt_at, created_at, updated_at)
            VALUES (${job.endpointId}, ${job.eventId}, ${job.eventType}, ${job.body}, ${job.now}, ${job.now}, ${job.now})
            RETURNING endpoint_id
          )
          SELECT pg_notify(${WEBHOOK_QUEUE_CHANNEL}, endpoint_id) FROM queued`
    })
    /** Queues one event for one endpoint at `now`, behind whatever is waiting for it; answers the body queued. */
    const enqueue = traced("WebhooksRepo.enqueue")((job: {
      readonly endpointId: WebhookEndpointId
      readonly eventId: EventId
      readonly eventType: string
      readonly body: string
    }, now: Date) => insertJob({ ...job, now }).pipe(Effect.as(job.body), Effect.orDie))

    const requeueDelivery = SqlSchema.findOne({
      Request: Schema.Struct({ deliveryId: WebhookDeliveryId, now: Schema.DateFromSelf }),
      Result: Schema.Struct({ body: Schema.String }),
      execute: ({ deliveryId, now }) =>
        sql`
          WITH queued AS (
            INSERT INTO webhook_jobs (endpoint_id, event_id, event_type, body, next_attempt_at, created_at, updated_at)
            SELECT j.endpoint_id, j.event_id, j.event_type, j.body, ${now}, ${now}, ${now}
            FROM webhook_deliveries d JOIN webhook_jobs j ON j.id = d.job_id
            WHERE d.id = ${deliveryId}
            RETURNING endpoint_id, body
          )
          SELECT body, pg_notify(${WEBHOOK_QUEUE_CHANNEL}, endpoint_id)::text AS notified FROM queued`
    })
    /**
     * Queues the event of a delivery again for its endpoint at `now`, with the very same body; None if
     * it is gone.
     */
    const enqueueAgain = traced("WebhooksRepo.enqueueAgain")((deliveryId: WebhookDeliveryId, now: Date) =>
      requeueDelivery({ deliveryId, now }).pipe(Effect.map(Option.map((row) => row.body)), Effect.orDie)
    )

    // -------------------------------------------------------------------------------------------
    // The dispatcher's queue
    // -------------------------------------------------------------------------------------------

    const moveOutboxToJobs = SqlSchema.findAll({
      Request: Schema.Struct({ limit: Schema.Number, now: Schema.DateFromSelf }),
      Result: Schema.Struct({ events: Schema.Number, jobs: Schema.Number }),
      execute: ({ limit, now }) =>
        sql`
          WITH batch AS (
            SELECT position, event_id, store_id, type, payload
            FROM outbox CROSS JOIN set_config('synchronous_commit', 'off', true)
            WHERE dispatched_at IS NULL
            ORDER BY position
            LIMIT ${limit}
            FOR UPDATE OF outbox
          ), queued AS (
            INSERT INTO webhook_jobs (endpoint_id, event_id, event_type, body, next_attempt_at, created_at, updated_at)
            SELECT e.id, b.event_id, b.type, b.payload::text, ${now}, ${now}, ${now}
            FROM batch b
            JOIN webhook_endpoints e
              ON e.store_id = b.store_id AND e.enabled AND (b.type = ANY (e.events) OR '*' = ANY (e.events))
            ORDER BY b.position, e.id
            RETURNING 1
          ), dispatched AS (
            UPDATE outbox SET dispatched_at = ${now}
            WHERE position IN (SELECT position FROM batch)
            RETURNING 1
          )
          SELECT (SELECT count(*) FROM dispatched)::int AS events, (SELECT count(*) FROM queued)::int AS jobs`
    })
    /**
     * Moves up to `limit` undispatched outbox events, oldest first, into the queue: one job per enabled
     * endpoint of the event's store subscribed to its type. One statement, so the jobs and the
     * `dispatched_at` marks commit together. Jobs are numbered in outbox order, which is the order an
     * endpoint receives them in.
     *
     * The commit does not wait for the WAL flush (`synchronous_commit` off, for this transaction only):
     * the first attempt of an event need not wait for a disk write. A database crash loses at most the
     * last commits, whole and in order, so a lost fan-out is lost with every later commit that depends on
     * it (the attempts recorded for its jobs): its events are undispatched in the outbox again, are
     * fanned out again and sent again with the same webhook-ids — at least once, as always.
     *
     * Answers how many outbox events it took and how many jobs it queued for them (none when no endpoint
     * of their stores takes their types: most events of most stores).
     */
    const fanOut = traced("WebhooksRepo.fanOut")((limit: number, now: Date) =>
      moveOutboxToJobs({ limit, now }).pipe(
        Effect.map((rows) => rows[0] ?? { events: 0, jobs: 0 }),
        Effect.orDie
      )
    )

    const findDueEndpoints = SqlSchema.findAll({
      Request: Schema.Struct({ busy: Schema.Array(WebhookEndpointId), limit: Schema.Number, now: Schema.DateFromSelf }),
      Result: Schema.Struct({ endpoint_id: WebhookEndpointId }),
      execute: ({ busy, limit, now }) =>
        sql`
          SELECT e.id AS endpoint_id
          FROM webhook_endpoints e
          CROSS JOIN LATERAL (
            SELECT next_attempt_at FROM webhook_jobs j
            WHERE j.endpoint_id = e.id AND j.status = 'pending'
            ORDER BY j.id
            LIMIT 1
          ) head
          WHERE e.enabled AND head.next_attempt_at <= ${now} AND NOT (e.id = ANY (${busy}::text[]))
          ORDER BY head.next_attempt_at
          LIMIT ${limit}`
    })
    /**
     * Enabled endpoints whose oldest waiting job is due at `now`, longest-waiting first, leaving out `busy`
     * ones (already being worked on).
     */
    const dueEndpoints = traced("WebhooksRepo.dueEndpoints")(
      (busy: ReadonlyArray<WebhookEndpointId>, limit: number, now: Date) =>
        findDueEndpoints({ busy, limit, now }).pipe(Effect.map((rows) => rows.map((row) => row.endpoint_id)), Effect.orDie)
    )

    const findPendingJobs = SqlSchema.findAll({
      Request: Schema.Struct({ endpointId: WebhookEndpointId, now: Schema.DateFromSelf, limit: Schema.Number }),
      Result: PendingJobRow,
      execute: ({ endpointId, limit, now }) =>
        sql`
          WITH endpoint AS (
            SELECT e.id, e.url, e.enabled,
              ARRAY(
                SELECT s.secret_sealed FROM webhook_endpoint_secrets s
                WHERE s.endpoint_id = e.id AND (s.expires_at IS NULL OR s.expires_at > ${now})
                ORDER BY s.id DESC
              ) AS secrets_sealed
            FROM webhook_endpoints e WHERE e.id = ${endpointId}
          )
          SELECT j.id, j.event_id, j.event_type, j.body, j.attempts, j.next_attempt_at <= ${now} AS due,
            endpoint.url, endpoint.enabled, endpoint.secrets_sealed
          FROM endpoint CROSS JOIN LATERAL (
            SELECT * FROM webhook_jobs j
            WHERE j.endpoint_id = endpoint.id AND j.status = 'pending'
            ORDER BY j.id
            LIMIT ${limit}
          ) j
          ORDER BY j.id`.pipe(
          // The job id is a bigserial; whatever form the driver gives it in, the job carries it as text.
          Effect.map((rows) => rows.map((row) => ({ ...row, id: String(row["id"]) })))
        )
    })
    /**
     * The endpoint's oldest `limit` waiting jobs in delivery order (due at `now` or not), each with the
     * endpoint's URL and the sealed secrets that sign at `now` (the active one first, then a rotated one
     * still in its window). One query for a whole batch of deliveries.
     */
    const pendingJobs = traced("WebhooksRepo.pendingJobs")((endpointId: WebhookEndpointId, now: Date, limit: number) =>
      findPendingJobs({ endpointId, now, limit }).pipe(Effect.orDie)
    )

    /** The endpoint's oldest waiting job (due at `now` or not); see `pendingJobs`. */
    const nextJob = traced("WebhooksRepo.nextJob")((endpointId: WebhookEndpointId, now: Date) =>
      Effect.map(pendingJobs(endpointId, now, 1), (jobs) => Option.fromNullable(jobs[0]))
    )

    // One row per attempt, as parallel arrays: a batch is one statement whatever its size.
    const recordAndSettle = SqlSchema.void({
      Request: Schema.Struct({
        deliveryIds: Schema.Array(WebhookDeliveryId),
        jobIds: Schema.Array(Schema.String),
        startedAt: Schema.Array(Schema.String),
        statusCodes: Schema.Array(Schema.NullOr(Schema.Number)),
        durationsMs: Schema.Array(Schema.Number),
        errors: Schema.Array(Schema.NullOr(Schema.String)),
        statuses: Schema.Array(Schema.Literal("succeeded", "pending", "failed")),
        retryAt: Schema.Array(Schema.NullOr(Schema.String)),
        settledAt: Schema.Array(Schema.String)
      }),
      execute: (batch) =>
        sql`
          WITH attempt AS (
            SELECT * FROM unnest(
              ${batch.deliveryIds}::text[], ${batch.jobIds}::bigint[], ${batch.startedAt}::timestamptz[],
              ${batch.statusCodes}::integer[], ${batch.durationsMs}::integer[], ${batch.errors}::text[],
              ${batch.statuses}::text[], ${batch.retryAt}::timestamptz[], ${batch.settledAt}::timestamptz[]
            ) WITH ORDINALITY AS a(delivery_id, job_id, started_at, status_code, duration_ms, error, status, retry_at,
              settled_at, ordinal)
          ), job AS (
            SELECT j.id, j.endpoint_id, j.event_id, j.event_type, a.*
            FROM attempt a JOIN webhook_jobs j ON j.id = a.job_id
              CROSS JOIN set_config('synchronous_commit', 'off', true)
            FOR UPDATE OF j
          ), recorded AS (
            INSERT INTO webhook_deliveries
              (id, endpoint_id, job_id, event_id, event_type, attempt, status_code, duration_ms, error, created_at)
            SELECT job.delivery_id, job.endpoint_id, job.id, job.event_id, job.event_type,
              (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = job.endpoint_id AND d.event_id = job.event_id)
                -- A resent event may be in the batch twice; its attempts count on within the batch.
                + row_number() OVER (PARTITION BY job.endpoint_id, job.event_id ORDER BY job.ordinal),
              job.status_code, job.duration_ms, job.error,
              -- When it started, but at least a millisecond (the listing's resolution) after the attempt
              -- before it and the endpoint's latest record, so the newest-first listing shows an endpoint's
              -- attempts in the order they were made. A batch's attempts at a receiver that answers within a
              -- millisecond would otherwise tie, and list in the order of their random ids.
              GREATEST(
                max(job.started_at - job.ordinal * interval '1 millisecond')
                  OVER (PARTITION BY job.endpoint_id ORDER BY job.ordinal),
                latest.created_at
              ) + job.ordinal * interval '1 millisecond'
            FROM job CROSS JOIN LATERAL (
              SELECT max(d.created_at) AS created_at FROM webhook_deliveries d WHERE d.endpoint_id = job.endpoint_id
            ) latest
          )
          UPDATE webhook_jobs w SET
            status = job.status,
            attempts = w.attempts + 1,
            next_attempt_at = COALESCE(job.retry_at, w.next_attempt_at),
            updated_at = job.settled_at
          FROM job
          WHERE w.id = job.id AND w.status = 'pending'`
    })

    /**
     * Records the attempts of a batch and settles their jobs, in one statement (one round trip however
     * many attempts). Each job is locked first: one whose endpoint was deleted meanwhile is gone and
     * nothing is recorded for it. Only a job still pending is settled: one cancelled meanwhile stays
     * cancelled. A 410 also disables the endpoint and drops its other waiting jobs, in the same
     * transaction.
     *
     * The commit does not wait for the WAL flush (`synchronous_commit` off, for this transaction only),
     * which halves the cost of recording. It is safe for delivery: should the database crash and lose
     * the last moments of commits, those jobs are pending again and are sent again with the same
     * webhook-id — at least once, as always — and what is lost is only the record of those attempts.
     * Everything stays consistent: a lost commit is lost whole, and a later durable commit (a payment,
     * an endpoint change) flushes every commit before it.
     */
    const recordAttempts = traced("WebhooksRepo.recordAttempts")((records: ReadonlyArray<AttemptRecord>) => {
      if (records.length === 0) return Effect.void
      const settle = recordAndSettle({
        deliveryIds: records.map((record) => record.deliveryId),
        jobIds: records.map((record) => record.jobId),
        startedAt: records.map((record) => record.startedAt.toISOString()),
        statusCodes: records.map((record) => record.statusCode),
        durationsMs: records.map((record) => record.durationMs),
        errors: records.map((record) => record.error),
        statuses: records.map(({ outcome }) =>
          outcome._tag === "Delivered" ? "succeeded" : outcome._tag === "RetryIn" ? "pending" : "failed"
        ),
        retryAt: records.map(({ outcome, settledAt }) =>
          outcome._tag === "RetryIn" ? addMillis(settledAt, outcome.millis).toISOString() : null
        ),
        settledAt: records.map((record) => record.settledAt.toISOString())
      })
      const gone = records.filter((record) => record.outcome._tag === "Gone")
      if (gone.length === 0) return settle.pipe(Effect.orDie)
      return sql.withTransaction(Effect.gen(function*() {
        yield* settle
        for (const record of gone) {
          yield* sql`UPDATE webhook_endpoints SET enabled = false, updated_at = ${record.settledAt} WHERE id = ${record.endpointId}`
          yield* cancelWaitingJobs(record.endpointId, record.settledAt)
        }
      })).pipe(Effect.orDie)
    })

    /** Records one attempt and settles its job; see `recordAttempts`. */
    const recordAttempt = (record: AttemptRecord) => recordAttempts([record])

    return {
      insertEndpoint,
      findEndpoint,
      listEndpoints,
      updateEndpoint,
      deleteEndpoint,
      markConnectorEndpoint,
      activeSecret,
      rotateSecret,
      listDeliveries,
      findDelivery,
      firstDeliveryOfEvent,
      deliveriesOfPayment,
      enqueue,
      enqueueAgain,
      fanOut,
      dueEndpoints,
      pendingJobs,
      nextJob,
      recordAttempts,
      recordAttempt
    } as const
  })
}) {}
