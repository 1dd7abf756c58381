/**
 * SQL of platform settings. Values arrive here already sealed: this table never holds a plaintext.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { traced } from "../platform/Traced.ts"

export const SettingRow = Schema.Struct({
  key: Schema.String,
  value: Schema.String,
  updated_at: Schema.DateFromSelf
})
export type SettingRow = typeof SettingRow.Type

export class SettingsRepo extends Effect.Service<SettingsRepo>()("settings/SettingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = traced("SettingsRepo.find")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: SettingRow,
        execute: (key) => sql`SELECT key, value, updated_at FROM platform_settings WHERE key = ${key}`
      }),
      Effect.orDie
    )

    const listAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: SettingRow,
      execute: () => sql`SELECT key, value, updated_at FROM platform_settings ORDER BY key`
    })
    // A value, not a function (it takes nothing), so it gets its span with `withSpan` rather than `Effect.fn`.
    const list = listAll(undefined).pipe(Effect.orDie, Effect.withSpan("SettingsRepo.list"))

    const upsertSetting = SqlSchema.single({
      Request: Schema.Struct({ key: Schema.String, sealedValue: Schema.String, updatedBy: Schema.String }),
      Result: SettingRow,
      execute: ({ key, sealedValue, updatedBy }) =>
        sql`
          INSERT INTO platform_settings (key, value, updated_by, updated_at)
          VALUES (${key}, ${sealedValue}, ${updatedBy}, now())
          ON CONFLICT (key) DO UPDATE
            SET value = EXCLUDED.value, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at
          RETURNING key, value, updated_at`
    })
    const upsert = traced("SettingsRepo.upsert")((key: string, sealedValue: string, updatedBy: string) =>
      upsertSetting({ key, sealedValue, updatedBy }).pipe(
        Effect.catchTag("NoSuchElementException", () => Effect.dieMessage("upsert returned no row")),
        Effect.orDie
      )
    )

    const remove = traced("SettingsRepo.remove")(
      SqlSchema.void({
        Request: Schema.String,
        execute: (key) => sql`DELETE FROM platform_settings WHERE key = ${key}`
      }),
      Effect.orDie
    )

    return { find, list, upsert, remove } as const
  })
}) {}
