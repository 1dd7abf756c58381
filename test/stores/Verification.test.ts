/**
 * Merchant verification over HTTP: submission and its validation, one pending submission at a time,
 * the status of an organization, and the platform administrators' review queue and decisions.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, signUp, TEST_PASSWORD } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

const expectError = (response: { status: number; body: any }, status: number, code: string, param?: string) => {
  expect(response.status).toBe(status)
  expect(response.body.error.code).toBe(code)
  expect(typeof response.body.error.message).toBe("string")
  if (param !== undefined) expect(response.body.error.param).toBe(param)
}

const ADMIN_EMAIL = "admin@example.test"

const submission = (overrides: Record<string, unknown> = {}) => ({
  business_name: "Riverside Cafe Co., Ltd.",
  registration_number: "KH-00012345",
  contact: { name: "Sok Dara", email: "dara@example.test", phone: "+855 12 345 678" },
  documents: [
    { type: "business_registration", url: "https://files.example.test/registration.pdf" },
    { type: "owner_id", url: "https://files.example.test/id.jpg" }
  ],
  ...overrides
})

const signUpOwner = (app: TestAppShape, organization_name = "Dara Coffee") =>
  Effect.promise(() => signUp(app, { organization_name }))

describe("merchant verification", () => {
  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), { timeout: 120_000, excludeTestServices: true })(
    "over HTTP",
    (it) => {
      it.effect("records a submission as pending and shows it as the organization's status", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)

          const none = yield* call(app, "GET", `/verification?org_id=${owner.organizationId}`, { token: owner.token })
          expect(none.status).toBe(200)
          expect(none.body).toEqual({ object: "verification", organization_id: owner.organizationId, status: "not_submitted" })

          const submitted = yield* call(app, "POST", "/verification", { token: owner.token, body: submission() })
          expect(submitted.status).toBe(201)
          expect(submitted.body.id).toMatch(/^kyc_[0-9A-Za-z]{24}$/)
          expect(submitted.body).toMatchObject({
            object: "verification",
            organization_id: owner.organizationId,
            status: "pending",
            business_name: "Riverside Cafe Co., Ltd.",
            registration_number: "KH-00012345",
            contact: { name: "Sok Dara", email: "dara@example.test", phone: "+855 12 345 678" },
            documents: submission().documents,
            rejection_reason: null,
            reviewed_at: null
          })
          expect(new Date(submitted.body.created_at).toISOString()).toBe(submitted.body.created_at)

          const status = yield* call(app, "GET", `/verification?org_id=${owner.organizationId}`, { token: owner.token })
          expect(status.status).toBe(200)
          expect(status.body).toEqual(submitted.body)

          // One under review at a time.
          const second = yield* call(app, "POST", "/verification", {
            token: owner.token,
            body: submission({ organization_id: owner.organizationId })
          })
          expectError(second, 409, "invalid_state")

          // An Analyst may see the status but not submit.
          const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
          const seen = yield* call(app, "GET", `/verification?org_id=${owner.organizationId}`, { token: analyst.token })
          expect(seen.body.id).toBe(submitted.body.id)
          expectError(
            yield* call(app, "POST", "/verification", {
              token: analyst.token,
              body: submission({ organization_id: owner.organizationId })
            }),
            403,
            "forbidden"
          )
          const contactWithoutPhone = yield* signUpOwner(app, "No Phone Org")
          const withoutPhone = yield* call(app, "POST", "/verification", {
            token: contactWithoutPhone.token,
            body: submission({ contact: { name: "Chan Sophea", email: "sophea@example.test" } })
          })
          expect(withoutPhone.status).toBe(201)
          expect(withoutPhone.body.contact).toEqual({ name: "Chan Sophea", email: "sophea@example.test", phone: null })
        }))

      it.effect("refuses bad submissions with the offending field", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const document = { type: "owner_id", url: "https://files.example.test/id.jpg" }
          const bad: Array<[Record<string, unknown>, string]> = [
            [submission({ business_name: "" }), "business_name"],
            [submission({ registration_number: undefined }), "registration_number"],
            [submission({ contact: { name: "Sok Dara", email: "not-an-email" } }), "contact.email"],
            [submission({ contact: { email: "dara@example.test" } }), "contact.name"],
            [submission({ documents: [] }), "documents"],
            [submission({ documents: Array.from({ length: 21 }, () => document) }), "documents"],
            [submission({ documents: [{ type: "owner_id", url: "http://files.example.test/id.jpg" }] }), "documents.0.url"],
            [submission({ documents: [document, { type: "owner_id", url: "ftp://files.example.test/x" }] }), "documents.1.url"],
            [submission({ documents: [{ type: "Owner ID!", url: document.url }] }), "documents.0.type"],
            [submission({ documents: "https://files.example.test/id.jpg" }), "documents"]
          ]
          for (const [body, param] of bad) {
            expectError(yield* call(app, "POST", "/verification", { token: owner.token, body }), 400, "invalid_request", param)
          }
          const twenty = yield* call(app, "POST", "/verification", {
            token: owner.token,
            body: submission({ documents: Array.from({ length: 20 }, () => document) })
          })
          expect(twenty.status).toBe(201)
          expect(twenty.body.documents).toHaveLength(20)
        }))

      it.effect("keeps organizations apart; without org_id the status is the user's first organization's", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const stranger = yield* signUpOwner(app, "Stranger Org")
          // Like POST /verification, GET falls back to the user's first organization.
          const before = yield* call(app, "GET", "/verification", { token: owner.token })
          expect(before.status).toBe(200)
          expect(before.body).toEqual({ object: "verification", organization_id: owner.organizationId, status: "not_submitted" })
          const submitted = yield* call(app, "POST", "/verification", { token: owner.token, body: submission() })
          const after = yield* call(app, "GET", "/verification", { token: owner.token })
          expect(after.body).toMatchObject({ id: submitted.body.id, organization_id: owner.organizationId, status: "pending" })
          expectError(
            yield* call(app, "GET", `/verification?org_id=${owner.organizationId}`, { token: stranger.token }),
            404,
            "not_found"
          )
          expectError(
            yield* call(app, "POST", "/verification", {
              token: stranger.token,
              body: submission({ organization_id: owner.organizationId })
            }),
            404,
            "not_found",
            "organization_id"
          )
          expectError(yield* call(app, "GET", `/verification?org_id=${owner.organizationId}`), 401, "unauthorized")
          expectError(yield* call(app, "POST", "/verification", { body: submission() }), 401, "unauthorized")
        }))

      it.effect("lets only platform administrators list and review submissions", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const submitted = yield* call(app, "POST", "/verification", { token: owner.token, body: submission() })
          const id = submitted.body.id

          const adminRoutes: Array<[string, string, unknown]> = [
            ["GET", "/admin/verifications?status=pending", undefined],
            ["POST", `/admin/verifications/${id}/approve`, undefined],
            ["POST", `/admin/verifications/${id}/reject`, { reason: "Blurry documents" }]
          ]
          for (const [method, path, body] of adminRoutes) {
            // The submitting owner is no platform administrator, and neither is anyone unauthenticated.
            expectError(yield* call(app, method, path, { token: owner.token, body }), 403, "forbidden")
            expectError(yield* call(app, method, path, { body }), 401, "unauthorized")
          }
          const unchanged = yield* call(app, "GET", `/verification?org_id=${owner.organizationId}`, { token: owner.token })
          expect(unchanged.body.status).toBe("pending")
        }))

      it.effect("approves and rejects pending submissions once, and allows a new submission after a review", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const admin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL }))
          const approvedOwner = yield* signUpOwner(app, "To Approve")
          const rejectedOwner = yield* signUpOwner(app, "To Reject")
          const toApprove = (yield* call(app, "POST", "/verification", { token: approvedOwner.token, body: submission() })).body
          const toReject = (yield* call(app, "POST", "/verification", { token: rejectedOwner.token, body: submission() })).body

          const queue = yield* call(app, "GET", "/admin/verifications?status=pending", { token: admin.token })
          expect(queue.status).toBe(200)
          expect(queue.body.object).toBe("list")
          const queued = queue.body.data.map((verification: any) => verification.id)
          expect(queued).toContain(toApprove.id)
          expect(queued).toContain(toReject.id)
          // Newest first.
          expect(queued.indexOf(toReject.id)).toBeLessThan(queued.indexOf(toApprove.id))
          expect(queue.body.data.every((verification: any) => verification.status === "pending")).toBe(true)

          const approved = yield* call(app, "POST", `/admin/verifications/${toApprove.id}/approve`, { token: admin.token })
          expect(approved.status).toBe(201)
          expect(approved.body).toMatchObject({ id: toApprove.id, status: "approved", rejection_reason: null })
          expect(new Date(approved.body.reviewed_at).getTime()).toBeGreaterThanOrEqual(new Date(toApprove.created_at).getTime())

          const noReason = yield* call(app, "POST", `/admin/verifications/${toReject.id}/reject`, {
            token: admin.token,
            body: {}
          })
          expectError(noReason, 400, "invalid_request", "reason")
          const rejected = yield* call(app, "POST", `/admin/verifications/${toReject.id}/reject`, {
            token: admin.token,
            body: { reason: "The registration certificate is unreadable" }
          })
          expect(rejected.status).toBe(201)
          expect(rejected.body).toMatchObject({
            id: toReject.id,
            status: "rejected",
            rejection_reason: "The registration certificate is unreadable"
          })
          expect(rejected.body.reviewed_at).not.toBeNull()

          // A decision is final.
          for (const [path, body] of [
            [`/admin/verifications/${toApprove.id}/approve`, undefined],
            [`/admin/verifications/${toApprove.id}/reject`, { reason: "Changed my mind" }],
            [`/admin/verifications/${toReject.id}/approve`, undefined]
          ] as const) {
            expectError(yield* call(app, "POST", path, { token: admin.token, body }), 409, "invalid_state")
          }
          expectError(yield* call(app, "POST", "/admin/verifications/kyc_nosuchthing/approve", { token: admin.token }), 404, "not_found")

          // The organization sees the decision, with the reason, and may submit again.
          const seen = yield* call(app, "GET", `/verification?org_id=${rejectedOwner.organizationId}`, { token: rejectedOwner.token })
          expect(seen.body).toEqual(rejected.body)
          const resubmitted = yield* call(app, "POST", "/verification", { token: rejectedOwner.token, body: submission() })
          expect(resubmitted.status).toBe(201)
          expect(resubmitted.body.status).toBe("pending")
          const latest = yield* call(app, "GET", `/verification?org_id=${rejectedOwner.organizationId}`, { token: rejectedOwner.token })
          expect(latest.body.id).toBe(resubmitted.body.id)

          const approvedOnly = yield* call(app, "GET", "/admin/verifications?status=approved", { token: admin.token })
          expect(approvedOnly.body.data.map((verification: any) => verification.id)).toEqual([toApprove.id])
          const badStatus = yield* call(app, "GET", "/admin/verifications?status=maybe", { token: admin.token })
          expectError(badStatus, 400, "invalid_request", "status")
        }))

      it.effect("pages through the review queue", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const admin = yield* Effect.promise(() => signUp(app, { email: `pager-${Date.now()}@example.test` }))
          // Not an administrator: listed e-mails only.
          expectError(yield* call(app, "GET", "/admin/verifications", { token: admin.token }), 403, "forbidden")

          const login = yield* call(app, "POST", "/auth/login", {
            body: { email: ADMIN_EMAIL, password: TEST_PASSWORD }
          })
          expect(login.status).toBe(201)
          const token = login.body.access_token
          const all = yield* call(app, "GET", "/admin/verifications?limit=100", { token })
          expect(all.status).toBe(200)
          expect(all.body.data.length).toBeGreaterThan(3)
          const seen: Array<string> = []
          let cursor: string | null = null
          do {
            const query: string = cursor === null ? "limit=2" : `limit=2&cursor=${cursor}`
            const page = yield* call(app, "GET", `/admin/verifications?${query}`, { token })
            expect(page.status).toBe(200)
            seen.push(...page.body.data.map((verification: any) => verification.id))
            cursor = page.body.next_cursor
          } while (cursor !== null)
          expect(seen).toEqual(all.body.data.map((verification: any) => verification.id))
        }))
    }
  )
})
