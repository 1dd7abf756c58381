/**
 * Subscription billing: a subscription per organization (free until changed), usage against the plan's
 * limits, plan changes with history, and subscription invoices paid at most once.
 */
import { SqlClient } from "@effect/sql"
import { Either, Effect } from "effect"
import { Billing, PlanChange, SubscriptionInvoice } from "../../domain/Connectors.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { InvoiceId, OrganizationId } from "../../domain/Ids.ts"
import { AccessService } from "../access/Service.ts"
import { AppConfig } from "../platform/Config.ts"
import { newId } from "../platform/Ids.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { currentDate } from "../platform/Time.ts"
import { buildKhqr, TEST_MERCHANT } from "../payments/Khqr.ts"
import { FREE, planOf, Plans } from "./Plans.ts"

interface Usage {
  readonly stores: number
  readonly payments_this_month: number
  readonly team_members: number
}

interface InvoiceRow {
  readonly id: InvoiceId
  readonly organization_id: OrganizationId
  readonly plan_id: string
  readonly amount: string | number
  readonly status: "open" | "paid" | "void"
  readonly qr_payload: string
  readonly qr_md5: string
  readonly created_at: Date
  readonly paid_at: Date | null
}

const limitNames = { stores: "stores", payments_this_month: "payments_per_month", team_members: "team_members" } as const
const PERIOD_MILLIS = 30 * 24 * 60 * 60 * 1000

export class BillingService extends Effect.Service<BillingService>()("billing/BillingService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* AccessService
    const config = yield* AppConfig
    const publicUrl = yield* PublicBaseUrl

    const subscriptionOf = (orgId: OrganizationId) =>
      Effect.map(
        sql<{ plan_id: string; status: string; current_period_end: Date | null }>`
          SELECT plan_id, status, current_period_end FROM subscriptions WHERE organization_id = ${orgId}`,
        (rows) => rows[0] ?? { plan_id: FREE.id, status: "active", current_period_end: null }
      ).pipe(Effect.orDie)

    const usageOf = (orgId: OrganizationId) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
        const rows = yield* sql<{ stores: number; payments: number; members: number }>`
          SELECT
            (SELECT count(*)::int FROM stores WHERE organization_id = ${orgId}) AS stores,
            (SELECT count(*)::int FROM payments p JOIN stores s ON s.id = p.store_id
              WHERE s.organization_id = ${orgId} AND p.created_at >= ${monthStart}) AS payments,
            (SELECT count(*)::int FROM memberships WHERE organization_id = ${orgId}) AS members`.pipe(Effect.orDie)
        const row = rows[0]!
        return { stores: row.stores, payments_this_month: row.payments, team_members: row.members } satisfies Usage
      })

    const planOfOrg = (orgId: OrganizationId) => Effect.map(subscriptionOf(orgId), (sub) => planOf(sub.plan_id) ?? FREE)

    const limitOf = (plan: typeof FREE, key: keyof Usage) => plan.limits[limitNames[key]]

    /**
     * Refuses the next store, payment or member when the organization's plan limit is reached (403 naming
     * the plan). Called where those are created.
     */
    const requireRoom = (orgId: OrganizationId, key: keyof Usage) =>
      Effect.gen(function*() {
        const plan = yield* planOfOrg(orgId)
        const usage = yield* usageOf(orgId)
        const limit = limitOf(plan, key)
        if (limit >= 0 && usage[key] >= limit) {
          return yield* new Forbidden({
            message: `The ${plan.name} plan allows ${limit} ${limitNames[key].replaceAll("_", " ")}; upgrade the plan to add more`
          })
        }
      })

    const view = (orgId: OrganizationId) =>
      Effect.gen(function*() {
        const sub = yield* subscriptionOf(orgId)
        const plan = planOf(sub.plan_id) ?? FREE
        const usage = yield* usageOf(orgId)
        const warnings = (Object.keys(limitNames) as Array<keyof Usage>).flatMap((key) => {
          const limit = limitOf(plan, key)
          return limit > 0 && usage[key] >= 0.8 * limit
            ? [`${limitNames[key]}: ${usage[key]} of ${limit} used on the ${plan.name} plan`]
            : []
        })
        return new Billing({
          object: "billing",
          org_id: orgId,
          plan,
          subscription: { status: sub.status, current_period_end: sub.current_period_end?.toISOString() ?? null },
          usage,
          warnings
        })
      })

    const get = Effect.fn("Billing.get")(function*(orgId: OrganizationId) {
      yield* access.organization(orgId, "organization.read")
      return yield* view(orgId)
    })

    /** Makes `planId` the organization's plan and writes the change to its history (in the caller's transaction). */
    const activate = (orgId: OrganizationId, planId: string, invoiceId: string | null, now: Date) =>
      Effect.gen(function*() {
        const current = yield* subscriptionOf(orgId)
        const periodEnd = planId === FREE.id ? null : new Date(now.getTime() + PERIOD_MILLIS)
        yield* sql`
          INSERT INTO subscriptions (organization_id, plan_id, status, current_period_end, updated_at)
          VALUES (${orgId}, ${planId}, 'active', ${periodEnd}, ${now})
          ON CONFLICT (organization_id) DO UPDATE
          SET plan_id = EXCLUDED.plan_id, status = 'active', current_period_end = EXCLUDED.current_period_end, updated_at = EXCLUDED.updated_at`
        yield* sql`
          INSERT INTO plan_changes (organization_id, from_plan, to_plan, invoice_id, created_at)
          VALUES (${orgId}, ${current.plan_id}, ${planId}, ${invoiceId}, ${now})`
      }).pipe(Effect.orDie)

    const toInvoice = (row: InvoiceRow) => Effect.map(publicUrl.get, (base) =>
      new SubscriptionInvoice({
        id: row.id,
        object: "subscription_invoice",
        org_id: row.organization_id,
        plan_id: row.plan_id,
        amount: Number(row.amount),
        currency: "USD",
        status: row.status,
        qr: { payload: row.qr_payload, md5: row.qr_md5 },
        checkout_url: `${base}/billing/invoices/${row.id}`,
        created_at: row.created_at.toISOString(),
        paid_at: row.paid_at?.toISOString() ?? null
      }))

    const subscribe = Effect.fn("Billing.subscribe")(function*(orgId: OrganizationId, planId: string) {
      yield* access.organization(orgId, "billing.manage")
      const plan = planOf(planId)
      if (plan === undefined) {
        return yield* new InvalidRequest({ message: `unknown plan; use one of ${Plans.map((p) => p.id).join(", ")}`, param: "plan_id" })
      }
      const usage = yield* usageOf(orgId)
      for (const key of Object.keys(limitNames) as Array<keyof Usage>) {
        const limit = limitOf(plan, key)
        // The month's payments are already made; only what the organization holds must fit.
        if (key !== "payments_this_month" && limit >= 0 && usage[key] > limit) {
          return yield* new InvalidState({
            message: `The ${plan.name} plan allows ${limit} ${limitNames[key]}; the organization has ${usage[key]}`,
            param: limitNames[key]
          })
        }
      }
      const now = yield* currentDate
      if (plan.price.amount === 0) {
        yield* sql.withTransaction(activate(orgId, plan.id, null, now)).pipe(Effect.orDie)
        return yield* view(orgId)
      }
      const id = newId("inv")
      const khqr = buildKhqr({
        ...TEST_MERCHANT,
        currency: "USD",
        amountMinor: BigInt(plan.price.amount),
        billNumber: id.slice(-20),
        createdAt: now,
        expiresAt: new Date(now.getTime() + 24 * 60 * 60 * 1000)
      })
      if (Either.isLeft(khqr)) return yield* Effect.die(khqr.left)
      const rows = yield* sql<InvoiceRow>`
        INSERT INTO subscription_invoices (id, organization_id, plan_id, amount, currency, status, qr_payload, qr_md5, created_at)
        VALUES (${id}, ${orgId}, ${plan.id}, ${plan.price.amount}, 'USD', 'open', ${khqr.right.payload}, ${khqr.right.md5}, ${now})
        RETURNING *`.pipe(Effect.orDie)
      return yield* toInvoice(rows[0]!)
    })

    const invoiceNotFound = (id: string) => new NotFound({ message: `No such subscription invoice: ${id}`, param: "id" })

    const simulatePay = Effect.fn("Billing.simulatePay")(function*(id: InvoiceId) {
      const user = yield* access.currentUser
      const found = yield* sql<InvoiceRow>`SELECT * FROM subscription_invoices WHERE id = ${id}`.pipe(Effect.orDie)
      const invoice = found[0]
      if (invoice === undefined) return yield* invoiceNotFound(id)
      yield* access.organization(invoice.organization_id, "billing.manage").pipe(
        Effect.catchTag("NotFound", () => Effect.fail(invoiceNotFound(id)))
      )
      if (config.production) {
        return yield* new Forbidden({ message: "simulate-pay is for the mock provider only; this is a live configuration" })
      }
      const now = yield* currentDate
      // Paid at most once: the conditional update decides between concurrent payers.
      const paid = yield* sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<InvoiceRow>`
          UPDATE subscription_invoices SET status = 'paid', paid_at = ${now}
          WHERE id = ${id} AND status = 'open' RETURNING *`
        if (rows[0] !== undefined) yield* activate(invoice.organization_id, invoice.plan_id, id, now)
        return rows[0]
      })).pipe(Effect.orDie)
      void user
      if (paid === undefined) {
        return yield* new InvalidState({ message: `Subscription invoice ${id} is ${invoice.status === "open" ? "paid" : invoice.status} already`, param: "id" })
      }
      return yield* toInvoice(paid)
    })

    const history = Effect.fn("Billing.history")(function*(orgId: OrganizationId) {
      yield* access.organization(orgId, "organization.read")
      const rows = yield* sql<{ from_plan: string | null; to_plan: string; invoice_id: string | null; created_at: Date }>`
        SELECT from_plan, to_plan, invoice_id, created_at FROM plan_changes
        WHERE organization_id = ${orgId} ORDER BY id DESC LIMIT 100`.pipe(Effect.orDie)
      return {
        object: "list" as const,
        data: rows.map((row) =>
          new PlanChange({ object: "plan_change", org_id: orgId, from_plan: row.from_plan, to_plan: row.to_plan, invoice_id: row.invoice_id, created_at: row.created_at.toISOString() })
        )
      }
    })

    const invoices = Effect.fn("Billing.invoices")(function*(orgId: OrganizationId) {
      yield* access.organization(orgId, "organization.read")
      const rows = yield* sql<InvoiceRow>`
        SELECT * FROM subscription_invoices WHERE organization_id = ${orgId}
        ORDER BY created_at DESC, id DESC LIMIT 100`.pipe(Effect.orDie)
      return { object: "list" as const, data: yield* Effect.forEach(rows, toInvoice) }
    })

    return { plans: Effect.succeed({ object: "list" as const, data: Plans }), get, subscribe, simulatePay, history, invoices, requireRoom } as const
  }),
  dependencies: [AccessService.Default]
}) {}
