/**
 * Promotions: CRUD in the editable statuses, the status machine (Machine.ts) with four-eyes approval, the
 * audit trail of every change, the `promotion.activated` and `promotion.ended` events, and the 30-day
 * simulation. Awarding runs from the outbox (Awarding.ts).
 */
import { Effect, Option } from "effect"
import type { Permission } from "../../domain/Access.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { PromotionId, StoreId, UserId } from "../../domain/Ids.ts"
import type { ListParams } from "../../domain/Lists.ts"
import {
  type CreatePromotion,
  type MinAmount,
  type ModeParams,
  Promotion,
  PromotionAuditEntry,
  PromotionList,
  PromotionSimulation,
  type PromotionStatus,
  type RuleSet,
  SIMULATION_WINDOW_DAYS,
  type UpdatePromotion
} from "../../domain/Promotions.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { newId } from "../platform/Ids.ts"
import { formatAmount, parseAmount } from "../platform/Money.ts"
import { Outbox } from "../platform/Outbox.ts"
import { pageAfter } from "../platform/Pagination.ts"
import { currentDate } from "../platform/Time.ts"
import { SegmentsService } from "../segments/Service.ts"
import { allows, type MoveAction, refusal, transitions, undeletable } from "./Machine.ts"
import { type AuditRow, type PromotionRow, PromotionsRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

/**
 * Promotion events carry `livemode: true`: a promotion is one store-wide object that acts on live
 * payments (and on test ones alike), not a per-mode one.
 */
export const PROMOTION_EVENT_LIVEMODE = true

export const toPromotion = (row: PromotionRow, audit: ReadonlyArray<AuditRow>): Promotion =>
  new Promotion({
    id: row.id,
    object: "promotion",
    store_id: row.store_id,
    name: row.name,
    segment_id: row.segment_id,
    bonus_points: row.bonus_points,
    ...(row.min_amount !== null && row.min_currency !== null
      ? { min_amount: { amount: formatAmount(BigInt(row.min_amount), row.min_currency), currency: row.min_currency } }
      : {}),
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    status: row.status,
    rejection_reason: row.rejection_reason,
    submitted_by: row.submitted_by,
    approved_by: row.approved_by,
    audit: audit.map((entry) =>
      new PromotionAuditEntry({
        action: entry.action,
        from: entry.from_status,
        to: entry.to_status,
        user_id: entry.user_id,
        reason: entry.reason,
        at: entry.at.toISOString()
      })
    ),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  })

export const promotionNotFound = (id: string) => new NotFound({ message: `No such promotion: ${id}`, param: "id" })

/** A move the machine does not allow from `status`: 409 naming the status. */
const refused = (action: MoveAction, status: PromotionStatus) =>
  new InvalidState({ message: refusal(action, status), param: "status" })

const checkWindow = (startsAt: Date, endsAt: Date) =>
  endsAt.getTime() > startsAt.getTime()
    ? Effect.void
    : Effect.fail(new InvalidRequest({ message: "ends_at must be after starts_at", param: "ends_at" }))

/** The event a move announces, if any. */
const eventOf: Partial<Record<MoveAction, string>> = { activate: "promotion.activated", end: "promotion.ended" }

export class PromotionsService extends Effect.Service<PromotionsService>()("promotions/PromotionsService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* PromotionsRepo, "inTransaction")
    const access = yield* AccessService
    const segments = yield* SegmentsService
    const outbox = yield* Outbox

    const storeOfUser = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))
    const promotionOfUser = <A, E, R>(
      id: PromotionId,
      permission: Permission,
      use: (found: { readonly row: PromotionRow; readonly userId: UserId }) => Effect.Effect<A, E, R>
    ) =>
      Effect.flatMap(access.currentUser, (user) =>
        access.withOwned(repo.find(id), (row) => row.store_id, permission, () => promotionNotFound(id), (row) =>
          use({ row, userId: user.userId })))

    /**
     * Why a guarded write changed nothing: the promotion is gone (404), or it is now in a status `refuse`
     * names (a racing move won).
     */
    const refusedNow = (id: PromotionId, refuse: (status: PromotionStatus) => InvalidState) =>
      Effect.flatMap(repo.find(id), (now): Effect.Effect<never, NotFound | InvalidState> =>
        Option.isNone(now) ? Effect.fail(promotionNotFound(id)) : Effect.fail(refuse(now.value.status)))

    const withAudit = (row: PromotionRow) => Effect.map(repo.auditsOf([row.id]), (audit) => toPromotion(row, audit))

    /**
     * Applies a move inside one transaction: the guarded status update, its audit entry and its event;
     * answers the promotion as moved, audit trail included. A promotion no longer in a status the move
     * starts from (a racing move won) is 409 naming its status.
     */
    const applyMove = (
      current: PromotionRow,
      action: MoveAction,
      userId: UserId | null,
      extra: { readonly reason?: string; readonly submittedBy?: UserId; readonly approvedBy?: UserId } = {}
    ) =>
      Effect.gen(function*() {
        if (!allows(action, current.status)) return yield* refused(action, current.status)
        const at = yield* currentDate
        const { to } = transitions[action]
        const moved = yield* repo.inTransaction(Effect.gen(function*() {
          const row = yield* repo.move({
            id: current.id,
            from: transitions[action].from,
            to,
            at,
            rejection_reason: action === "reject" ? extra.reason ?? null : null,
            submitted_by: extra.submittedBy,
            approved_by: extra.approvedBy
          })
          if (Option.isNone(row)) return Option.none<Promotion>()
          yield* repo.insertAudit({
            promotion_id: current.id,
            action,
            from_status: current.status,
            to_status: to,
            user_id: userId,
            reason: extra.reason ?? null,
            at
          })
          const promotion = toPromotion(row.value, yield* repo.auditsOf([current.id]))
          const type = eventOf[action]
          if (type !== undefined) {
            yield* outbox.emit({ storeId: current.store_id, livemode: PROMOTION_EVENT_LIVEMODE, type, object: promotion, at })
          }
          return Option.some(promotion)
        }))
        if (Option.isNone(moved)) return yield* refusedNow(current.id, (status) => refused(action, status))
        return moved.value
      })

    const list = traced("Promotions.list")(function*(storeId: StoreId, params: ListParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const page = yield* pageAfter(params, (position) => repo.list(store.storeId, params.limit, position))
          const audits = yield* repo.auditsOf(page.data.map((row) => row.id))
          return new PromotionList({
            ...page,
            data: page.data.map((row) => toPromotion(row, audits.filter((entry) => entry.promotion_id === row.id)))
          })
        }))
    })

    /** One promotion of a store the user may read, with its audit trail. */
    const retrieve = traced("Promotions.retrieve")(function*(id: PromotionId) {
      return yield* promotionOfUser(id, "customer.read", ({ row }) => withAudit(row))
    })

    /**
     * The minimum as stored, in minor units: the wire's decimal string read with the currency's decimal
     * places ("5.00" USD is 500 cents; KHR takes whole riel).
     */
    const minimumOf = (minimum: MinAmount | null) =>
      minimum === null
        ? Effect.succeed({ amount: null, currency: null })
        : Effect.map(parseAmount(minimum.amount, minimum.currency, "min_amount.amount"), (minor) => ({
          amount: Number(minor),
          currency: minimum.currency
        }))

    const create = traced("Promotions.create")(function*(storeId: StoreId, input: CreatePromotion) {
      return yield* storeOfUser(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          const userId = (yield* access.currentUser).userId
          yield* checkWindow(input.starts_at, input.ends_at)
          const segmentId = input.segment_id ?? null
          if (segmentId !== null) yield* segments.ofStore(store.storeId, segmentId)
          const minimum = yield* minimumOf(input.min_amount ?? null)
          const now = yield* currentDate
          const row = yield* repo.inTransaction(Effect.gen(function*() {
            const row = yield* repo.insert({
              id: newId("promo"),
              store_id: store.storeId,
              name: input.name,
              segment_id: segmentId,
              bonus_points: input.bonus_points,
              min_amount: minimum.amount,
              min_currency: minimum.currency,
              starts_at: input.starts_at,
              ends_at: input.ends_at,
              status: "draft",
              rejection_reason: null,
              submitted_by: null,
              approved_by: null,
              created_at: now,
              updated_at: now
            })
            yield* repo.insertAudit({
              promotion_id: row.id,
              action: "create",
              from_status: null,
              to_status: "draft",
              user_id: userId,
              reason: null,
              at: now
            })
            return row
          }))
          return yield* withAudit(row)
        }))
    })

    const update = traced("Promotions.update")(function*(id: PromotionId, input: UpdatePromotion) {
      return yield* promotionOfUser(id, "marketing.manage", ({ row: current, userId }) =>
        Effect.gen(function*() {
          if (!allows("update", current.status)) return yield* refused("update", current.status)
          const startsAt = input.starts_at ?? current.starts_at
          const endsAt = input.ends_at ?? current.ends_at
          yield* checkWindow(startsAt, endsAt)
          const segmentId = input.segment_id === undefined ? current.segment_id : input.segment_id
          if (segmentId !== null && segmentId !== current.segment_id) yield* segments.ofStore(current.store_id, segmentId)
          const minimum = input.min_amount === undefined
            ? { amount: current.min_amount, currency: current.min_currency }
            : yield* minimumOf(input.min_amount)
          const at = yield* currentDate
          const updated = yield* repo.inTransaction(Effect.gen(function*() {
            const row = yield* repo.updateFields({
              id: current.id,
              name: input.name ?? current.name,
              segment_id: segmentId,
              bonus_points: input.bonus_points ?? current.bonus_points,
              min_amount: minimum.amount,
              min_currency: minimum.currency,
              starts_at: startsAt,
              ends_at: endsAt,
              status: transitions.update.to,
              rejection_reason: null,
              updated_at: at
            }, transitions.update.from)
            if (Option.isSome(row)) {
              yield* repo.insertAudit({
                promotion_id: current.id,
                action: "update",
                from_status: current.status,
                to_status: transitions.update.to,
                user_id: userId,
                reason: null,
                at
              })
            }
            return row
          }))
          if (Option.isNone(updated)) return yield* refusedNow(current.id, (status) => refused("update", status))
          return yield* withAudit(updated.value)
        }))
    })

    const remove = traced("Promotions.remove")(function*(id: PromotionId) {
      return yield* promotionOfUser(id, "marketing.manage", ({ row: current }) =>
        Effect.gen(function*() {
          const answer = yield* withAudit(current)
          if (!(yield* repo.remove(current.id, undeletable))) {
            return yield* refusedNow(current.id, (status) =>
              new InvalidState({ message: `A ${status} promotion cannot be deleted; end it first`, param: "status" }))
          }
          return answer
        }))
    })

    const submit = traced("Promotions.submit")(function*(id: PromotionId) {
      return yield* promotionOfUser(id, "marketing.manage", ({ row, userId }) => applyMove(row, "submit", userId, { submittedBy: userId }))
    })

    /** Four eyes: an Owner (promotion.approve), and never the user who submitted it. */
    const decide = (id: PromotionId, action: "approve" | "reject", reason?: string) =>
      Effect.gen(function*() {
        return yield* promotionOfUser(id, "promotion.approve", ({ row, userId }) =>
          Effect.gen(function*() {
            if (row.submitted_by === userId) {
              return yield* new Forbidden({ message: `A promotion cannot be ${action === "approve" ? "approved" : "rejected"} by the user who submitted it` })
            }
            return yield* applyMove(row, action, userId, action === "approve" ? { approvedBy: userId } : { reason: reason ?? "" })
          }))
      })

    const approve = traced("Promotions.approve")((id: PromotionId) => decide(id, "approve"))
    const reject = traced("Promotions.reject")((id: PromotionId, reason: string) => decide(id, "reject", reason))

    const activate = traced("Promotions.activate")(function*(id: PromotionId) {
      return yield* promotionOfUser(id, "marketing.manage", ({ row, userId }) =>
        Effect.gen(function*() {
          if (allows("activate", row.status) && row.ends_at.getTime() <= (yield* currentDate).getTime()) {
            return yield* new InvalidState({
              message: `The promotion's end date (${row.ends_at.toISOString()}) has passed; it cannot be activated`,
              param: "ends_at"
            })
          }
          return yield* applyMove(row, "activate", userId)
        }))
    })

    const pause = traced("Promotions.pause")(function*(id: PromotionId) {
      return yield* promotionOfUser(id, "marketing.manage", ({ row, userId }) => applyMove(row, "pause", userId))
    })

    const end = traced("Promotions.end")(function*(id: PromotionId) {
      return yield* promotionOfUser(id, "marketing.manage", ({ row, userId }) => applyMove(row, "end", userId))
    })

    /** Ends the active and paused promotions whose end date passed (no user: the audit entry names none). */
    const endOverdue = traced("Promotions.endOverdue")(function*() {
      const due = yield* repo.overdue(yield* currentDate)
      yield* Effect.forEach(due, (row) => applyMove(row, "end", null).pipe(Effect.catchTag("InvalidState", () => Effect.void)), {
        discard: true
      })
      return due.length
    }, AccessService.asSystem("ending the promotions whose end date passed"))

    const simulate = traced("Promotions.simulate")(function*(id: PromotionId, params: ModeParams) {
      return yield* promotionOfUser(id, "customer.read", ({ row }) =>
        Effect.gen(function*() {
          const segment = row.segment_id === null ? Option.none() : yield* segments.find(row.segment_id)
          const result = yield* repo.simulate({
            storeId: row.store_id,
            livemode: params.livemode ?? false,
            now: yield* currentDate,
            segment: Option.getOrNull(segment),
            minAmount: row.min_amount,
            minCurrency: row.min_currency
          })
          return new PromotionSimulation({
            object: "promotion_simulation",
            window_days: SIMULATION_WINDOW_DAYS,
            eligible_customers: result.eligibleCustomers,
            qualifying_payments: result.qualifyingPayments,
            estimated_bonus_points: result.qualifyingPayments * row.bonus_points
          })
        }))
    })

    /**
     * The simulation of a promotion that does not exist yet (the assistant's campaign suggestion), for a
     * caller that authorized the store already: the figures `simulate` answers for a saved one.
     */
    const simulateDraft = (draft: Parameters<typeof repo.simulate>[0]) => repo.simulate(draft)

    return { list, retrieve, create, update, remove, submit, approve, reject, activate, pause, end, endOverdue, simulate, simulateDraft } as const
  }),
  dependencies: [PromotionsRepo.Default, AccessService.Default, SegmentsService.Default, Outbox.Default]
}) {}

