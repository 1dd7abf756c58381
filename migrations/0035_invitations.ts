/**
 * Invitations to an organization: an e-mail invited with a role, whether or not it has an account yet.
 * Only the hash of the mailed token is kept; the link is single-use (`accepted_at`), expires, and an
 * Owner or Admin may revoke it (`revoked_at`). At most one open invitation per organization and e-mail: a
 * second invitation replaces the first.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE invitations (
      id               text PRIMARY KEY,
      organization_id  text NOT NULL REFERENCES organizations (id),
      email            text NOT NULL,
      role             text NOT NULL CHECK (role IN ('admin', 'developer', 'analyst')),
      token_hash       text NOT NULL UNIQUE,
      invited_by       text REFERENCES users (id),
      created_at       timestamptz(3) NOT NULL DEFAULT now(),
      expires_at       timestamptz(3) NOT NULL,
      accepted_at      timestamptz(3),
      accepted_by      text REFERENCES users (id),
      revoked_at       timestamptz(3)
    )`
  yield* sql`
    CREATE UNIQUE INDEX invitations_open ON invitations (organization_id, lower(email))
    WHERE accepted_at IS NULL AND revoked_at IS NULL`
})
