/**
 * Segments: CRUD under the access policy, and previews (count and sample) of saved or unsaved rules.
 * `previewOf` and `contains` are plain service methods (store, mode, rules) for other areas to call.
 */
import { Effect, Option } from "effect"
import type { Permission } from "../../domain/Access.ts"
import { InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { CustomerId, SegmentId, StoreId } from "../../domain/Ids.ts"
import type { ListParams } from "../../domain/Lists.ts"
import {
  type CreateSegment,
  type ModeParams,
  type PreviewRules,
  type Rule,
  type RuleSet,
  Segment,
  SegmentList,
  SegmentPreview,
  type UpdateSegment
} from "../../domain/Promotions.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { CustomersService } from "../customers/Service.ts"
import { toCustomer } from "../customers/View.ts"
import { newId } from "../platform/Ids.ts"
import { PublicLinks } from "../platform/PublicLinks.ts"
import { pageAfter } from "../platform/Pagination.ts"
import { currentDate } from "../platform/Time.ts"
import { SegmentsRepo, type SegmentRow } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

export const toSegment = (row: SegmentRow): Segment =>
  new Segment({
    id: row.id,
    object: "segment",
    store_id: row.store_id,
    name: row.name,
    match: row.match,
    rules: row.rules,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  })

export const segmentNotFound = (id: string, param = "id") => new NotFound({ message: `No such segment: ${id}`, param })

export class SegmentsService extends Effect.Service<SegmentsService>()("segments/SegmentsService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* SegmentsRepo)
    const access = yield* AccessService
    const customers = yield* CustomersService
    const publicLinks = yield* PublicLinks

    const storeOfUser = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))
    const segmentOfUser = <A, E, R>(id: SegmentId, permission: Permission, use: (found: SegmentRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.find(id), (row) => row.store_id, permission, () => segmentNotFound(id), use)
      )

    /**
     * Refuses rules naming a tier that is not one of the store's (another store's, or none at all): such
     * a rule can never match, so a count of 0 would hide a mistake. The param points at the rule.
     */
    const checkTiers = traced("Segments.checkTiers")(function*(storeId: StoreId, rules: ReadonlyArray<Rule>) {
      const named = rules.flatMap((rule, index) =>
        rule.field !== "tier_id" ? [] : (Array.isArray(rule.value) ? rule.value : [rule.value])
          .filter((tier): tier is string => tier !== null)
          .map((tier) => ({ index, tier }))
      )
      const known = yield* repo.tiersOfStore(storeId, [...new Set(named.map((entry) => entry.tier))])
      const unknown = named.find((entry) => !known.has(entry.tier))
      if (unknown !== undefined) {
        return yield* new InvalidRequest({
          message: `rules.${unknown.index}: ${unknown.tier} is not a loyalty tier of this store`,
          param: `rules.${unknown.index}`
        })
      }
    })

    /** The count and sample of the store's customers of a mode that the rules match now. */
    const previewOf = traced("Segments.previewOf")(function*(storeId: StoreId, livemode: boolean, ruleSet: RuleSet) {
      const found = yield* repo.preview({ storeId, livemode, now: yield* currentDate }, ruleSet)
      const sample = yield* Effect.forEach(found.sample, (id) => customers.findRow(id))
      const links = yield* publicLinks.urls
      return new SegmentPreview({
        object: "segment_preview",
        count: found.count,
        sample: sample.flatMap((row) => Option.isSome(row) ? [toCustomer(row.value, links)] : [])
      })
    })

    /** Whether the customer is in the segment's rules at `at`. */
    const contains = (storeId: StoreId, livemode: boolean, ruleSet: RuleSet, customerId: CustomerId, at: Date) =>
      repo.contains({ storeId, livemode, now: at }, ruleSet, customerId)

    const list = traced("Segments.list")(function*(storeId: StoreId, params: ListParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const page = yield* pageAfter(params, (position) => repo.list(store.storeId, params.limit, position))
          return new SegmentList({ ...page, data: page.data.map(toSegment) })
        }))
    })

    const create = traced("Segments.create")(function*(storeId: StoreId, input: CreateSegment) {
      return yield* storeOfUser(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          yield* checkTiers(store.storeId, input.rules)
          const now = yield* currentDate
          return toSegment(yield* repo.insert({
            id: newId("seg"),
            store_id: store.storeId,
            name: input.name,
            match: input.match,
            rules: input.rules,
            created_at: now,
            updated_at: now
          }))
        }))
    })

    const update = traced("Segments.update")(function*(id: SegmentId, input: UpdateSegment) {
      return yield* segmentOfUser(id, "marketing.manage", (current) =>
        Effect.gen(function*() {
          if (input.rules !== undefined) yield* checkTiers(current.store_id, input.rules)
          return toSegment(yield* repo.update({
            ...current,
            name: input.name ?? current.name,
            match: input.match ?? current.match,
            rules: input.rules ?? current.rules,
            updated_at: yield* currentDate
          }))
        }))
    })

    const remove = traced("Segments.remove")(function*(id: SegmentId) {
      return yield* segmentOfUser(id, "marketing.manage", (current) =>
        Effect.gen(function*() {
          if (!(yield* repo.remove(current.id))) {
            return yield* new InvalidState({ message: `Segment ${id} is used by a promotion that has not ended`, param: "id" })
          }
          return toSegment(current)
        }))
    })

    const previewRules = traced("Segments.previewRules")(function*(storeId: StoreId, params: ModeParams, input: PreviewRules) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          yield* checkTiers(store.storeId, input.rules)
          return yield* previewOf(store.storeId, params.livemode ?? false, input)
        }))
    })

    const preview = traced("Segments.preview")(function*(id: SegmentId, params: ModeParams) {
      return yield* segmentOfUser(id, "customer.read", (segment) => previewOf(segment.store_id, params.livemode ?? false, segment))
    })

    /** The segment of the store, for a promotion naming it; anything else is 404 naming segment_id. */
    const ofStore = traced("Segments.ofStore")(function*(storeId: StoreId, id: SegmentId) {
      const found = Option.filter(yield* repo.find(id), (row) => row.store_id === storeId)
      if (Option.isNone(found)) return yield* segmentNotFound(id, "segment_id")
      return found.value
    })

    return { previewOf, contains, list, create, update, remove, previewRules, preview, ofStore, find: repo.find } as const
  }),
  dependencies: [SegmentsRepo.Default, AccessService.Default, CustomersService.Default, PublicLinks.Default]
}) {}
