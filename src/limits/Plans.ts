/**
 * The plans, as data: what each allows, and its price (decimal US dollars a month, which billing charges).
 * `payments_per_month` counts live-mode payments (test mode is free and unlimited); the free plan leaves room
 * for a small shop and its tests.
 */
import { Plan, type PlanId } from "../../domain/Billing.ts"

/**
 * The platform's own organization, which receives subscription invoices' payments (its rows are created by a
 * migration): its own payments are never limited.
 */
export const PLATFORM_BILLING_ORGANIZATION_ID = "org_PlatformBilling000000000"

export const Plans: ReadonlyArray<Plan> = [
  new Plan({
    id: "free",
    object: "plan",
    name: "Free",
    price: { amount: "0.00", currency: "USD" },
    interval: "month",
    limits: { stores: 3, payments_per_month: 1000, team_members: 5 }
  }),
  new Plan({
    id: "starter",
    object: "plan",
    name: "Starter",
    price: { amount: "19.00", currency: "USD" },
    interval: "month",
    limits: { stores: 10, payments_per_month: 10000, team_members: 20 }
  }),
  new Plan({
    id: "growth",
    object: "plan",
    name: "Growth",
    price: { amount: "99.00", currency: "USD" },
    interval: "month",
    limits: { stores: 50, payments_per_month: 200000, team_members: 100 }
  })
]

export const planOf = (id: string): Plan | undefined => Plans.find((plan) => plan.id === id)
export const FREE: Plan = Plans[0]!

/** What an organization holds and did this month, as held against its plan's limits. */
export interface Usage {
  readonly stores: number
  readonly payments_this_month: number
  readonly team_members: number
}

/** The usage figures and the plan limits they are held against. */
export const limitNames = {
  stores: "stores",
  payments_this_month: "payments_per_month",
  team_members: "team_members"
} as const

export const limitOf = (plan: Plan, usage: keyof typeof limitNames): number => plan.limits[limitNames[usage]]

export type { PlanId }
