/**
 * Hardening of accounts and payments:
 *
 * - Outgoing mail is stored sealed under the master key (it carries reset and verification links).
 *   Messages written in clear before this migration are dropped: they may hold reset tokens still valid.
 * - E-mail verification: when a user proved their address, and the single-use tokens of the links sent.
 * - Payments may name the branch they were taken at.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM outgoing_mail`
  yield* sql`ALTER TABLE outgoing_mail RENAME COLUMN body TO body_sealed`

  yield* sql`ALTER TABLE users ADD COLUMN email_verified_at timestamptz(3)`
  yield* sql`
    CREATE TABLE email_verifications (
      token_hash  text PRIMARY KEY,
      user_id     text NOT NULL REFERENCES users (id),
      created_at  timestamptz(3) NOT NULL DEFAULT now(),
      expires_at  timestamptz(3) NOT NULL,
      used_at     timestamptz(3)
    )`
  yield* sql`CREATE INDEX email_verifications_user ON email_verifications (user_id)`
  yield* sql`CREATE INDEX password_resets_user ON password_resets (user_id) WHERE used_at IS NULL`

  yield* sql`ALTER TABLE payments ADD COLUMN branch_id text REFERENCES branches (id)`
  yield* sql`CREATE INDEX payments_branch ON payments (branch_id) WHERE branch_id IS NOT NULL`
})
