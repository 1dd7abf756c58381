/**
 * Mail that leaves the box, against a local SMTP server speaking the real protocol: account mail with
 * working links (verification, reset), the notices (registration of a taken address, MFA, API keys,
 * invitations) with escaped HTML, receipts only with consent and never to an erased customer (in the
 * customer's language), retries through refusals and outages with nothing lost or sent twice, refusals
 * given up and listed for administrators; and, without SMTP_URL, the log instead.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { currentTotp } from "../../src/accounts/Totp.ts"
import { signUp, TEST_PASSWORD, uniqueEmail } from "../support/Accounts.ts"
import { clientAs, expectFailure, listParams } from "../support/Client.ts"
import { createPayment, newMerchant, paidPayment, refund, simulate } from "../support/Merchant.ts"
import { fastMail, linksIn, receivedBy, TestSmtp } from "../support/Smtp.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const ADMIN_EMAIL = "mail-admin@example.test"

const appWithSmtp = Layer.unwrapEffect(
  Effect.map(TestSmtp, (smtp) => testAppLayer({ platformAdminEmails: [ADMIN_EMAIL], mail: fastMail(smtp.url) }))
).pipe(Layer.provideMerge(TestSmtp.layer))

interface MailRecord {
  readonly status: string
  readonly attempts: number
  readonly last_error: string | null
  readonly provider_message_id: string | null
}

const recordsTo = (recipient: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<MailRecord>`
      SELECT status, attempts, last_error, provider_message_id FROM outgoing_mail WHERE recipient = ${recipient} ORDER BY id`).pipe(Effect.orDie)

/** Waits until the records of `recipient`'s mail satisfy `ready`. */
const recordsWhen = (recipient: string, ready: (records: ReadonlyArray<MailRecord>) => boolean) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline) {
      const records = yield* recordsTo(recipient)
      if (ready(records)) return records
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.dieMessage(`mail to ${recipient} never got there: ${JSON.stringify(yield* recordsTo(recipient))}`)
  })

const register = (email: string, organizationName = "Mail Test Org") =>
  Effect.flatMap(TestApp, (app) =>
    app.client.auth.register({ payload: { email, password: TEST_PASSWORD, name: "Mail Tester", organization_name: organizationName } }))

describe("mail over SMTP", () => {
  layer(appWithSmtp, { timeout: 120_000, excludeTestServices: true })("", (it) => {
    it.effect("the verification mail arrives with a link that verifies the address", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const smtp = yield* TestSmtp
        const email = uniqueEmail("verify")
        const grant = yield* register(email)
        expect(grant.user.email_verified).toBe(false)

        const [mail] = yield* receivedBy(smtp, email)
        expect(mail!.subject).toBe("Verify your e-mail address")
        expect(mail!.from).toBe("no-reply@example.test")
        const link = linksIn(mail!.text).find((url) => url.includes("/console/verify-email?token="))!
        expect(link).toBeDefined()
        // The HTML part carries the same link, as a button and written out.
        expect(mail!.html).toContain(`href="${link}"`)

        // The link opens the console's page, which verifies with the token as it loads.
        const page = yield* Effect.promise(() => app.fetch(new URL(link).pathname + new URL(link).search))
        expect(page.status).toBe(200)
        expect(page.headers.get("content-type")).toContain("text/html")
        yield* app.client.auth.verifyEmail({ urlParams: { token: new URL(link).searchParams.get("token")! } })
        const me = yield* (yield* clientAs(app, grant.access_token)).session.me()
        expect(me.user.email_verified).toBe(true)
        const [record] = yield* recordsWhen(email, (records) => records[0]?.status === "sent")
        expect(record).toMatchObject({ status: "sent", attempts: 1, last_error: null })
        expect(record!.provider_message_id).toMatch(/^Q\d+$/)
      }))

    it.effect("a password is reset end to end from the mailed link", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const smtp = yield* TestSmtp
        const email = uniqueEmail("reset")
        yield* register(email)
        yield* app.client.auth.forgotPassword({ payload: { email } })
        const mails = yield* receivedBy(smtp, email, 2)
        const reset = mails.find((mail) => mail.subject === "Reset your password")!
        const link = new URL(linksIn(reset.text).find((url) => url.includes("/reset-password?token="))!)
        const page = yield* Effect.promise(() => fetch(link, { headers: { accept: "text/html" } }))
        expect(page.status).toBe(200)
        yield* app.client.auth.resetPassword({ payload: { token: link.searchParams.get("token")!, password: "a new mailed password 1" } })
        const login = yield* app.client.auth.login({ payload: { email, password: "a new mailed password 1" } })
        expect(login.user.email).toBe(email)
        yield* expectFailure(app.client.auth.login({ payload: { email, password: TEST_PASSWORD } }), "Unauthorized")
      }))

    it.effect("registering a taken address tells its owner by mail, once an hour", () =>
      Effect.gen(function*() {
        const smtp = yield* TestSmtp
        const email = uniqueEmail("taken")
        yield* register(email)
        yield* receivedBy(smtp, email, 1)
        yield* expectFailure(register(email), "InvalidRequest", "email")
        yield* expectFailure(register(email), "InvalidRequest", "email")
        const mails = yield* receivedBy(smtp, email, 2)
        const notice = mails.find((mail) => mail.subject === "Someone tried to register with your e-mail address")
        expect(notice?.text).toContain("/console")
        yield* Effect.sleep("500 millis")
        expect(smtp.to(email).filter((mail) => mail.subject === notice!.subject)).toHaveLength(1)
      }))

    it.effect("notices for MFA on and off, new API keys and invitations, with every user text escaped in HTML", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const smtp = yield* TestSmtp
        const owner = yield* Effect.promise(() => signUp(app, { organization_name: "<b>Acme & Co</b>" }))
        const api = yield* clientAs(app, owner.token)
        const store = yield* api.stores.create({ payload: { name: "Corner <Shop>" } })
        yield* api.apiKeys.create({ payload: { store_id: store.id, mode: "test", name: "pos" } })
        const keyMail = (yield* receivedBy(smtp, owner.email, 2)).find((mail) => mail.subject.startsWith("A new test API key"))!
        expect(keyMail.subject).toBe("A new test API key for Corner <Shop>")
        expect(keyMail.html).toContain("Corner &lt;Shop&gt;")
        expect(keyMail.html).not.toContain("Corner <Shop>")

        const setup = yield* api.session.mfaSetup()
        yield* api.session.mfaEnable({ payload: { code: yield* currentTotp(setup.secret) } })
        yield* api.session.mfaDisable({ payload: { code: yield* currentTotp(setup.secret, Math.floor(Date.now() / 1000) + 30) } })
        const subjects = (yield* receivedBy(smtp, owner.email, 4)).map((mail) => mail.subject)
        expect(subjects).toContain("Two-factor authentication is on")
        expect(subjects).toContain("Two-factor authentication is off")

        const member = yield* Effect.promise(() => signUp(app))
        yield* api.members.add({ path: { orgId: owner.organizationId }, payload: { email: member.email, role: "analyst" } })
        const invitation = (yield* receivedBy(smtp, member.email, 2)).find((mail) => mail.subject.startsWith("You were added"))!
        expect(invitation.subject).toBe("You were added to <b>Acme & Co</b>")
        expect(invitation.text).toContain(`${owner.email} added you to the organization <b>Acme & Co</b> as analyst`)
        expect(invitation.html).toContain("&lt;b&gt;Acme &amp; Co&lt;/b&gt;")
        expect(invitation.html).not.toContain("<b>Acme")
        expect(linksIn(invitation.text)).toContain(`${app.baseUrl.replace("127.0.0.1", "localhost")}/console`)
      }))

    it.effect("receipts and refund notices go only to customers who consented, never to an erased one, in their language", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const smtp = yield* TestSmtp
        const sql = yield* SqlClient.SqlClient
        const merchant = yield* newMerchant(app, "Mail Café")
        const api = yield* clientAs(app, merchant.key)
        const consenting = yield* api.customers.create({ payload: { email: uniqueEmail("consents") }, headers: {} })
        const silent = yield* api.customers.create({ payload: { email: uniqueEmail("silent") }, headers: {} })
        const khmer = yield* api.customers.create({ payload: { email: uniqueEmail("khmer"), metadata: { language: "km" } }, headers: {} })
        const erased = yield* api.customers.create({ payload: { email: uniqueEmail("erased") }, headers: {} })
        for (const customer of [consenting, khmer, erased]) {
          yield* api.customers.setPreferences({ path: { id: customer.id }, payload: { email: true } })
        }

        // The erased customer's payment was created before the erasure and is paid after it.
        const erasedPayment = yield* createPayment(app, merchant.key, { customer_id: erased.id })
        yield* (yield* clientAs(app, merchant.owner.token)).customerConsole.erase({ path: { id: erased.id } })
        yield* simulate(app, merchant.key, erasedPayment.id, "scanned")
        yield* simulate(app, merchant.key, erasedPayment.id, "paid")

        const paid = yield* paidPayment(app, merchant.key, {
          customer_id: consenting.id,
          amount: "12.50",
          reference_id: "order-<7>",
          description: "Iced <coffee> & cake"
        })
        yield* paidPayment(app, merchant.key, { customer_id: silent.id })
        yield* paidPayment(app, merchant.key, { customer_id: khmer.id, amount: "40000", currency: "KHR" })

        const [receipt] = yield* receivedBy(smtp, consenting.email!)
        expect(receipt!.subject).toBe("[Test] Your receipt from Mail Café")
        expect(receipt!.text).toContain("Mail Café received your payment of $12.50.")
        expect(receipt!.text).toContain("Reference: order-<7>")
        expect(receipt!.text).toContain("Description: Iced <coffee> & cake")
        expect(receipt!.html).toContain("Iced &lt;coffee&gt; &amp; cake")
        expect(receipt!.html).not.toContain("<coffee>")
        expect(linksIn(receipt!.text).some((url) => url.endsWith(`/receipts/${paid.id}`))).toBe(true)

        const [khmerReceipt] = yield* receivedBy(smtp, khmer.email!)
        expect(khmerReceipt!.subject).toBe("[Test] បង្កាន់ដៃពី Mail Café")
        expect(khmerReceipt!.text).toContain("៛40,000")

        const refunded = yield* refund(app, merchant.key, paid.id, { amount: "2.50" })
        const mails = yield* receivedBy(smtp, consenting.email!, 2)
        expect(mails[1]!.subject).toBe("[Test] Your refund from Mail Café")
        expect(mails[1]!.text).toContain("Mail Café refunded $2.50 of your payment.")
        const [refundRecord] = yield* sql<{ dedupe_key: string }>`
          SELECT dedupe_key FROM outgoing_mail WHERE kind = 'refund_notice' AND recipient = ${consenting.email!}`
        expect(refundRecord!.dedupe_key).toBe(`refund:${refunded.id}`)

        // An event whose payment cannot be read is passed over rather than retried for ever.
        yield* sql`
          INSERT INTO outbox (event_id, store_id, livemode, type, payload)
          VALUES ('evt_unreadable', ${merchant.storeId}, false, 'payment.completed',
            ${JSON.stringify({ data: { object: { id: "pay_unreadable", customer_id: consenting.id } } })}::jsonb)`

        // Every event was applied; nothing was queued for the customer without consent or the erased one.
        yield* Effect.gen(function*() {
          const [pending] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_pending WHERE consumer = 'mail_receipts'`
          if (pending!.n > 0) return yield* Effect.fail("pending")
        }).pipe(Effect.retry(Schedule.intersect(Schedule.spaced("50 millis"), Schedule.recurs(200))), Effect.orDie)
        expect(yield* recordsTo(silent.email!)).toEqual([])
        expect(smtp.to(silent.email!)).toEqual([])
        expect(smtp.to(erased.email!)).toEqual([])

        // Erasing a customer clears the address and the bodies of the mail sent to them.
        yield* (yield* clientAs(app, merchant.owner.token)).customerConsole.erase({ path: { id: consenting.id } })
        expect(yield* recordsTo(consenting.email!)).toEqual([])
        const forgotten = yield* sql<{ recipient: string; body_sealed: string | null; html_sealed: string | null }>`
          SELECT recipient, body_sealed, html_sealed FROM outgoing_mail WHERE customer_id = ${consenting.id}`
        expect(forgotten).toEqual([
          { recipient: "erased", body_sealed: null, html_sealed: null },
          { recipient: "erased", body_sealed: null, html_sealed: null }
        ])
      }))

    it.effect("a server answering 4xx is retried until it accepts, and the mail arrives once", () =>
      Effect.gen(function*() {
        const smtp = yield* TestSmtp
        const email = uniqueEmail("greylisted")
        smtp.mode = "tempfail"
        yield* register(email)
        const refused = yield* recordsWhen(email, (records) => (records[0]?.attempts ?? 0) >= 2)
        expect(refused[0]).toMatchObject({ status: "queued" })
        expect(refused[0]!.last_error).toContain("451")
        smtp.mode = "accept"
        yield* receivedBy(smtp, email)
        const [record] = yield* recordsWhen(email, (records) => records[0]?.status === "sent")
        expect(record!.attempts).toBeGreaterThanOrEqual(3)
        yield* Effect.sleep("1 second")
        expect(smtp.to(email)).toHaveLength(1)
      }))

    it.effect("a server that is down is retried until it is back, and the mail arrives once", () =>
      Effect.gen(function*() {
        const smtp = yield* TestSmtp
        const email = uniqueEmail("outage")
        yield* Effect.promise(() => smtp.stop())
        yield* register(email)
        const failing = yield* recordsWhen(email, (records) => (records[0]?.attempts ?? 0) >= 2)
        expect(failing[0]!.status).toBe("queued")
        expect(failing[0]!.last_error).toMatch(/ECONNREFUSED|ECONNECTION|connect/i)
        yield* Effect.promise(() => smtp.start())
        yield* receivedBy(smtp, email)
        yield* recordsWhen(email, (records) => records[0]?.status === "sent")
        yield* Effect.sleep("1 second")
        expect(smtp.to(email)).toHaveLength(1)
      }))

    it.effect("a 5xx refusal is final, and platform administrators see it in the mail list", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const smtp = yield* TestSmtp
        const admin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL }))
        const email = uniqueEmail("nobody")
        smtp.mode = "reject"
        yield* register(email)
        const [record] = yield* recordsWhen(email, (records) => records[0]?.status === "failed")
        smtp.mode = "accept"
        expect(record!.attempts).toBe(1)
        expect(record!.last_error).toContain("550")

        const adminApi = yield* clientAs(app, admin.token)
        const failed = yield* adminApi.mail.list({ urlParams: listParams({ status: "failed" as const }) })
        const listed = failed.data.find((mail) => mail.to === email)
        expect(listed).toMatchObject({ object: "mail", kind: "verification", status: "failed", attempts: 1, next_attempt_at: null })
        expect(JSON.stringify(failed)).not.toContain("verify-email?token")
        // Pages follow one another without repeats.
        const first = yield* adminApi.mail.list({ urlParams: listParams({ limit: 1 }) })
        const second = yield* adminApi.mail.list({ urlParams: listParams({ limit: 1, cursor: first.next_cursor! }) })
        expect(second.data[0]!.id).not.toBe(first.data[0]!.id)
        yield* expectFailure(adminApi.mail.list({ urlParams: listParams({ cursor: "bm90LWEtY3Vyc29y" }) }), "InvalidRequest", "cursor")

        const plain = yield* Effect.promise(() => signUp(app))
        yield* expectFailure((yield* clientAs(app, plain.token)).mail.list({ urlParams: listParams() }), "Forbidden")
      }))
  })
})

describe("mail without SMTP_URL in development", () => {
  const logs: Array<string> = []
  layer(testAppLayer({ mail: fastMail(undefined) }, { logs }), { timeout: 120_000, excludeTestServices: true })("", (it) => {
    it.effect("writes each mail to the log with its links, and counts it sent", () =>
      Effect.gen(function*() {
        const email = uniqueEmail("console")
        yield* register(email)
        const [record] = yield* recordsWhen(email, (records) => records[0]?.status === "sent")
        expect(record!.provider_message_id).toMatch(/^log:/)
        const linkLine = logs.find((line) => line.includes("mail link") && line.includes(email))
        expect(linkLine).toMatch(/link="http:\/\/localhost:\d+\/console\/verify-email\?token=[A-Za-z0-9_-]+"/)
        expect(logs.some((line) => line.includes("Verify your e-mail address") && line.includes(email))).toBe(true)
      }))
  })
})

describe("mail without SMTP_URL in production", () => {
  const logs: Array<string> = []
  layer(testAppLayer({ production: true, mail: fastMail(undefined) }, { logs }), { timeout: 120_000, excludeTestServices: true })("", (it) => {
    it.effect("warns at start-up and keeps the mail queued, never in the log", () =>
      Effect.gen(function*() {
        // The sender logs it as it starts, just after the service came up.
        const warned = () => logs.some((line) => line.includes("level=WARN") && line.includes("SMTP_URL is not set"))
        for (let wait = 0; wait < 100 && !warned(); wait++) yield* Effect.sleep("50 millis")
        expect(warned()).toBe(true)
        const email = uniqueEmail("production")
        yield* register(email)
        const [record] = yield* recordsWhen(email, (records) => (records[0]?.attempts ?? 0) >= 1)
        expect(record).toMatchObject({ status: "queued", last_error: "SMTP_URL is not set" })
        expect(logs.some((line) => line.includes("verify-email?token="))).toBe(false)
      }))
  })
})
