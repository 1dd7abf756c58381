/**
 * Webhook endpoints, their signing secrets, the queue of deliveries still to make, and the record of
 * every attempt.
 *
 * `webhook_jobs` is the durable queue the dispatcher works from: one row per (endpoint, event) to
 * deliver, written in the same transaction that marks the event's outbox row dispatched, so an event is
 * either still in the outbox or queued for every endpoint that wants it, whatever crashes. Its `id`
 * is the delivery order of an endpoint's events.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id          text PRIMARY KEY,
      store_id    text NOT NULL REFERENCES stores (id),
      url         text NOT NULL,
      events      text[] NOT NULL,
      enabled     boolean NOT NULL DEFAULT true,
      created_at  timestamptz(3) NOT NULL DEFAULT now(),
      updated_at  timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_endpoints_list ON webhook_endpoints (store_id, created_at DESC, id DESC)`

  // Sealed with the master key. The active secret has no expiry; a rotated-away one signs until it expires.
  yield* sql`
    CREATE TABLE webhook_endpoint_secrets (
      id             bigserial PRIMARY KEY,
      endpoint_id    text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      secret_sealed  text NOT NULL,
      created_at     timestamptz(3) NOT NULL DEFAULT now(),
      expires_at     timestamptz(3)
    )`
  yield* sql`CREATE UNIQUE INDEX webhook_endpoint_secrets_active ON webhook_endpoint_secrets (endpoint_id) WHERE expires_at IS NULL`

  yield* sql`
    CREATE TABLE webhook_jobs (
      id               bigserial PRIMARY KEY,
      endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      event_id         text NOT NULL,
      event_type       text NOT NULL,
      body             text NOT NULL,
      status           text NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
      attempts         integer NOT NULL DEFAULT 0,
      next_attempt_at  timestamptz(3) NOT NULL DEFAULT now(),
      created_at       timestamptz(3) NOT NULL DEFAULT now(),
      updated_at       timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_jobs_queue ON webhook_jobs (endpoint_id, id) WHERE status = 'pending'`

  yield* sql`
    CREATE TABLE webhook_deliveries (
      id           text PRIMARY KEY,
      endpoint_id  text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      job_id       bigint NOT NULL REFERENCES webhook_jobs (id) ON DELETE CASCADE,
      event_id     text NOT NULL,
      event_type   text NOT NULL,
      attempt      integer NOT NULL,
      status_code  integer,
      duration_ms  integer NOT NULL,
      error        text,
      created_at   timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_deliveries_list ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX webhook_deliveries_event ON webhook_deliveries (endpoint_id, event_id)`
  yield* sql`CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id)`
})
