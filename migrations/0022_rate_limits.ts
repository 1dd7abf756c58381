/**
 * Rate limits of every public and unauthenticated route (and the sign-in and registration throttles that
 * were kept in `auth_throttle`) count in one table, so a limit holds across API nodes and restarts.
 *
 * - One row per counter key (`{rule}:{subject}`): the hits of the current fixed window, when it started,
 *   and a block, if any. `expires_at` is when the row stops deciding anything (the later of its window's
 *   end and its block's end): the retention purge deletes rows past it without knowing each rule's window.
 * - The sign-in and registration records are carried over, so a block in force survives the upgrade.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rate_limits (
      key              text PRIMARY KEY,
      hits             integer NOT NULL,
      window_started   timestamptz(3) NOT NULL,
      blocked_until    timestamptz(3),
      expires_at       timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX rate_limits_expires_at ON rate_limits (expires_at)`
  // The old windows were at most an hour long.
  yield* sql`
    INSERT INTO rate_limits (key, hits, window_started, blocked_until, expires_at)
    SELECT key, failures, window_started, blocked_until,
           GREATEST(window_started + interval '1 hour', COALESCE(blocked_until, window_started))
    FROM auth_throttle`
  yield* sql`DROP TABLE auth_throttle`
})
