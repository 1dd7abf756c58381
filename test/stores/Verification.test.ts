/**
 * Merchant verification over HTTP: submission and its validation, one pending submission at a time,
 * the status of an organization, and the platform administrators' review queue and decisions.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { VerificationId } from "../../domain/Ids.ts"
import type { SubmitVerification } from "../../domain/Verification.ts"
import { addMember, type SignedUp, signUp, TEST_PASSWORD } from "../support/Accounts.ts"
import { allPages, type AnyCallError, clientAs, expectFailure, listParams, withWire } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

// Raw calls only for submissions and filters outside the request schemas.
const call = makeCall()

const expectRawError = (response: { status: number; body: any }, status: number, code: string, param?: string) => {
  expect(response.status).toBe(status)
  expect(response.body.error.code).toBe(code)
  expect(typeof response.body.error.message).toBe("string")
  if (param !== undefined) expect(response.body.error.param).toBe(param)
}

const ADMIN_EMAIL = "admin@example.test"

const submission = (overrides: Partial<SubmitVerification> = {}): SubmitVerification => ({
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

const submit = (app: TestAppShape, token: string, payload: SubmitVerification = submission()) =>
  Effect.flatMap(clientAs(app, token), (api) => api.verification.submit({ payload }))

/** The verification status of `owner`'s organization (of the caller's first one without it), and its wire body. */
const statusOf = (app: TestAppShape, token: string, owner?: SignedUp) =>
  Effect.flatMap(clientAs(app, token), (api) =>
    withWire(api.verification.status({
      urlParams: owner === undefined ? {} : { org_id: owner.organizationId },
      withResponse: true
    })))

describe("merchant verification", () => {
  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), { timeout: 120_000, excludeTestServices: true })(
    "over HTTP",
    (it) => {
      it.effect("records a submission as pending and shows it as the organization's status", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)

          const none = yield* statusOf(app, owner.token, owner)
          expect(none.wire).toEqual({ object: "verification", organization_id: owner.organizationId, status: "not_submitted" })

          const submitted = yield* Effect.flatMap(clientAs(app, owner.token), (api) =>
            withWire(api.verification.submit({ payload: submission(), withResponse: true })))
          expect(submitted.value.id).toMatch(/^kyc_[0-9A-Za-z]{24}$/)
          expect(submitted.wire).toMatchObject({
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
          expect(new Date(submitted.value.created_at).toISOString()).toBe(submitted.value.created_at)

          expect((yield* statusOf(app, owner.token, owner)).wire).toEqual(submitted.wire)

          // One under review at a time.
          yield* expectFailure(submit(app, owner.token, submission({ organization_id: owner.organizationId })), "InvalidState")

          // An Analyst may see the status but not submit.
          const analyst = yield* Effect.promise(() => addMember(app, owner.token, owner.organizationId, "analyst"))
          expect((yield* statusOf(app, analyst.token, owner)).value).toMatchObject({ id: submitted.value.id })
          yield* expectFailure(submit(app, analyst.token, submission({ organization_id: owner.organizationId })), "Forbidden")
          const contactWithoutPhone = yield* signUpOwner(app, "No Phone Org")
          const withoutPhone = yield* submit(
            app,
            contactWithoutPhone.token,
            submission({ contact: { name: "Chan Sophea", email: "sophea@example.test" } })
          )
          expect(withoutPhone.contact).toEqual({ name: "Chan Sophea", email: "sophea@example.test", phone: null })
        }))

      it.effect("refuses bad submissions with the offending field", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const document = { type: "owner_id", url: "https://files.example.test/id.jpg" }
          // Raw: every one of these is outside the request schema.
          const bad: Array<[Record<string, unknown>, string]> = [
            [{ business_name: "" }, "business_name"],
            [{ registration_number: undefined }, "registration_number"],
            [{ contact: { name: "Sok Dara", email: "not-an-email" } }, "contact.email"],
            [{ contact: { email: "dara@example.test" } }, "contact.name"],
            [{ documents: [] }, "documents"],
            [{ documents: Array.from({ length: 21 }, () => document) }, "documents"],
            [{ documents: [{ type: "owner_id", url: "http://files.example.test/id.jpg" }] }, "documents.0.url"],
            [{ documents: [document, { type: "owner_id", url: "ftp://files.example.test/x" }] }, "documents.1.url"],
            [{ documents: [{ type: "Owner ID!", url: document.url }] }, "documents.0.type"],
            [{ documents: "https://files.example.test/id.jpg" }, "documents"]
          ]
          for (const [overrides, param] of bad) {
            const body = { ...submission(), ...overrides }
            expectRawError(yield* call(app, "POST", "/verification", { token: owner.token, body }), 400, "invalid_request", param)
          }
          const twenty = yield* submit(app, owner.token, submission({ documents: Array.from({ length: 20 }, () => document) }))
          expect(twenty.documents).toHaveLength(20)
        }))

      it.effect("keeps organizations apart; without org_id the status is the user's first organization's", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const stranger = yield* signUpOwner(app, "Stranger Org")
          // Like POST /verification, GET falls back to the user's first organization.
          const before = yield* statusOf(app, owner.token)
          expect(before.wire).toEqual({ object: "verification", organization_id: owner.organizationId, status: "not_submitted" })
          const submitted = yield* submit(app, owner.token)
          const after = yield* statusOf(app, owner.token)
          expect(after.value).toMatchObject({ id: submitted.id, organization_id: owner.organizationId, status: "pending" })
          yield* expectFailure(statusOf(app, stranger.token, owner), "NotFound")
          yield* expectFailure(
            submit(app, stranger.token, submission({ organization_id: owner.organizationId })),
            "NotFound",
            "organization_id"
          )
          yield* expectFailure(statusOf(app, "", owner), "Unauthorized")
          yield* expectFailure(submit(app, ""), "Unauthorized")
        }))

      it.effect("lets only platform administrators list and review submissions", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const owner = yield* signUpOwner(app)
          const { id } = yield* submit(app, owner.token)

          // The submitting owner is no platform administrator, and neither is anyone unauthenticated.
          for (const [token, refusal] of [[owner.token, "Forbidden"], ["", "Unauthorized"]] as const) {
            const api = yield* clientAs(app, token)
            const adminRoutes: ReadonlyArray<readonly [string, Effect.Effect<unknown, AnyCallError>]> = [
              ["GET /admin/verifications", api.verification.adminList({ urlParams: listParams({ status: "pending" as const }) })],
              ["POST /admin/verifications/:id/approve", api.verification.approve({ path: { id } })],
              ["POST /admin/verifications/:id/reject", api.verification.reject({ path: { id }, payload: { reason: "Blurry documents" } })]
            ]
            for (const [route, request] of adminRoutes) yield* expectFailure(request, refusal, undefined, route)
          }
          expect((yield* statusOf(app, owner.token, owner)).value.status).toBe("pending")
        }))

      it.effect("approves and rejects pending submissions once, and allows a new submission after a review", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const admin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL }))
          const approvedOwner = yield* signUpOwner(app, "To Approve")
          const rejectedOwner = yield* signUpOwner(app, "To Reject")
          const toApprove = yield* submit(app, approvedOwner.token)
          const toReject = yield* submit(app, rejectedOwner.token)
          const { verification } = yield* clientAs(app, admin.token)

          const queue = yield* verification.adminList({ urlParams: listParams({ status: "pending" as const }) })
          expect(queue.object).toBe("list")
          const queued = queue.data.map((pending) => pending.id)
          expect(queued).toContain(toApprove.id)
          expect(queued).toContain(toReject.id)
          // Newest first.
          expect(queued.indexOf(toReject.id)).toBeLessThan(queued.indexOf(toApprove.id))
          expect(queue.data.every((pending) => pending.status === "pending")).toBe(true)

          const approved = yield* verification.approve({ path: { id: toApprove.id } })
          expect(approved).toMatchObject({ id: toApprove.id, status: "approved", rejection_reason: null })
          expect(new Date(approved.reviewed_at!).getTime()).toBeGreaterThanOrEqual(new Date(toApprove.created_at).getTime())

          // Raw: a rejection without a reason is outside the request schema.
          const noReason = yield* call(app, "POST", `/admin/verifications/${toReject.id}/reject`, { token: admin.token, body: {} })
          expectRawError(noReason, 400, "invalid_request", "reason")
          const rejected = yield* withWire(verification.reject({
            path: { id: toReject.id },
            payload: { reason: "The registration certificate is unreadable" },
            withResponse: true
          }))
          expect(rejected.value).toMatchObject({
            id: toReject.id,
            status: "rejected",
            rejection_reason: "The registration certificate is unreadable"
          })
          expect(rejected.value.reviewed_at).not.toBeNull()

          // A decision is final.
          const decided: ReadonlyArray<Effect.Effect<unknown, AnyCallError>> = [
            verification.approve({ path: { id: toApprove.id } }),
            verification.reject({ path: { id: toApprove.id }, payload: { reason: "Changed my mind" } }),
            verification.approve({ path: { id: toReject.id } })
          ]
          for (const decision of decided) yield* expectFailure(decision, "InvalidState")
          yield* expectFailure(verification.approve({ path: { id: VerificationId.make("kyc_nosuchthing") } }), "NotFound")

          // The organization sees the decision, with the reason, and may submit again.
          expect((yield* statusOf(app, rejectedOwner.token, rejectedOwner)).wire).toEqual(rejected.wire)
          const resubmitted = yield* submit(app, rejectedOwner.token)
          expect(resubmitted.status).toBe("pending")
          expect((yield* statusOf(app, rejectedOwner.token, rejectedOwner)).value).toMatchObject({ id: resubmitted.id })

          const approvedOnly = yield* verification.adminList({ urlParams: listParams({ status: "approved" as const }) })
          expect(approvedOnly.data.map((approvedOne) => approvedOne.id)).toEqual([toApprove.id])
          // Raw: a status filter outside the schema.
          const badStatus = yield* call(app, "GET", "/admin/verifications?status=maybe", { token: admin.token })
          expectRawError(badStatus, 400, "invalid_request", "status")
        }))

      it.effect("pages through the review queue", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const notAdmin = yield* Effect.promise(() => signUp(app, { email: `pager-${Date.now()}@example.test` }))
          // Not an administrator: listed e-mails only.
          yield* expectFailure(
            Effect.flatMap(clientAs(app, notAdmin.token), (api) => api.verification.adminList({ urlParams: listParams() })),
            "Forbidden"
          )

          const login = yield* app.client.auth.login({ payload: { email: ADMIN_EMAIL, password: TEST_PASSWORD } })
          const { verification } = yield* clientAs(app, login.access_token)
          const all = yield* verification.adminList({ urlParams: listParams({ limit: 100 }) })
          expect(all.data.length).toBeGreaterThan(3)
          const seen = yield* allPages(2, (urlParams) => verification.adminList({ urlParams }))
          expect(seen.map((one) => one.id)).toEqual(all.data.map((one) => one.id))
        }))
    }
  )
})
