/**
 * Plan limits, checked where stores, payments and members are created: the next one past the
 * organization's plan limit is refused with 403 `forbidden` naming the plan. An area of its own below
 * stores, accounts and payments, so they do not depend on billing (which depends on payments).
 */
import { Effect, Option } from "effect"
import { Forbidden } from "../../domain/Errors.ts"
import type { OrganizationId, StoreId } from "../../domain/Ids.ts"
import { currentDate } from "../platform/Time.ts"
import type { Plan } from "../../domain/Billing.ts"
import { FREE, limitOf, PLATFORM_BILLING_ORGANIZATION_ID, planOf, type Usage } from "./Plans.ts"
import { LimitsRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

/**
 * How many live payments the organization created in [from, to) (to open when null). The payments area
 * owns the table and passes its count in, since it sits above this one.
 */
export type LivePaymentCount = (orgId: OrganizationId, from: Date, to: Date | null) => Effect.Effect<number>

/** Whether the organization is the platform's own (its subscription payments are never limited). */
const isPlatform = (orgId: OrganizationId) => orgId === PLATFORM_BILLING_ORGANIZATION_ID

const what: Record<keyof Usage, string> = {
  stores: "stores",
  payments_this_month: "live payments a month",
  team_members: "team members"
}

/** How long after its creation time a payment is surely committed (counted once, in the settled part). */
const SETTLE_MILLIS = 5_000
/** How often the settled part of the month's count is moved on. */
const REBASE_MILLIS = 10_000

export class PlanLimits extends Effect.Service<PlanLimits>()("limits/PlanLimits", {
  effect: Effect.gen(function*() {
    const repo = yield* LimitsRepo

    const refuse = (orgId: OrganizationId, plan: Plan, kind: keyof Usage, limit: number, used: number) =>
      new Forbidden({
        message: `The ${plan.name} plan (${plan.id}) allows ${limit} ${what[kind]}; this organization has ${used}. ` +
          `Upgrade the plan (POST /billing/${orgId}/subscribe) to add more`
      })

    /**
     * Fails with Forbidden when the organization already holds as many stores or members as its plan
     * allows. Call it in the creating transaction: it locks the organization's row, so two creations at
     * once cannot both take the last place.
     */
    const requireRoom = traced("PlanLimits.requireRoom")(function*(orgId: OrganizationId, kind: "stores" | "team_members") {
      if (isPlatform(orgId)) return
      yield* repo.lockOrganization(orgId)
      const plan = planOf(yield* repo.planIdOf(orgId)) ?? FREE
      const limit = limitOf(plan, kind)
      const used = yield* repo.holdings(orgId, kind)
      if (used >= limit) return yield* refuse(orgId, plan, kind, limit, used)
    })

    /**
     * The organization's live payments this month, counted without reading the whole month at each
     * payment: the month up to a settled point (SETTLE_MILLIS ago, so late commits are not missed) is
     * counted once per process and moved on every REBASE_MILLIS by counting only what came since; each
     * check then counts the payments after that point. Entries are replaced, never changed, so two checks
     * moving one on at once agree.
     */
    const liveCounts = new Map<OrganizationId, { readonly monthStart: number; readonly counted: number; readonly upTo: Date }>()
    const livePaymentsThisMonth = (orgId: OrganizationId, livePaymentsBetween: LivePaymentCount) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
        const settled = new Date(Math.max(monthStart.getTime(), now.getTime() - SETTLE_MILLIS))
        let entry = liveCounts.get(orgId)
        if (entry === undefined || entry.monthStart !== monthStart.getTime() || settled < entry.upTo) {
          entry = { monthStart: monthStart.getTime(), counted: yield* livePaymentsBetween(orgId, monthStart, settled), upTo: settled }
          liveCounts.set(orgId, entry)
        } else if (settled.getTime() - entry.upTo.getTime() > REBASE_MILLIS) {
          entry = { ...entry, counted: entry.counted + (yield* livePaymentsBetween(orgId, entry.upTo, settled)), upTo: settled }
          liveCounts.set(orgId, entry)
        }
        return entry.counted + (yield* livePaymentsBetween(orgId, entry.upTo, null))
      })

    /**
     * The room for one more live payment of a store (test-mode payments are not counted). Not locked: a
     * payment burst may pass the limit by the payments in flight, which is cheaper than serializing every
     * payment of an organization.
     */
    const requirePaymentRoom = traced("PlanLimits.requirePaymentRoom")(function*(
      storeId: StoreId,
      livemode: boolean,
      livePaymentsBetween: LivePaymentCount
    ) {
      if (!livemode) return
      const found = yield* repo.organizationOfStore(storeId)
      if (Option.isNone(found) || isPlatform(found.value)) return
      const orgId = found.value
      const plan = planOf(yield* repo.planIdOf(orgId)) ?? FREE
      const limit = limitOf(plan, "payments_this_month")
      const used = yield* livePaymentsThisMonth(orgId, livePaymentsBetween)
      if (used >= limit) return yield* refuse(orgId, plan, "payments_this_month", limit, used)
    })

    /**
     * Creates one more store or member (`create`) if the plan has room for it: the check and the creation
     * share a transaction holding the organization's row, so the last place is taken once.
     */
    const withRoom = <A, E, R>(orgId: OrganizationId, kind: "stores" | "team_members", create: Effect.Effect<A, E, R>) =>
      repo.inTransaction(Effect.zipRight(requireRoom(orgId, kind), create))

    return { requireRoom, requirePaymentRoom, withRoom } as const
  }),
  dependencies: [LimitsRepo.Default]
}) {}
