/**
 * A change of a user's e-mail address waits for the new address to be proven: the link mailed to it
 * carries a token whose hash is kept here with the address asked for. Following it (once, before it
 * expires) changes the address and marks it verified; a newer request of the same user replaces an
 * older one.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE email_changes (
      token_hash  text PRIMARY KEY,
      user_id     text NOT NULL REFERENCES users (id),
      new_email   text NOT NULL,
      created_at  timestamptz(3) NOT NULL DEFAULT now(),
      expires_at  timestamptz(3) NOT NULL,
      used_at     timestamptz(3)
    )`
  yield* sql`CREATE INDEX email_changes_user ON email_changes (user_id)`
})
