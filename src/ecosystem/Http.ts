import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { EcosystemService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const EcosystemHttpLive = apiGroup(Api, "ecosystem", (handlers) =>
  Effect.gen(function*() {
    const ecosystem = yield* EcosystemService
    return handlers.handle("products", ({ urlParams }) => ecosystem.products(urlParams))
  }))
