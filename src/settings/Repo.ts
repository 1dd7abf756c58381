/**
 * SQL of platform settings. Values arrive here already sealed: this table never holds a plaintext.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"

export const SettingRow = Schema.Struct({
  key: Schema.String,
  value: Schema.String,
  updated_at: Schema.DateFromSelf
})
export type SettingRow = typeof SettingRow.Type

const decodeRows = Schema.decodeUnknown(Schema.Array(SettingRow))

export class SettingsRepo extends Effect.Service<SettingsRepo>()("settings/SettingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = (key: string) =>
      sql`SELECT key, value, updated_at FROM platform_settings WHERE key = ${key}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    const list = sql`SELECT key, value, updated_at FROM platform_settings ORDER BY key`.pipe(
      Effect.flatMap(decodeRows),
      Effect.orDie
    )

    const upsert = (key: string, sealedValue: string, updatedBy: string) =>
      sql`
        INSERT INTO platform_settings (key, value, updated_by, updated_at)
        VALUES (${key}, ${sealedValue}, ${updatedBy}, now())
        ON CONFLICT (key) DO UPDATE
          SET value = EXCLUDED.value, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at
        RETURNING key, value, updated_at`.pipe(
        Effect.flatMap(decodeRows),
        Effect.flatMap((rows) => rows[0] ? Effect.succeed(rows[0]) : Effect.dieMessage("upsert returned no row")),
        Effect.orDie
      )

    const remove = (key: string) => sql`DELETE FROM platform_settings WHERE key = ${key}`.pipe(Effect.asVoid, Effect.orDie)

    return { find, list, upsert, remove } as const
  })
}) {}
