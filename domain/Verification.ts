/**
 * Merchant verification (KYC): an organization submits its business details and documents, a platform
 * administrator approves or rejects the submission. An approved verification is one of the two things
 * a store needs before it can go live.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, ListParams } from "./Lists.ts"
import { Email } from "./Accounts.ts"
import { authenticated } from "./Auth.ts"
import {
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse
} from "./Errors.ts"
import { boundedText, HttpsUrl, PhoneNumber } from "./Stores.ts"
import { OrganizationId, VerificationId } from "./Ids.ts"
import { closed, MAX_NAME_LENGTH, oneOf } from "./Text.ts"

export const MAX_VERIFICATION_DOCUMENTS = 20

export const VerificationStatus = oneOf("pending", "approved", "rejected")
export type VerificationStatus = typeof VerificationStatus.Type

export const DocumentType = Schema.String.pipe(
  Schema.pattern(/^[a-z][a-z0-9_]{0,63}$/, {
    message: () => "must be a lowercase word such as business_registration, owner_id or bank_statement"
  })
).annotations({ examples: ["business_registration", "owner_id", "bank_statement"] })

export class VerificationContact extends Schema.Class<VerificationContact>("VerificationContact")({
  name: Schema.String,
  email: Schema.String,
  phone: Schema.NullOr(Schema.String)
}) {}

export class VerificationDocument extends Schema.Class<VerificationDocument>("VerificationDocument")({
  type: Schema.String,
  url: Schema.String
}) {}

export class Verification extends Schema.Class<Verification>("Verification")({
  id: VerificationId,
  object: Schema.Literal("verification"),
  organization_id: OrganizationId,
  status: VerificationStatus,
  business_name: Schema.String,
  registration_number: Schema.String,
  contact: VerificationContact,
  documents: Schema.Array(VerificationDocument),
  rejection_reason: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  reviewed_at: Schema.NullOr(Schema.String)
}) {}

/** What an organization that never submitted anything has instead of a verification. */
export class VerificationNotSubmitted extends Schema.Class<VerificationNotSubmitted>("VerificationNotSubmitted")({
  object: Schema.Literal("verification"),
  organization_id: OrganizationId,
  status: Schema.Literal("not_submitted")
}) {}

export class VerificationList extends Schema.Class<VerificationList>("VerificationList")(ListOf(Verification).fields) {}

export const SubmitVerification = closed(Schema.Struct({
  organization_id: Schema.optional(
    OrganizationId.annotations({ description: "The organization to verify; the user's first one when omitted" })
  ),
  business_name: boundedText(MAX_NAME_LENGTH),
  registration_number: boundedText(100),
  contact: Schema.Struct({
    name: boundedText(MAX_NAME_LENGTH),
    email: Email,
    phone: Schema.optional(Schema.NullOr(PhoneNumber))
  }),
  documents: Schema.Array(Schema.Struct({ type: DocumentType, url: HttpsUrl })).pipe(
    Schema.minItems(1, { message: () => "must list at least one document" }),
    Schema.maxItems(MAX_VERIFICATION_DOCUMENTS, {
      message: () => `must list at most ${MAX_VERIFICATION_DOCUMENTS} documents`
    })
  )
}), "SubmitVerificationDto")
export type SubmitVerification = typeof SubmitVerification.Type

export const ListVerificationsParams = Schema.Struct({
  ...ListParams.fields,
  status: Schema.optional(VerificationStatus)
})
export type ListVerificationsParams = typeof ListVerificationsParams.Type

const VerificationPath = Schema.Struct({ id: VerificationId })

export const RejectVerification = closed(Schema.Struct({ reason: boundedText(1000) }), "RejectDto")

export class VerificationGroup extends HttpApiGroup.make("verification")
  .add(
    HttpApiEndpoint.post("submit", "/verification")
      .setPayload(SubmitVerification)
      .addSuccess(Verification, { status: 201 })
      .addError(InvalidStateResponse)
      .annotate(OpenApi.Summary, "Submit merchant verification (KYC)")
      .annotate(
        OpenApi.Description,
        "Submits the organization's business details and 1 to 20 documents (https URLs) for review. " +
          "While a submission is pending another one is refused with 409 `invalid_state`; after a " +
          "review the organization may submit again. Needs verification.submit (Owner, Admin)."
      )
  )
  .add(
    HttpApiEndpoint.get("status", "/verification")
      .setUrlParams(Schema.Struct({
        org_id: Schema.optional(
          OrganizationId.annotations({ description: "The organization; the user's first one when omitted, as on submit" })
        )
      }))
      .addSuccess(Schema.Union(Verification, VerificationNotSubmitted))
      .annotate(OpenApi.Summary, "Verification status of an organization")
      .annotate(
        OpenApi.Description,
        "The organization's latest verification, or `{ object: \"verification\", organization_id, " +
          "status: \"not_submitted\" }` when it has never submitted one. Without `org_id`, the user's first " +
          "organization (as `POST /verification` does)."
      )
  )
  .add(
    HttpApiEndpoint.get("adminList", "/admin/verifications")
      .setUrlParams(ListVerificationsParams)
      .addSuccess(VerificationList)
      .annotate(OpenApi.Summary, "List verifications of every organization, optionally by status (platform admin)")
      .annotate(
        OpenApi.Description,
        "Newest first, across organizations; `status` filters by pending, approved or rejected. Platform administrators only (403 for anyone else)."
      )
  )
  .add(
    HttpApiEndpoint.post("approve", "/admin/verifications/:id/approve")
      .setPath(VerificationPath)
      .addSuccess(Verification, { status: 201 })
      .addError(InvalidStateResponse)
      .annotate(OpenApi.Summary, "Approve a pending verification (platform admin)")
      .annotate(
        OpenApi.Description,
        "Only a pending verification can be approved (409 `invalid_state` otherwise). Approval lets the organization's stores switch live mode on."
      )
  )
  .add(
    HttpApiEndpoint.post("reject", "/admin/verifications/:id/reject")
      .setPath(VerificationPath)
      .setPayload(RejectVerification)
      .addSuccess(Verification, { status: 201 })
      .addError(InvalidStateResponse)
      .annotate(OpenApi.Summary, "Reject a pending verification with a reason (platform admin)")
      .annotate(
        OpenApi.Description,
        "The reason (1 to 1000 characters) is shown to the organization; it may submit again. Only a pending verification can be rejected."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Merchant verification")
  .annotate(OpenApi.Description, "Know-your-business checks an organization passes before its stores take live payments; reviewed by platform administrators.")
{}
