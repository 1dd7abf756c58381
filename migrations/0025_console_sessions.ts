/**
 * Console sessions expire when idle: a session signed in through the console carries its idle limit, and
 * the time it was last used, moved forward as it is used. Sessions of `POST /auth/login` have no idle
 * limit (null) and keep their fixed lifetime only.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE sessions ADD COLUMN idle_timeout_seconds integer CHECK (idle_timeout_seconds > 0)`
  yield* sql`ALTER TABLE sessions ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now()`
})
