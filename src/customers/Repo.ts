/**
 * SQL of customers, their preferences and consent events. A customer's lifetime figures and recent
 * payments are read from its payments (as a payment link's are), so they can never disagree with them.
 */
import { SqlClient, type Statement } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Schema } from "effect"
import { ConsentActorType, ConsentPurpose } from "../../domain/Customers.ts"
import { ConsentRecordId, CustomerId, StoreId, TierId } from "../../domain/Ids.ts"
import { tierReachedBy } from "../loyalty/Tiers.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { transactionOf } from "../platform/Transaction.ts"
import { lockCustomerRow } from "./Lock.ts"
import { traced } from "../platform/Traced.ts"

const StringRecord = Schema.Record({ key: Schema.String, value: Schema.String })

export const CustomerRow = Schema.Struct({
  id: CustomerId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  email: Schema.NullOr(Schema.String),
  external_id: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  metadata: Schema.NullOr(StringRecord),
  prefers_email: Schema.Boolean,
  prefers_sms: Schema.Boolean,
  prefers_telegram: Schema.Boolean,
  prefers_marketing: Schema.Boolean,
  preferences_updated_at: Schema.DateFromSelf,
  erased_at: Schema.NullOr(Schema.DateFromSelf),
  points_balance: Schema.Number,
  lifetime_points: Schema.Number,
  /** The loyalty tier the lifetime points reach, read from the store's tiers (never stored, so never stale). */
  tier: Schema.NullOr(Schema.Struct({ id: TierId, name: Schema.String })),
  /** The customer's own code to refer others (src/referrals), once one was made. */
  referral_code: Schema.NullOr(Schema.String),
  /** The version of the customer's public links (src/platform/PublicLinks.ts); raised to revoke them. */
  public_link_version: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type CustomerRow = typeof CustomerRow.Type

// The tier is the loyalty area's rule over the row's lifetime points.
const TIER_COLUMN = `${tierReachedBy("customers")} AS tier`

// Named explicitly: the table also holds the search column, which no answer needs.
const CUSTOMER_COLUMNS = Object.keys(CustomerRow.fields).map((column) => column === "tier" ? TIER_COLUMN : column)

export const ConsentEventRow = Schema.Struct({
  id: ConsentRecordId,
  customer_id: CustomerId,
  purpose: ConsentPurpose,
  granted: Schema.Boolean,
  source: Schema.NullOr(Schema.String),
  policy_version: Schema.NullOr(Schema.String),
  actor_type: ConsentActorType,
  actor_id: Schema.String,
  created_at: Schema.DateFromSelf
})
export type ConsentEventRow = typeof ConsentEventRow.Type

/** One currency's figures of a customer's payments; amounts in minor units. */
export interface NewCustomer {
  readonly id: CustomerId
  readonly storeId: string
  readonly livemode: boolean
  readonly email: string | null
  readonly externalId: string | null
  readonly name: string | null
  readonly phone: string | null
  readonly metadata: Record<string, string>
  readonly createdAt: Date
}

export interface CustomerFilters {
  readonly email?: string | undefined
  readonly externalId?: string | undefined
  /** Text anywhere in the e-mail, name, phone or external_id. */
  readonly search?: string | undefined
}

/** A preference flag's column; the purposes and the columns are the same four. */
export const preferenceColumn = {
  email: "prefers_email",
  sms: "prefers_sms",
  telegram: "prefers_telegram",
  marketing: "prefers_marketing"
} as const satisfies Record<ConsentPurpose, keyof CustomerRow>

export type PreferenceFlags = { readonly [P in ConsentPurpose]: boolean }

// The LIKE pattern's own characters in a search are searched for, not interpreted.
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (character) => `\\${character}`)

/**
 * The channel on which a change of a customer's standing (its erasure, a revocation of its links) is
 * announced, by the statement that makes it; the payload is the customer's id (src/customers/Standings.ts).
 */
export const CUSTOMER_STANDING_CHANGES = "customer_standing"

export class CustomersRepo extends Effect.Service<CustomersRepo>()("customers/CustomersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(CUSTOMER_COLUMNS.join(", "))

    /**
     * The customer `update` (an `UPDATE … RETURNING` of the customer's columns) changes, with the notice of the
     * change of its standing sent by the same statement (CUSTOMER_STANDING_CHANGES).
     */
    const announcingStanding = (update: Statement.Fragment) =>
      sql`
        WITH updated AS (${update})
        SELECT updated.*, pg_notify(${CUSTOMER_STANDING_CHANGES}, updated.id)::text AS notified FROM updated`

    // A decode failure or a SqlError is the infrastructure's, not the caller's: every method dies on them.

    /** Runs `effect` in one transaction; a failure to begin or commit is the infrastructure's, a defect. */
    const inTransaction = transactionOf(sql)

    /**
     * Inserts the customer; None when its e-mail or external_id is already another live customer's in the
     * store and mode (the partial unique indexes decide, so of two creates racing on one address only one
     * is inserted).
     */
    const insert = traced("CustomersRepo.insert")(
      SqlSchema.findOne({
        Request: Schema.Struct({
          id: CustomerId,
          storeId: Schema.String,
          livemode: Schema.Boolean,
          email: Schema.NullOr(Schema.String),
          externalId: Schema.NullOr(Schema.String),
          name: Schema.NullOr(Schema.String),
          phone: Schema.NullOr(Schema.String),
          metadata: StringRecord,
          createdAt: Schema.DateFromSelf
        }),
        Result: CustomerRow,
        execute: (customer) =>
          sql`
            INSERT INTO customers (id, store_id, livemode, email, external_id, name, phone, metadata,
              preferences_updated_at, created_at, updated_at)
            VALUES (${customer.id}, ${customer.storeId}, ${customer.livemode}, ${customer.email}, ${customer.externalId},
              ${customer.name}, ${customer.phone}, ${JSON.stringify(customer.metadata)}::jsonb, ${customer.createdAt},
              ${customer.createdAt}, ${customer.createdAt})
            ON CONFLICT DO NOTHING
            RETURNING ${columns}`
      }),
      Effect.orDie
    )

    /** The live (not erased) customer of the store and mode that already has this e-mail or external_id. */
    const findHolder = traced("CustomersRepo.findHolder")(
      SqlSchema.findOne({
        Request: Schema.Struct({
          storeId: Schema.String,
          livemode: Schema.Boolean,
          email: Schema.NullOr(Schema.String),
          externalId: Schema.NullOr(Schema.String)
        }),
        Result: Schema.Struct({ id: CustomerId, email_taken: Schema.Boolean }),
        execute: ({ email, externalId, livemode, storeId }) =>
          sql`
            SELECT id, (${email}::text IS NOT NULL AND lower(email) = lower(${email}::text)) AS email_taken
            FROM customers
            WHERE store_id = ${storeId} AND livemode = ${livemode} AND erased_at IS NULL
              AND ((email IS NOT NULL AND lower(email) = lower(${email}::text)) OR external_id = ${externalId}::text)
            ORDER BY email_taken DESC
            LIMIT 1`
      }),
      Effect.orDie
    )

    const find = traced("CustomersRepo.find")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: CustomerRow,
        execute: (id) => sql`SELECT ${columns} FROM customers WHERE id = ${id}`
      }),
      Effect.orDie
    )

    /** The customer, locked until the transaction ends: its changes are made one at a time. */
    const findForUpdate = traced("CustomersRepo.findForUpdate")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: CustomerRow,
        execute: (id) => lockCustomerRow(sql, columns, id)
      }),
      Effect.orDie
    )

    const customersOfStore = SqlSchema.findAll({
      Request: Schema.Struct({
        storeId: Schema.String,
        livemode: Schema.Boolean,
        email: Schema.optional(Schema.String),
        externalId: Schema.optional(Schema.String),
        search: Schema.optional(Schema.String),
        ...PageRequest.fields
      }),
      Result: CustomerRow,
      execute: (request) =>
        sql`
          SELECT ${columns} FROM customers
          WHERE store_id = ${request.storeId} AND livemode = ${request.livemode} AND erased_at IS NULL
            AND ${request.email === undefined ? sql`TRUE` : sql`lower(email) = lower(${request.email})`}
            AND ${request.externalId === undefined ? sql`TRUE` : sql`external_id = ${request.externalId}`}
            AND ${
            request.search === undefined
              ? sql`TRUE`
              : sql`search_text LIKE '%' || lower(${escapeLike(request.search)}) || '%'`
          }
            AND ${keysetAfter(sql, request.position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${request.limit + 1}`
    })
    /** One page of a store's customers of one mode that are not erased, newest first (`limit + 1` rows). */
    const list = traced("CustomersRepo.list")(
      (storeId: string, livemode: boolean, filters: CustomerFilters, limit: number, position?: PagePosition) =>
        customersOfStore({ storeId, livemode, ...filters, limit, position }).pipe(Effect.orDie)
    )

    const updatePreferences = traced("CustomersRepo.setPreferences")(
      SqlSchema.single({
        Request: Schema.Struct({
          id: Schema.String,
          email: Schema.Boolean,
          sms: Schema.Boolean,
          telegram: Schema.Boolean,
          marketing: Schema.Boolean,
          at: Schema.DateFromSelf
        }),
        Result: CustomerRow,
        execute: (flags) =>
          sql`
            UPDATE customers SET prefers_email = ${flags.email}, prefers_sms = ${flags.sms},
              prefers_telegram = ${flags.telegram}, prefers_marketing = ${flags.marketing},
              preferences_updated_at = ${flags.at}
            WHERE id = ${flags.id}
            RETURNING ${columns}`
      }),
      Effect.orDie
    )
    /** Sets the four flags (of a customer locked in this transaction). */
    const setPreferences = (id: string, flags: PreferenceFlags, at: Date) => updatePreferences({ id, ...flags, at })

    const insertConsentEventRows = SqlSchema.void({
      Request: Schema.Array(ConsentEventRow),
      execute: (events) => sql`INSERT INTO consent_events ${sql.insert(events.map((event) => ({ ...event })))}`
    })
    /** Records the events; none is a no-op (an INSERT of no rows is not valid SQL). */
    const insertConsentEvents = traced("CustomersRepo.insertConsentEvents")(
      (events: ReadonlyArray<ConsentEventRow>) => events.length === 0 ? Effect.void : insertConsentEventRows(events),
      Effect.orDie
    )

    const consentEventsOf = SqlSchema.findAll({
      Request: Schema.Struct({ customerId: Schema.String, ...PageRequest.fields }),
      Result: ConsentEventRow,
      execute: ({ customerId, limit, position }) =>
        sql`
          SELECT * FROM consent_events
          WHERE customer_id = ${customerId} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)}
          LIMIT ${limit + 1}`
    })
    /** One page of a customer's consent events, newest first (`limit + 1` rows). */
    const consentLog = traced("CustomersRepo.consentLog")(
      (customerId: string, limit: number, position?: PagePosition) =>
        consentEventsOf({ customerId, limit, position }).pipe(Effect.orDie)
    )

    const eraseCustomer = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf, preferencesChanged: Schema.Boolean }),
      Result: CustomerRow,
      execute: ({ at, id, preferencesChanged }) =>
        announcingStanding(sql`
          UPDATE customers SET email = NULL, external_id = NULL, name = NULL, phone = NULL, metadata = NULL,
            prefers_email = false, prefers_sms = false, prefers_telegram = false, prefers_marketing = false,
            preferences_updated_at = ${preferencesChanged ? sql`${at}` : sql`preferences_updated_at`},
            erased_at = ${at}, updated_at = ${at}, public_link_version = public_link_version + 1
          WHERE id = ${id}
          RETURNING ${columns}`)
    })

    const scrubConsentEvents = SqlSchema.void({
      Request: Schema.String,
      execute: (customerId) =>
        sql`
          UPDATE consent_events SET source = NULL, policy_version = NULL
          WHERE customer_id = ${customerId} AND (source IS NOT NULL OR policy_version IS NOT NULL)`
    })

    /**
     * Removes the personal data of a customer locked in this transaction: the identifying columns and
     * metadata, every preference (`preferencesChanged`: one was given, so the preferences change now), and
     * the free text of its consent events.
     */
    const erase = traced("CustomersRepo.erase")(function*(id: string, at: Date, preferencesChanged: boolean) {
      const erased = yield* eraseCustomer({ id, at, preferencesChanged })
      yield* scrubConsentEvents(id)
      return erased
    }, Effect.orDie)

    /** Raises the customer's link version: every public link handed out before stops working. */
    const revokePublicLinks = traced("CustomersRepo.revokePublicLinks")(
      SqlSchema.findOne({
        Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
        Result: CustomerRow,
        execute: ({ at, id }) =>
          announcingStanding(sql`
            UPDATE customers SET public_link_version = public_link_version + 1, updated_at = ${at}
            WHERE id = ${id}
            RETURNING ${columns}`)
      }),
      Effect.orDie
    )

    return {
      inTransaction,
      insert,
      findHolder,
      find,
      findForUpdate,
      list,
      setPreferences,
      insertConsentEvents,
      consentLog,
      erase,
      revokePublicLinks
    } as const
  })
}) {}
