import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { AccessConsoleService } from "./Console.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const AccessHttpLive = apiGroup(Api, "access", (handlers) =>
  Effect.gen(function*() {
    const accessConsole = yield* AccessConsoleService
    return handlers
      .handle("matrix", ({ path }) => accessConsole.matrix(path.orgId))
      .handle("check", ({ path, payload }) => accessConsole.check(path.orgId, payload))
  }))
