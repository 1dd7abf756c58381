/**
 * Platform tables shared by every area: the outbox (events that others must hear of, written in the
 * same transaction as the change) and the idempotency keys of the merchant API.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE outbox (
      position      bigserial PRIMARY KEY,
      event_id      text NOT NULL UNIQUE,
      store_id      text,
      livemode      boolean NOT NULL DEFAULT false,
      type          text NOT NULL,
      payload       jsonb NOT NULL,
      created_at    timestamptz NOT NULL DEFAULT now(),
      dispatched_at timestamptz
    )`
  yield* sql`CREATE INDEX outbox_undispatched ON outbox (position) WHERE dispatched_at IS NULL`
  yield* sql`
    CREATE TABLE idempotency_keys (
      store_id     text NOT NULL,
      livemode     boolean NOT NULL,
      key          text NOT NULL,
      fingerprint  text NOT NULL,
      status_code  integer,
      response     jsonb,
      created_at   timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (store_id, livemode, key)
    )`
  yield* sql`CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)`
})
