/**
 * SQL of payment links and invoices. A link's payment count and (for invoices) when it was paid are
 * read from the payments started through it (the payments area's reports over the link's `link_payments`
 * rows), so they can never disagree with the payments.
 */
import { SqlClient, SqlError } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { PaymentId, StoreId } from "../../domain/Ids.ts"
import { LinkId } from "../../domain/Links.ts"
import { Currency } from "../platform/Money.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { firstPaidAtOf, PaymentReports } from "../payments/Reports.ts"
import { traced, spanWhenExported } from "../platform/Traced.ts"

export const LinkRow = Schema.Struct({
  id: LinkId,
  kind: Schema.Literal("link", "invoice"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.BigInt),
  min_amount: Schema.NullOr(Schema.BigInt),
  max_amount: Schema.NullOr(Schema.BigInt),
  currency: Currency,
  active: Schema.Boolean,
  reference_id: Schema.NullOr(Schema.String),
  customer_email: Schema.NullOr(Schema.String),
  due_date: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  deleted_at: Schema.NullOr(Schema.DateFromSelf),
  payments_count: Schema.Number,
  paid_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type LinkRow = typeof LinkRow.Type

export interface NewLink {
  readonly id: LinkId
  readonly kind: "link" | "invoice"
  readonly storeId: StoreId
  readonly livemode: boolean
  readonly title: string
  readonly description: string | null
  readonly amount: bigint | null
  readonly minAmount: bigint | null
  readonly maxAmount: bigint | null
  readonly currency: "USD" | "KHR"
  readonly referenceId: string | null
  readonly customerEmail: string | null
  readonly dueDate: string | null
  readonly expiresAt: Date | null
}

export interface LinkFilters {
  readonly kind?: "link" | "invoice" | undefined
  readonly active?: boolean | undefined
}

export interface LinkChanges {
  readonly active: boolean
  readonly title?: string | undefined
  readonly description?: string | null | undefined
}

export class LinksRepo extends Effect.Service<LinksRepo>()("links/LinksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reports = yield* PaymentReports

    // Every read goes through this projection, so the derived columns are the same everywhere.
    const selectLinks = sql`
      SELECT l.id, l.kind, l.store_id, l.livemode, l.title, l.description, l.amount, l.min_amount, l.max_amount,
        l.currency, l.active, l.reference_id, l.customer_email, to_char(l.due_date, 'YYYY-MM-DD') AS due_date,
        l.expires_at, l.deleted_at, l.created_at, l.updated_at,
        (SELECT count(*)::int FROM link_payments lp WHERE lp.link_id = l.id) AS payments_count,
        ${firstPaidAtOf(sql, sql`SELECT lp.payment_id FROM link_payments lp WHERE lp.link_id = l.id`)} AS paid_at
      FROM payment_links l`

    const findLink = SqlSchema.findOne({
      Request: LinkId,
      Result: LinkRow,
      execute: (id) => sql`${selectLinks} WHERE l.id = ${id}`
    })

    const insertLink = SqlSchema.void({
      Request: Schema.Struct({
        id: LinkId,
        kind: Schema.Literal("link", "invoice"),
        storeId: StoreId,
        livemode: Schema.Boolean,
        title: Schema.String,
        description: Schema.NullOr(Schema.String),
        amount: Schema.NullOr(Schema.BigInt),
        minAmount: Schema.NullOr(Schema.BigInt),
        maxAmount: Schema.NullOr(Schema.BigInt),
        currency: Currency,
        referenceId: Schema.NullOr(Schema.String),
        customerEmail: Schema.NullOr(Schema.String),
        dueDate: Schema.NullOr(Schema.String),
        expiresAt: Schema.NullOr(Schema.DateFromSelf)
      }),
      execute: (link) =>
        sql`
          INSERT INTO payment_links (id, kind, store_id, livemode, title, description, amount, min_amount, max_amount,
            currency, reference_id, customer_email, due_date, expires_at)
          VALUES (${link.id}, ${link.kind}, ${link.storeId}, ${link.livemode}, ${link.title}, ${link.description},
            ${link.amount}, ${link.minAmount}, ${link.maxAmount},
            ${link.currency}, ${link.referenceId}, ${link.customerEmail}, ${link.dueDate}::date, ${link.expiresAt})`
    })

    // Read back through the one projection rather than RETURNING, so a new link has its derived columns too.
    const insert = traced("LinksRepo.insert")(function*(link: NewLink) {
      yield* insertLink(link)
      const inserted = yield* findLink(link.id)
      if (Option.isNone(inserted)) return yield* Effect.dieMessage("an inserted payment link was not found")
      return inserted.value
    }, Effect.orDie)

    /** The link, deleted or not: the service decides what a deleted link answers. */
    const find = traced("LinksRepo.find")(findLink, Effect.orDie)

    const linksOfStore = SqlSchema.findAll({
      Request: Schema.Struct({
        storeId: StoreId,
        kind: Schema.optional(Schema.Literal("link", "invoice")),
        active: Schema.optional(Schema.Boolean),
        ...PageRequest.fields
      }),
      Result: LinkRow,
      execute: ({ active, kind, limit, position, storeId }) =>
        sql`
          ${selectLinks}
          WHERE l.store_id = ${storeId} AND l.deleted_at IS NULL
            AND ${kind === undefined ? sql`TRUE` : sql`l.kind = ${kind}`}
            AND ${active === undefined ? sql`TRUE` : sql`l.active = ${active}`}
            AND ${keysetAfter(sql, position, { createdAt: "l.created_at", id: "l.id" })}
          ORDER BY ${newestFirst(sql, { createdAt: "l.created_at", id: "l.id" })}
          LIMIT ${limit + 1}`
    })
    /** One page of a store's links that are not deleted, newest first; `limit + 1` rows to tell if there is more. */
    const listByStore = traced("LinksRepo.listByStore")(
      (storeId: StoreId, filters: LinkFilters, limit: number, after: PagePosition | undefined) =>
        linksOfStore({ storeId, kind: filters.kind, active: filters.active, limit, position: after }).pipe(Effect.orDie)
    )

    const updateLink = SqlSchema.findOne({
      Request: Schema.Struct({
        id: LinkId,
        active: Schema.Boolean,
        title: Schema.optional(Schema.String),
        description: Schema.optional(Schema.NullOr(Schema.String))
      }),
      Result: Schema.Struct({ id: LinkId }),
      execute: ({ active, description, id, title }) =>
        sql`
          UPDATE payment_links SET
            active = ${active},
            title = ${title === undefined ? sql`title` : sql`${title}`},
            description = ${description === undefined ? sql`description` : sql`${description}`},
            updated_at = now()
          WHERE id = ${id} AND deleted_at IS NULL
          RETURNING id`
    })
    /** Applies `changes` to a link that is not deleted; None when there is no such link. */
    const update = traced("LinksRepo.update")(function*(id: LinkId, changes: LinkChanges) {
      const updated = yield* updateLink({ id, ...changes })
      return Option.isNone(updated) ? Option.none<LinkRow>() : yield* findLink(id)
    }, Effect.orDie)

    // The two reads of `remove` ask only whether a row exists.
    const lockUndeletedLink = SqlSchema.findOne({
      Request: LinkId,
      Result: Schema.Unknown,
      execute: (id) => sql`SELECT 1 FROM payment_links WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`
    })
    const findAnyLinkPayment = SqlSchema.findOne({
      Request: LinkId,
      Result: Schema.Unknown,
      execute: (id) => sql`SELECT 1 FROM link_payments WHERE link_id = ${id} LIMIT 1`
    })

    /**
     * Deletes a link that is not deleted yet: for good when no payment was started through it, otherwise
     * by marking it deleted (its payments keep pointing at it). The row is locked first, so a payment
     * being started at the same moment either is counted here or finds the link gone.
     */
    const remove = traced("LinksRepo.remove")((id: LinkId) =>
      sql.withTransaction(Effect.gen(function*() {
        if (Option.isNone(yield* lockUndeletedLink(id))) return false
        if (Option.isNone(yield* findAnyLinkPayment(id))) {
          yield* sql`DELETE FROM payment_links WHERE id = ${id}`
        } else {
          yield* sql`UPDATE payment_links SET deleted_at = now(), active = false, updated_at = now() WHERE id = ${id}`
        }
        return true
      })).pipe(Effect.orDie)
    )

    /**
     * Runs `use` on the link inside one transaction that holds the link's row lock: payments of one link
     * are started one at a time (so an invoice's "already paid?" check and a delete do not interleave
     * with them), and the payment and its record under the link commit together or not at all.
     */
    // A generic method: `Effect.fn` would lose its type parameters, so the span is added with `withSpan`.
    const withLockedLink = <A, E, R>(id: LinkId, use: (link: Option.Option<LinkRow>) => Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM payment_links WHERE id = ${id} FOR UPDATE`.pipe(Effect.orDie)
        // Read after the lock, in a new statement, so the derived columns see what committed before it.
        return yield* use(yield* find(id))
      })).pipe(
        // Only BEGIN or COMMIT can fail with it here: infrastructure, not the client's doing.
        Effect.catchIf((error): error is SqlError.SqlError => error instanceof SqlError.SqlError, Effect.die),
        spanWhenExported("LinksRepo.withLockedLink")
      )

    /**
     * The newest payment started through the link that is still open (pending or scanned), with whether
     * its expiry has come at `now` (the sweeper moves it to expired within a moment).
     */
    const openPayment = traced("LinksRepo.openPayment")((linkId: LinkId, now: Date) =>
      reports.newestOpenAmong(sql`SELECT payment_id FROM link_payments WHERE link_id = ${linkId}`, now)
    )

    const insertLinkPayment = SqlSchema.void({
      Request: Schema.Struct({ linkId: LinkId, paymentId: PaymentId }),
      execute: ({ linkId, paymentId }) =>
        sql`INSERT INTO link_payments (payment_id, link_id) VALUES (${paymentId}, ${linkId})`
    })
    const recordPayment = traced("LinksRepo.recordPayment")((linkId: LinkId, paymentId: PaymentId) =>
      insertLinkPayment({ linkId, paymentId }).pipe(Effect.orDie)
    )

    return { insert, find, listByStore, update, remove, withLockedLink, openPayment, recordPayment } as const
  }),
  dependencies: [PaymentReports.Default]
}) {}
