/**
 * The rules of loyalty: who may see and change which program, tier, reward, redemption and wallet, and
 * the requests that change a balance, which go to the customer's CustomerWallet entity.
 *
 * The merchant API acts with an API key on its own store and mode (any other customer, reward or
 * redemption is 404, as if it did not exist); the console acts with a user session under the access
 * policy: customer.read to read, marketing.manage to configure, customer.write to adjust and to fulfil or
 * cancel redemptions.
 */
import { ClusterError } from "@effect/cluster"
import { Duration, Effect, Option, Schema, Stream } from "effect"
import { PointsEntryAdded, WalletFeedSynced, type WalletFeedFrame } from "../../domain/Console.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import type { Permission } from "../../domain/Access.ts"
import type { ApiKeyPrincipal } from "../../domain/Auth.ts"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import type { CustomerId, RedemptionId, RewardId, StoreId, TierId } from "../../domain/Ids.ts"
import type { ListParams } from "../../domain/Lists.ts"
import {
  type Adjust,
  type ApiRedeem,
  type CreateReward,
  type CreateTier,
  CustomerLoyalty,
  type LiabilityParams,
  LoyaltyLiability,
  PointsEntry,
  RECENT_ENTRIES,
  PointsEntryList,
  Redemption,
  RedemptionList,
  type RedeemReward,
  RewardList,
  type StoreRedemptionListParams,
  TierList,
  type UpdateProgram,
  type UpdateReward,
  type UpdateTier,
  Wallet,
  WalletCustomer,
  WalletGame,
  WalletNextTier,
  WalletReferral,
  WalletStore
} from "../../domain/Loyalty.ts"
import { GamesService } from "../games/Service.ts"
import { StoresService } from "../stores/Service.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { Idempotency, scopeOf } from "../platform/Idempotency.ts"
import { newId } from "../platform/Ids.ts"
import { maskName } from "../platform/Text.ts"
import { formatAmount } from "../platform/Money.ts"
import { MAX_LIST_LIMIT, pageAfter } from "../platform/Pagination.ts"
import { PublicLinks } from "../platform/PublicLinks.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { currentDate } from "../platform/Time.ts"
import { randomUUID } from "node:crypto"
import { CustomerWalletEntity } from "./Entity.ts"
import { valueOf } from "./Points.ts"
import { LoyaltyRepo, POINTS_CHANNEL, type RedemptionRow, type RewardRow, type TierRow, type WalletRow } from "./Repo.ts"
import {
  tierOf,
  toPointsEntry,
  toProgram,
  toRedemption,
  toReward,
  toTier,
  toTierSummary,
  toWalletEntry,
  toWalletVoucher
} from "./View.ts"
import { traced } from "../platform/Traced.ts"

/** The entity's own failures (mailbox full, persistence trouble) are the infrastructure's, not the client's. */
const infrastructureDies = <A, E, R>(
  call: Effect.Effect<
    A,
    E | ClusterError.MailboxFull | ClusterError.AlreadyProcessingMessage | ClusterError.PersistenceError,
    R
  >
): Effect.Effect<A, Exclude<E, ClusterError.MailboxFull | ClusterError.AlreadyProcessingMessage | ClusterError.PersistenceError>, R> =>
  call.pipe(
    Effect.catchIf(
      (error): error is ClusterError.MailboxFull | ClusterError.AlreadyProcessingMessage | ClusterError.PersistenceError =>
        error instanceof ClusterError.MailboxFull || error instanceof ClusterError.AlreadyProcessingMessage ||
        error instanceof ClusterError.PersistenceError,
      Effect.die
    )
  ) as never

/** How many of the customer's open vouchers, and of the store's open games, the public wallet shows. */
const WALLET_VOUCHERS = 20
const WALLET_GAMES = 10

/** How long one WalletFeed subscription lasts: a client subscribes again, authorized afresh. */
export const WALLET_FEED_LIFETIME = Duration.minutes(15)

export class LoyaltyService extends Effect.Service<LoyaltyService>()("loyalty/LoyaltyService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* LoyaltyRepo, "inTransaction")
    const access = yield* AccessService
    const idempotency = yield* Idempotency
    const walletEntity = yield* CustomerWalletEntity.client
    /** A wallet's entity changes the wallet's data: it is reached with proof of access like the repo. */
    const wallets = (id: CustomerId) => storeData(walletEntity(id))
    const encodeRedemption = Schema.encodeSync(Redemption)
    const stores = yield* StoresService
    const changeFeed = yield* ChangeFeed
    const publicLinks = yield* PublicLinks
    const publicUrl = yield* PublicBaseUrl
    const gamesService = yield* GamesService

    const customerNotFound = (id: string, param = "customer_id") => new NotFound({ message: `No such customer: ${id}`, param })
    const rewardNotFound = (id: string, param = "reward_id") => new NotFound({ message: `No such reward: ${id}`, param })
    const redemptionNotFound = (id: string) => new NotFound({ message: `No such redemption: ${id}`, param: "id" })
    const tierNotFound = (id: string) => new NotFound({ message: `No such tier: ${id}`, param: "id" })

    /** Whether a row of a store and mode belongs to the API key's. */
    const ofKey = (key: { readonly storeId: StoreId; readonly livemode: boolean }) =>
    <T extends { readonly store_id: StoreId; readonly livemode: boolean }>(row: T) =>
      row.store_id === key.storeId && row.livemode === key.livemode

    /** `use` on the wallet of a customer of the API key's store and mode; any other customer does not exist. */
    const walletOfKey = <A, E, R>(
      id: CustomerId,
      use: (found: { readonly key: ApiKeyPrincipal; readonly wallet: WalletRow }) => Effect.Effect<A, E, R>
    ) =>
      access.withApiKey((key) =>
        Effect.flatMap(repo.findWallet(id), (found): Effect.Effect<A, E | NotFound, R> => {
          const own = Option.filter(found, ofKey(key))
          return Option.isNone(own) ? Effect.fail(customerNotFound(id)) : use({ key, wallet: own.value })
        }))

    /** `use` on the wallet `id` if the signed-in user may do `permission` on its store; anything else is 404. */
    const walletOfUser = <A, E, R>(id: CustomerId, permission: Permission, use: (wallet: WalletRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findWallet(id), (row) => row.store_id, permission, () => customerNotFound(id, "id"), use)
      )

    const storeOfUser = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))

    // ---------------------------------------------------------------------------------------------
    // Redemptions (merchant API)
    // ---------------------------------------------------------------------------------------------

    /** Sends a redemption to the wallet, once per Idempotency-Key (keyed by operation name and body). */
    const redeemOnce = (
      operation: string,
      wallet: WalletRow,
      idempotencyKey: string | undefined,
      request: unknown,
      message: { readonly rewardId: RewardId | null; readonly points: number | null; readonly reason: string | null }
    ) =>
      idempotency.once(
        scopeOf({ storeId: wallet.store_id, livemode: wallet.livemode }, idempotencyKey),
        { operation, input: request },
        201,
        encodeRedemption,
        // The message is keyed by the request: a retry that takes over a crashed attempt sends the same
        // message again and gets the one redemption.
        (requestToken) =>
          wallets(wallet.id).Redeem({ requestKey: requestToken, redemptionId: newId("rdm"), ...message }).pipe(infrastructureDies, 
            Effect.map(toRedemption)
          )
      )

    const redeemPoints = traced("Loyalty.redeemPoints")(function*(input: ApiRedeem, idempotencyKey: string | undefined) {
      return yield* walletOfKey(input.customer_id, ({ wallet }) =>
        Effect.gen(function*() {
          return yield* redeemOnce("loyalty.redeem", wallet, idempotencyKey, input, {
            rewardId: null,
            points: input.points,
            reason: input.reason ?? null
          })
        }))
    })

    /** Redeems one of the wallet's store's rewards; another store's reward does not exist. */
    const redeemRewardOf = (wallet: WalletRow, input: RedeemReward, idempotencyKey: string | undefined) =>
      Effect.gen(function*() {
        const reward = Option.filter(yield* repo.findReward(input.reward_id), (row) => row.store_id === wallet.store_id)
        if (Option.isNone(reward)) return yield* rewardNotFound(input.reward_id)
        return yield* redeemOnce("loyalty.redemptions.create", wallet, idempotencyKey, input, {
          rewardId: reward.value.id,
          points: null,
          reason: null
        })
      })

    const redeemReward = traced("Loyalty.redeemReward")(function*(input: RedeemReward, idempotencyKey: string | undefined) {
      return yield* walletOfKey(input.customer_id, ({ wallet }) => redeemRewardOf(wallet, input, idempotencyKey))
    })

    /**
     * A reward redeemed from the console for a customer at the counter: the rules of
     * `POST /v1/loyalty/redemptions` on a customer the user may change (customer.write); the console's
     * Idempotency-Key shares the merchant API's keys of the customer's store and mode.
     */
    const redeemRewardForUser = traced("Loyalty.redeemRewardForUser")(function*(
      input: RedeemReward,
      idempotencyKey: string | undefined
    ) {
      return yield* walletOfUser(input.customer_id, "customer.write", (wallet) => redeemRewardOf(wallet, input, idempotencyKey))
    })

    const activeRewards = traced("Loyalty.activeRewards")(function*(params: ListParams) {
      return yield* access.withApiKey((key) =>
        Effect.gen(function*() {
          const page = yield* pageAfter(params, (position) => repo.listRewards(key.storeId, true, params.limit, position))
          return new RewardList({ ...page, data: page.data.map(toReward) })
        }))
    })

    const redemption = traced("Loyalty.redemption")(function*(id: RedemptionId) {
      return yield* access.withApiKey((key) =>
        Effect.gen(function*() {
          const found = Option.filter(yield* repo.findRedemption(id), ofKey(key))
          if (Option.isNone(found)) return yield* redemptionNotFound(id)
          return toRedemption(found.value)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Program and wallets (console)
    // ---------------------------------------------------------------------------------------------

    const program = traced("Loyalty.program")(function*(storeId: StoreId) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          return toProgram(yield* repo.program(store.storeId))
        }))
    })

    const configure = traced("Loyalty.configure")(function*(storeId: StoreId, input: UpdateProgram) {
      return yield* storeOfUser(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          const current = yield* repo.program(store.storeId)
          return toProgram(yield* repo.saveProgram({
            store_id: store.storeId,
            active: input.active ?? current.active,
            points_per_usd: input.points_per_unit?.USD ?? current.points_per_usd,
            points_per_khr: input.points_per_unit?.KHR ?? current.points_per_khr,
            at: yield* currentDate
          }))
        }))
    })

    const customerLoyalty = traced("Loyalty.customerLoyalty")(function*(id: CustomerId, params: ListParams) {
      return yield* walletOfUser(id, "customer.read", (wallet) =>
        Effect.gen(function*() {
          const tiers = yield* repo.tiersOf(wallet.store_id)
          const tier = tierOf(tiers, wallet.lifetime_points).current
          const page = yield* pageAfter(params, (position) => repo.listEntries(wallet.id, params.limit, position))
          return new CustomerLoyalty({
            object: "customer_loyalty",
            customer_id: wallet.id,
            points_balance: wallet.points_balance,
            lifetime_points: wallet.lifetime_points,
            tier: tier === null ? null : toTierSummary(tier),
            entries: new PointsEntryList({ ...page, data: page.data.map(toPointsEntry) })
          })
        }))
    })

    const adjust = traced("Loyalty.adjust")(function*(id: CustomerId, input: Adjust) {
      return yield* walletOfUser(id, "customer.write", (wallet) =>
        Effect.gen(function*() {
          const entry = yield* wallets(wallet.id).Adjust({ requestKey: randomUUID(), points: input.points, reason: input.reason }).pipe(infrastructureDies)
          return toPointsEntry(entry)
        }))
    })

    const liability = traced("Loyalty.liability")(function*(storeId: StoreId, params: LiabilityParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const { points } = yield* repo.outstanding({ storeId: store.storeId, livemode })
          return new LoyaltyLiability({
            object: "loyalty_liability",
            store_id: store.storeId,
            livemode,
            outstanding_points: Number(points),
            point_value: params.point_value,
            currency: params.currency,
            amount: formatAmount(valueOf(points, params.point_value, params.currency), params.currency)
          })
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Tiers
    // ---------------------------------------------------------------------------------------------

    const thresholdTaken = (threshold: number) =>
      new InvalidState({ message: `Another tier of this store has the threshold ${threshold}`, param: "threshold" })

    const tierOfUser = <A, E, R>(id: TierId, permission: Permission, use: (found: TierRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findTier(id), (row) => row.store_id, permission, () => tierNotFound(id), use)
      )

    const tiers = traced("Loyalty.tiers")(function*(storeId: StoreId, params: ListParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const page = yield* pageAfter(params, (position) => repo.listTiers(store.storeId, params.limit, position))
          return new TierList({ ...page, data: page.data.map(toTier) })
        }))
    })

    const createTier = traced("Loyalty.createTier")(function*(storeId: StoreId, input: CreateTier) {
      return yield* storeOfUser(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          const inserted = yield* repo.insertTier({
            id: newId("tier"),
            store_id: store.storeId,
            name: input.name,
            threshold: input.threshold,
            earn_multiplier: input.earn_multiplier ?? "1",
            created_at: yield* currentDate
          })
          if (Option.isNone(inserted)) return yield* thresholdTaken(input.threshold)
          return toTier(inserted.value)
        }))
    })

    const updateTier = traced("Loyalty.updateTier")(function*(id: TierId, input: UpdateTier) {
      return yield* tierOfUser(id, "marketing.manage", (current) =>
        Effect.gen(function*() {
          const updated = yield* repo.updateTier({
            ...current,
            name: input.name ?? current.name,
            threshold: input.threshold ?? current.threshold,
            earn_multiplier: input.earn_multiplier ?? current.earn_multiplier
          })
          if (Option.isNone(updated)) return yield* thresholdTaken(input.threshold ?? current.threshold)
          return toTier(updated.value)
        }))
    })

    const deleteTier = traced("Loyalty.deleteTier")(function*(id: TierId) {
      return yield* tierOfUser(id, "marketing.manage", (current) =>
        Effect.gen(function*() {
          yield* repo.deleteTier(current.id)
          return toTier(current)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Rewards
    // ---------------------------------------------------------------------------------------------

    const rewardOfUser = <A, E, R>(id: RewardId, permission: Permission, use: (found: RewardRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findReward(id), (row) => row.store_id, permission, () => rewardNotFound(id, "id"), use)
      )

    /** The reward, locked until the transaction ends; deleted since it was found: 404 as for any missing one. */
    const lockReward = (id: RewardId) =>
      Effect.flatMap(
        repo.findRewardForUpdate(id),
        Option.match({ onNone: () => Effect.fail(rewardNotFound(id, "id")), onSome: Effect.succeed })
      )

    const rewards = traced("Loyalty.rewards")(function*(storeId: StoreId, params: ListParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const page = yield* pageAfter(params, (position) => repo.listRewards(store.storeId, false, params.limit, position))
          return new RewardList({ ...page, data: page.data.map(toReward) })
        }))
    })

    const createReward = traced("Loyalty.createReward")(function*(storeId: StoreId, input: CreateReward) {
      return yield* storeOfUser(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          return toReward(yield* repo.insertReward({
            id: newId("rwd"),
            store_id: store.storeId,
            name: input.name,
            description: input.description ?? null,
            points_cost: input.points_cost,
            stock: input.stock ?? null,
            active: input.active ?? true,
            created_at: yield* currentDate
          }))
        }))
    })

    const updateReward = traced("Loyalty.updateReward")(function*(id: RewardId, input: UpdateReward) {
      return yield* rewardOfUser(id, "marketing.manage", () =>
        Effect.gen(function*() {
          // Under the reward's lock: a stock set here is not undone by a redemption that read the old one.
          return yield* repo.inTransaction(Effect.gen(function*() {
            const current = yield* lockReward(id)
            return toReward(yield* repo.updateReward({
              ...current,
              name: input.name ?? current.name,
              description: input.description === undefined ? current.description : input.description,
              points_cost: input.points_cost ?? current.points_cost,
              stock: input.stock === undefined ? current.stock : input.stock,
              active: input.active ?? current.active
            }))
          }))
        }))
    })

    const deleteReward = traced("Loyalty.deleteReward")(function*(id: RewardId) {
      return yield* rewardOfUser(id, "marketing.manage", () =>
        Effect.gen(function*() {
          // Under the reward's lock, which a redemption's stock update also takes: a reward is deleted only
          // if no redemption of it committed or is under way.
          return yield* repo.inTransaction(Effect.gen(function*() {
            const current = yield* lockReward(id)
            if (yield* repo.hasRedemptions(current.id)) {
              return toReward(yield* repo.updateReward({ ...current, active: false }))
            }
            yield* repo.deleteReward(current.id)
            return toReward(current)
          }))
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Redemptions (console)
    // ---------------------------------------------------------------------------------------------

    const redemptionOfUser = <A, E, R>(id: RedemptionId, permission: Permission, use: (found: RedemptionRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findRedemption(id), (row) => row.store_id, permission, () => redemptionNotFound(id), use)
      )

    const redemptions = traced("Loyalty.redemptions")(function*(storeId: StoreId, params: StoreRedemptionListParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const page = yield* pageAfter(params, (position) => repo.listRedemptions(store.storeId, livemode, params.limit, position))
          return new RedemptionList({ ...page, data: page.data.map(toRedemption) })
        }))
    })

    const notIssued = (id: RedemptionId, status: string, verb: string) =>
      new InvalidState({ message: `Redemption ${id} is ${status}: only an issued redemption can be ${verb}`, param: "id" })

    const fulfill = traced("Loyalty.fulfill")(function*(id: RedemptionId) {
      return yield* redemptionOfUser(id, "customer.write", (current) =>
        Effect.gen(function*() {
          const fulfilled = yield* repo.fulfil({ id, at: yield* currentDate })
          if (Option.isNone(fulfilled)) {
            const now = Option.getOrElse(yield* repo.findRedemption(id), () => current)
            return yield* notIssued(id, now.status, "fulfilled")
          }
          return toRedemption(fulfilled.value)
        }))
    })

    const cancel = traced("Loyalty.cancel")(function*(id: RedemptionId) {
      return yield* redemptionOfUser(id, "customer.write", (current) =>
        Effect.gen(function*() {
          if (current.status !== "issued") return yield* notIssued(id, current.status, "cancelled")
          const cancelled = yield* wallets(current.customer_id).CancelRedemption({ redemptionId: id, requestKey: randomUUID() }).pipe(infrastructureDies)
          return toRedemption(cancelled)
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // The public wallet
    // ---------------------------------------------------------------------------------------------

    /**
     * The customer's wallet, opened by its public token `t` (a missing or wrong one answers as an unknown
     * customer). It shows what the customer may see of its own: no payment id, no other customer's id and
     * no merchant's note; its own vouchers, play links and referral link.
     */
    const wallet = traced("Loyalty.wallet")(function*(customerId: CustomerId, token: string | undefined) {
      const found = Option.filter(
        yield* repo.findWallet(customerId),
        (row) => publicLinks.opensCustomer(row.id, row.public_link_version, token)
      )
      if (Option.isNone(found)) return yield* customerNotFound(customerId, "customerId")
      const row = found.value
      const store = yield* stores.getById(row.store_id).pipe(Effect.orDie)
      const { current, next } = tierOf(yield* repo.tiersOf(row.store_id), row.lifetime_points)
      const rewards = yield* repo.listRewards(row.store_id, true, MAX_LIST_LIMIT)
      const entries = yield* repo.listEntries(row.id, RECENT_ENTRIES)
      const vouchers = yield* repo.issuedVouchers({ customerId: row.id, limit: WALLET_VOUCHERS })
      const links = yield* publicLinks.urls
      // An erased customer can no longer play.
      const games = row.erased_at === null ? yield* gamesService.openInstantGames(row.store_id, WALLET_GAMES) : []
      const baseUrl = yield* publicUrl.get
      return new Wallet({
        object: "wallet",
        store: new WalletStore({ name: store.name, branding: store.branding }),
        customer: new WalletCustomer({ name: maskName(row.name) }),
        points_balance: row.points_balance,
        lifetime_points: row.lifetime_points,
        tier: current === null ? null : toTierSummary(current),
        next_tier: next === null
          ? null
          : new WalletNextTier({ name: next.name, threshold: next.threshold, points_needed: next.threshold - row.lifetime_points }),
        rewards: rewards.slice(0, MAX_LIST_LIMIT).map(toReward),
        recent_entries: entries.slice(0, RECENT_ENTRIES).map(toWalletEntry),
        vouchers: vouchers.map(toWalletVoucher),
        games: games.flatMap((game) =>
          game.type === "scratch"
            ? []
            : [new WalletGame({ id: game.id, name: game.name, type: game.type, play_url: links.game(game.id, row.id, row.public_link_version) })]
        ),
        referral: row.referral_code === null
          ? null
          : new WalletReferral({ code: row.referral_code, share_url: `${baseUrl}/r/${encodeURIComponent(row.referral_code)}` })
      })
    }, AccessService.forPublicLink("the customer's wallet, opened by the customer's own link"))

    // ---------------------------------------------------------------------------------------------
    // The console's live wallet feed
    // ---------------------------------------------------------------------------------------------

    const decodeNotice = Schema.decodeUnknownOption(Schema.parseJson(PointsEntry))

    /** A customer's points entries as they commit, for as long as WALLET_FEED_LIFETIME. */
    const walletFeed = traced("Loyalty.walletFeed")(function*(customerId: CustomerId) {
      return yield* walletOfUser(customerId, "customer.read", () =>
        Effect.gen(function*() {
          const frames = Stream.unwrapScoped(Effect.map(changeFeed.subscribe(POINTS_CHANNEL), (notices) =>
            Stream.concat(
              Stream.succeed<WalletFeedFrame>(new WalletFeedSynced({ reason: "subscribed" })),
              Stream.filterMap(notices, (notice): Option.Option<WalletFeedFrame> =>
                notice._tag === "Resync"
                  ? Option.some(new WalletFeedSynced({ reason: "reconnected" }))
                  : decodeNotice(notice.payload).pipe(
                    Option.filter((entry) => entry.customer_id === customerId),
                    Option.map((entry) => new PointsEntryAdded({ entry }))
                  ))
            )))
          return Stream.interruptWhen(frames, Effect.sleep(WALLET_FEED_LIFETIME))
        }))
    })

    return {
      walletFeed,
      wallet,
      redeemPoints,
      redeemReward,
      redeemRewardForUser,
      activeRewards,
      redemption,
      program,
      configure,
      customerLoyalty,
      adjust,
      liability,
      tiers,
      createTier,
      updateTier,
      deleteTier,
      rewards,
      createReward,
      updateReward,
      deleteReward,
      redemptions,
      fulfill,
      cancel
    } as const
  }),
  dependencies: [
    LoyaltyRepo.Default,
    AccessService.Default,
    Idempotency.Default,
    StoresService.Default,
    PublicLinks.Default,
    GamesService.Default
  ]
}) {}
