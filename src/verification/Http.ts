import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { VerificationService } from "./Service.ts"

export const VerificationHttpLive = HttpApiBuilder.group(Api, "verification", (handlers) =>
  Effect.gen(function*() {
    const verification = yield* VerificationService
    return handlers
      .handle("submit", ({ payload }) => verification.submit(payload))
      .handle("status", ({ urlParams }) => verification.status(urlParams.org_id))
      .handle("adminList", ({ urlParams }) => verification.adminList(urlParams))
      .handle("approve", ({ path }) => verification.approve(path.id))
      .handle("reject", ({ path, payload }) => verification.reject(path.id, payload.reason))
  }))
