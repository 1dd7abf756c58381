/**
 * SQL of merchant verification submissions and their review.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { VerificationStatus } from "../../domain/Verification.ts"
import { keysetAfter, newestFirst, type PagePosition } from "../platform/Pagination.ts"

export const VerificationRow = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
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

const first = <A>(rows: ReadonlyArray<A>): Option.Option<A> => Option.fromNullable(rows[0])

export class VerificationRepo extends Effect.Service<VerificationRepo>()("verification/VerificationRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = (result: ReadonlyArray<unknown>) => Schema.decodeUnknown(Schema.Array(VerificationRow))(result)
    const columns = sql.literal(COLUMNS.join(", "))


    /**
     * Records a submission; None when the organization already has one pending (the partial unique
     * index decides, so two submissions sent at the same moment cannot both be pending).
     */
    const insertPending = (input: {
      readonly id: string
      readonly organizationId: string
      readonly businessName: string
      readonly registrationNumber: string
      readonly contact: { readonly name: string; readonly email: string; readonly phone: string | null }
      readonly documents: ReadonlyArray<{ readonly type: string; readonly url: string }>
      readonly submittedBy: string
    }) =>
      sql`
        INSERT INTO verifications
          (id, organization_id, status, business_name, registration_number, contact, documents, submitted_by)
        VALUES (
          ${input.id}, ${input.organizationId}, 'pending', ${input.businessName}, ${input.registrationNumber},
          ${JSON.stringify(input.contact)}::jsonb, ${JSON.stringify(input.documents)}::jsonb, ${input.submittedBy}
        )
        ON CONFLICT (organization_id) WHERE status = 'pending' DO NOTHING
        RETURNING ${columns}`.pipe(Effect.flatMap(rows), Effect.map(first), Effect.orDie)

    const latestOf = (organizationId: string) =>
      sql`
        SELECT ${columns} FROM verifications
        WHERE organization_id = ${organizationId}
        ORDER BY ${newestFirst(sql)}
        LIMIT 1`.pipe(Effect.flatMap(rows), Effect.map(first), Effect.orDie)

    const find = (id: string) =>
      sql`SELECT ${columns} FROM verifications WHERE id = ${id}`.pipe(Effect.flatMap(rows), Effect.map(first), Effect.orDie)

    /** One page of every organization's submissions, newest first, optionally of one status. */
    const list = (status: VerificationStatus | undefined, limit: number, position: PagePosition | undefined) =>
      sql`
        SELECT ${columns} FROM verifications
        WHERE ${status === undefined ? sql`TRUE` : sql`status = ${status}`} AND ${keysetAfter(sql, position)}
        ORDER BY ${newestFirst(sql)}
        LIMIT ${limit + 1}`.pipe(Effect.flatMap(rows), Effect.orDie)

    /**
     * Closes a pending submission with a decision; None when it is not pending (any more). The status
     * condition makes two reviewers racing on one submission decide it once.
     */
    const review = (input: {
      readonly id: string
      readonly status: "approved" | "rejected"
      readonly reviewedBy: string
      readonly note: string | null
    }) =>
      sql`
        UPDATE verifications
        SET status = ${input.status}, reviewed_by = ${input.reviewedBy}, review_note = ${input.note},
            reviewed_at = now()
        WHERE id = ${input.id} AND status = 'pending'
        RETURNING ${columns}`.pipe(Effect.flatMap(rows), Effect.map(first), Effect.orDie)

    return { insertPending, latestOf, find, list, review } as const
  })
}) {}
