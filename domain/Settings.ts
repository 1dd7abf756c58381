/**
 * Platform settings: keyed integration settings (bot tokens, provider API tokens and addresses) that a
 * platform administrator sets at run time. Values are encrypted at rest and never answered in full:
 * views carry a masked value only.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, ListParams } from "./Lists.ts"
import { authenticated } from "./Auth.ts"
import { InvalidRequestResponse } from "./Errors.ts"
import { closed } from "./Text.ts"

export const SETTING_KEY_PATTERN = /^[a-z0-9_]{1,64}$/

export const SettingKey = Schema.String.pipe(
  Schema.pattern(SETTING_KEY_PATTERN, {
    message: () => "must be 1 to 64 lowercase letters, digits or underscores, such as telegram_bot_token"
  })
).annotations({ examples: ["telegram_bot_token"] })

export const MAX_SETTING_VALUE_LENGTH = 4096

export const SettingSource = Schema.Literal("database", "environment", "unset").annotations({
  description: "Where the value in effect comes from: set through this API, the environment variable of " +
    "the key's name in upper case (known keys only), or nowhere."
})

export class PlatformSetting extends Schema.Class<PlatformSetting>("PlatformSetting")({
  id: Schema.String.annotations({ description: "The setting's key: a setting is identified by it", examples: ["telegram_bot_token"] }),
  object: Schema.Literal("platform_setting"),
  key: Schema.String,
  description: Schema.NullOr(Schema.String).annotations({ description: "What a known key is for; null for others." }),
  source: SettingSource,
  value_masked: Schema.NullOr(Schema.String).annotations({
    description: "The value in effect with all but its last four characters masked (short values fully); null when unset."
  }),
  created_at: Schema.NullOr(Schema.String).annotations({
    description: "When the stored value was set (a PUT replaces the value, so this is the latest PUT); null unless source is database."
  }),
  updated_at: Schema.NullOr(Schema.String).annotations({ description: "When the stored value was set; null unless source is database." })
}) {}

export const PlatformSettingList = ListOf(PlatformSetting).annotations({ identifier: "PlatformSettingList" })

export const SetSetting = closed(Schema.Struct({
  value: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty; to clear a setting, DELETE it" }),
    Schema.maxLength(MAX_SETTING_VALUE_LENGTH, { message: () => `must be at most ${MAX_SETTING_VALUE_LENGTH} characters` })
  )
}), "SetSettingDto")

const KeyPath = Schema.Struct({ key: SettingKey })

export class SettingsGroup extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("list", "/admin/settings")
      .setUrlParams(ListParams)
      .addSuccess(PlatformSettingList)
      .annotate(OpenApi.Summary, "List platform integration settings (platform admin)")
      .annotate(
        OpenApi.Description,
        "Every known key and every stored key, ordered by key (not by time: the list is a catalogue). " +
          "`limit` and `cursor` page through it as elsewhere. Values are masked."
      )
  )
  .add(
    HttpApiEndpoint.put("set", "/admin/settings/:key")
      .setPath(KeyPath)
      .setPayload(SetSetting)
      .addSuccess(PlatformSetting)
      .annotate(OpenApi.Summary, "Set a setting, encrypted at rest (platform admin)")
      .annotate(OpenApi.Description, "The value is 1 to 4096 characters. It takes precedence over the environment. The providers' base " +
        "URLs (the `*_base_url` keys) take only an absolute `http` or `https` URL without user name or password; " +
        "anything else is 400 on `value`.")
  )
  .add(
    HttpApiEndpoint.del("clear", "/admin/settings/:key")
      .setPath(KeyPath)
      .addSuccess(PlatformSetting)
      .annotate(OpenApi.Summary, "Clear a setting; it falls back to the environment (platform admin)")
      .annotate(
        OpenApi.Description,
        "Answers the setting as it is after clearing: a known key falls back to the environment variable " +
          "of its name in upper case (`telegram_bot_token` → `TELEGRAM_BOT_TOKEN`); other keys become unset. " +
          "Clearing an unset key is not an error."
      )
  )
  .pipe(authenticated("session"))
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Platform settings")
  .annotate(OpenApi.Description, "Settings of the whole platform (provider addresses and tokens), for platform administrators; secrets are stored encrypted.")
{}
