import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { idempotentResponse } from "../platform/IdempotentResponse.ts"
import { CustomersService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const CustomersHttpLive = apiGroup(Api, "customers", (handlers) =>
  Effect.gen(function*() {
    const customers = yield* CustomersService
    return handlers
      .handle("create", ({ headers, payload }) =>
        customers.create(payload, headers["idempotency-key"]).pipe(Effect.map(idempotentResponse)))
      .handle("list", ({ urlParams }) => customers.list(urlParams))
      .handle("retrieve", ({ path }) => customers.retrieve(path.id))
      .handle("preferences", ({ path }) => customers.preferences(path.id))
      .handle("setPreferences", ({ path, payload }) => customers.setPreferences(path.id, payload))
      .handle("revokePublicLinks", ({ path }) => customers.revokePublicLinks(path.id))
  }))

export const CustomerConsoleHttpLive = apiGroup(Api, "customerConsole", (handlers) =>
  Effect.gen(function*() {
    const customers = yield* CustomersService
    return handlers
      .handle("list", ({ path, urlParams }) => customers.listForStore(path.storeId, urlParams))
      .handle("retrieve", ({ path }) => customers.overview(path.id))
      .handle("setPreferences", ({ path, payload }) => customers.setPreferencesAsUser(path.id, payload))
      .handle("consentLog", ({ path, urlParams }) => customers.consentLog(path.id, urlParams))
      .handle("erase", ({ path }) => customers.erase(path.id))
      .handle("revokePublicLinks", ({ path }) => customers.revokePublicLinksAsUser(path.id))
  }))
