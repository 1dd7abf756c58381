import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { VerificationService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const VerificationHttpLive = apiGroup(Api, "verification", (handlers) =>
  Effect.gen(function*() {
    const verification = yield* VerificationService
    return handlers
      .handle("submit", ({ payload }) => verification.submit(payload))
      .handle("status", ({ urlParams }) => verification.status(urlParams.org_id))
      .handle("adminList", ({ urlParams }) => verification.adminList(urlParams))
      .handle("approve", ({ path }) => verification.approve(path.id))
      .handle("reject", ({ path, payload }) => verification.reject(path.id, payload.reason))
  }))
