import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { MailService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const MailHttpLive = apiGroup(Api, "mail", (handlers) =>
  Effect.gen(function*() {
    const mail = yield* MailService
    return handlers.handle("list", ({ urlParams }) => mail.list(urlParams))
  }))
