/**
 * Stores, branches and merchant verification: what 0002 did not yet have.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Set once anything (a payment) refers to the branch; such a branch is deactivated rather than deleted.
  yield* sql`ALTER TABLE branches ADD COLUMN has_history boolean NOT NULL DEFAULT false`
  // At most one submission under review per organization, even when two are sent at the same moment.
  yield* sql`CREATE UNIQUE INDEX verifications_one_pending ON verifications (organization_id) WHERE status = 'pending'`
  // The administrators' review queue: every organization's submissions by status, newest first.
  yield* sql`CREATE INDEX verifications_status ON verifications (status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX verifications_created ON verifications (created_at DESC, id DESC)`
})
