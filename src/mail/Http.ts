import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { MailService } from "./Service.ts"

export const MailHttpLive = HttpApiBuilder.group(Api, "mail", (handlers) =>
  Effect.gen(function*() {
    const mail = yield* MailService
    return handlers.handle("list", ({ urlParams }) => mail.list(urlParams))
  }))
