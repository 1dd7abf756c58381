/**
 * SQL of API keys. Secrets are never stored: only their SHA-256 hash, which is what a presented key
 * is looked up by.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { ApiKeyId, OrganizationId, StoreId } from "../../domain/Ids.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { addMillis } from "../platform/Time.ts"
import { ownerEmailsOfOrganization } from "../accounts/Memberships.ts"
import { joinableStores, nameAndOrganizationOfStore } from "../stores/Reads.ts"
import { traced } from "../platform/Traced.ts"

/** The notification channel of revoked keys: the payload is the key's id (src/apikeys/KeyCache.ts). */
export const API_KEY_REVOCATIONS = "api_key_revocations"

/** `last_used_at` is minute-grained: a busy key writes it once a minute, not on every request. */
const LAST_USED_GRANULARITY_MS = 60_000

export const ActiveKeyRow = Schema.Struct({
  id: ApiKeyId,
  store_id: StoreId,
  organization_id: OrganizationId,
  mode: Schema.Literal("test", "live")
})
export type ActiveKeyRow = typeof ActiveKeyRow.Type

/** A key as stored, without its secret hash: nothing above the repo needs the hash of a stored key. */
export const ApiKeyRow = Schema.Struct({
  id: ApiKeyId,
  store_id: StoreId,
  mode: Schema.Literal("test", "live"),
  name: Schema.NullOr(Schema.String),
  last4: Schema.String,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  replaced_by: Schema.NullOr(ApiKeyId)
})
export type ApiKeyRow = typeof ApiKeyRow.Type

export interface NewApiKey {
  readonly id: ApiKeyId
  readonly storeId: StoreId
  readonly mode: "test" | "live"
  readonly name: string | null
  readonly secretHash: string
  readonly last4: string
}

const NewApiKeyRequest = Schema.Struct({
  id: ApiKeyId,
  storeId: StoreId,
  mode: Schema.Literal("test", "live"),
  name: Schema.NullOr(Schema.String),
  secretHash: Schema.String,
  last4: Schema.String
})

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("apikeys/ApiKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The unrevoked key with this secret hash, with its store's organization. */
    const findActiveBySecretHash = traced("ApiKeysRepo.findActiveBySecretHash")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: ActiveKeyRow,
        execute: (secretHash) =>
          sql`
            SELECT k.id, k.store_id, s.organization_id, k.mode
            FROM api_keys k JOIN (${joinableStores(sql)}) s ON s.id = k.store_id
            WHERE k.secret_hash = ${secretHash} AND k.revoked_at IS NULL`
      }),
      Effect.orDie
    )

    // Times are the service's Clock, passed in, not the database's now(), so they follow TestClock in tests.
    const IdAt = Schema.Struct({ id: ApiKeyId, now: Schema.DateFromSelf })

    const recordUse = SqlSchema.void({
      Request: IdAt,
      execute: ({ id, now }) =>
        sql`
          UPDATE api_keys SET last_used_at = ${now}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${addMillis(now, -LAST_USED_GRANULARITY_MS)})`
    })
    /** Records a use at `now`, at most once a minute per key, so busy keys do not write on every request. */
    const touchLastUsed = traced("ApiKeysRepo.touchLastUsed")((id: ApiKeyId, now: Date) =>
      recordUse({ id, now }).pipe(Effect.orDie)
    )

    const insertKey = SqlSchema.single({
      Request: NewApiKeyRequest,
      Result: ApiKeyRow,
      execute: (key) =>
        sql`
          INSERT INTO api_keys (id, store_id, mode, name, secret_hash, last4)
          VALUES (${key.id}, ${key.storeId}, ${key.mode}, ${key.name}, ${key.secretHash}, ${key.last4})
          RETURNING id, store_id, mode, name, last4, created_at, last_used_at, revoked_at, replaced_by`
    })

    const insert = traced("ApiKeysRepo.insert")((key: NewApiKey) =>
      insertKey(key).pipe(
        Effect.catchTag("NoSuchElementException", () => Effect.dieMessage("INSERT … RETURNING gave no row")),
        Effect.orDie
      )
    )

    const findById = traced("ApiKeysRepo.findById")(
      SqlSchema.findOne({
        Request: ApiKeyId,
        Result: ApiKeyRow,
        execute: (id) =>
          sql`
            SELECT id, store_id, mode, name, last4, created_at, last_used_at, revoked_at, replaced_by
            FROM api_keys WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const keysOfStore = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: StoreId, ...PageRequest.fields }),
      Result: ApiKeyRow,
      execute: ({ limit, position, storeId }) =>
        sql`
          SELECT id, store_id, mode, name, last4, created_at, last_used_at, revoked_at, replaced_by
          FROM api_keys
          WHERE store_id = ${storeId} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })
    /** One page of a store's keys, newest first; asks for `limit + 1` rows so the caller can tell if there is more. */
    const listByStore = traced("ApiKeysRepo.listByStore")(
      (storeId: StoreId, limit: number, after: PagePosition | undefined) =>
        keysOfStore({ storeId, limit, position: after }).pipe(Effect.orDie)
    )

    const revokeKey = SqlSchema.findOne({
      Request: IdAt,
      Result: ApiKeyRow,
      execute: ({ id, now }) =>
        sql`
          WITH revoked AS (
            UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${now})
            WHERE id = ${id}
            RETURNING id, store_id, mode, name, last4, created_at, last_used_at, revoked_at, replaced_by
          )
          SELECT revoked.*, pg_notify(${API_KEY_REVOCATIONS}, revoked.id)::text AS notified FROM revoked`
    })
    /**
     * Revokes the key at `now` unless it already is; a second revoke keeps the first time, so the answer
     * repeats. The notice tells every process to drop the key from its cache (ApiKeyCache), in the same
     * statement.
     */
    const revoke = traced("ApiKeysRepo.revoke")((id: ApiKeyId, now: Date) => revokeKey({ id, now }).pipe(Effect.orDie))

    const lockForRotation = SqlSchema.findOne({
      Request: ApiKeyId,
      Result: Schema.Struct({ revoked_at: Schema.NullOr(Schema.DateFromSelf) }),
      execute: (id) => sql`SELECT revoked_at FROM api_keys WHERE id = ${id} FOR UPDATE`
    })

    /**
     * Issues `replacement` and revokes `id` at `now`, in one transaction: the old key stops working at once
     * (there is no grace period for API keys). The old row is locked first, so of two rotations racing on
     * one key exactly one issues a key; the other finds it revoked (`None`).
     */
    const rotate = traced("ApiKeysRepo.rotate")((id: ApiKeyId, replacement: NewApiKey, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const locked = yield* lockForRotation(id)
        if (Option.isNone(locked) || locked.value.revoked_at !== null) return Option.none<ApiKeyRow>()
        const issued = yield* insertKey(replacement)
        yield* sql`UPDATE api_keys SET revoked_at = ${now}, replaced_by = ${replacement.id} WHERE id = ${id}`
        yield* sql`SELECT pg_notify(${API_KEY_REVOCATIONS}, ${id})`
        return Option.some(issued)
      })).pipe(Effect.orDie)
    )

    /** Who hears of a new key of the store: its name, and the e-mails of its organization's owners. */
    const keyNoticeTargets = (storeId: StoreId) =>
      Effect.gen(function*() {
        const store = yield* nameAndOrganizationOfStore(sql, storeId)
        if (Option.isNone(store)) return { storeName: storeId, owners: [] }
        return { storeName: store.value.name, owners: yield* ownerEmailsOfOrganization(sql, store.value.organization_id) }
      })

    return { findActiveBySecretHash, touchLastUsed, insert, findById, listByStore, revoke, rotate, keyNoticeTargets } as const
  })
}) {}
