/**
 * Rules tested in-process: the suite's own migrated database and nothing else — no HTTP server, no cluster
 * runner — so an entity's or a service's rules answer in milliseconds. Entities run through
 * `Entity.makeTestClient`, which hosts one entity's handlers in the test process with the same one-message-
 * at-a-time mailbox the cluster gives it; what the cluster adds (message storage, shard moves) is covered by the
 * black-box and crash suites.
 */
import { ShardingConfig } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { OrganizationId, StoreId } from "../../domain/Ids.ts"
import { DatabaseLive } from "../../runtime/Database.ts"
import { MasterKeyLive } from "../../runtime/MasterKey.ts"
import { MigrationsLive } from "../../runtime/Migrations.ts"
import { PublicBaseUrl } from "../../src/platform/PublicUrl.ts"
import { testConfigLayer } from "./TestConfig.ts"
import { TestDatabase } from "./TestDatabase.ts"

/** The suite's database, migrated, with its SQL client, configuration, master key and public base URL. */
export const inProcessLayer = Layer.mergeAll(MigrationsLive, ShardingConfig.layer(), PublicBaseUrl.layer, MasterKeyLive).pipe(
  Layer.provideMerge(DatabaseLive),
  Layer.provideMerge(testConfigLayer()),
  Layer.provideMerge(TestDatabase.layer)
)

export type InProcess = Layer.Layer.Success<typeof inProcessLayer>

const suffix = () => randomBytes(8).toString("hex")

/** A new organization and test-mode store, written directly: the rules under test start from rows, not routes. */
export const seedStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const organizationId = `org_${suffix()}` as OrganizationId
  const storeId = `str_${suffix()}` as StoreId
  yield* sql`INSERT INTO organizations (id, name) VALUES (${organizationId}, 'Rules test')`
  yield* sql`INSERT INTO stores (id, organization_id, name) VALUES (${storeId}, ${organizationId}, 'Rules test store')`
  return { organizationId, storeId }
}).pipe(Effect.orDie)
