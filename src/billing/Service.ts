/**
 * Subscription billing: a subscription per organization (free until changed), usage against the plan's
 * limits, plan changes with history, and subscription invoices paid through the payments engine.
 *
 * A paid plan's invoice is a payment of the platform's billing store (the built-in one, or the store the
 * `billing_store_id` setting names): the payments engine makes its KHQR and hosted checkout page, and
 * its payment.completed event pays the invoice and activates the plan (src/billing/Consumer.ts). An
 * invoice is paid at most once: the payment entity pays a payment once, and the invoice's conditional
 * update activates the plan once however often the event (or simulate-pay) comes.
 */
import { Effect, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { Billing, PlanChange, SubscriptionInvoice } from "../../domain/Billing.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import { type InvoiceId, isIdOf, type OrganizationId, type PaymentId, type StoreId } from "../../domain/Ids.ts"
import { AccessService, storeData } from "../access/Service.ts"
import { PaymentsService } from "../payments/Service.ts"
import { checkoutUrlOf } from "../payments/View.ts"
import { AppConfig } from "../platform/Config.ts"
import { formatAmount } from "../platform/Money.ts"
import { newId } from "../platform/Ids.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { currentDate } from "../platform/Time.ts"
import { SettingsService } from "../settings/Service.ts"
import { fixedPage } from "../platform/FixedList.ts"
import { decodeCursor, type ListParams, pageAfter, toPage } from "../platform/Pagination.ts"
import { FREE, limitNames, limitOf, planOf, Plans, type Usage } from "../limits/Plans.ts"
import { PLATFORM_BILLING_STORE_ID, priceMinorOf } from "./Plans.ts"
import { BillingRepo, type InvoiceRow } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

/** How long an invoice's KHQR may be paid; after that, subscribing again makes a new one. */
const INVOICE_PAYMENT_EXPIRY_SECONDS = 24 * 60 * 60

/**
 * Subscription invoices are paid to the platform's own billing store: the organization's check is for
 * its billing, and the payments of that store are the platform's, made and cancelled for it.
 */
const platformCharges = "the platform's subscription invoices, paid to its billing store"

export class BillingService extends Effect.Service<BillingService>()("billing/BillingService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* BillingRepo, "inTransaction")
    const access = yield* AccessService
    const payments = yield* PaymentsService
    const settings = yield* SettingsService
    const config = yield* AppConfig
    const publicUrl = yield* PublicBaseUrl

    const view = (orgId: OrganizationId) =>
      Effect.gen(function*() {
        const sub = yield* repo.subscriptionOf(orgId)
        const plan = planOf(sub.plan_id) ?? FREE
        const usage = yield* repo.usageOf(orgId, yield* currentDate)
        const warnings = (Object.keys(limitNames) as Array<keyof Usage>).flatMap((key) => {
          const limit = limitOf(plan, key)
          return usage[key] >= 0.8 * limit
            ? [`${limitNames[key]}: ${usage[key]} of ${limit} used on the ${plan.name} plan (${Math.floor((100 * usage[key]) / limit)} %)`]
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

    const toInvoice = (row: InvoiceRow) =>
      Effect.map(publicUrl.get, (base) =>
        new SubscriptionInvoice({
          id: row.id,
          object: "subscription_invoice",
          org_id: row.organization_id,
          plan_id: row.plan_id,
          amount: formatAmount(BigInt(row.amount), "USD"),
          currency: "USD",
          status: row.status,
          qr: { payload: row.qr_payload, md5: row.qr_md5 },
          checkout_url: row.payment_id === null ? "" : checkoutUrlOf(base, row.payment_id),
          payment_id: row.payment_id,
          created_at: row.created_at.toISOString(),
          paid_at: row.paid_at?.toISOString() ?? null
        }))

    /** The store whose payments carry the invoices, and the mode they are made in (the store's). */
    const billingStore = Effect.gen(function*() {
      const named = Option.map(yield* settings.get("billing_store_id"), Redacted.value)
      const storeId = Option.getOrElse(named, () => PLATFORM_BILLING_STORE_ID)
      const live = isIdOf("str", storeId) ? yield* repo.storeLiveMode(storeId as StoreId) : Option.none<boolean>()
      if (Option.isNone(live)) {
        return yield* new InvalidState({
          message: "Paid plans are not available: the platform setting billing_store_id names no store"
        })
      }
      if (config.production && !live.value) {
        return yield* new InvalidState({
          message: "Paid plans are not available: the billing store is not in live mode (platform setting billing_store_id)"
        })
      }
      return { storeId: storeId as StoreId, livemode: live.value }
    })

    const get = traced("Billing.get")(function*(orgId: OrganizationId) {
      return yield* access.withOrganization(access.organization(orgId, "organization.read"), () => view(orgId))
    })

    /** Voids the organization's other open invoices and cancels their payments while still pending. */
    const voidOpenInvoices = (open: ReadonlyArray<InvoiceRow>) =>
      Effect.forEach(open, (invoice) =>
        Effect.gen(function*() {
          yield* repo.voidInvoice(invoice.id)
          if (invoice.payment_id !== null) {
            yield* payments.applyTransition(invoice.payment_id, "cancel", `billing-void:${invoice.id}`).pipe(
              Effect.catchAll(() => Effect.void),
              AccessService.asSystem(platformCharges)
            )
          }
        }), { discard: true })

    const subscribe = traced("Billing.subscribe")(function*(orgId: OrganizationId, planId: string) {
      return yield* access.withOrganization(access.organization(orgId, "billing.manage"), () =>
        Effect.gen(function*() {
          const plan = planOf(planId)
          if (plan === undefined) {
            return yield* new InvalidRequest({ message: `unknown plan; use one of ${Plans.map((p) => p.id).join(", ")}`, param: "plan_id" })
          }
          const now = yield* currentDate
          const current = yield* repo.subscriptionOf(orgId)
          const usage = yield* repo.usageOf(orgId, now)
          for (const key of Object.keys(limitNames) as Array<keyof Usage>) {
            const limit = limitOf(plan, key)
            // The month's payments are made already; what the organization holds must fit the new plan.
            if (key !== "payments_this_month" && usage[key] > limit) {
              return yield* new InvalidState({
                message: `The ${plan.name} plan allows ${limit} ${limitNames[key]}; the organization has ${usage[key]}. ` +
                  `Remove ${usage[key] - limit} first`,
                param: limitNames[key]
              })
            }
          }
          const open = yield* repo.openInvoices(orgId)
          if (plan.id === FREE.id) {
            if (current.plan_id === FREE.id) {
              return yield* new InvalidState({ message: "The organization is on the Free plan already", param: "plan_id" })
            }
            yield* voidOpenInvoices(open)
            yield* repo.inTransaction(repo.activate(orgId, plan.id, null, now))
            return yield* view(orgId)
          }
          // An open invoice for this plan whose KHQR can still be paid is the answer again, so a retried
          // subscribe does not make the organization two QR codes to pay.
          for (const invoice of open) {
            if (invoice.plan_id !== plan.id || invoice.payment_id === null) continue
            const payment = yield* repo.paymentState(invoice.payment_id)
            if (Option.exists(payment, (p) => (p.status === "pending" || p.status === "scanned") && p.expires_at > now)) {
              return yield* toInvoice(invoice)
            }
          }
          // Checked before anything changes: a refused subscribe leaves the open invoice as it was.
          const store = yield* billingStore
          yield* voidOpenInvoices(open)
          const id = newId("inv")
          const payment = yield* payments.createFor(store, {
            amount: formatAmount(priceMinorOf(plan), "USD"),
            currency: "USD",
            reference_id: id,
            description: `${plan.name} plan, one month`,
            expires_in: INVOICE_PAYMENT_EXPIRY_SECONDS,
            metadata: { subscription_invoice_id: id, org_id: orgId, plan_id: plan.id }
          }).pipe(AccessService.asSystem(platformCharges))
          const inserted = yield* repo.insertInvoice({
            id,
            orgId,
            planId: plan.id,
            amount: Number(priceMinorOf(plan)),
            qrPayload: payment.qr.payload,
            qrMd5: payment.qr.md5,
            paymentId: payment.id,
            livemode: payment.livemode,
            now
          })
          if (Option.isNone(inserted)) {
            // Another subscribe of this organization made its invoice first: ours is not needed.
            yield* payments.applyTransition(payment.id, "cancel", `billing-unused:${id}`).pipe(
              Effect.catchAll(() => Effect.void),
              AccessService.asSystem(platformCharges)
            )
            const winner = (yield* repo.openInvoices(orgId))[0]
            if (winner !== undefined && winner.plan_id === plan.id) return yield* toInvoice(winner)
            return yield* new InvalidState({ message: "Another plan change of this organization is in progress; try again", param: "plan_id" })
          }
          return yield* toInvoice(inserted.value)
        }))
    })

    const invoiceNotFound = (id: string) => new NotFound({ message: `No such subscription invoice: ${id}`, param: "id" })

    /** `use` on the invoice `id` if the signed-in user may manage its organization's billing; any other is 404. */
    const ownedInvoice = <A, E, R>(id: InvoiceId, use: (invoice: InvoiceRow) => Effect.Effect<A, E, R>) =>
      access.withOrganizationOwned(repo.findInvoice(id), (found) => found.organization_id, "billing.manage", () => invoiceNotFound(id), use)

    /**
     * Pays the invoice's payment as the mock provider would (scanned, then paid) and the invoice with it.
     * Each move has its own request key, so of simultaneous calls exactly one moves the payment to paid and
     * answers 201; the others find it moved and answer 409.
     */
    const simulatePay = traced("Billing.simulatePay")(function*(id: InvoiceId) {
      yield* access.currentUser
      return yield* ownedInvoice(id, (invoice) =>
        Effect.gen(function*() {
          if (config.production || invoice.livemode) {
            return yield* new Forbidden({
              message: "simulate-pay is for the mock provider only; this invoice is paid with its KHQR in a live configuration"
            })
          }
          const already = new InvalidState({ message: `Subscription invoice ${id} is ${invoice.status} already`, param: "id" })
          if (invoice.status !== "open" || invoice.payment_id === null) return yield* already
          const paymentId: PaymentId = invoice.payment_id
          const move = (action: "scan" | "pay") =>
            payments.applyTransition(paymentId, action, randomUUID()).pipe(
              Effect.catchTag("InvalidState", (refused) =>
                Effect.fail(new InvalidState({ message: `Subscription invoice ${id} cannot be paid: ${refused.message}`, param: "id" }))),
              Effect.catchTag("NotFound", () => Effect.dieMessage(`the payment of invoice ${id} is gone`)),
              AccessService.asSystem(platformCharges)
            )
          const status = Option.map(yield* repo.paymentState(paymentId), (p) => p.status)
          if (Option.contains(status, "paid")) return yield* new InvalidState({ message: `Subscription invoice ${id} is paid already`, param: "id" })
          if (Option.contains(status, "pending")) yield* move("scan")
          yield* move("pay")
          // The billing consumer may have paid the invoice from the payment's event already; either way it is paid.
          yield* repo.payInvoiceOfPayment(paymentId, yield* currentDate)
          return yield* toInvoice(Option.getOrThrow(yield* repo.findInvoice(id)))
        }))
    })

    const history = traced("Billing.history")(function*(orgId: OrganizationId, params: ListParams) {
      return yield* access.withOrganization(access.organization(orgId, "organization.read"), () =>
        Effect.gen(function*() {
          const position = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
          // The position's id is a plan change's serial number; a cursor we did not make is refused.
          if (position !== undefined && !/^\d{1,18}$/.test(position.id)) {
            return yield* new InvalidRequest({ message: "cursor is not valid: pass the next_cursor of the previous page unchanged", param: "cursor" })
          }
          const page = toPage(yield* repo.history(orgId, params.limit, position), params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
          return {
            ...page,
            data: page.data.map((row) =>
              new PlanChange({
                object: "plan_change",
                org_id: orgId,
                from_plan: row.from_plan,
                to_plan: row.to_plan,
                invoice_id: row.invoice_id,
                created_at: row.created_at.toISOString()
              })
            )
          }
        }))
    })

    const invoices = traced("Billing.invoices")(function*(orgId: OrganizationId, params: ListParams) {
      return yield* access.withOrganization(access.organization(orgId, "organization.read"), () =>
        Effect.gen(function*() {
          const page = yield* pageAfter(params, (position) => repo.invoices(orgId, params.limit, position))
          return { ...page, data: yield* Effect.forEach(page.data, toInvoice) }
        }))
    })

    const plans = (params: ListParams) => fixedPage(Plans, (plan) => plan.id, params)

    return { plans, get, subscribe, simulatePay, history, invoices } as const
  }),
  dependencies: [BillingRepo.Default, AccessService.Default, PaymentsService.Default, SettingsService.Default]
}) {}
