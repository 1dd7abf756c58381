/**
 * Risk cases: opened by the rules (Jobs.ts), listed, counted and moved through their statuses by
 * people with risk.manage. The moves are one table; a closed case never reopens (a new one opens instead
 * when the rule fires again).
 */
import { Effect, Option } from "effect"
import type { RiskCase, RiskCaseListParams, RiskStatus, RiskSummary, UpdateRiskCase } from "../../domain/Risk.ts"
import { InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { RiskCaseId, StoreId } from "../../domain/Ids.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { newId } from "../platform/Ids.ts"
import { Outbox } from "../platform/Outbox.ts"
import { pageAfter } from "../platform/Pagination.ts"
import { currentDate } from "../platform/Time.ts"
import { type NewCase, type RiskCaseRow, RiskRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

/** Every allowed move of a case: from → the statuses it may go to. */
export const RISK_CASE_MOVES: Readonly<Record<RiskStatus, ReadonlyArray<RiskStatus>>> = {
  open: ["investigating", "resolved", "dismissed"],
  investigating: ["resolved", "dismissed"],
  resolved: [],
  dismissed: []
}

const NEEDS_RESOLUTION: ReadonlySet<RiskStatus> = new Set(["resolved", "dismissed"])

export const toRiskCase = (row: RiskCaseRow): RiskCase => ({
  id: row.id,
  object: "risk_case",
  store_id: row.store_id,
  livemode: row.livemode,
  kind: row.kind,
  subject: { type: row.subject_type, id: row.subject_id },
  status: row.status,
  resolution: row.resolution,
  details: row.details,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

export class RiskService extends Effect.Service<RiskService>()("risk/RiskService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* RiskRepo, "inTransaction")
    const access = yield* AccessService
    const outbox = yield* Outbox

    const notFound = (id: string) => new NotFound({ message: `No such risk case: ${id}`, param: "caseId" })

    /**
     * Opens a case unless one of the same subject and kind is open; with the `risk.case_opened` event in
     * the same transaction. Answers the case when this call opened it.
     */
    const open = (input: Omit<NewCase, "id" | "at">) =>
      repo.inTransaction(Effect.gen(function*() {
        const at = yield* currentDate
        const opened = yield* repo.insertCase({ ...input, id: newId("risk"), at })
        if (Option.isSome(opened)) {
          yield* outbox.emit({
            storeId: input.storeId,
            livemode: input.livemode,
            type: "risk.case_opened",
            object: toRiskCase(opened.value),
            at
          })
        }
        return Option.map(opened, toRiskCase)
      }))

    const readable = <A, E, R>(storeId: StoreId, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, "analytics.read", use))

    /** The cases of a store, newest first; for callers that authorized the store (the AI's fraud insights). */
    const casesOf = (storeId: StoreId, params: RiskCaseListParams) =>
      Effect.gen(function*() {
        const page = yield* pageAfter(params, (position) =>
          repo.page({ storeId, livemode: params.livemode ?? false, status: params.status ?? null, limit: params.limit, position }))
        return { ...page, data: page.data.map(toRiskCase) }
      })

    const cases = traced("Risk.cases")(function*(storeId: StoreId, params: RiskCaseListParams) {
      return yield* readable(storeId, (store) => casesOf(store.storeId, params))
    })

    const summary = traced("Risk.summary")(function*(storeId: StoreId, livemode = false) {
      return yield* readable(storeId, (store) =>
        Effect.gen(function*() {
          const counts = yield* repo.countsByStatus({ storeId: store.storeId, livemode })
          const of = (status: RiskStatus) => counts.find((row) => row.status === status)?.n ?? 0
          return {
            object: "risk_summary",
            store_id: store.storeId,
            livemode,
            open: of("open"),
            investigating: of("investigating"),
            resolved: of("resolved"),
            dismissed: of("dismissed"),
            total: counts.reduce((total, row) => total + row.n, 0)
          } satisfies RiskSummary
        }))
    })

    const update = traced("Risk.update")(function*(id: RiskCaseId, input: UpdateRiskCase) {
      yield* access.currentUser
      return yield* access.withOwned(repo.find(id), (row) => row.store_id, "risk.manage", () => notFound(id), () =>
        Effect.gen(function*() {
          if (NEEDS_RESOLUTION.has(input.status) && input.resolution === undefined) {
            return yield* new InvalidRequest({ message: `A ${input.status} case needs a resolution`, param: "resolution" })
          }
          const at = yield* currentDate
          const updated = yield* repo.inTransaction(Effect.gen(function*() {
            const current = yield* Effect.flatMap(repo.findForUpdate(id), Option.match({
              onNone: () => Effect.fail(notFound(id)),
              onSome: Effect.succeed
            }))
            if (!RISK_CASE_MOVES[current.status].includes(input.status)) {
              return yield* new InvalidState({
                message: `Risk case ${id} is ${current.status} and cannot become ${input.status}` +
                  (RISK_CASE_MOVES[current.status].length === 0 ? ": a closed case stays closed" : ""),
                param: "status"
              })
            }
            return yield* repo.setStatus({ id, status: input.status, resolution: input.resolution ?? current.resolution, at })
          }))
          return toRiskCase(updated)
        }))
    })

    return { open, cases, casesOf, summary, update } as const
  }),
  dependencies: [RiskRepo.Default, AccessService.Default, Outbox.Default]
}) {}
