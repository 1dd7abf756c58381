/**
 * SQL of referral programs, referral codes (a column of the customer), share-link visits, referrals and
 * commissions. Summaries and reports are SQL aggregates. Every method dies on SQL or decode failures: they
 * are the infrastructure's, not the caller's.
 */
import { SqlClient, type Statement } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { CommissionId, CustomerId, PaymentId, ReferralId, StoreId, UserId } from "../../domain/Ids.ts"
import { CommissionStatus, ReferralFlags, ReferralStatus } from "../../domain/Referrals.ts"
import { Currency } from "../platform/Money.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest } from "../platform/Pagination.ts"
import { transactionOf } from "../platform/Transaction.ts"
import { lockCustomerRow } from "../customers/Lock.ts"
import { PaymentReads } from "../payments/Reads.ts"
import { traced } from "../platform/Traced.ts"

export const ProgramRow = Schema.Struct({
  store_id: StoreId,
  active: Schema.Boolean,
  referrer_points: Schema.Number,
  referee_points: Schema.Number,
  commission_percent: Schema.String,
  commission_window_days: Schema.Number,
  max_referrals_per_day: Schema.Number
})
export type ProgramRow = typeof ProgramRow.Type

export const defaultProgram = (storeId: StoreId): ProgramRow => ({
  store_id: storeId,
  active: false,
  referrer_points: 0,
  referee_points: 0,
  commission_percent: "0",
  commission_window_days: 30,
  max_referrals_per_day: 20
})

export const ReferralCustomerRow = Schema.Struct({
  id: CustomerId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  external_id: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  referral_code: Schema.NullOr(Schema.String)
})
export type ReferralCustomerRow = typeof ReferralCustomerRow.Type

export const ReferralRow = Schema.Struct({
  id: ReferralId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  referrer_id: CustomerId,
  referee_id: CustomerId,
  status: ReferralStatus,
  flags: Schema.Array(Schema.Literal(...ReferralFlags)),
  converted_at: Schema.NullOr(Schema.DateFromSelf),
  converting_payment_id: Schema.NullOr(PaymentId),
  /** The points the conversion awards (the program's when it converted), credited once the referral is not flagged. */
  referrer_points: Schema.Number,
  referee_points: Schema.Number,
  reviewed_by: Schema.NullOr(UserId),
  reviewed_at: Schema.NullOr(Schema.DateFromSelf),
  review_decision: Schema.NullOr(Schema.Literal("clear", "void")),
  review_note: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})
export type ReferralRow = typeof ReferralRow.Type

export const CommissionRow = Schema.Struct({
  id: CommissionId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  referral_id: ReferralId,
  referrer_id: CustomerId,
  payment_id: PaymentId,
  base_amount: Schema.BigInt,
  amount: Schema.BigInt,
  currency: Currency,
  status: CommissionStatus,
  paid_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})
export type CommissionRow = typeof CommissionRow.Type

/** A payment as conversion and commissions read it; amounts in minor units. */
/** Sums per status and currency, in minor units. */
export const TotalRow = Schema.Struct({ status: CommissionStatus, currency: Currency, total: Schema.BigInt })
export const ReferrerTotalRow = Schema.Struct({
  referrer_id: CustomerId,
  status: Schema.NullOr(CommissionStatus),
  currency: Schema.NullOr(Currency),
  total: Schema.BigInt,
  referrals: Schema.Number
})

const FunnelRow = Schema.Struct({
  visits: Schema.Number,
  referrals: Schema.Number,
  converted: Schema.Number,
  flagged: Schema.Number,
  voided: Schema.Number
})

const Mode = { storeId: StoreId, livemode: Schema.Boolean }

export class ReferralsRepo extends Effect.Service<ReferralsRepo>()("referrals/ReferralsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const payments = yield* PaymentReads

    const inTransaction = transactionOf(sql)

    // ---------------------------------------------------------------------------------------------
    // Program
    // ---------------------------------------------------------------------------------------------

    const findProgram = SqlSchema.findOne({
      Request: StoreId,
      Result: ProgramRow,
      execute: (storeId) => sql`SELECT * FROM referral_programs WHERE store_id = ${storeId}`
    })
    const program = traced("ReferralsRepo.program")((storeId: StoreId) =>
      findProgram(storeId).pipe(Effect.map(Option.getOrElse(() => defaultProgram(storeId))), Effect.orDie)
    )

    const saveProgram = traced("ReferralsRepo.saveProgram")(
      SqlSchema.single({
        Request: Schema.Struct({ ...ProgramRow.fields, at: Schema.DateFromSelf }),
        Result: ProgramRow,
        execute: (row) =>
          sql`
            INSERT INTO referral_programs (store_id, active, referrer_points, referee_points, commission_percent,
              commission_window_days, max_referrals_per_day, updated_at)
            VALUES (${row.store_id}, ${row.active}, ${row.referrer_points}, ${row.referee_points},
              ${row.commission_percent}, ${row.commission_window_days}, ${row.max_referrals_per_day}, ${row.at})
            ON CONFLICT (store_id) DO UPDATE SET active = EXCLUDED.active, referrer_points = EXCLUDED.referrer_points,
              referee_points = EXCLUDED.referee_points, commission_percent = EXCLUDED.commission_percent,
              commission_window_days = EXCLUDED.commission_window_days,
              max_referrals_per_day = EXCLUDED.max_referrals_per_day, updated_at = EXCLUDED.updated_at
            RETURNING store_id, active, referrer_points, referee_points, commission_percent, commission_window_days,
              max_referrals_per_day`
      }),
      Effect.orDie
    )

    // ---------------------------------------------------------------------------------------------
    // Customers and codes
    // ---------------------------------------------------------------------------------------------

    const customerColumns = sql.literal(Object.keys(ReferralCustomerRow.fields).join(", "))

    const findCustomer = traced("ReferralsRepo.findCustomer")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: ReferralCustomerRow,
        execute: (id) => sql`SELECT ${customerColumns} FROM customers WHERE id = ${id} AND erased_at IS NULL`
      }),
      Effect.orDie
    )

    /** The referrer, locked until the transaction ends: its referrals of the day are counted one at a time. */
    const lockCustomer = traced("ReferralsRepo.lockCustomer")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: ReferralCustomerRow,
        execute: (id) => lockCustomerRow(sql, customerColumns, id)
      }),
      Effect.orDie
    )

    const findByCode = traced("ReferralsRepo.findByCode")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: ReferralCustomerRow,
        execute: (code) => sql`SELECT ${customerColumns} FROM customers WHERE referral_code = ${code} AND erased_at IS NULL`
      }),
      Effect.orDie
    )

    /**
     * Gives the customer `code` unless it has one; None when another customer holds the code (a unique
     * violation: the caller draws another). Answers the customer's code either way.
     */
    const assignCode = traced("ReferralsRepo.assignCode")((id: CustomerId, code: string) =>
      sql<{ referral_code: string }>`
        UPDATE customers SET referral_code = COALESCE(referral_code, ${code}) WHERE id = ${id}
        RETURNING referral_code`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]?.referral_code)),
        Effect.catchIf(
          (error) => (error.cause as { readonly code?: string } | undefined)?.code === "23505",
          () => Effect.succeed(Option.none<string>())
        ),
        Effect.orDie
      )
    )

    const insertVisit = traced("ReferralsRepo.insertVisit")(
      SqlSchema.void({
        Request: Schema.Struct({ ...Mode, referrerId: CustomerId, at: Schema.DateFromSelf }),
        execute: (visit) =>
          sql`
            INSERT INTO referral_visits (store_id, livemode, referrer_id, created_at)
            VALUES (${visit.storeId}, ${visit.livemode}, ${visit.referrerId}, ${visit.at})`
      }),
      Effect.orDie
    )

    // ---------------------------------------------------------------------------------------------
    // Referrals
    // ---------------------------------------------------------------------------------------------

    const referralsSince = traced("ReferralsRepo.referralsSince")(
      (referrerId: CustomerId, since: Date) =>
        sql<{ count: number }>`
          SELECT count(*)::int AS count FROM referrals WHERE referrer_id = ${referrerId} AND created_at > ${since}`.pipe(
          Effect.map((rows) => rows[0]?.count ?? 0),
          Effect.orDie
        )
    )

    /** None when the referee already has a referral (its unique key). */
    const insertReferral = traced("ReferralsRepo.insertReferral")(
      SqlSchema.findOne({
        Request: Schema.Struct({
          id: ReferralId,
          storeId: StoreId,
          livemode: Schema.Boolean,
          referrerId: CustomerId,
          refereeId: CustomerId,
          status: ReferralStatus,
          flags: Schema.Array(Schema.String),
          at: Schema.DateFromSelf
        }),
        Result: ReferralRow,
        execute: (row) =>
          sql`
            INSERT INTO referrals (id, store_id, livemode, referrer_id, referee_id, status, flags, created_at)
            VALUES (${row.id}, ${row.storeId}, ${row.livemode}, ${row.referrerId}, ${row.refereeId}, ${row.status},
              ${JSON.stringify(row.flags)}::jsonb, ${row.at})
            ON CONFLICT (referee_id) DO NOTHING
            RETURNING *`
      }),
      Effect.orDie
    )

    /** The referral the condition selects (a key: at most one). */
    const referralWhere = (name: string, where: (value: string) => Statement.Fragment) =>
      traced(name)(
        SqlSchema.findOne({
          Request: Schema.String,
          Result: ReferralRow,
          execute: (value) => sql`SELECT * FROM referrals WHERE ${where(value)}`
        }),
        Effect.orDie
      )

    const findReferral = referralWhere("ReferralsRepo.findReferral", (id) => sql`id = ${id}`)
    const lockReferral = referralWhere("ReferralsRepo.lockReferral", (id) => sql`id = ${id} FOR UPDATE`)
    /** Which of `customerIds` were referred (are the referee of a referral). */
    const refereesAmong = (customerIds: ReadonlyArray<string>) =>
      customerIds.length === 0
        ? Effect.succeed(new Set<string>())
        : Effect.map(
          sql<{ readonly referee_id: string }>`SELECT referee_id FROM referrals WHERE referee_id IN ${sql.in(customerIds)}`,
          (rows) => new Set(rows.map((row) => row.referee_id))
        ).pipe(Effect.orDie)
    /** The referee's referral, locked: its payments' events are applied one at a time. */
    const lockReferralOfReferee = referralWhere("ReferralsRepo.lockReferralOfReferee", (refereeId) =>
      sql`referee_id = ${refereeId} FOR UPDATE`)

    const saveReferral = traced("ReferralsRepo.saveReferral")(
      SqlSchema.single({
        Request: ReferralRow,
        Result: ReferralRow,
        execute: (row) =>
          sql`
            UPDATE referrals SET status = ${row.status}, flags = ${JSON.stringify(row.flags)}::jsonb,
              converted_at = ${row.converted_at}, converting_payment_id = ${row.converting_payment_id},
              referrer_points = ${row.referrer_points}, referee_points = ${row.referee_points}, reviewed_by = ${row.reviewed_by}, reviewed_at = ${row.reviewed_at},
              review_decision = ${row.review_decision}, review_note = ${row.review_note}
            WHERE id = ${row.id}
            RETURNING *`
      }),
      Effect.orDie
    )

    const referralsPage = SqlSchema.findAll({
      Request: Schema.Struct({ ...Mode, flaggedOnly: Schema.Boolean, ...PageRequest.fields }),
      Result: ReferralRow,
      execute: ({ flaggedOnly, limit, livemode, position, storeId }) =>
        sql`
          SELECT * FROM referrals
          WHERE store_id = ${storeId} AND livemode = ${livemode}
            AND ${flaggedOnly ? sql`status = 'flagged'` : sql`TRUE`} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`
    })
    const listReferrals = traced("ReferralsRepo.listReferrals")(
      (storeId: StoreId, livemode: boolean, flaggedOnly: boolean, limit: number, position?: PagePosition) =>
        referralsPage({ storeId, livemode, flaggedOnly, limit, position }).pipe(Effect.orDie)
    )

    // ---------------------------------------------------------------------------------------------
    // Payments and commissions
    // ---------------------------------------------------------------------------------------------

    /** A referee's payment, as conversion reads it. */
    const findPayment = payments.factsOf

    const commissionColumns = sql.literal(
      Object.keys(CommissionRow.fields).map((column) =>
        column === "amount" || column === "base_amount" ? `${column}::text AS ${column}` : column
      ).join(", ")
    )

    /** None when the payment already has its commission (its unique key): a replay pays nothing twice. */
    const insertCommission = traced("ReferralsRepo.insertCommission")(
      SqlSchema.findOne({
        Request: CommissionRow,
        Result: CommissionRow,
        execute: (row) =>
          sql`
            INSERT INTO commissions (id, store_id, livemode, referral_id, referrer_id, payment_id, base_amount, amount,
              currency, status, paid_at, created_at)
            VALUES (${row.id}, ${row.store_id}, ${row.livemode}, ${row.referral_id}, ${row.referrer_id}, ${row.payment_id},
              ${row.base_amount}, ${row.amount}, ${row.currency}, ${row.status}, ${row.paid_at}, ${row.created_at})
            ON CONFLICT (payment_id) DO NOTHING
            RETURNING ${commissionColumns}`
      }),
      Effect.orDie
    )

    const lockCommissionOfPayment = traced("ReferralsRepo.lockCommissionOfPayment")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: CommissionRow,
        execute: (paymentId) => sql`SELECT ${commissionColumns} FROM commissions WHERE payment_id = ${paymentId} FOR UPDATE`
      }),
      Effect.orDie
    )

    const setCommission = traced("ReferralsRepo.setCommission")(
      SqlSchema.void({
        Request: Schema.Struct({ id: CommissionId, amount: Schema.BigInt, status: CommissionStatus }),
        execute: ({ amount, id, status }) =>
          sql`UPDATE commissions SET amount = ${amount}, status = ${status} WHERE id = ${id}`
      }),
      Effect.orDie
    )

    /** Moves the referral's commissions in one of `from` to `to`. */
    const moveCommissions = traced("ReferralsRepo.moveCommissions")(
      (referralId: ReferralId, from: ReadonlyArray<CommissionStatus>, to: CommissionStatus) =>
        sql`UPDATE commissions SET status = ${to} WHERE referral_id = ${referralId} AND status IN ${sql.in(from)}`.pipe(
          Effect.asVoid,
          Effect.orDie
        )
    )

    /** Marks accrued commissions paid (of one referrer, or all) and answers them. */
    const payout = traced("ReferralsRepo.payout")(
      SqlSchema.findAll({
        Request: Schema.Struct({ ...Mode, referrerId: Schema.NullOr(CustomerId), at: Schema.DateFromSelf }),
        Result: CommissionRow,
        execute: ({ at, livemode, referrerId, storeId }) =>
          sql`
            UPDATE commissions SET status = 'paid', paid_at = ${at}
            WHERE store_id = ${storeId} AND livemode = ${livemode} AND status = 'accrued'
              AND ${referrerId === null ? sql`TRUE` : sql`referrer_id = ${referrerId}`}
            RETURNING ${commissionColumns}`
      }),
      Effect.orDie
    )

    const commissionsPage = SqlSchema.findAll({
      Request: Schema.Struct({ ...Mode, status: Schema.NullOr(CommissionStatus), ...PageRequest.fields }),
      Result: CommissionRow,
      execute: ({ limit, livemode, position, status, storeId }) =>
        sql`
          SELECT ${commissionColumns} FROM commissions
          WHERE store_id = ${storeId} AND livemode = ${livemode}
            AND ${status === null ? sql`TRUE` : sql`status = ${status}`} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`
    })
    const listCommissions = traced("ReferralsRepo.listCommissions")(
      (storeId: StoreId, livemode: boolean, status: CommissionStatus | null, limit: number, position?: PagePosition) =>
        commissionsPage({ storeId, livemode, status, limit, position }).pipe(Effect.orDie)
    )

    // ---------------------------------------------------------------------------------------------
    // Aggregates
    // ---------------------------------------------------------------------------------------------

    /** Per referrer: its referrals, and its commissions' totals per status and currency. */
    const referrerTotals = traced("ReferralsRepo.referrerTotals")(
      SqlSchema.findAll({
        Request: Schema.Struct(Mode),
        Result: ReferrerTotalRow,
        execute: ({ livemode, storeId }) =>
          sql`
            WITH made AS (
              SELECT referrer_id, count(*)::int AS referrals FROM referrals
              WHERE store_id = ${storeId} AND livemode = ${livemode} GROUP BY referrer_id
            ), owed AS (
              SELECT referrer_id, status, currency, sum(amount) AS total FROM commissions
              WHERE store_id = ${storeId} AND livemode = ${livemode} GROUP BY referrer_id, status, currency
            )
            SELECT made.referrer_id, owed.status, owed.currency, COALESCE(owed.total, 0)::text AS total, made.referrals
            FROM made LEFT JOIN owed ON owed.referrer_id = made.referrer_id
            ORDER BY made.referrer_id`
      }),
      Effect.orDie
    )

    const commissionTotals = traced("ReferralsRepo.commissionTotals")(
      SqlSchema.findAll({
        Request: Schema.Struct(Mode),
        Result: TotalRow,
        execute: ({ livemode, storeId }) =>
          sql`
            SELECT status, currency, sum(amount)::text AS total FROM commissions
            WHERE store_id = ${storeId} AND livemode = ${livemode} GROUP BY status, currency`
      }),
      Effect.orDie
    )

    const funnel = traced("ReferralsRepo.funnel")(
      SqlSchema.single({
        Request: Schema.Struct(Mode),
        Result: FunnelRow,
        execute: ({ livemode, storeId }) =>
          sql`
            SELECT
              (SELECT count(*)::int FROM referral_visits WHERE store_id = ${storeId} AND livemode = ${livemode}) AS visits,
              count(*)::int AS referrals,
              (count(*) FILTER (WHERE converted_at IS NOT NULL))::int AS converted,
              (count(*) FILTER (WHERE status = 'flagged'))::int AS flagged,
              (count(*) FILTER (WHERE status = 'voided'))::int AS voided
            FROM referrals WHERE store_id = ${storeId} AND livemode = ${livemode}`
      }),
      Effect.orDie
    )

    return {
      inTransaction,
      program,
      saveProgram,
      findCustomer,
      lockCustomer,
      findByCode,
      assignCode,
      insertVisit,
      referralsSince,
      insertReferral,
      findReferral,
      lockReferral,
      lockReferralOfReferee,
      refereesAmong,
      saveReferral,
      listReferrals,
      findPayment,
      insertCommission,
      lockCommissionOfPayment,
      setCommission,
      moveCommissions,
      payout,
      listCommissions,
      referrerTotals,
      commissionTotals,
      funnel
    } as const
  }),
  dependencies: [PaymentReads.Default]
}) {}
