import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { SettingsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const SettingsHttpLive = apiGroup(Api, "settings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* SettingsService
    return handlers
      .handle("list", ({ urlParams }) => settings.list(urlParams))
      .handle("set", ({ path, payload }) => settings.set(path.key, payload.value))
      .handle("clear", ({ path }) => settings.clear(path.key))
  }))
