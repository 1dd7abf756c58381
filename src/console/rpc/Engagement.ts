/**
 * The engagement half's handlers (domain/console/*.ts): each is one call of the area's service, which
 * checks access and the role; the console's `livemode` flag becomes the service's mode parameter.
 */
import { Effect, Layer } from "effect"
import { Customer } from "../../../domain/Customers.ts"
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "../../../domain/Lists.ts"
import { Redemption } from "../../../domain/Loyalty.ts"
import { CommissionPayout } from "../../../domain/Referrals.ts"
import { ConsoleCustomerRpcs } from "../../../domain/console/Customers.ts"
import { ConsoleLoyaltyRpcs } from "../../../domain/console/Loyalty.ts"
import { ConsolePromotionRpcs } from "../../../domain/console/Promotions.ts"
import { ConsoleReferralRpcs } from "../../../domain/console/Referrals.ts"
import { ConsoleSegmentRpcs } from "../../../domain/console/Segments.ts"
import { AccountsService } from "../../accounts/Service.ts"
import { CustomersService } from "../../customers/Service.ts"
import { LoyaltyService } from "../../loyalty/Service.ts"
import { outcomeValue } from "../../platform/Idempotency.ts"
import { PromotionsService } from "../../promotions/Service.ts"
import { ReferralsService } from "../../referrals/Service.ts"
import { SegmentsService } from "../../segments/Service.ts"
import { hideDefects } from "./Defects.ts"

/** A console page request as the list routes take it. */
const pageOf = (page: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) => ({
  limit: page.limit ?? DEFAULT_LIST_LIMIT,
  cursor: page.cursor
})

export const ConsoleCustomerHandlersLive = ConsoleCustomerRpcs.toLayer(Effect.gen(function*() {
  const customers = yield* CustomersService
  return ConsoleCustomerRpcs.of({
    SearchCustomers: ({ livemode, search, store_id, ...page }) =>
      hideDefects(customers.listForStore(store_id, { ...pageOf(page), search, livemode })),
    CreateCustomer: ({ idempotency_key, livemode, store_id, ...input }) =>
      hideDefects(customers.createForStore(store_id, livemode, input, idempotency_key).pipe(Effect.flatMap(outcomeValue(Customer)))),
    CustomerOverview: ({ id }) => hideDefects(customers.overview(id)),
    CustomerPreferences: ({ id }) => hideDefects(customers.preferencesAsUser(id)),
    CustomerConsentLog: ({ id, ...page }) => hideDefects(customers.consentLog(id, pageOf(page))),
    SetCustomerPreferences: ({ id, ...input }) => hideDefects(customers.setPreferencesAsUser(id, input)),
    EraseCustomer: ({ id }) => hideDefects(customers.erase(id))
  })
}))

export const ConsoleLoyaltyHandlersLive = ConsoleLoyaltyRpcs.toLayer(Effect.gen(function*() {
  const loyalty = yield* LoyaltyService
  return ConsoleLoyaltyRpcs.of({
    LoyaltyProgram: ({ store_id }) => hideDefects(loyalty.program(store_id)),
    ConfigureLoyalty: ({ store_id, ...input }) => hideDefects(loyalty.configure(store_id, input)),
    ListTiers: ({ store_id, ...page }) => hideDefects(loyalty.tiers(store_id, pageOf(page))),
    CreateTier: ({ store_id, ...input }) => hideDefects(loyalty.createTier(store_id, input)),
    UpdateTier: ({ id, ...input }) => hideDefects(loyalty.updateTier(id, input)),
    DeleteTier: ({ id }) => hideDefects(loyalty.deleteTier(id)),
    ListRewards: ({ store_id, ...page }) => hideDefects(loyalty.rewards(store_id, pageOf(page))),
    CreateReward: ({ store_id, ...input }) => hideDefects(loyalty.createReward(store_id, input)),
    UpdateReward: ({ id, ...input }) => hideDefects(loyalty.updateReward(id, input)),
    ListRedemptions: ({ livemode, store_id, ...page }) => hideDefects(loyalty.redemptions(store_id, { ...pageOf(page), livemode })),
    RedeemReward: ({ idempotency_key, ...input }) =>
      hideDefects(loyalty.redeemRewardForUser(input, idempotency_key).pipe(Effect.flatMap(outcomeValue(Redemption)))),
    FulfilRedemption: ({ id }) => hideDefects(loyalty.fulfill(id)),
    CancelRedemption: ({ id }) => hideDefects(loyalty.cancel(id)),
    CustomerPoints: ({ id, ...page }) => hideDefects(loyalty.customerLoyalty(id, pageOf(page))),
    AdjustPoints: ({ id, ...input }) => hideDefects(loyalty.adjust(id, input)),
    LoyaltyLiability: ({ store_id, ...params }) => hideDefects(loyalty.liability(store_id, params))
  })
}))

export const ConsoleReferralHandlersLive = ConsoleReferralRpcs.toLayer(Effect.gen(function*() {
  const referrals = yield* ReferralsService
  return ConsoleReferralRpcs.of({
    ReferralProgram: ({ store_id }) => hideDefects(referrals.program(store_id)),
    ConfigureReferrals: ({ store_id, ...input }) => hideDefects(referrals.configure(store_id, input)),
    ListReferrals: ({ flagged_only, livemode, store_id, ...page }) =>
      hideDefects((flagged_only ? referrals.flagged : referrals.list)(store_id, { ...pageOf(page), livemode })),
    ReviewReferral: ({ id, store_id, ...input }) => hideDefects(referrals.review(store_id, id, input)),
    ListCommissions: ({ livemode, status, store_id, ...page }) =>
      hideDefects(referrals.commissions(store_id, { ...pageOf(page), livemode, status })),
    CommissionTotals: ({ livemode, store_id }) => hideDefects(referrals.summary(store_id, { livemode })),
    PayoutCommissions: ({ idempotency_key, store_id, ...input }) =>
      hideDefects(referrals.payout(store_id, input, idempotency_key).pipe(Effect.flatMap(outcomeValue(CommissionPayout)))),
    ReferralReport: ({ livemode, store_id }) => hideDefects(referrals.report(store_id, { livemode })),
    CustomerReferralQr: ({ id }) => hideDefects(referrals.qrForUser(id))
  })
}))

export const ConsoleSegmentHandlersLive = ConsoleSegmentRpcs.toLayer(Effect.gen(function*() {
  const segments = yield* SegmentsService
  return ConsoleSegmentRpcs.of({
    ListSegments: ({ store_id, ...page }) => hideDefects(segments.list(store_id, pageOf(page))),
    CreateSegment: ({ store_id, ...input }) => hideDefects(segments.create(store_id, input)),
    UpdateSegment: ({ id, ...input }) => hideDefects(segments.update(id, input)),
    DeleteSegment: ({ id }) => hideDefects(segments.remove(id)),
    PreviewSegmentRules: ({ livemode, store_id, ...rules }) => hideDefects(segments.previewRules(store_id, { livemode }, rules))
  })
}))

export const ConsolePromotionHandlersLive = ConsolePromotionRpcs.toLayer(Effect.gen(function*() {
  const promotions = yield* PromotionsService
  const accounts = yield* AccountsService
  return ConsolePromotionRpcs.of({
    ListPromotions: ({ store_id, ...page }) => hideDefects(promotions.list(store_id, pageOf(page))),
    GetPromotion: ({ id }) => hideDefects(promotions.retrieve(id)),
    CreatePromotion: ({ store_id, ...input }) => hideDefects(promotions.create(store_id, input)),
    UpdatePromotion: ({ id, ...input }) => hideDefects(promotions.update(id, input)),
    DeletePromotion: ({ id }) => hideDefects(promotions.remove(id)),
    SimulatePromotion: ({ id, livemode }) => hideDefects(promotions.simulate(id, { livemode })),
    SubmitPromotion: ({ id }) => hideDefects(promotions.submit(id)),
    ApprovePromotion: ({ id }) => hideDefects(promotions.approve(id)),
    RejectPromotion: ({ id, reason }) => hideDefects(promotions.reject(id, reason)),
    ActivatePromotion: ({ id }) => hideDefects(promotions.activate(id)),
    PausePromotion: ({ id }) => hideDefects(promotions.pause(id)),
    EndPromotion: ({ id }) => hideDefects(promotions.end(id)),
    MemberDirectory: ({ organization_id }) => hideDefects(accounts.listMembers(organization_id, { limit: MAX_LIST_LIMIT, cursor: undefined }))
  })
}))

/** Every handler of the engagement half. */
export const ConsoleEngagementHandlersLive = Layer.mergeAll(
  ConsoleCustomerHandlersLive,
  ConsoleLoyaltyHandlersLive,
  ConsoleReferralHandlersLive,
  ConsoleSegmentHandlersLive,
  ConsolePromotionHandlersLive
)
