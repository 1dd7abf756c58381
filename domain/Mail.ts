/**
 * Outgoing mail as platform administrators see it: each message's delivery record (never its body).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { oneOf } from "./Text.ts"

export const MailStatuses = ["queued", "sent", "failed"] as const
const Timestamp = Schema.String.annotations({ description: "ISO 8601 time", examples: ["2026-01-05T10:00:00.000Z"] })

export class OutgoingMail extends Schema.Class<OutgoingMail>("OutgoingMail")({
  id: Schema.String.annotations({ examples: ["eml_42"] }),
  object: Schema.Literal("mail"),
  to: Schema.String,
  subject: Schema.String,
  kind: Schema.String.annotations({
    description: "verification, password_reset, registration_attempt, mfa_changed, api_key_created, invitation, receipt, refund_notice"
  }),
  status: Schema.Literal(...MailStatuses).annotations({
    description: "queued (waiting for its first attempt or a retry), sent (the server answered 250) or failed (refused with a 5xx answer, or given up)"
  }),
  attempts: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  provider_message_id: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Timestamp),
  finished_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
}) {}

export const MailListParams = Schema.Struct({
  ...ListParams.fields,
  status: Schema.optional(oneOf(...MailStatuses).annotations({ description: "Only mail in this status" }))
})
export type MailListParams = typeof MailListParams.Type

export class MailGroup extends HttpApiGroup.make("mail")
  .add(
    HttpApiEndpoint.get("list", "/admin/mail")
      .setUrlParams(MailListParams)
      .addSuccess(ListOf(OutgoingMail).annotations({ identifier: "OutgoingMailList" }))
      .annotate(OpenApi.Summary, "Outgoing mail and its delivery (platform admin)")
      .annotate(
        OpenApi.Description,
        "Every mail the service queued, newest first, with its delivery record: status, attempts, the last " +
          "error and the provider's message id. Bodies are never shown (they are sealed at rest and purged " +
          "after delivery). `status=failed` lists what was refused or given up."
      )
  )
  .pipe(authenticated("session"))
  .annotate(OpenApi.Title, "Mail")
  .annotate(OpenApi.Description, "The outgoing mail queue and each mail's delivery record, for platform administrators; bodies are never shown.")
{}
