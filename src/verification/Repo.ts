/**
 * SQL of merchant verification submissions and their review.
 */
import { SqlClient } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { OrganizationId, UserId, VerificationId } from "../../domain/Ids.ts"
import { VerificationStatus } from "../../domain/Verification.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { traced } from "../platform/Traced.ts"

export const VerificationRow = Schema.Struct({
  id: VerificationId,
  organization_id: OrganizationId,
  status: Schema.Literal("pending", "approved", "rejected"),
  business_name: Schema.String,
  registration_number: Schema.String,
  contact: Schema.Struct({
    name: Schema.String,
    email: Schema.String,
    phone: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
  }),
  documents: Schema.Array(Schema.Struct({ type: Schema.String, url: Schema.String })),
  review_note: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  reviewed_at: Schema.NullOr(Schema.DateFromSelf)
})
export type VerificationRow = typeof VerificationRow.Type

const COLUMNS = [
  "id",
  "organization_id",
  "status",
  "business_name",
  "registration_number",
  "contact",
  "documents",
  "review_note",
  "created_at",
  "reviewed_at"
]

export class VerificationRepo extends Effect.Service<VerificationRepo>()("verification/VerificationRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS.join(", "))

    /**
     * Records a submission; None when the organization already has one pending (the partial unique
     * index decides, so two submissions sent at the same moment cannot both be pending).
     */
    const insertPending = traced("VerificationRepo.insertPending")(
      SqlSchema.findOne({
        Request: Schema.Struct({
          id: VerificationId,
          organizationId: OrganizationId,
          businessName: Schema.String,
          registrationNumber: Schema.String,
          contact: Schema.Struct({ name: Schema.String, email: Schema.String, phone: Schema.NullOr(Schema.String) }),
          documents: Schema.Array(Schema.Struct({ type: Schema.String, url: Schema.String })),
          submittedBy: UserId
        }),
        Result: VerificationRow,
        execute: (input) =>
          sql`
            INSERT INTO verifications
              (id, organization_id, status, business_name, registration_number, contact, documents, submitted_by)
            VALUES (
              ${input.id}, ${input.organizationId}, 'pending', ${input.businessName}, ${input.registrationNumber},
              ${JSON.stringify(input.contact)}::jsonb, ${JSON.stringify(input.documents)}::jsonb, ${input.submittedBy}
            )
            ON CONFLICT (organization_id) WHERE status = 'pending' DO NOTHING
            RETURNING ${columns}`
      }),
      Effect.orDie
    )

    const latestOf = traced("VerificationRepo.latestOf")(
      SqlSchema.findOne({
        Request: OrganizationId,
        Result: VerificationRow,
        execute: (organizationId) =>
          sql`
            SELECT ${columns} FROM verifications
            WHERE organization_id = ${organizationId}
            ORDER BY ${newestFirst(sql)}
            LIMIT 1`
      }),
      Effect.orDie
    )

    const find = traced("VerificationRepo.find")(
      SqlSchema.findOne({
        Request: VerificationId,
        Result: VerificationRow,
        execute: (id) => sql`SELECT ${columns} FROM verifications WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const listSubmissions = SqlSchema.findAll({
      Request: Schema.Struct({ status: Schema.UndefinedOr(VerificationStatus), ...PageRequest.fields }),
      Result: VerificationRow,
      execute: ({ limit, position, status }) =>
        sql`
          SELECT ${columns} FROM verifications
          WHERE ${status === undefined ? sql`TRUE` : sql`status = ${status}`} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })
    /** One page of every organization's submissions, newest first, optionally of one status. */
    const list = traced("VerificationRepo.list")(
      (status: VerificationStatus | undefined, limit: number, position: PagePosition | undefined) =>
        listSubmissions({ status, limit, position }).pipe(Effect.orDie)
    )

    /**
     * Closes a pending submission with a decision; None when it is not pending (any more). The status
     * condition makes two reviewers racing on one submission decide it once.
     */
    const review = traced("VerificationRepo.review")(
      SqlSchema.findOne({
        Request: Schema.Struct({
          id: VerificationId,
          status: Schema.Literal("approved", "rejected"),
          reviewedBy: UserId,
          note: Schema.NullOr(Schema.String)
        }),
        Result: VerificationRow,
        execute: (input) =>
          sql`
            UPDATE verifications
            SET status = ${input.status}, reviewed_by = ${input.reviewedBy}, review_note = ${input.note},
                reviewed_at = now()
            WHERE id = ${input.id} AND status = 'pending'
            RETURNING ${columns}`
      }),
      Effect.orDie
    )

    return { insertPending, latestOf, find, list, review } as const
  })
}) {}
