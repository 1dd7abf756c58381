/**
 * API keys are cached in each process for a few seconds (src/apikeys/KeyCache.ts). Revoking or rotating
 * a key through one API node must stop it on every other node at once, not when the cached entry ages
 * out: two API nodes and a shard runner as real processes on one fresh PostgreSQL database.
 *
 * Skipped without a PostgreSQL server (or with TEST_DATABASE=embedded).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import type { ApiClient } from "../../domain/Client.ts"
import type { Store } from "../../domain/Stores.ts"
import { listParams } from "../support/Client.ts"
import { postgresAvailable } from "../support/TestDatabase.ts"
import {
  carefulClient,
  carefully,
  createDatabase,
  type ClusterDatabase,
  LocalCluster,
  succeed,
  untilReady,
  waitFor
} from "../support/Cluster.ts"

const enabled = process.env["TEST_DATABASE"] !== "embedded" && await postgresAvailable()

/** Well inside the cache's time-to-live (10 s): only the revocation notice can explain a refusal this soon. */
const PROPAGATION_DEADLINE_MS = 2_000

describe.skipIf(!enabled)("API key revocation across API nodes", () => {
  let db: ClusterDatabase
  let cluster: LocalCluster
  let first: string
  let second: string
  /** The owner's client, through the first node. */
  let owner: ApiClient
  let storeId: Store["id"]

  beforeAll(async () => {
    db = await createDatabase("test_key_revocation")
    cluster = new LocalCluster(db)
    await cluster.addRunner()
    first = (await cluster.addApi()).baseUrl
    second = (await cluster.addApi()).baseUrl
    await Promise.all([first, second].map((baseUrl) => untilReady(baseUrl)))
    const registered = await succeed("register", (await carefulClient(first)).auth.register({
      payload: { email: `revocation-${Date.now()}@example.test`, password: "correct horse battery staple" }
    }))
    owner = await carefulClient(first, registered.access_token)
    storeId = (await succeed("create store", owner.stores.create({ payload: { name: "Revocation Store" } }))).id
  }, 180_000)

  afterAll(async () => {
    await cluster?.killAll()
    await db?.drop()
  }, 60_000)

  const newKey = () => succeed("create API key", owner.apiKeys.create({ payload: { store_id: storeId, mode: "test" } }))

  const clients = new Map<string, ApiClient>()
  /** Lists payments with `secret` through the node at `baseUrl`: "ok", or the tag of the error it was refused with. */
  const listWith = async (baseUrl: string, secret: string) => {
    const name = `${baseUrl} ${secret}`
    const api = clients.get(name) ?? await carefulClient(baseUrl, secret, { deadlineMs: 5_000 })
    clients.set(name, api)
    const answer = await carefully(api.payments.list({ urlParams: listParams({ limit: 1 }) }))
    return Either.match(answer.outcome, { onLeft: (error) => error._tag, onRight: () => "ok" })
  }

  /** How long after `since` the second node first refused `secret`. */
  const refusedOnSecondWithin = async (secret: string, since: number) =>
    waitFor("the second node to refuse the key", PROPAGATION_DEADLINE_MS, async () =>
      (await listWith(second, secret)) === "Unauthorized" ? performance.now() - since : undefined, 20)

  it("stops a revoked key on the other node within moments", { timeout: 60_000 }, async () => {
    const key = await newKey()
    // Both nodes have looked the key up, so both hold it in their caches.
    for (const baseUrl of [first, second]) expect(await listWith(baseUrl, key.secret)).toBe("ok")
    const revokedAt = performance.now()
    await succeed("revoke", owner.apiKeys.revoke({ path: { id: key.id } }))
    // The revoking node forgets the key before it answers.
    expect(await listWith(first, key.secret)).toBe("Unauthorized")
    const elapsed = await refusedOnSecondWithin(key.secret, revokedAt)
    console.log(`revoked key refused by the other API node after ${Math.round(elapsed)} ms`)
  })

  it("stops a rotated key on the other node and lets its replacement in", { timeout: 60_000 }, async () => {
    const key = await newKey()
    expect(await listWith(second, key.secret)).toBe("ok")
    const rotatedAt = performance.now()
    const replacement = await succeed("rotate", owner.apiKeys.rotate({ path: { id: key.id } }))
    await refusedOnSecondWithin(key.secret, rotatedAt)
    expect(await listWith(second, replacement.secret)).toBe("ok")
  })
})
