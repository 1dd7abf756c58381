/**
 * SQL of the access console: which organization a store belongs to, to keep a simulated decision
 * within the organization it was asked about.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { OrganizationId, StoreId } from "../../domain/Ids.ts"

export class AccessConsoleRepo extends Effect.Service<AccessConsoleRepo>()("access/AccessConsoleRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findStore = SqlSchema.findOne({
      Request: StoreId,
      Result: Schema.Struct({ organization_id: OrganizationId }),
      execute: (storeId) => sql`SELECT organization_id FROM stores WHERE id = ${storeId}`
    })

    const organizationOfStore = (storeId: StoreId) =>
      findStore(storeId).pipe(Effect.map(Option.map((row) => row.organization_id)), Effect.orDie)

    return { organizationOfStore } as const
  })
}) {}
