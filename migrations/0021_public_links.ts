/**
 * Public customer links carry a token derived from the customer's link version (src/platform/PublicLinks.ts):
 * raising the version revokes every link handed out before (the wallet, hosted play and the customer's
 * scratch cards). Nothing secret is stored; existing customers start at version 0.
 *
 * The public wallet lists the customer's voucher codes not yet handed over: an index finds them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE customers ADD COLUMN public_link_version integer NOT NULL DEFAULT 0`
  yield* sql`
    CREATE INDEX loyalty_redemptions_customer_issued ON loyalty_redemptions (customer_id, created_at DESC)
    WHERE status = 'issued'`
})
