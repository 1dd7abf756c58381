import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { EcosystemService } from "./Service.ts"

export const EcosystemHttpLive = HttpApiBuilder.group(Api, "ecosystem", (handlers) =>
  Effect.gen(function*() {
    const ecosystem = yield* EcosystemService
    return handlers.handle("products", ({ urlParams }) => ecosystem.products(urlParams))
  }))
