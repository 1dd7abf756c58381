/**
 * SQL of API keys. Secrets are never stored: only their SHA-256 hash, which is what a presented key
 * is looked up by.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"

export const ActiveKeyRow = Schema.Struct({
  id: Schema.String,
  store_id: Schema.String,
  organization_id: Schema.String,
  mode: Schema.Literal("test", "live")
})
export type ActiveKeyRow = typeof ActiveKeyRow.Type

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("apikeys/ApiKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The unrevoked key with this secret hash, with its store's organization. */
    const findActiveBySecretHash = (secretHash: string) =>
      sql`
        SELECT k.id, k.store_id, s.organization_id, k.mode
        FROM api_keys k JOIN stores s ON s.id = k.store_id
        WHERE k.secret_hash = ${secretHash} AND k.revoked_at IS NULL`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(ActiveKeyRow))),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    /** Records a use, at most once a minute per key, so busy keys do not write on every request. */
    const touchLastUsed = (id: string) =>
      sql`
        UPDATE api_keys SET last_used_at = now()
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return { findActiveBySecretHash, touchLastUsed } as const
  })
}) {}
