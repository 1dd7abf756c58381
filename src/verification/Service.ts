/**
 * The rules of merchant verification: who may submit, one submission under review at a time, and the
 * platform administrators' review, which decides a pending submission exactly once.
 */
import { Effect, Option } from "effect"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import type { OrganizationId, VerificationId } from "../../domain/Ids.ts"
import {
  type ListVerificationsParams,
  type SubmitVerification,
  Verification,
  VerificationContact,
  VerificationDocument,
  VerificationList,
  VerificationNotSubmitted,
  type VerificationStatus
} from "../../domain/Verification.ts"
import { AccessService, storeData } from "../access/Service.ts"
import { newId } from "../platform/Ids.ts"
import { decodeCursor, toPage } from "../platform/Pagination.ts"
import { VerificationRepo, type VerificationRow } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

export const toVerification = (row: VerificationRow): Verification =>
  new Verification({
    id: row.id,
    object: "verification",
    organization_id: row.organization_id,
    status: row.status,
    business_name: row.business_name,
    registration_number: row.registration_number,
    contact: new VerificationContact(row.contact),
    documents: row.documents.map((document) => new VerificationDocument(document)),
    // The review note is shown only as the reason of a rejection; an approval carries none.
    rejection_reason: row.status === "rejected" ? row.review_note : null,
    created_at: row.created_at.toISOString(),
    reviewed_at: row.reviewed_at === null ? null : row.reviewed_at.toISOString()
  })

export class VerificationService extends Effect.Service<VerificationService>()("verification/VerificationService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* VerificationRepo)
    const access = yield* AccessService

    const submit = traced("Verification.submit")(function*(input: SubmitVerification) {
      const checked = access.organizationOrFirst(input.organization_id, "verification.submit")
      return yield* access.withOrganization(checked, ({ organizationId, principal: user }) =>
        Effect.gen(function*() {
          const inserted = yield* repo.insertPending({
            id: newId("kyc"),
            organizationId,
            businessName: input.business_name,
            registrationNumber: input.registration_number,
            contact: { name: input.contact.name, email: input.contact.email, phone: input.contact.phone ?? null },
            documents: input.documents.map(({ type, url }) => ({ type, url })),
            submittedBy: user.userId
          })
          if (Option.isNone(inserted)) {
            return yield* new InvalidState({
              message: "This organization already has a verification under review; wait for its decision before submitting again"
            })
          }
          return toVerification(inserted.value)
        }))
    })

    /** Like submit, the user's first organization when none is named. */
    const status = traced("Verification.status")(function*(requestedOrganizationId: OrganizationId | undefined) {
      const checked = access.organizationOrFirst(requestedOrganizationId, "organization.read").pipe(
        // The query parameter is `org_id`; the error names it as the caller wrote it.
        Effect.catchTag("NotFound", (error) => Effect.fail(new NotFound({ message: error.message, param: "org_id" })))
      )
      const { latest, organizationId } = yield* access.withOrganization(checked, ({ organizationId }) =>
        Effect.map(repo.latestOf(organizationId), (latest) => ({ latest, organizationId })))
      return Option.match(latest, {
        onNone: (): Verification | VerificationNotSubmitted =>
          new VerificationNotSubmitted({
            object: "verification",
            organization_id: organizationId,
            status: "not_submitted"
          }),
        onSome: toVerification
      })
    })

    /** The status of the organization's latest submission, None when it never submitted one (internal: under the caller's proof). */
    const latestStatus = traced("Verification.latestStatus")(function*(organizationId: OrganizationId) {
      return Option.map(yield* repo.latestOf(organizationId), (row): VerificationStatus => row.status)
    })

    const adminList = traced("Verification.adminList")(function*(params: ListVerificationsParams) {
      return yield* access.withPlatformAdmin(() =>
        Effect.gen(function*() {
          const position = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
          const rows = yield* repo.list(params.status, params.limit, position)
          const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
          return new VerificationList({ ...page, data: page.data.map(toVerification) })
        }))
    })

    const review = traced("Verification.review")(function*(
      id: VerificationId,
      decision: { readonly status: "approved" | "rejected"; readonly note: string | null }
    ) {
      return yield* access.withPlatformAdmin((admin) =>
        Effect.gen(function*() {
          const reviewed = yield* repo.review({ id, status: decision.status, reviewedBy: admin.userId, note: decision.note })
          if (Option.isSome(reviewed)) return toVerification(reviewed.value)
          const existing = yield* repo.find(id)
          if (Option.isNone(existing)) return yield* new NotFound({ message: `No such verification: ${id}`, param: "id" })
          return yield* new InvalidState({
            message: `Only a pending verification can be reviewed; this one is ${existing.value.status}`
          })
        }))
    })

    const approve = (id: VerificationId) => review(id, { status: "approved", note: null })
    const reject = (id: VerificationId, reason: string) => review(id, { status: "rejected", note: reason })

    return { submit, status, latestStatus, adminList, approve, reject } as const
  }),
  dependencies: [VerificationRepo.Default, AccessService.Default]
}) {}
