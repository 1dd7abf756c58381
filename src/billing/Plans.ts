/** The plans, as data. Prices in US cents; a limit of -1 is unlimited. */
import { Plan, type PlanId } from "../../domain/Connectors.ts"

export const Plans: ReadonlyArray<Plan> = [
  new Plan({ id: "free", object: "plan", name: "Free", price: { amount: 0, currency: "USD" }, interval: "month", limits: { stores: 1, payments_per_month: 100, team_members: 2 } }),
  new Plan({ id: "starter", object: "plan", name: "Starter", price: { amount: 1900, currency: "USD" }, interval: "month", limits: { stores: 3, payments_per_month: 5000, team_members: 10 } }),
  new Plan({ id: "growth", object: "plan", name: "Growth", price: { amount: 9900, currency: "USD" }, interval: "month", limits: { stores: 20, payments_per_month: 100000, team_members: 50 } })
]

export const planOf = (id: string): Plan | undefined => Plans.find((plan) => plan.id === id)
export const FREE: Plan = Plans[0]!
export type { PlanId }
