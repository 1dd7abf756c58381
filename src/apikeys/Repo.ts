/**
 * SQL of API keys. Secrets are never stored: only their SHA-256 hash, which is what a presented key
 * is looked up by.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { keysetAfter, newestFirst, type PagePosition } from "../platform/Pagination.ts"

export const ActiveKeyRow = Schema.Struct({
  id: Schema.String,
  store_id: Schema.String,
  organization_id: Schema.String,
  mode: Schema.Literal("test", "live")
})
export type ActiveKeyRow = typeof ActiveKeyRow.Type

/** A key as stored, without its secret hash: nothing above the repo needs the hash of a stored key. */
export const ApiKeyRow = Schema.Struct({
  id: Schema.String,
  store_id: Schema.String,
  mode: Schema.Literal("test", "live"),
  name: Schema.NullOr(Schema.String),
  last4: Schema.String,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  replaced_by: Schema.NullOr(Schema.String)
})
export type ApiKeyRow = typeof ApiKeyRow.Type

export interface NewApiKey {
  readonly id: string
  readonly storeId: string
  readonly mode: "test" | "live"
  readonly name: string | null
  readonly secretHash: string
  readonly last4: string
}

const decodeKeys = Schema.decodeUnknown(Schema.Array(ApiKeyRow))

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

    const insertKey = (key: NewApiKey) =>
      sql`
        INSERT INTO api_keys (id, store_id, mode, name, secret_hash, last4)
        VALUES (${key.id}, ${key.storeId}, ${key.mode}, ${key.name}, ${key.secretHash}, ${key.last4})
        RETURNING id, store_id, mode, name, last4, created_at, last_used_at, revoked_at, replaced_by`.pipe(
        Effect.flatMap(decodeKeys)
      )

    const insert = (key: NewApiKey) =>
      insertKey(key).pipe(
        Effect.flatMap((rows) => rows[0] ? Effect.succeed(rows[0]) : Effect.dieMessage("INSERT … RETURNING gave no row")),
        Effect.orDie
      )

    const findById = (id: string) =>
      sql`
        SELECT id, store_id, mode, name, last4, created_at, last_used_at, revoked_at, replaced_by
        FROM api_keys WHERE id = ${id}`.pipe(
        Effect.flatMap(decodeKeys),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    /** One page of a store's keys, newest first; asks for `limit + 1` rows so the caller can tell if there is more. */
    const listByStore = (storeId: string, limit: number, after: PagePosition | undefined) =>
      sql`
        SELECT id, store_id, mode, name, last4, created_at, last_used_at, revoked_at, replaced_by
        FROM api_keys
        WHERE store_id = ${storeId} AND ${keysetAfter(sql, after)}
        ORDER BY ${newestFirst(sql)}
        LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeKeys), Effect.orDie)

    /** Revokes the key unless it already is; a second revoke keeps the first time, so the answer repeats. */
    const revoke = (id: string) =>
      sql`
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
        WHERE id = ${id}
        RETURNING id, store_id, mode, name, last4, created_at, last_used_at, revoked_at, replaced_by`.pipe(
        Effect.flatMap(decodeKeys),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    /**
     * Issues `replacement` and revokes `id` in one transaction. The old row is locked first, so of two
     * rotations racing on one key exactly one issues a key; the other finds it revoked (`None`).
     */
    const rotate = (id: string, replacement: NewApiKey) =>
      sql.withTransaction(Effect.gen(function*() {
        const locked = yield* sql`SELECT revoked_at FROM api_keys WHERE id = ${id} FOR UPDATE`
        if (locked.length === 0 || locked[0]?.["revoked_at"] !== null) return Option.none<ApiKeyRow>()
        const rows = yield* insertKey(replacement)
        yield* sql`UPDATE api_keys SET revoked_at = now(), replaced_by = ${replacement.id} WHERE id = ${id}`
        return Option.fromNullable(rows[0])
      })).pipe(Effect.orDie)

    return { findActiveBySecretHash, touchLastUsed, insert, findById, listByStore, revoke, rotate } as const
  })
}) {}
