/**
 * Operator commands, run from a shell on the deployment (`npm run admin -- …`) rather than over HTTP.
 *
 * `verify-email`: a private deployment with no mail yet cannot deliver the verification link that makes
 * a `PLATFORM_ADMIN_EMAILS` address an administrator. Whoever can run commands on the host may vouch for
 * the address instead — but only for a listed one, so the command cannot make anyone else an administrator
 * or skip verification for ordinary users.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { AppConfig } from "../platform/Config.ts"
import { traced } from "../platform/Traced.ts"

export class OperatorRefusal extends Data.TaggedError("OperatorRefusal")<{ readonly message: string }> {}

export const verifyPlatformAdminEmail = traced("Operator.verifyPlatformAdminEmail")(function*(address: string) {
  const config = yield* AppConfig
  const sql = yield* SqlClient.SqlClient
  const email = address.trim().toLowerCase()
  if (!config.platformAdminEmails.includes(email)) {
    return yield* new OperatorRefusal({
      message: config.platformAdminEmails.length === 0
        ? `${address} is not listed in PLATFORM_ADMIN_EMAILS (it is empty): list it there first; this command verifies only platform administrators' addresses`
        : `${address} is not listed in PLATFORM_ADMIN_EMAILS (${config.platformAdminEmails.join(", ")}): this command verifies only platform administrators' addresses`
    })
  }
  const rows = yield* sql<{ id: string; already: boolean }>`
    WITH target AS (SELECT id, email_verified_at IS NOT NULL AS already FROM users WHERE lower(email) = ${email})
    UPDATE users u SET email_verified_at = coalesce(u.email_verified_at, now())
    FROM target WHERE u.id = target.id
    RETURNING u.id, target.already`.pipe(Effect.orDie)
  const user = rows[0]
  if (user === undefined) {
    return yield* new OperatorRefusal({
      message: `No user has registered with ${address} yet: register with it first (POST /auth/register or the console), then run this again`
    })
  }
  return user.already
    ? `${address} (${user.id}) was verified already; it is a platform administrator`
    : `${address} (${user.id}) is verified; it is now a platform administrator`
})
