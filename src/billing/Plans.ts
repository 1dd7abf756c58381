/**
 * The billing side of the plans (their catalogue and limits are the limits area's): what a plan costs, and
 * where its invoices are paid.
 */
import type { Plan } from "../../domain/Billing.ts"

/**
 * The platform's own test-mode store that receives subscription invoices' payments unless the
 * `billing_store_id` setting names another (its row is created by a migration).
 */
export const PLATFORM_BILLING_STORE_ID = "str_PlatformBilling000000000"

/** The monthly price in cents. */
export const priceMinorOf = (plan: Plan): bigint => BigInt(plan.price.amount.replace(".", ""))
