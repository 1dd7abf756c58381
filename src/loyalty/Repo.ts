/**
 * SQL of loyalty: programs, tiers, rewards, redemptions, points entries and the wallet columns of
 * customers. The writes that change a balance run inside the CustomerWallet entity's transaction
 * (src/loyalty/Entity.ts); a reward's stock is taken with a guarded UPDATE, so redemptions of different
 * customers racing for the last unit cannot both get it.
 */
import { SqlClient, SqlError, type Statement } from "@effect/sql"
import * as SqlSchema from "../platform/SqlSchema.ts"
import { Effect, Option, Schema } from "effect"
import { PointsEntryType, RedemptionStatus } from "../../domain/Loyalty.ts"
import {
  CustomerId,
  EventId,
  PaymentId,
  PointsEntryId,
  RedemptionId,
  RewardId,
  StoreId,
  TierId
} from "../../domain/Ids.ts"
import { keysetAfter, newestFirst, type PagePosition, PageRequest, storePageOf } from "../platform/Pagination.ts"
import { transactionOf } from "../platform/Transaction.ts"
import { lockCustomerRow } from "../customers/Lock.ts"
import { PaymentReads } from "../payments/Reads.ts"
import { traced } from "../platform/Traced.ts"

export const ProgramRow = Schema.Struct({
  store_id: StoreId,
  active: Schema.Boolean,
  points_per_usd: Schema.String,
  points_per_khr: Schema.String
})
export type ProgramRow = typeof ProgramRow.Type

/** A store that never configured its program has this one (API.md's example rates), inactive. */
export const defaultProgram = (storeId: StoreId): ProgramRow => ({
  store_id: storeId,
  active: false,
  points_per_usd: "10",
  points_per_khr: "0.0025"
})

export const TierRow = Schema.Struct({
  id: TierId,
  store_id: StoreId,
  name: Schema.String,
  threshold: Schema.Number,
  earn_multiplier: Schema.String,
  created_at: Schema.DateFromSelf
})
export type TierRow = typeof TierRow.Type

export const RewardRow = Schema.Struct({
  id: RewardId,
  store_id: StoreId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  points_cost: Schema.Number,
  stock: Schema.NullOr(Schema.Number),
  active: Schema.Boolean,
  created_at: Schema.DateFromSelf
})
export type RewardRow = typeof RewardRow.Type

export const RedemptionRow = Schema.Struct({
  id: RedemptionId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  customer_id: CustomerId,
  reward_id: Schema.NullOr(RewardId),
  points: Schema.Number,
  status: RedemptionStatus,
  voucher_code: Schema.String,
  reason: Schema.NullOr(Schema.String),
  cancel_key: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  fulfilled_at: Schema.NullOr(Schema.DateFromSelf),
  cancelled_at: Schema.NullOr(Schema.DateFromSelf)
})
export type RedemptionRow = typeof RedemptionRow.Type

export const PointsEntryRow = Schema.Struct({
  id: PointsEntryId,
  customer_id: CustomerId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  type: PointsEntryType,
  points: Schema.Number,
  balance_after: Schema.Number,
  shortfall: Schema.Number,
  payment_id: Schema.NullOr(PaymentId),
  redemption_id: Schema.NullOr(RedemptionId),
  reason: Schema.NullOr(Schema.String),
  entry_key: Schema.String,
  created_at: Schema.DateFromSelf
})
export type PointsEntryRow = typeof PointsEntryRow.Type

/** A customer's wallet: the balance columns of the customer, with what a wallet needs besides. */
export const WalletRow = Schema.Struct({
  id: CustomerId,
  store_id: StoreId,
  livemode: Schema.Boolean,
  name: Schema.NullOr(Schema.String),
  erased_at: Schema.NullOr(Schema.DateFromSelf),
  points_balance: Schema.Number,
  lifetime_points: Schema.Number,
  /** The version of the customer's public links (src/platform/PublicLinks.ts). */
  public_link_version: Schema.Number,
  referral_code: Schema.NullOr(Schema.String)
})
export type WalletRow = typeof WalletRow.Type

/** A voucher of a redemption not yet handed over, as the customer's own wallet shows it. */
export const WalletVoucherRow = Schema.Struct({
  voucher_code: Schema.String,
  reward_name: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})
export type WalletVoucherRow = typeof WalletVoucherRow.Type

/** The LISTEN/NOTIFY channel on which every new points entry is announced once it commits (WalletFeed). */
export const POINTS_CHANNEL = "points_entries"

export class LoyaltyRepo extends Effect.Service<LoyaltyRepo>()("loyalty/LoyaltyRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const payments = yield* PaymentReads

    // A decode failure or a SqlError is the infrastructure's, not the caller's: every method dies on them.

    const inTransaction = transactionOf(sql)

    /** Whether `error` is PostgreSQL's unique violation (two tiers on one threshold). */
    const isUniqueViolation = (error: SqlError.SqlError) =>
      (error.cause as { readonly code?: string } | undefined)?.code === "23505"

    // ---------------------------------------------------------------------------------------------
    // Program
    // ---------------------------------------------------------------------------------------------

    const program = traced("LoyaltyRepo.program")(function*(storeId: StoreId) {
      const found = yield* SqlSchema.findOne({
        Request: Schema.String,
        Result: ProgramRow,
        execute: (id) => sql`SELECT store_id, active, points_per_usd, points_per_khr FROM loyalty_programs WHERE store_id = ${id}`
      })(storeId)
      return Option.getOrElse(found, () => defaultProgram(storeId))
    }, Effect.orDie)

    const saveProgram = traced("LoyaltyRepo.saveProgram")(
      SqlSchema.single({
        Request: Schema.Struct({ ...ProgramRow.fields, at: Schema.DateFromSelf }),
        Result: ProgramRow,
        execute: (row) =>
          sql`
            INSERT INTO loyalty_programs (store_id, active, points_per_usd, points_per_khr, updated_at)
            VALUES (${row.store_id}, ${row.active}, ${row.points_per_usd}, ${row.points_per_khr}, ${row.at})
            ON CONFLICT (store_id) DO UPDATE SET active = excluded.active, points_per_usd = excluded.points_per_usd,
              points_per_khr = excluded.points_per_khr, updated_at = excluded.updated_at
            RETURNING store_id, active, points_per_usd, points_per_khr`
      }),
      Effect.orDie
    )

    // ---------------------------------------------------------------------------------------------
    // Tiers
    // ---------------------------------------------------------------------------------------------

    const insertTier = traced("LoyaltyRepo.insertTier")(
      (tier: TierRow) =>
        SqlSchema.single({
          Request: TierRow,
          Result: TierRow,
          execute: (row) => sql`INSERT INTO loyalty_tiers ${sql.insert({ ...row })} RETURNING *`
        })(tier).pipe(
          Effect.map(Option.some),
          Effect.catchIf((error) => error._tag === "SqlError" && isUniqueViolation(error), () => Effect.succeedNone),
          Effect.orDie
        )
    )

    const findTier = traced("LoyaltyRepo.findTier")(
      SqlSchema.findOne({ Request: Schema.String, Result: TierRow, execute: (id) => sql`SELECT * FROM loyalty_tiers WHERE id = ${id}` }),
      Effect.orDie
    )

    /** Saves a tier's fields; None when its threshold is another tier's of the store. */
    const updateTier = traced("LoyaltyRepo.updateTier")(
      (tier: TierRow) =>
        SqlSchema.single({
          Request: TierRow,
          Result: TierRow,
          execute: (row) =>
            sql`
              UPDATE loyalty_tiers SET name = ${row.name}, threshold = ${row.threshold}, earn_multiplier = ${row.earn_multiplier}
              WHERE id = ${row.id} RETURNING *`
        })(tier).pipe(
          Effect.map(Option.some),
          Effect.catchIf((error) => error._tag === "SqlError" && isUniqueViolation(error), () => Effect.succeedNone),
          Effect.orDie
        )
    )

    const deleteTier = traced("LoyaltyRepo.deleteTier")(
      SqlSchema.void({ Request: Schema.String, execute: (id) => sql`DELETE FROM loyalty_tiers WHERE id = ${id}` }),
      Effect.orDie
    )

    const listTiers = traced("LoyaltyRepo.listTiers")(storePageOf(sql, "loyalty_tiers", TierRow))

    /** Every tier of the store, lowest threshold first: a customer's tier and the next one are read from it. */
    const tiersOf = traced("LoyaltyRepo.tiersOf")(
      SqlSchema.findAll({
        Request: Schema.String,
        Result: TierRow,
        execute: (storeId) => sql`SELECT * FROM loyalty_tiers WHERE store_id = ${storeId} ORDER BY threshold`
      }),
      Effect.orDie
    )

    // ---------------------------------------------------------------------------------------------
    // Rewards
    // ---------------------------------------------------------------------------------------------

    const insertReward = traced("LoyaltyRepo.insertReward")(
      SqlSchema.single({
        Request: RewardRow,
        Result: RewardRow,
        execute: (row) => sql`INSERT INTO loyalty_rewards ${sql.insert({ ...row })} RETURNING *`
      }),
      Effect.orDie
    )

    const findReward = traced("LoyaltyRepo.findReward")(
      SqlSchema.findOne({ Request: Schema.String, Result: RewardRow, execute: (id) => sql`SELECT * FROM loyalty_rewards WHERE id = ${id}` }),
      Effect.orDie
    )

    /** The reward, locked until the transaction ends: a change and a deletion of it are made one at a time. */
    const findRewardForUpdate = traced("LoyaltyRepo.findRewardForUpdate")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: RewardRow,
        execute: (id) => sql`SELECT * FROM loyalty_rewards WHERE id = ${id} FOR UPDATE`
      }),
      Effect.orDie
    )

    const updateReward = traced("LoyaltyRepo.updateReward")(
      SqlSchema.single({
        Request: RewardRow,
        Result: RewardRow,
        execute: (row) =>
          sql`
            UPDATE loyalty_rewards SET name = ${row.name}, description = ${row.description}, points_cost = ${row.points_cost},
              stock = ${row.stock}, active = ${row.active}
            WHERE id = ${row.id} RETURNING *`
      }),
      Effect.orDie
    )

    const deleteReward = traced("LoyaltyRepo.deleteReward")(
      SqlSchema.void({ Request: Schema.String, execute: (id) => sql`DELETE FROM loyalty_rewards WHERE id = ${id}` }),
      Effect.orDie
    )

    const hasRedemptions = traced("LoyaltyRepo.hasRedemptions")(
      (rewardId: RewardId) =>
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Schema.Struct({ one: Schema.Number }),
          execute: (id) => sql`SELECT 1 AS one FROM loyalty_redemptions WHERE reward_id = ${id} LIMIT 1`
        })(rewardId).pipe(Effect.map(Option.isSome), Effect.orDie)
    )

    const rewardsPage = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: Schema.String, activeOnly: Schema.Boolean, ...PageRequest.fields }),
      Result: RewardRow,
      execute: ({ activeOnly, limit, position, storeId }) =>
        sql`
          SELECT * FROM loyalty_rewards
          WHERE store_id = ${storeId} AND ${activeOnly ? sql`active` : sql`TRUE`} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`
    })
    const listRewards = traced("LoyaltyRepo.listRewards")(
      (storeId: StoreId, activeOnly: boolean, limit: number, position?: PagePosition) =>
        rewardsPage({ storeId, activeOnly, limit, position }).pipe(Effect.orDie)
    )

    /**
     * Takes one unit of the reward's stock if it is active and has any left (unlimited stock: nothing to
     * take). None when it is inactive or sold out. The row lock this UPDATE takes holds until the
     * transaction ends, so racing redemptions of the last unit queue here and the later ones find none.
     */
    const takeStock = traced("LoyaltyRepo.takeStock")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: RewardRow,
        execute: (id) =>
          sql`
            UPDATE loyalty_rewards SET stock = CASE WHEN stock IS NULL THEN NULL ELSE stock - 1 END
            WHERE id = ${id} AND active AND (stock IS NULL OR stock > 0)
            RETURNING *`
      }),
      Effect.orDie
    )

    const returnStock = traced("LoyaltyRepo.returnStock")(
      SqlSchema.void({
        Request: Schema.String,
        execute: (id) => sql`UPDATE loyalty_rewards SET stock = stock + 1 WHERE id = ${id} AND stock IS NOT NULL`
      }),
      Effect.orDie
    )

    // ---------------------------------------------------------------------------------------------
    // Redemptions
    // ---------------------------------------------------------------------------------------------

    /** Records a pass's redemptions in one statement, in order. */
    const insertRedemptions = traced("LoyaltyRepo.insertRedemptions")(
      SqlSchema.void({
        Request: Schema.NonEmptyArray(RedemptionRow),
        execute: (rows) => sql`INSERT INTO loyalty_redemptions ${sql.insert(rows.map((row) => ({ ...row })))}`
      }),
      Effect.orDie
    )

    const findRedemption = traced("LoyaltyRepo.findRedemption")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: RedemptionRow,
        execute: (id) => sql`SELECT * FROM loyalty_redemptions WHERE id = ${id}`
      }),
      Effect.orDie
    )

    const findRedemptionForUpdate = traced("LoyaltyRepo.findRedemptionForUpdate")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: RedemptionRow,
        execute: (id) => sql`SELECT * FROM loyalty_redemptions WHERE id = ${id} FOR UPDATE`
      }),
      Effect.orDie
    )

    /** Marks an issued redemption fulfilled; None when it is not issued (any more). */
    const fulfil = traced("LoyaltyRepo.fulfil")(
      SqlSchema.findOne({
        Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
        Result: RedemptionRow,
        execute: ({ at, id }) =>
          sql`
            UPDATE loyalty_redemptions SET status = 'fulfilled', fulfilled_at = ${at}
            WHERE id = ${id} AND status = 'issued' RETURNING *`
      }),
      Effect.orDie
    )

    const markCancelled = traced("LoyaltyRepo.markCancelled")(
      SqlSchema.single({
        Request: Schema.Struct({ id: Schema.String, key: Schema.String, at: Schema.DateFromSelf }),
        Result: RedemptionRow,
        execute: ({ at, id, key }) =>
          sql`
            UPDATE loyalty_redemptions SET status = 'cancelled', cancelled_at = ${at}, cancel_key = ${key}
            WHERE id = ${id} RETURNING *`
      }),
      Effect.orDie
    )

    const redemptionsPage = SqlSchema.findAll({
      Request: Schema.Struct({ storeId: Schema.String, livemode: Schema.Boolean, ...PageRequest.fields }),
      Result: RedemptionRow,
      execute: ({ limit, livemode, position, storeId }) =>
        sql`
          SELECT * FROM loyalty_redemptions
          WHERE store_id = ${storeId} AND livemode = ${livemode} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`
    })
    const listRedemptions = traced("LoyaltyRepo.listRedemptions")(
      (storeId: StoreId, livemode: boolean, limit: number, position?: PagePosition) =>
        redemptionsPage({ storeId, livemode, limit, position }).pipe(Effect.orDie)
    )

    // ---------------------------------------------------------------------------------------------
    // Wallets and points entries
    // ---------------------------------------------------------------------------------------------

    const walletColumns = sql.literal(Object.keys(WalletRow.fields).join(", "))
    const entryColumns = sql.literal(Object.keys(PointsEntryRow.fields).join(", "))

    const findWallet = traced("LoyaltyRepo.findWallet")(
      SqlSchema.findOne({
        Request: Schema.String,
        Result: WalletRow,
        execute: (id) => sql`SELECT ${walletColumns} FROM customers WHERE id = ${id}`
      }),
      Effect.orDie
    )

    /**
     * The wallet, locked until the transaction ends, and which of the message keys `keys` already made an
     * entry of it: what a pass of the wallet's queue (src/loyalty/Entity.ts) starts with, in one round trip.
     */
    const lockWalletWithKeys = traced("LoyaltyRepo.lockWalletWithKeys")(
      SqlSchema.findOne({
        Request: Schema.Struct({ customerId: Schema.String, keys: Schema.Array(Schema.String) }),
        Result: Schema.Struct({ ...WalletRow.fields, applied_keys: Schema.Array(Schema.String) }),
        execute: ({ customerId, keys }) =>
          lockCustomerRow(
            sql,
            keys.length === 0
              ? sql`${walletColumns}, ARRAY[]::text[] AS applied_keys`
              : sql`${walletColumns}, ARRAY(SELECT e.entry_key FROM points_entries e WHERE e.customer_id = customers.id AND e.entry_key IN ${
                sql.in(keys)
              }) AS applied_keys`,
            customerId
          )
      }),
      Effect.orDie
    )

    /**
     * Posts a pass's entries to a locked wallet in one statement: the balance and lifetime points they
     * leave, the entries in order.
     */
    const postEntries = traced("LoyaltyRepo.postEntries")(
      SqlSchema.void({
        Request: Schema.Struct({
          customerId: Schema.String,
          balance: Schema.Number,
          lifetime: Schema.Number,
          entries: Schema.NonEmptyArray(PointsEntryRow)
        }),
        execute: ({ balance, customerId, entries, lifetime }) =>
          sql`
            WITH wallet AS (
              UPDATE customers SET points_balance = ${balance}, lifetime_points = ${lifetime} WHERE id = ${customerId}
            )
            INSERT INTO points_entries ${sql.insert(entries.map((entry) => ({ ...entry })))}`
      }),
      Effect.orDie
    )

    /**
     * A pass's entries and events written in one statement without a transaction around it, if the wallet
     * is still as the pass found it (`was`: the balance, the lifetime points and whether it is erased, all
     * a change reads of it): the balance and lifetime points the entries leave, the entries in order, and
     * the events (`events`, from Outbox.writtenWith). The statement is atomic: it writes all of it or
     * nothing. Answers whether it wrote: not when the wallet changed, nor when an entry's key was applied already (the key is unique
     * per customer, so the statement fails and nothing is written).
     */
    const postEntriesIfUnchanged = traced("LoyaltyRepo.postEntriesIfUnchanged")(function*(input: {
      readonly customerId: string
      readonly was: { readonly balance: number; readonly lifetime: number; readonly erased: boolean }
      readonly balance: number
      readonly lifetime: number
      readonly entries: ReadonlyArray<PointsEntryRow>
      readonly events: { readonly insert: (guard: string) => Statement.Fragment }
    }) {
      const { customerId, was } = input
      const rows = yield* sql<{ readonly written: number }>`
        WITH wallet AS (
          UPDATE customers SET points_balance = ${input.balance}, lifetime_points = ${input.lifetime}
          WHERE id = ${customerId} AND points_balance = ${was.balance} AND lifetime_points = ${was.lifetime}
            AND (erased_at IS NOT NULL) = ${was.erased}
          RETURNING id
        ), written AS (
          INSERT INTO points_entries (${entryColumns})
          SELECT ${entryColumns}
          FROM jsonb_populate_recordset(NULL::points_entries, ${JSON.stringify(input.entries)}::jsonb) WITH ORDINALITY AS e
          WHERE EXISTS (SELECT 1 FROM wallet)
          ORDER BY e.ordinality
          RETURNING id
        ), events AS (
          ${input.events.insert("wallet")}
        )
        SELECT (SELECT count(*) FROM written)::int AS written`.pipe(
          Effect.catchIf(isUniqueViolation, () => Effect.succeed([{ written: 0 }]))
        )
      return rows[0] !== undefined && rows[0].written > 0
    }, Effect.orDie)

    /** The entry a message made, if it was applied already (its key is unique per customer). */
    const findEntryByKey = traced("LoyaltyRepo.findEntryByKey")(
      SqlSchema.findOne({
        Request: Schema.Struct({ customerId: Schema.String, key: Schema.String }),
        Result: PointsEntryRow,
        execute: ({ customerId, key }) =>
          sql`SELECT * FROM points_entries WHERE customer_id = ${customerId} AND entry_key = ${key}`
      }),
      Effect.orDie
    )

    /** The points a payment earned and has had reversed so far, for the customer. */
    const paymentPoints = traced("LoyaltyRepo.paymentPoints")(
      SqlSchema.single({
        Request: Schema.Struct({ customerId: Schema.String, paymentId: Schema.String }),
        Result: Schema.Struct({ earned: Schema.Number, reversed: Schema.Number }),
        execute: ({ customerId, paymentId }) =>
          sql`
            SELECT COALESCE(sum(points) FILTER (WHERE type = 'earn'), 0)::int AS earned,
              COALESCE(sum(shortfall - points) FILTER (WHERE type = 'reverse'), 0)::int AS reversed
            FROM points_entries WHERE customer_id = ${customerId} AND payment_id = ${paymentId}`
      }),
      Effect.orDie
    )

    const entriesPage = SqlSchema.findAll({
      Request: Schema.Struct({ customerId: Schema.String, ...PageRequest.fields }),
      Result: PointsEntryRow,
      execute: ({ customerId, limit, position }) =>
        sql`
          SELECT * FROM points_entries WHERE customer_id = ${customerId} AND ${keysetAfter(sql, position)}
          ORDER BY ${newestFirst(sql)} LIMIT ${limit + 1}`
    })
    /** One page of a customer's points entries, newest first (`limit + 1` rows). */
    const listEntries = traced("LoyaltyRepo.listEntries")(
      (customerId: CustomerId, limit: number, position?: PagePosition) =>
        entriesPage({ customerId, limit, position }).pipe(Effect.orDie)
    )

    /** The customer's issued redemptions (not yet fulfilled or cancelled), newest first. */
    const issuedVouchers = traced("LoyaltyRepo.issuedVouchers")(
      SqlSchema.findAll({
        Request: Schema.Struct({ customerId: Schema.String, limit: Schema.Number }),
        Result: WalletVoucherRow,
        execute: ({ customerId, limit }) =>
          sql`
            SELECT r.voucher_code, w.name AS reward_name, r.created_at
            FROM loyalty_redemptions r LEFT JOIN loyalty_rewards w ON w.id = r.reward_id
            WHERE r.customer_id = ${customerId} AND r.status = 'issued'
            ORDER BY r.created_at DESC, r.id DESC
            LIMIT ${limit}`
      }),
      Effect.orDie
    )

    /** The points held by a store's customers of one mode. */
    const outstanding = traced("LoyaltyRepo.outstanding")(
      SqlSchema.single({
        Request: Schema.Struct({ storeId: Schema.String, livemode: Schema.Boolean }),
        Result: Schema.Struct({ points: Schema.BigInt }),
        execute: ({ livemode, storeId }) =>
          sql`
            SELECT COALESCE(sum(points_balance), 0)::text AS points FROM customers
            WHERE store_id = ${storeId} AND livemode = ${livemode}`
      }),
      Effect.orDie
    )

    /** A payment, as earning and reversing points read it. */
    const findPayment = payments.factsOf

    return {
      inTransaction,
      program,
      saveProgram,
      insertTier,
      findTier,
      updateTier,
      deleteTier,
      listTiers,
      tiersOf,
      insertReward,
      findReward,
      findRewardForUpdate,
      updateReward,
      deleteReward,
      hasRedemptions,
      listRewards,
      takeStock,
      returnStock,
      insertRedemptions,
      findRedemption,
      findRedemptionForUpdate,
      fulfil,
      markCancelled,
      listRedemptions,
      findWallet,
      lockWalletWithKeys,
      postEntries,
      postEntriesIfUnchanged,
      findEntryByKey,
      paymentPoints,
      listEntries,
      issuedVouchers,
      outstanding,
      findPayment
    } as const
  }),
  dependencies: [PaymentReads.Default]
}) {}
