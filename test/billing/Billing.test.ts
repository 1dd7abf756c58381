/**
 * Subscription billing over HTTP against PostgreSQL: plans, usage and warnings, free → paid → free with
 * history and invoices, the invoice as a real payment of the payments engine (its KHQR and checkout
 * page; its payment.completed event activates the plan, once), simulate-pay (once; 403 for a live
 * invoice), plan limits refusing the next store and member, a downgrade below usage, and bad input.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { OrganizationId, PaymentId } from "../../domain/Ids.ts"
import { AccessService } from "../../src/access/Service.ts"
import { PLATFORM_BILLING_STORE_ID } from "../../src/billing/Plans.ts"
import { applyBillingPaymentEvent, BILLING_CONSUMER } from "../../src/billing/Consumer.ts"
import { PlanLimits } from "../../src/limits/Service.ts"
import { PaymentReads } from "../../src/payments/Reads.ts"
import { BillingRepo } from "../../src/billing/Repo.ts"
import { PaymentsService } from "../../src/payments/Service.ts"
import { OutboxEvent } from "../../src/platform/Outbox.ts"
import { addMember, type SignedUp, signUp } from "../support/Accounts.ts"
import { allPages, clientAs, expectFailure, listParams } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { servicesOnTestApp } from "../support/Services.ts"
import { TestApp, type TestAppShape } from "../support/TestApp.ts"

const call = makeCall()

const owner = (app: TestAppShape) => Effect.promise(() => signUp(app))

const billingOf = (app: TestAppShape, user: SignedUp) =>
  Effect.flatMap(clientAs(app, user.token), (api) => api.billing.get({ urlParams: { org_id: user.organizationId } }))

const subscribe = (app: TestAppShape, token: string, orgId: OrganizationId, planId: string) =>
  call(app, "POST", `/billing/${orgId}/subscribe`, { token, body: { plan_id: planId } })

const simulatePay = (app: TestAppShape, token: string, id: string) =>
  call(app, "POST", `/billing/invoices/${id}/simulate-pay`, { token })

const history = (app: TestAppShape, user: SignedUp) =>
  Effect.flatMap(clientAs(app, user.token), (api) => api.billing.history({ path: { orgId: user.organizationId }, urlParams: listParams() }))

const invoices = (app: TestAppShape, user: SignedUp) =>
  Effect.flatMap(clientAs(app, user.token), (api) => api.billing.invoices({ path: { orgId: user.organizationId }, urlParams: listParams() }))

const createStore = (app: TestAppShape, user: SignedUp, name: string) =>
  call(app, "POST", "/stores", { token: user.token, body: { name, organization_id: user.organizationId } })

/** Waits until the billing consumer applied every queued payment event. */
const settled = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let attempt = 0; attempt < 150; attempt++) {
    const [row] = yield* sql<{ pending: number }>`
      SELECT count(*)::int AS pending FROM outbox_pending WHERE consumer = ${BILLING_CONSUMER}`
    if (row!.pending === 0) return
    yield* Effect.sleep("100 millis")
  }
  return expect.fail("payment events stayed unapplied by the billing consumer")
})

describe("billing", () => {
  layer(servicesOnTestApp(), { timeout: 180_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("lists the plans as data, with prices as decimal strings", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const plans = yield* Effect.flatMap(clientAs(app, user.token), (api) => api.billing.plans({ urlParams: listParams() }))
        expect(plans.data.map((plan) => plan.id)).toEqual(["free", "starter", "growth"])
        expect(plans.data[1]).toMatchObject({ object: "plan", price: { amount: "19.00", currency: "USD" }, interval: "month" })
        for (const plan of plans.data) expect(plan.limits.stores).toBeGreaterThan(0)
        expect((yield* call(app, "GET", "/billing/plans")).status).toBe(401)
      }))

    it.effect("goes free → starter (simulate-pay) → growth (the payment's own event) → free, with history and invoices", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const start = yield* billingOf(app, user)
        expect(start).toMatchObject({
          object: "billing",
          org_id: user.organizationId,
          plan: { id: "free" },
          subscription: { status: "active", current_period_end: null },
          usage: { stores: 0, payments_this_month: 0, team_members: 1 },
          warnings: []
        })

        // A paid plan answers an open invoice whose KHQR and checkout page are a real payment's.
        const first = yield* subscribe(app, user.token, user.organizationId, "starter")
        expect(first.status).toBe(201)
        const invoice = first.body
        expect(invoice).toMatchObject({
          object: "subscription_invoice",
          org_id: user.organizationId,
          plan_id: "starter",
          amount: "19.00",
          currency: "USD",
          status: "open",
          paid_at: null
        })
        expect(invoice.id).toMatch(/^inv_/)
        expect(invoice.qr.payload).toMatch(/^000201/)
        expect(invoice.qr.md5).toBe(createHash("md5").update(invoice.qr.payload).digest("hex"))
        expect(invoice.checkout_url).toMatch(new RegExp(`/checkout/${invoice.payment_id}$`))
        const checkout = yield* call(app, "GET", `/checkout/${invoice.payment_id}`)
        expect(checkout.status).toBe(200)
        expect(checkout.body).toMatchObject({ id: invoice.payment_id, status: "pending", amount: "19.00", currency: "USD", reference_id: invoice.id })
        expect(checkout.body.qr.payload).toBe(invoice.qr.payload)
        const sql = yield* SqlClient.SqlClient
        const [payment] = yield* sql<{ store_id: string; livemode: boolean }>`SELECT store_id, livemode FROM payments WHERE id = ${invoice.payment_id}`
        expect(payment).toEqual({ store_id: PLATFORM_BILLING_STORE_ID, livemode: false })

        // Subscribing again while that QR can be paid answers the same invoice: one thing to pay.
        const again = yield* subscribe(app, user.token, user.organizationId, "starter")
        expect(again.body.id).toBe(invoice.id)
        expect((yield* billingOf(app, user)).plan.id).toBe("free")

        const paid = yield* simulatePay(app, user.token, invoice.id)
        expect(paid.status, JSON.stringify(paid.body)).toBe(201)
        expect(paid.body).toMatchObject({ id: invoice.id, status: "paid" })
        expect(paid.body.paid_at).not.toBeNull()
        const twice = yield* simulatePay(app, user.token, invoice.id)
        expect(twice.status).toBe(409)
        expect(twice.body.error.code).toBe("invalid_state")
        const onStarter = yield* billingOf(app, user)
        expect(onStarter.plan.id).toBe("starter")
        const periodEnd = Date.parse(onStarter.subscription.current_period_end!)
        expect(periodEnd - Date.now()).toBeGreaterThan(29 * 86_400_000)
        expect((yield* call(app, "GET", `/checkout/${invoice.payment_id}`)).body.status).toBe("paid")
        yield* settled
        expect((yield* history(app, user)).data).toHaveLength(1)

        // Growth, paid through the payments engine as the provider would pay it: the payment's
        // payment.completed event (the billing consumer) pays the invoice and activates the plan.
        const growth = (yield* subscribe(app, user.token, user.organizationId, "growth")).body
        expect(growth).toMatchObject({ plan_id: "growth", amount: "99.00", status: "open" })
        const payments = yield* PaymentsService
        yield* payments.applyTransition(growth.payment_id, "scan", "test-scan").pipe(AccessService.asSystem("the provider"))
        yield* payments.applyTransition(growth.payment_id, "pay", "test-pay").pipe(AccessService.asSystem("the provider"))
        yield* settled
        const onGrowth = yield* billingOf(app, user)
        expect(onGrowth.plan.id).toBe("growth")
        const growthPaid = (yield* invoices(app, user)).data.find((i) => i.id === growth.id)
        expect(growthPaid).toMatchObject({ status: "paid" })
        expect((yield* simulatePay(app, user.token, growth.id)).status).toBe(409)

        // The event again (a replay after a crash) changes nothing.
        const [event] = yield* sql<{ position: string; event_id: string; type: string; store_id: string; livemode: boolean; payload: unknown; created_at: Date }>`
          SELECT position::text, event_id, type, store_id, livemode, payload, created_at FROM outbox
          WHERE type = 'payment.completed' AND payload->'data'->'object'->>'id' = ${growth.payment_id}`
        yield* Effect.provide(applyBillingPaymentEvent(new OutboxEvent({
          position: Number(event!.position),
          eventId: event!.event_id as never,
          type: event!.type,
          storeId: event!.store_id as never,
          livemode: event!.livemode,
          payload: event!.payload as never,
          createdAt: event!.created_at
        })), BillingRepo.Default)
        expect((yield* history(app, user)).data).toHaveLength(2)

        const free = yield* subscribe(app, user.token, user.organizationId, "free")
        expect(free.status).toBe(201)
        expect(free.body).toMatchObject({ object: "billing", plan: { id: "free" }, subscription: { current_period_end: null } })
        const changes = (yield* history(app, user)).data
        expect(changes.map((c) => [c.from_plan, c.to_plan])).toEqual([["growth", "free"], ["starter", "growth"], ["free", "starter"]])
        expect(changes[1]!.invoice_id).toBe(growth.id)
        expect(changes[2]!.invoice_id).toBe(invoice.id)
        expect(changes[0]!.invoice_id).toBeNull()
        const all = (yield* invoices(app, user)).data
        expect(all.map((i) => [i.id, i.status])).toEqual([[growth.id, "paid"], [invoice.id, "paid"]])

        // Lists page like every list: one at a time, following next_cursor.
        const api = yield* clientAs(app, user.token)
        const pagedHistory = yield* allPages(1, (urlParams) => api.billing.history({ path: { orgId: user.organizationId }, urlParams }))
        expect(pagedHistory.map((c) => c.to_plan)).toEqual(["free", "growth", "starter"])
        const pagedInvoices = yield* allPages(1, (urlParams) => api.billing.invoices({ path: { orgId: user.organizationId }, urlParams }))
        expect(pagedInvoices.map((i) => i.id)).toEqual([growth.id, invoice.id])
        const pagedPlans = yield* allPages(2, (urlParams) => api.billing.plans({ urlParams }))
        expect(pagedPlans.map((p) => p.id)).toEqual(["free", "starter", "growth"])
        expect((yield* call(app, "GET", `/billing/${user.organizationId}/history?cursor=bogus`, { token: user.token })).status).toBe(400)
        expect((yield* call(app, "GET", "/billing/plans?cursor=bogus", { token: user.token })).status).toBe(400)
        expect((yield* call(app, "GET", "/billing/plans?limit=0", { token: user.token })).status).toBe(400)
      }))

    it.effect("pays an invoice once when simulate-pay races itself", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const invoice = (yield* subscribe(app, user.token, user.organizationId, "starter")).body
        const answers = yield* Effect.all(Array.from({ length: 4 }, () => simulatePay(app, user.token, invoice.id)), { concurrency: "unbounded" })
        expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409])
        yield* settled
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM plan_changes WHERE invoice_id = ${invoice.id}`
        expect(row!.n).toBe(1)
      }))

    it.effect("makes one invoice when subscribe races itself", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const answers = yield* Effect.all(Array.from({ length: 4 }, () => subscribe(app, user.token, user.organizationId, "growth")), {
          concurrency: "unbounded"
        })
        expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201])
        expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
        const open = (yield* invoices(app, user)).data.filter((i) => i.status === "open")
        expect(open).toHaveLength(1)
      }))

    it.effect("voids an open invoice when another plan is chosen, and cancels its payment", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const starter = (yield* subscribe(app, user.token, user.organizationId, "starter")).body
        const growth = (yield* subscribe(app, user.token, user.organizationId, "growth")).body
        expect(growth.id).not.toBe(starter.id)
        const list = (yield* invoices(app, user)).data
        expect(list.map((i) => [i.plan_id, i.status])).toEqual([["growth", "open"], ["starter", "void"]])
        expect((yield* call(app, "GET", `/checkout/${starter.payment_id}`)).body.status).toBe("cancelled")
        const voided = yield* simulatePay(app, user.token, starter.id)
        expect(voided.status).toBe(409)
        expect(voided.body.error.message).toMatch(/void/)
      }))

    it.effect("refuses simulate-pay for a live invoice (403), and hides other tenants' invoices (404)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const stranger = yield* owner(app)
        const invoice = (yield* subscribe(app, user.token, user.organizationId, "starter")).body
        const hidden = yield* simulatePay(app, stranger.token, invoice.id)
        expect(hidden.status).toBe(404)
        expect(hidden.body.error.code).toBe("not_found")
        expect((yield* simulatePay(app, user.token, "inv_000000000000000000000000")).status).toBe(404)
        // A malformed id names nothing, as everywhere in the API.
        expect((yield* simulatePay(app, user.token, "nope")).status).toBe(404)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE subscription_invoices SET livemode = true WHERE id = ${invoice.id}`
        const live = yield* simulatePay(app, user.token, invoice.id)
        expect(live.status).toBe(403)
        expect(live.body.error.code).toBe("forbidden")
        expect((yield* billingOf(app, user)).plan.id).toBe("free")
      }))

    it.effect("answers bad input and other roles with the error shape", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const unknown = yield* subscribe(app, user.token, user.organizationId, "platinum")
        expect(unknown.status).toBe(400)
        expect(unknown.body.error).toMatchObject({ code: "invalid_request", param: "plan_id" })
        expect(unknown.body.error.message).toMatch(/free, starter, growth/)
        const missing = yield* call(app, "POST", `/billing/${user.organizationId}/subscribe`, { token: user.token, body: {} })
        expect(missing.status).toBe(400)
        const extra = yield* call(app, "POST", `/billing/${user.organizationId}/subscribe`, { token: user.token, body: { plan_id: "free", coupon: "x" } })
        expect(extra.status).toBe(400)
        const already = yield* subscribe(app, user.token, user.organizationId, "free")
        expect(already.status).toBe(409)
        expect((yield* call(app, "GET", "/billing", { token: user.token })).status).toBe(400)
        expect((yield* call(app, "GET", "/billing?org_id=bogus", { token: user.token })).status).toBe(404)

        const stranger = yield* owner(app)
        expect((yield* call(app, "GET", `/billing?org_id=${user.organizationId}`, { token: stranger.token })).status).toBe(404)
        expect((yield* subscribe(app, stranger.token, user.organizationId, "starter")).status).toBe(404)
        expect((yield* call(app, "GET", `/billing/${user.organizationId}/history`, { token: stranger.token })).status).toBe(404)
        expect((yield* call(app, "GET", `/billing/${user.organizationId}/invoices`, { token: stranger.token })).status).toBe(404)

        const analyst = yield* Effect.promise(() => addMember(app, user.token, user.organizationId, "analyst"))
        expect((yield* call(app, "GET", `/billing?org_id=${user.organizationId}`, { token: analyst.token })).status).toBe(200)
        const refused = yield* subscribe(app, analyst.token, user.organizationId, "starter")
        expect(refused.status).toBe(403)
        const admin = yield* Effect.promise(() => addMember(app, user.token, user.organizationId, "admin"))
        expect((yield* subscribe(app, admin.token, user.organizationId, "starter")).status).toBe(403)
      }))

    it.effect("refuses the next store and member past the plan (403 naming it), warns at 80 %, refuses a downgrade below usage (409)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        for (const name of ["One", "Two", "Three"]) expect((yield* createStore(app, user, name)).status).toBe(201)
        const full = yield* createStore(app, user, "Four")
        expect(full.status).toBe(403)
        expect(full.body.error.code).toBe("forbidden")
        expect(full.body.error.message).toMatch(/Free plan \(free\) allows 3 stores/)
        const billing = yield* billingOf(app, user)
        expect(billing.usage.stores).toBe(3)
        expect(billing.warnings.some((w) => w.startsWith("stores: 3 of 3"))).toBe(true)

        // Stores created at the same moment never pass the limit together.
        const other = yield* owner(app)
        const raced = yield* Effect.all(Array.from({ length: 6 }, (_, i) => createStore(app, other, `Race ${i}`)), { concurrency: "unbounded" })
        expect(raced.filter((r) => r.status === 201)).toHaveLength(3)
        expect(raced.filter((r) => r.status === 403)).toHaveLength(3)

        for (let i = 0; i < 4; i++) yield* Effect.promise(() => addMember(app, user.token, user.organizationId, "analyst"))
        const sixth = yield* Effect.promise(() => signUp(app))
        const member = yield* Effect.flatMap(clientAs(app, user.token), (api) =>
          api.members.add({ path: { orgId: user.organizationId }, payload: { email: sixth.email, role: "developer" } })).pipe(
            (effect) => expectFailure(effect, "Forbidden")
          )
        expect(member.message).toMatch(/Free plan \(free\) allows 5 team members/)

        // Upgrade, add stores beyond the free plan, then try to go back.
        const invoice = (yield* subscribe(app, user.token, user.organizationId, "starter")).body
        expect((yield* simulatePay(app, user.token, invoice.id)).status).toBe(201)
        expect((yield* createStore(app, user, "Four")).status).toBe(201)
        const down = yield* subscribe(app, user.token, user.organizationId, "free")
        expect(down.status).toBe(409)
        expect(down.body.error).toMatchObject({ code: "invalid_state", param: "stores" })
        expect(down.body.error.message).toMatch(/Free plan allows 3 stores; the organization has 4/)
        expect((yield* billingOf(app, user)).plan.id).toBe("starter")
      }))

    it.effect("counts live-mode payments only against payments_per_month", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const store = (yield* createStore(app, user, "Counted")).body
        const sql = yield* SqlClient.SqlClient
        const [template] = yield* sql<{ id: PaymentId }>`SELECT id FROM payments LIMIT 1`
        expect(template).toBeDefined()
        // Copies of an existing payment row, moved to this store: 1,000 live ones and some test ones.
        const columns = (yield* sql<{ column_name: string }>`
          SELECT column_name FROM information_schema.columns WHERE table_name = 'payments' AND column_name NOT IN ('id', 'store_id', 'livemode', 'qr_md5', 'created_at', 'branch_id', 'customer_id', 'reference_id')`).map((c) => c.column_name)
        const list = columns.map((c) => `"${c}"`).join(", ")
        yield* sql.unsafe(`
          INSERT INTO payments (id, store_id, livemode, qr_md5, created_at, ${list})
          SELECT 'pay_' || lpad(g::text, 24, '0'), $1, g <= 1000, md5(g::text || $1), now(), ${list}
          FROM payments p, generate_series(1, 1010) g WHERE p.id = $2`, [store.id, template!.id])
        const billing = yield* billingOf(app, user)
        expect(billing.usage.payments_this_month).toBe(1000)
        expect(billing.warnings.some((w) => w.startsWith("payments_per_month: 1000 of 1000"))).toBe(true)
        yield* Effect.gen(function*() {
          const limits = yield* PlanLimits
          const count = (yield* PaymentReads).liveCountOfOrganization
          const refused = yield* expectFailure(limits.requirePaymentRoom(store.id, true, count), "Forbidden")
          expect(refused.message).toMatch(/Free plan \(free\) allows 1000 live payments a month/)
          yield* limits.requirePaymentRoom(store.id, false, count)
        }).pipe(Effect.provide([PlanLimits.Default, PaymentReads.Default]))
      }))
  })

  layer(servicesOnTestApp({ production: true }), { timeout: 120_000, excludeTestServices: true })("in a live configuration", (it) => {
    it.effect("refuses a paid plan while the billing store is not live (409), and simulate-pay (403)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* owner(app)
        const refused = yield* subscribe(app, user.token, user.organizationId, "starter")
        expect(refused.status).toBe(409)
        expect(refused.body.error.message).toMatch(/billing_store_id/)
        // An invoice made before (say, under another configuration) cannot be simulated here.
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          INSERT INTO subscription_invoices (id, organization_id, plan_id, amount, currency, status, qr_payload, qr_md5, created_at)
          VALUES ('inv_LiveConfiguration0000000', ${user.organizationId}, 'starter', 1900, 'USD', 'open', 'x', 'y', now())`
        const simulated = yield* simulatePay(app, user.token, "inv_LiveConfiguration0000000")
        expect(simulated.status).toBe(403)
        expect(simulated.body.error.code).toBe("forbidden")
        expect((yield* billingOf(app, user)).plan.id).toBe("free")
      }))
  })
})
