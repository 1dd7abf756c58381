/**
 * SQL of subscriptions, plan history, subscription invoices and usage. Every method dies on SQL failures:
 * they are the infrastructure's, not the caller's.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { InvoiceId, OrganizationId, PaymentId, StoreId } from "../../domain/Ids.ts"
import { keysetAfter, newestFirst, type PagePosition } from "../platform/Pagination.ts"
import { FREE, type Usage } from "../limits/Plans.ts"
import { PaymentReads } from "../payments/Reads.ts"
import { memberCountOfOrganization } from "../accounts/Memberships.ts"
import { liveModeOfStore, storeCountOfOrganization } from "../stores/Reads.ts"

export interface SubscriptionRow {
  readonly plan_id: string
  readonly status: string
  readonly current_period_end: Date | null
}

export interface InvoiceRow {
  readonly id: InvoiceId
  readonly organization_id: OrganizationId
  readonly plan_id: string
  readonly amount: string | number
  readonly status: "open" | "paid" | "void"
  readonly qr_payload: string
  readonly qr_md5: string
  readonly payment_id: PaymentId | null
  readonly livemode: boolean
  readonly created_at: Date
  readonly paid_at: Date | null
}

export interface PlanChangeRow {
  readonly id: string
  readonly from_plan: string | null
  readonly to_plan: string
  readonly invoice_id: string | null
  readonly created_at: Date
}

/** A paid plan lasts this long from its activation. */
const PERIOD_MILLIS = 30 * 24 * 60 * 60 * 1000

export class BillingRepo extends Effect.Service<BillingRepo>()("billing/BillingRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const payments = yield* PaymentReads

    const subscriptionOf = (orgId: OrganizationId) =>
      Effect.map(
        sql<SubscriptionRow>`
          SELECT plan_id, status, current_period_end FROM subscriptions WHERE organization_id = ${orgId}`,
        (rows): SubscriptionRow => rows[0] ?? { plan_id: FREE.id, status: "active", current_period_end: null }
      ).pipe(Effect.orDie)

    /**
     * What the organization holds and did this month (UTC). Payments are live-mode payments: test mode is
     * free and unlimited, so a developer's tests never use up the plan.
     */
    const usageOf = (orgId: OrganizationId, now: Date) =>
      Effect.gen(function*() {
        const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
        const stores = yield* storeCountOfOrganization(sql, orgId)
        const members = yield* memberCountOfOrganization(sql, orgId)
        const livePayments = yield* payments.liveCountOfOrganization(orgId, monthStart, null)
        return { stores, payments_this_month: livePayments, team_members: members } satisfies Usage
      })

    /** Makes `planId` the organization's plan and writes the change to its history (in the caller's transaction). */
    const activate = (orgId: OrganizationId, planId: string, invoiceId: InvoiceId | null, now: Date) =>
      Effect.gen(function*() {
        const current = yield* subscriptionOf(orgId)
        // A renewal (the same paid plan, still running) extends the period rather than restarting it.
        const from = current.plan_id === planId && current.current_period_end !== null && current.current_period_end > now
          ? current.current_period_end
          : now
        const periodEnd = planId === FREE.id ? null : new Date(from.getTime() + PERIOD_MILLIS)
        yield* sql`
          INSERT INTO subscriptions (organization_id, plan_id, status, current_period_end, updated_at)
          VALUES (${orgId}, ${planId}, 'active', ${periodEnd}, ${now})
          ON CONFLICT (organization_id) DO UPDATE
          SET plan_id = EXCLUDED.plan_id, status = 'active', current_period_end = EXCLUDED.current_period_end,
            updated_at = EXCLUDED.updated_at`
        yield* sql`
          INSERT INTO plan_changes (organization_id, from_plan, to_plan, invoice_id, created_at)
          VALUES (${orgId}, ${current.plan_id}, ${planId}, ${invoiceId}, ${now})`
      }).pipe(Effect.orDie)

    const insertInvoice = (invoice: {
      readonly id: InvoiceId
      readonly orgId: OrganizationId
      readonly planId: string
      readonly amount: number
      readonly qrPayload: string
      readonly qrMd5: string
      readonly paymentId: PaymentId
      readonly livemode: boolean
      readonly now: Date
    }) =>
      Effect.map(
        sql<InvoiceRow>`
          INSERT INTO subscription_invoices
            (id, organization_id, plan_id, amount, currency, status, qr_payload, qr_md5, payment_id, livemode, created_at)
          VALUES (${invoice.id}, ${invoice.orgId}, ${invoice.planId}, ${invoice.amount}, 'USD', 'open', ${invoice.qrPayload},
            ${invoice.qrMd5}, ${invoice.paymentId}, ${invoice.livemode}, ${invoice.now})
          ON CONFLICT (organization_id) WHERE status = 'open' DO NOTHING
          RETURNING *`,
        (rows) => Option.fromNullable(rows[0])
      ).pipe(Effect.orDie)

    const findInvoice = (id: InvoiceId) =>
      Effect.map(sql<InvoiceRow>`SELECT * FROM subscription_invoices WHERE id = ${id}`, (rows) => Option.fromNullable(rows[0]))
        .pipe(Effect.orDie)

    /** The organization's open invoices (at most a few: a new one voids the others). */
    const openInvoices = (orgId: OrganizationId) =>
      sql<InvoiceRow>`
        SELECT * FROM subscription_invoices WHERE organization_id = ${orgId} AND status = 'open'
        ORDER BY created_at DESC, id DESC`.pipe(Effect.orDie)

    const voidInvoice = (id: InvoiceId) =>
      sql`UPDATE subscription_invoices SET status = 'void' WHERE id = ${id} AND status = 'open'`.pipe(Effect.asVoid, Effect.orDie)

    /**
     * The invoice of a paid payment becomes paid and its plan active, in one transaction, at most once: the
     * conditional update decides between the payment's event, a replay of it and a simulated payment.
     * A voided invoice whose payment was paid all the same is paid too: the money came. Answers the invoice
     * when this call paid it.
     */
    const payInvoiceOfPayment = (paymentId: PaymentId, now: Date) =>
      Effect.flatMap(invoiceDue(paymentId), (due) => due ? payInvoice(paymentId, now) : Effect.succeed(Option.none<InvoiceRow>()))

    /**
     * Which of `paymentIds` pay an invoice still to be paid: a pass of the billing consumer asks once for
     * all its events' payments, of which almost none pays an invoice.
     */
    const paymentsOfDueInvoices = (paymentIds: ReadonlyArray<PaymentId>) =>
      paymentIds.length === 0
        ? Effect.succeed(new Set<PaymentId>())
        : Effect.map(
          sql<{ readonly payment_id: PaymentId }>`
            SELECT payment_id FROM subscription_invoices WHERE payment_id IN ${sql.in(paymentIds)} AND status IN ('open', 'void')`,
          (rows) => new Set(rows.map((row) => row.payment_id))
        ).pipe(Effect.orDie)

    /**
     * Whether the payment pays an invoice still to be paid: every paid payment asks, and almost none does,
     * so one statement without a transaction answers them (the transaction below takes the invoice's row).
     */
    const invoiceDue = (paymentId: PaymentId) =>
      Effect.map(
        sql<{ readonly due: boolean }>`
          SELECT EXISTS (SELECT 1 FROM subscription_invoices WHERE payment_id = ${paymentId} AND status IN ('open', 'void')) AS due`,
        (rows) => rows[0]?.due === true
      ).pipe(Effect.orDie)

    const payInvoice = (paymentId: PaymentId, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<InvoiceRow>`
          UPDATE subscription_invoices SET status = 'paid', paid_at = ${now}
          WHERE payment_id = ${paymentId} AND status IN ('open', 'void') RETURNING *`
        const paid = rows[0]
        if (paid === undefined) return Option.none<InvoiceRow>()
        yield* activate(paid.organization_id, paid.plan_id, paid.id, now)
        return Option.some(paid)
      })).pipe(Effect.orDie)

    /** A page of plan changes, newest first (by their serial id, which follows their order). */
    const history = (orgId: OrganizationId, limit: number, position: PagePosition | undefined) =>
      sql<PlanChangeRow>`
        SELECT id::text AS id, from_plan, to_plan, invoice_id, created_at FROM plan_changes
        WHERE organization_id = ${orgId} ${position === undefined ? sql`` : sql`AND id < ${position.id}::bigint`}
        ORDER BY id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)

    const invoices = (orgId: OrganizationId, limit: number, position: PagePosition | undefined) =>
      sql<InvoiceRow>`
        SELECT * FROM subscription_invoices WHERE organization_id = ${orgId} AND ${keysetAfter(sql, position)}
        ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`.pipe(Effect.orDie)

    /** Whether the store is in live mode (none when there is no such store). */
    const storeLiveMode = (storeId: StoreId) => liveModeOfStore(sql, storeId)

    /** The status and expiry of an invoice's payment (read-only: payments change through their entity). */
    const paymentState = payments.stateOf

    return {
      paymentState,
      subscriptionOf,
      usageOf,
      activate,
      insertInvoice,
      findInvoice,
      openInvoices,
      voidInvoice,
      payInvoiceOfPayment,
      paymentsOfDueInvoices,
      history,
      invoices,
      storeLiveMode,
      inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    } as const
  }),
  dependencies: [PaymentReads.Default]
}) {}
