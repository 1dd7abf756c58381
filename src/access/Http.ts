import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { AccessConsoleService } from "./Console.ts"

export const AccessHttpLive = HttpApiBuilder.group(Api, "access", (handlers) =>
  Effect.gen(function*() {
    const accessConsole = yield* AccessConsoleService
    return handlers
      .handle("matrix", ({ path }) => accessConsole.matrix(path.orgId))
      .handle("check", ({ path, payload }) => accessConsole.check(path.orgId, payload))
  }))
