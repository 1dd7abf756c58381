/**
 * The rules of API keys: who may create, list, revoke and rotate them, how secrets are made, and that a
 * secret leaves the service once, in the answer that created it.
 */
import { Effect, Option } from "effect"
import type { Permission } from "../../domain/Access.ts"
import { ApiKey, type ApiKeyMode, ApiKeyWithSecret } from "../../domain/ApiKeys.ts"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import type { ApiKeyId, StoreId } from "../../domain/Ids.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { MailQueue } from "../mail/Queue.ts"
import * as Templates from "../mail/Templates.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { hashToken, randomToken } from "../platform/Crypto.ts"
import { newId } from "../platform/Ids.ts"
import { decodeCursor, type ListParams, toPage } from "../platform/Pagination.ts"
import { currentDate } from "../platform/Time.ts"
import { ApiKeyCache } from "./KeyCache.ts"
import { ApiKeysRepo, type ApiKeyRow, type NewApiKey } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

/** 32 bytes of entropy: guessing a key is hopeless, and the hash needs no salt or slow function. */
const SECRET_BYTES = 32

const prefixOf = (mode: ApiKeyMode) => (mode === "live" ? "sk_live_" : "sk_test_")

const timestamp = (date: Date | null) => (date === null ? null : date.toISOString())

const viewFields = (row: ApiKeyRow) => ({
  id: row.id,
  object: "api_key" as const,
  mode: row.mode,
  store_id: row.store_id,
  name: row.name,
  last4: row.last4,
  created_at: row.created_at.toISOString(),
  last_used_at: timestamp(row.last_used_at),
  revoked_at: timestamp(row.revoked_at),
  replaced_by: row.replaced_by
})

const toApiKey = (row: ApiKeyRow) => new ApiKey(viewFields(row))

/** A new key's secret and the row that stores it; the secret itself goes nowhere but the answer. */
const mintKey = (storeId: StoreId, mode: ApiKeyMode, name: string | null) => {
  const secret = prefixOf(mode) + randomToken(SECRET_BYTES)
  const key: NewApiKey = {
    id: newId("key"),
    storeId,
    mode,
    name,
    secretHash: hashToken(secret),
    last4: secret.slice(-4)
  }
  return { secret, key }
}

export class ApiKeysService extends Effect.Service<ApiKeysService>()("apikeys/ApiKeysService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* ApiKeysRepo)
    const keyCache = yield* ApiKeyCache
    const access = yield* AccessService
    const mail = yield* MailQueue
    const publicUrl = yield* PublicBaseUrl

    const keyNotFound = (id: ApiKeyId) => new NotFound({ message: `No such API key: ${id}`, param: "id" })

    /**
     * The store `storeId` if the signed-in user may do `permission` on it. Keys are managed from a user
     * session only: a leaked key must not be able to mint or rotate keys (a test key minting a live one).
     */
    const storeFor = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))

    /** The key `id` if the signed-in user may manage its store; a key of another tenant is 404 like a missing one. */
    const manageableKey = <A, E, R>(id: ApiKeyId, use: (found: ApiKeyRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findById(id), (key) => key.store_id, "api_key.manage", () => keyNotFound(id), use)
      )

    /** A new key is a new way into the store: its owners (and the user who made it) hear of it by mail. */
    const noticeNewKey = (row: ApiKeyRow, principal: StoreAccess["principal"]) =>
      Effect.gen(function*() {
        const targets = yield* repo.keyNoticeTargets(row.store_id)
        const recipients = new Set(targets.owners.map((email) => email.toLowerCase()))
        if (principal._tag === "User") recipients.add(principal.email.toLowerCase())
        const content = Templates.apiKeyCreated({
          storeName: targets.storeName,
          mode: row.mode,
          last4: row.last4,
          keyName: row.name,
          at: row.created_at,
          consoleUrl: `${yield* publicUrl.get}/console`
        })
        yield* Effect.forEach(recipients, (to) => mail.enqueue({ to, kind: "api_key_created", content, dedupeKey: `api_key_created:${row.id}:${to}` }), { discard: true })
      })

    const create = traced("ApiKeys.create")(function*(input: {
      readonly store_id: StoreId
      readonly mode: ApiKeyMode
      readonly name?: string | undefined
    }) {
      return yield* storeFor(input.store_id, "api_key.manage", (store) =>
        Effect.gen(function*() {
          const { secret, key } = mintKey(store.storeId, input.mode, input.name ?? null)
          const row = yield* repo.insert(key)
          yield* noticeNewKey(row, store.principal)
          return new ApiKeyWithSecret({ ...viewFields(row), secret })
        }))
    })

    const list = traced("ApiKeys.list")(function*(storeId: StoreId, params: ListParams) {
      return yield* storeFor(storeId, "api_key.read", (store) =>
        Effect.gen(function*() {
          const after = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
          const rows = yield* repo.listByStore(store.storeId, params.limit, after)
          const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
          return { ...page, data: page.data.map(toApiKey) }
        }))
    })

    const revoke = traced("ApiKeys.revoke")(function*(id: ApiKeyId) {
      return yield* manageableKey(id, () =>
        Effect.gen(function*() {
          const revoked = yield* repo.revoke(id, yield* currentDate)
          if (Option.isNone(revoked)) return yield* keyNotFound(id)
          yield* keyCache.revoked(id)
          return toApiKey(revoked.value)
        }))
    })

    const rotate = traced("ApiKeys.rotate")(function*(id: ApiKeyId) {
      return yield* manageableKey(id, (old) =>
        Effect.gen(function*() {
          const revokedAlready = new InvalidState({
            message: `API key ${id} is revoked and cannot be rotated; create a new key instead`,
            param: "id"
          })
          if (old.revoked_at !== null) return yield* revokedAlready
          const { secret, key } = mintKey(old.store_id, old.mode, old.name)
          const issued = yield* repo.rotate(id, key, yield* currentDate)
          // Revoked between the read above and the lock (a concurrent revoke or rotate).
          if (Option.isNone(issued)) return yield* revokedAlready
          yield* keyCache.revoked(id)
          return new ApiKeyWithSecret({ ...viewFields(issued.value), secret })
        }))
    })

    return { create, list, revoke, rotate } as const
  }),
  dependencies: [ApiKeysRepo.Default, ApiKeyCache.Default, AccessService.Default, MailQueue.Default]
}) {}
