import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { idempotentResponse } from "../platform/IdempotentResponse.ts"
import { PaymentsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const PaymentsHttpLive = apiGroup(Api, "payments", (handlers) =>
  Effect.gen(function*() {
    const payments = yield* PaymentsService
    return handlers
      .handle("create", ({ headers, payload }) =>
        payments.create(payload, headers["idempotency-key"]).pipe(Effect.map(idempotentResponse)))
      .handle("list", ({ urlParams }) => payments.list(urlParams))
      .handle("retrieve", ({ path }) => payments.retrieve(path.id))
      .handle("cancel", ({ path }) => payments.cancel(path.id))
      .handle("refund", ({ headers, path, payload }) =>
        payments.refund(path.id, payload, headers["idempotency-key"]).pipe(Effect.map(idempotentResponse)))
      .handle("refunds", ({ path, urlParams }) => payments.refunds(path.id, urlParams))
      .handle("simulate", ({ path, payload }) => payments.simulate(path.id, payload.status))
  }))
