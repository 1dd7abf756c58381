/**
 * API keys are cached in each process for a few seconds (src/apikeys/KeyCache.ts). Revoking or rotating
 * a key through one API node must stop it on every other node at once, not when the cached entry ages
 * out: two API nodes and a shard runner as real processes on one fresh PostgreSQL database.
 *
 * Skipped without a PostgreSQL server (or with TEST_DATABASE=embedded).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { postgresAvailable } from "../support/TestDatabase.ts"
import { createDatabase, type ClusterDatabase, LocalCluster, ok, request, waitFor } from "../support/Cluster.ts"

const enabled = process.env["TEST_DATABASE"] !== "embedded" && await postgresAvailable()

/** Well inside the cache's time-to-live (10 s): only the revocation notice can explain a refusal this soon. */
const PROPAGATION_DEADLINE_MS = 2_000

describe.skipIf(!enabled)("API key revocation across API nodes", () => {
  let db: ClusterDatabase
  let cluster: LocalCluster
  let first: string
  let second: string
  let session: string
  let storeId: string

  beforeAll(async () => {
    db = await createDatabase("test_key_revocation")
    cluster = new LocalCluster(db)
    await cluster.addRunner()
    first = (await cluster.addApi()).baseUrl
    second = (await cluster.addApi()).baseUrl
    await waitFor("the API nodes to be ready", 60_000, async () => {
      const answers = await Promise.all([first, second].map((baseUrl) => request(baseUrl, "GET", "/ready", { deadlineMs: 1_000 }).catch(() => undefined)))
      return answers.every((answer) => answer?.status === 200) ? true : undefined
    })
    const registered = await ok(request(first, "POST", "/auth/register", {
      body: { email: `revocation-${Date.now()}@example.test`, password: "correct horse battery staple" }
    }), "register")
    session = registered.access_token
    storeId = (await ok(request(first, "POST", "/stores", { body: { name: "Revocation Store" }, token: session }), "create store")).id
  }, 180_000)

  afterAll(async () => {
    await cluster?.killAll()
    await db?.drop()
  }, 60_000)

  const newKey = async (): Promise<{ readonly id: string; readonly secret: string }> =>
    ok(request(first, "POST", "/api-keys", { body: { store_id: storeId, mode: "test" }, token: session }), "create API key")

  const listWith = (baseUrl: string, secret: string) => request(baseUrl, "GET", "/v1/payments?limit=1", { token: secret, deadlineMs: 5_000 })

  /** How long after `since` the second node first refused `secret`. */
  const refusedOnSecondWithin = async (secret: string, since: number) =>
    waitFor("the second node to refuse the key", PROPAGATION_DEADLINE_MS, async () => {
      const answer = await listWith(second, secret)
      return answer.status === 401 ? performance.now() - since : undefined
    }, 20)

  it("stops a revoked key on the other node within moments", { timeout: 60_000 }, async () => {
    const key = await newKey()
    // Both nodes have looked the key up, so both hold it in their caches.
    for (const baseUrl of [first, second]) expect((await listWith(baseUrl, key.secret)).status).toBe(200)
    const revokedAt = performance.now()
    await ok(request(first, "POST", `/api-keys/${key.id}/revoke`, { token: session }), "revoke")
    // The revoking node forgets the key before it answers.
    expect((await listWith(first, key.secret)).status).toBe(401)
    const elapsed = await refusedOnSecondWithin(key.secret, revokedAt)
    console.log(`revoked key refused by the other API node after ${Math.round(elapsed)} ms`)
  })

  it("stops a rotated key on the other node and lets its replacement in", { timeout: 60_000 }, async () => {
    const key = await newKey()
    expect((await listWith(second, key.secret)).status).toBe(200)
    const rotatedAt = performance.now()
    const replacement = await ok(request(first, "POST", `/api-keys/${key.id}/rotate`, { token: session }), "rotate")
    await refusedOnSecondWithin(key.secret, rotatedAt)
    expect((await listWith(second, replacement.secret)).status).toBe(200)
  })
})
