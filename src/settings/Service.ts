/**
 * Platform settings: integration secrets and addresses an administrator sets at run time, sealed at
 * rest, each falling back to the environment while unset. Other areas read them with `get`.
 */
import { Config, Effect, Option, Redacted } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
import { PlatformSetting, SETTING_KEY_PATTERN } from "../../domain/Settings.ts"
import { AccessService } from "../access/Service.ts"
import { maskSecret, SecretBox } from "../platform/Crypto.ts"
import type { ListParams, Page } from "../platform/Pagination.ts"
import { environmentVariableOf, isBaseUrlSetting, isKnownSetting, KnownSettings } from "./Known.ts"
import { type SettingRow, SettingsRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

type Resolved =
  | { readonly source: "database"; readonly value: string; readonly updatedAt: Date }
  | { readonly source: "environment"; readonly value: string }
  | { readonly source: "unset" }

/**
 * The environment's value for a known key, read when asked (not at start-up) so that a change of the
 * process environment is seen by the next call. An empty variable counts as unset.
 */
const fromEnvironment = (key: string): Effect.Effect<Option.Option<string>> =>
  isKnownSetting(key)
    ? Config.option(Config.string(environmentVariableOf(key))).pipe(
      Effect.map(Option.filter((value) => value.length > 0)),
      Effect.orElseSucceed(() => Option.none<string>())
    )
    : Effect.succeed(Option.none())

// A page of keys ends at a key; the cursor is that key, base64url-encoded so that it stays opaque.
const encodeKeyCursor = (key: string) => Buffer.from(key, "utf8").toString("base64url")
const decodeKeyCursor = (cursor: string) => {
  const key = Buffer.from(cursor, "base64url").toString("utf8")
  return SETTING_KEY_PATTERN.test(key) && encodeKeyCursor(key) === cursor
    ? Effect.succeed(key)
    : Effect.fail(
      new InvalidRequest({ message: "cursor is not valid: pass the next_cursor of the previous page unchanged", param: "cursor" })
    )
}

/**
 * A base URL setting takes an absolute http(s) URL only: another scheme (`file:`, `gopher:`, …) would make
 * the service's provider clients reach somewhere they were never meant to, and credentials belong in the
 * token settings, which are masked, not in an address.
 */
const checkBaseUrl = (key: string, value: string) => {
  const refuse = (message: string) => Effect.fail(new InvalidRequest({ message, param: "value" }))
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return refuse(`${key} must be an absolute http or https URL, such as https://api.example.com`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return refuse(`${key} must be an http or https URL, not ${url.protocol.replace(/:$/, "")}`)
  }
  if (url.username !== "" || url.password !== "") {
    return refuse(`${key} must not carry a user name or password; put the credential in its token setting`)
  }
  return Effect.void
}

export class SettingsService extends Effect.Service<SettingsService>()("settings/SettingsService", {
  effect: Effect.gen(function*() {
    const repo = yield* SettingsRepo
    const box = yield* SecretBox
    const access = yield* AccessService

    /** The value in effect for `key`, given its stored row (if any): the database first, then the environment. */
    const resolveWith = (key: string, stored: Option.Option<SettingRow>) =>
      Effect.gen(function*() {
        if (Option.isSome(stored)) {
          const value = yield* box.open(stored.value.value)
          return { source: "database", value, updatedAt: stored.value.updated_at } satisfies Resolved as Resolved
        }
        const environment = yield* fromEnvironment(key)
        return Option.match(environment, {
          onNone: (): Resolved => ({ source: "unset" }),
          onSome: (value): Resolved => ({ source: "environment", value })
        })
      })

    const resolve = (key: string) => Effect.flatMap(repo.find(key), (stored) => resolveWith(key, stored))

    // The value never leaves in full: only its masked form is answered.
    const toView = (key: string, resolved: Resolved) =>
      new PlatformSetting({
        id: key,
        object: "platform_setting",
        key,
        // Guarded: a key such as `constructor` or `__proto__` would otherwise read Object.prototype.
        description: isKnownSetting(key) ? KnownSettings[key] ?? null : null,
        source: resolved.source,
        value_masked: resolved.source === "unset" ? null : maskSecret(resolved.value),
        created_at: resolved.source === "database" ? resolved.updatedAt.toISOString() : null,
        updated_at: resolved.source === "database" ? resolved.updatedAt.toISOString() : null
      })

    const view = (key: string) => Effect.map(resolve(key), (resolved) => toView(key, resolved))

    /** The value in effect for `key`: the stored one, else (for known keys) the environment's. */
    const get = traced("Settings.get")(function*(key: string) {
      const resolved = yield* resolve(key)
      return resolved.source === "unset" ? Option.none<Redacted.Redacted<string>>() : Option.some(Redacted.make(resolved.value))
    })

    const list = traced("Settings.list")(function*(params: ListParams) {
      yield* access.requirePlatformAdmin
      const after = params.cursor === undefined ? undefined : yield* decodeKeyCursor(params.cursor)
      const stored = yield* repo.list
      const keys = [...new Set([...Object.keys(KnownSettings), ...stored.map((row) => row.key)])].sort()
      const remaining = after === undefined ? keys : keys.filter((key) => key > after)
      const pageKeys = remaining.slice(0, params.limit)
      const storedByKey = new Map(stored.map((row) => [row.key, row]))
      const data = yield* Effect.forEach(pageKeys, (key) =>
        Effect.map(resolveWith(key, Option.fromNullable(storedByKey.get(key))), (resolved) => toView(key, resolved)))
      const last = pageKeys[pageKeys.length - 1]
      const hasMore = remaining.length > params.limit && last !== undefined
      return {
        object: "list",
        data,
        has_more: hasMore,
        next_cursor: hasMore ? encodeKeyCursor(last) : null
      } satisfies Page<PlatformSetting>
    })

    const set = traced("Settings.set")(function*(key: string, value: string) {
      const admin = yield* access.requirePlatformAdmin
      if (isBaseUrlSetting(key)) yield* checkBaseUrl(key, value)
      const sealed = yield* box.seal(value)
      const row = yield* repo.upsert(key, sealed, admin.userId)
      return toView(key, { source: "database", value, updatedAt: row.updated_at })
    })

    const clear = traced("Settings.clear")(function*(key: string) {
      yield* access.requirePlatformAdmin
      yield* repo.remove(key)
      return yield* view(key)
    })

    return { get, list, set, clear } as const
  }),
  dependencies: [SettingsRepo.Default, SecretBox.Default, AccessService.Default]
}) {}
