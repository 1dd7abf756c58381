/**
 * Loyalty (API.md "Loyalty"): a program per store (active flag, points per currency unit), tiers by
 * lifetime points with an earn multiplier, a reward catalogue with stock, redemptions with voucher codes,
 * and each customer's wallet: a balance that never goes negative and an append-only ledger of points entries.
 *
 * The merchant API (`/v1/loyalty/…`) acts with an API key on its own store and mode; the console routes
 * (`/dashboard/…`) act with a user session: customer.read to read, marketing.manage to configure the
 * program, tiers and rewards, customer.write to adjust balances and fulfil or cancel redemptions.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import {
  IdempotencyConflictResponse,
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse,
  RateLimitedResponse
} from "./Errors.ts"
import { CustomerId, GameId, PaymentId, PointsEntryId, RedemptionId, RewardId, StoreId, TierId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { IdempotencyHeaders } from "./Payments.ts"
import { boundedText, StoreBranding } from "./Stores.ts"
import { closed, MAX_NAME_LENGTH, oneOf } from "./Text.ts"

/** The largest points value anywhere (a balance, a cost, an adjustment): 2^31 − 1, the database's integer. */
export const MAX_POINTS = 2_147_483_647
export const MAX_REASON_LENGTH = 500
export const MAX_DESCRIPTION_LENGTH = 1000
/** How many of a wallet's newest entries the wallet shows. */
export const RECENT_ENTRIES = 10

export const PointsEntryTypes = [
  "earn",
  "reverse",
  "redeem",
  "redeem_cancel",
  "adjust",
  "referral",
  "promotion",
  "game"
] as const
export const PointsEntryType = Schema.Literal(...PointsEntryTypes)
export type PointsEntryType = typeof PointsEntryType.Type

export const RedemptionStatuses = ["issued", "fulfilled", "cancelled"] as const
export const RedemptionStatus = Schema.Literal(...RedemptionStatuses).annotations({
  description: "`issued` when made; then `fulfilled` (handed over) or `cancelled` (points and stock returned)"
})
export type RedemptionStatus = typeof RedemptionStatus.Type

/** A whole number of points between `min` and 2^31 − 1, named `field` in its messages. */
const points = (field: string, min: number) =>
  Schema.Number.pipe(
    Schema.int({ message: () => `${field} must be a whole number of points` }),
    Schema.between(min, MAX_POINTS, { message: () => `${field} must be between ${min} and ${MAX_POINTS}` })
  )

/** A non-negative decimal string (a rate or a multiplier): up to `digits` places after the point. */
const decimalText = (field: string, digits: number) =>
  Schema.String.pipe(
    Schema.pattern(new RegExp(`^\\d{1,9}(\\.\\d{1,${digits}})?$`), {
      message: () => `${field} must be a non-negative decimal string with at most ${digits} decimals, such as "1.5"`
    })
  )

export const MAX_RATE_DECIMALS = 6
export const MAX_MULTIPLIER_DECIMALS = 4

const PointsPerUnitRate = (currency: string) =>
  decimalText(`points_per_unit.${currency}`, MAX_RATE_DECIMALS).annotations({
    description: `Points per one ${currency} (fractions of a point are floored), at most ${MAX_RATE_DECIMALS} decimals`
  })

const EarnMultiplier = decimalText("earn_multiplier", MAX_MULTIPLIER_DECIMALS).pipe(
  Schema.filter((text) => Number(text) > 0 || "earn_multiplier must be greater than zero", { jsonSchema: {} })
).annotations({
  description: `What the points a payment earns are multiplied by in this tier (greater than 0, at most ` +
    `${MAX_MULTIPLIER_DECIMALS} decimals)`,
  examples: ["1.5"]
})

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

export const PointsPerUnit = Schema.Struct({
  USD: Schema.String.annotations({ examples: ["10"] }),
  KHR: Schema.String.annotations({ examples: ["0.0025"] })
}).annotations({ description: "Points earned per one unit of each currency; fractions of a point are floored" })

export class LoyaltyProgram extends Schema.Class<LoyaltyProgram>("LoyaltyProgram")({
  object: Schema.Literal("loyalty_program"),
  store_id: StoreId,
  active: Schema.Boolean.annotations({
    description: "Whether paid payments earn points; redemptions are allowed either way"
  }),
  points_per_unit: PointsPerUnit
}) {}

export class Tier extends Schema.Class<Tier>("Tier")({
  id: TierId,
  object: Schema.Literal("tier"),
  store_id: StoreId,
  name: Schema.String.annotations({ examples: ["Gold"] }),
  threshold: Schema.Int.annotations({
    description: "Lifetime points from which a customer is in this tier",
    examples: [1000]
  }),
  earn_multiplier: Schema.String.annotations({
    description: "What the points a payment earns are multiplied by in this tier",
    examples: ["1.5"]
  }),
  created_at: Schema.String
}) {}

export class TierList extends Schema.Class<TierList>("TierList")(ListOf(Tier).fields) {}

export class Reward extends Schema.Class<Reward>("Reward")({
  id: RewardId,
  object: Schema.Literal("reward"),
  store_id: StoreId,
  name: Schema.String.annotations({ examples: ["Free iced latte"] }),
  description: Schema.NullOr(Schema.String).annotations({ examples: ["Any size, any branch"] }),
  points_cost: Schema.Int.annotations({ description: "Points one redemption takes", examples: [500] }),
  stock: Schema.NullOr(Schema.Int).annotations({
    description: "How many more can be redeemed; null: unlimited",
    examples: [25]
  }),
  active: Schema.Boolean.annotations({ description: "Deactivated rewards cannot be redeemed" }),
  created_at: Schema.String
}) {}

export class RewardList extends Schema.Class<RewardList>("RewardList")(ListOf(Reward).fields) {}

export class PointsEntry extends Schema.Class<PointsEntry>("PointsEntry")({
  id: PointsEntryId,
  object: Schema.Literal("points_entry"),
  customer_id: CustomerId,
  type: PointsEntryType.annotations({
    description: "What changed the balance: `earn` (a paid payment), `reverse` (its refund), `redeem`, " +
      "`redeem_cancel`, `adjust` (the console), or a `referral`, `promotion` or `game` credit"
  }),
  points: Schema.Int.annotations({ description: "Signed: credits positive, debits negative", examples: [125] }),
  balance_after: Schema.Int.annotations({ description: "The balance once this entry applied", examples: [1250] }),
  payment_id: Schema.optional(PaymentId),
  redemption_id: Schema.optional(RedemptionId),
  reason: Schema.optional(Schema.String.annotations({ examples: ["Goodwill for a late order"] })),
  shortfall: Schema.optional(Schema.Int.annotations({
    description: "On a `reverse`: the points that could not be taken back because the balance was already spent",
    examples: [0]
  })),
  created_at: Schema.String
}) {}

export class PointsEntryList extends Schema.Class<PointsEntryList>("PointsEntryList")(ListOf(PointsEntry).fields) {}

export class Redemption extends Schema.Class<Redemption>("Redemption")({
  id: RedemptionId,
  object: Schema.Literal("redemption"),
  customer_id: CustomerId,
  reward_id: Schema.NullOr(RewardId).annotations({ description: "null for a redemption of raw points" }),
  points: Schema.Int.annotations({ examples: [500] }),
  status: RedemptionStatus,
  voucher_code: Schema.String.annotations({
    description: "Unguessable code to hand over at the counter (three groups of four characters of an alphabet without 0, 1, I and O)",
    examples: ["K7QX-M2PD-W9RT"]
  }),
  created_at: Schema.String,
  fulfilled_at: Schema.NullOr(Schema.String),
  cancelled_at: Schema.NullOr(Schema.String)
}) {}

export class RedemptionList extends Schema.Class<RedemptionList>("RedemptionList")(ListOf(Redemption).fields) {}

export class TierSummary extends Schema.Class<TierSummary>("TierSummary")({
  id: TierId,
  name: Schema.String.annotations({ examples: ["Gold"] }),
  threshold: Schema.Int.annotations({ examples: [1000] }),
  earn_multiplier: Schema.String.annotations({ examples: ["1.5"] })
}) {}

export class CustomerLoyalty extends Schema.Class<CustomerLoyalty>("CustomerLoyalty")({
  object: Schema.Literal("customer_loyalty"),
  customer_id: CustomerId,
  points_balance: Schema.Int.annotations({ examples: [1250] }),
  lifetime_points: Schema.Int.annotations({ examples: [4300] }),
  tier: Schema.NullOr(TierSummary).annotations({ description: "The highest tier whose threshold ≤ lifetime_points" }),
  entries: PointsEntryList.annotations({ description: "The wallet's ledger, newest first, a page at a time" })
}) {}

export class LoyaltyLiability extends Schema.Class<LoyaltyLiability>("LoyaltyLiability")({
  object: Schema.Literal("loyalty_liability"),
  store_id: StoreId,
  livemode: Schema.Boolean,
  outstanding_points: Schema.Int.annotations({ description: "Points held by the store's customers", examples: [125000] }),
  point_value: Schema.String.annotations({ description: "What one point is worth, as sent", examples: ["0.01"] }),
  currency: Schema.Literal("USD", "KHR"),
  amount: Schema.String.annotations({
    description: "outstanding_points × point_value in the currency, rounded half up to its minor unit",
    examples: ["1250.00"]
  })
}) {}

export class WalletStore extends Schema.Class<WalletStore>("WalletStore")({
  name: Schema.String.annotations({ examples: ["Riverside Coffee"] }),
  branding: StoreBranding
}) {}

export class WalletCustomer extends Schema.Class<WalletCustomer>("WalletCustomer")({
  name: Schema.NullOr(Schema.String).annotations({
    description: "The customer's name masked (first letter of each word), null when none or erased",
    examples: ["S**** C***"]
  })
}) {}

export class WalletNextTier extends Schema.Class<WalletNextTier>("WalletNextTier")({
  name: Schema.String.annotations({ examples: ["Platinum"] }),
  threshold: Schema.Int.annotations({ examples: [5000] }),
  points_needed: Schema.Int.annotations({ description: "Lifetime points still to earn to reach it", examples: [700] })
}) {}

export class WalletEntry extends Schema.Class<WalletEntry>("WalletEntry")({
  type: PointsEntryType,
  points: Schema.Int.annotations({ description: "Signed: credits positive, debits negative", examples: [125] }),
  created_at: Schema.String,
  label: Schema.String.annotations({
    description: "What the entry was, in the store's words for its customers (never a payment id, another " +
      "customer's id or the merchant's note)",
    examples: ["Earned on a purchase"]
  })
}) {}

export class WalletGame extends Schema.Class<WalletGame>("WalletGame")({
  id: GameId,
  name: Schema.String.annotations({ examples: ["Lunar New Year wheel"] }),
  type: Schema.Literal("spin", "lucky_draw"),
  play_url: Schema.String.annotations({
    description: "The hosted game page with this customer's play button: `{PUBLIC_BASE_URL}/play/game/{id}?c=…&t=…`",
    examples: ["https://pay.example.com/play/game/game_3kTMd92JxQeLp0aZ7yNcB1vW?c=cus_3kTMd92JxQeLp0aZ7yNcB1vW&t=q0Zp3H7vX2mKc9Rf4TtW8yLb6NsAe1Ud"]
  })
}) {}

export class WalletReferral extends Schema.Class<WalletReferral>("WalletReferral")({
  code: Schema.String.annotations({ examples: ["SOKHA7Q2"] }),
  share_url: Schema.String.annotations({
    description: "The referral landing page to share with friends: `{PUBLIC_BASE_URL}/r/{code}`",
    examples: ["https://pay.example.com/r/SOKHA7Q2"]
  })
}) {}

export class WalletVoucher extends Schema.Class<WalletVoucher>("WalletVoucher")({
  code: Schema.String.annotations({ examples: ["K7QX-M2PD-W9RT"] }),
  label: Schema.String.annotations({ description: "The reward it was redeemed for", examples: ["Free coffee"] }),
  created_at: Schema.String
}) {}

export class Wallet extends Schema.Class<Wallet>("Wallet")({
  object: Schema.Literal("wallet"),
  store: WalletStore,
  customer: WalletCustomer,
  points_balance: Schema.Int.annotations({ examples: [1250] }),
  lifetime_points: Schema.Int.annotations({ examples: [4300] }),
  tier: Schema.NullOr(TierSummary),
  next_tier: Schema.NullOr(WalletNextTier).annotations({ description: "null in the highest tier or with no tiers" }),
  rewards: Schema.Array(Reward).annotations({ description: "The store's active rewards" }),
  recent_entries: Schema.Array(WalletEntry).annotations({
    description: `The wallet's ${RECENT_ENTRIES} newest points entries: type, points, date and a label`
  }),
  vouchers: Schema.Array(WalletVoucher).annotations({
    description: "The customer's redemptions not yet handed over, with their voucher codes (newest first)"
  }),
  games: Schema.Array(WalletGame).annotations({
    description: "The store's spin and lucky-draw games open for play now, each with this customer's play link"
  }),
  referral: Schema.NullOr(WalletReferral).annotations({
    description: "The customer's own referral code and share link, once one was made; null before"
  })
}) {}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

export const UpdateProgram = closed(Schema.Struct({
  active: Schema.optional(Schema.Boolean.annotations({ description: "Whether paid payments earn points" })),
  points_per_unit: Schema.optional(closed(Schema.Struct({
    USD: Schema.optional(PointsPerUnitRate("USD").annotations({ examples: ["10"] })),
    KHR: Schema.optional(PointsPerUnitRate("KHR").annotations({ examples: ["0.0025"] }))
  }), "PointsPerUnitDto"))
}), "UpdateProgramDto")
export type UpdateProgram = typeof UpdateProgram.Type

const TierName = boundedText(MAX_NAME_LENGTH).annotations({ description: "The tier's name", examples: ["Gold"] })
const Threshold = points("threshold", 0).annotations({
  description: "Lifetime points from which a customer is in the tier (0 to 2^31 − 1), unique in the store",
  examples: [1000]
})

export const CreateTier = closed(Schema.Struct({
  name: TierName,
  threshold: Threshold,
  earn_multiplier: Schema.optional(EarnMultiplier)
}), "CreateTierDto")
export type CreateTier = typeof CreateTier.Type

export const UpdateTier = closed(Schema.Struct({
  name: Schema.optional(TierName),
  threshold: Schema.optional(Threshold),
  earn_multiplier: Schema.optional(EarnMultiplier)
}), "UpdateTierDto")
export type UpdateTier = typeof UpdateTier.Type

const RewardName = boundedText(MAX_NAME_LENGTH).annotations({ description: "The reward's name", examples: ["Free iced latte"] })
const RewardDescription = boundedText(MAX_DESCRIPTION_LENGTH).annotations({ examples: ["Any size, any branch"] })
const PointsCost = points("points_cost", 1).annotations({ description: "Points one redemption takes", examples: [500] })
const Stock = points("stock", 0).annotations({
  description: "How many can be redeemed; omitted or null: unlimited",
  examples: [25]
})

export const CreateReward = closed(Schema.Struct({
  name: RewardName,
  description: Schema.optional(RewardDescription),
  points_cost: PointsCost,
  stock: Schema.optional(Schema.NullOr(Stock)),
  active: Schema.optional(Schema.Boolean.annotations({ description: "Default true" }))
}), "CreateRewardDto")
export type CreateReward = typeof CreateReward.Type

export const UpdateReward = closed(Schema.Struct({
  name: Schema.optional(RewardName),
  description: Schema.optional(Schema.NullOr(RewardDescription)),
  points_cost: Schema.optional(PointsCost),
  stock: Schema.optional(Schema.NullOr(Stock)),
  active: Schema.optional(Schema.Boolean)
}), "UpdateRewardDto")
export type UpdateReward = typeof UpdateReward.Type

const Reason = boundedText(MAX_REASON_LENGTH).annotations({
  description: `Why (1 to ${MAX_REASON_LENGTH} characters); kept on the points entry`,
  examples: ["Goodwill for a late order"]
})

export const RedeemReward = closed(Schema.Struct({
  customer_id: CustomerId,
  reward_id: RewardId
}), "RedeemRewardDto")
export type RedeemReward = typeof RedeemReward.Type

export const ApiRedeem = closed(Schema.Struct({
  customer_id: CustomerId,
  points: points("points", 1).annotations({ description: "Points to take from the wallet (1 to 2^31 − 1)", examples: [200] }),
  reason: Schema.optional(Reason)
}), "ApiRedeemDto")
export type ApiRedeem = typeof ApiRedeem.Type

export const Adjust = closed(Schema.Struct({
  points: Schema.Number.pipe(
    Schema.int({ message: () => "points must be a whole number of points" }),
    Schema.between(-MAX_POINTS, MAX_POINTS, { message: () => `points must be between -${MAX_POINTS} and ${MAX_POINTS}` }),
    Schema.filter((value) => value !== 0 || "points must not be zero", { jsonSchema: {} })
  ).annotations({ description: "Signed, non-zero: a credit or a debit", examples: [250] }),
  reason: Reason
}), "AdjustDto")
export type Adjust = typeof Adjust.Type

export const LiabilityParams = Schema.Struct({
  point_value: Schema.String.pipe(
    Schema.pattern(/^\d{1,9}(\.\d{1,6})?$/, {
      message: () => "point_value must be a non-negative decimal string with at most 6 decimals, such as \"0.01\""
    })
  ).annotations({ description: "What one point is worth in `currency`", examples: ["0.01"] }),
  currency: Schema.optionalWith(oneOf("USD", "KHR"), { default: () => "USD" as const }).annotations({
    description: "Default USD"
  }),
  livemode: Schema.optional(Schema.BooleanFromString.annotations({
    message: () => ({ message: "must be \"true\" or \"false\"", override: true }),
    description: "`true`: live customers' points; default: test customers'"
  }))
})
export type LiabilityParams = typeof LiabilityParams.Type

export const StoreRedemptionListParams = Schema.Struct({
  ...ListParams.fields,
  livemode: Schema.optional(Schema.BooleanFromString.annotations({
    message: () => ({ message: "must be \"true\" or \"false\"", override: true }),
    description: "`true` lists live redemptions; default: test redemptions"
  }))
})
export type StoreRedemptionListParams = typeof StoreRedemptionListParams.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const StorePath = Schema.Struct({ storeId: StoreId })
const IDEMPOTENT = "With `Idempotency-Key`, a retry with the same body answers the original redemption and " +
  "takes nothing again; the same key with another body is 409 `idempotency_conflict`."
const REFUSED = "Too few points, no stock left or a deactivated reward is 409 `invalid_state`; a customer or " +
  "reward of another store (or mode) is 404. Redemption is allowed while the program is inactive."

export class LoyaltyGroup extends HttpApiGroup.make("loyalty")
  .add(
    HttpApiEndpoint.post("redeemPoints", "/v1/loyalty/redeem")
      .setPayload(ApiRedeem)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Redemption, { status: 201 })
      .addError(IdempotencyConflictResponse)
      .annotate(OpenApi.Summary, "Redeem raw points")
      .annotate(
        OpenApi.Description,
        "Takes `points` from the customer's wallet (a customer of the API key's store and mode) and answers an " +
          `\`issued\` redemption with no reward and a voucher code. ${REFUSED} ${IDEMPOTENT}`
      )
  )
  .add(
    HttpApiEndpoint.get("rewards", "/v1/loyalty/rewards")
      .setUrlParams(ListParams)
      .addSuccess(RewardList)
      .annotate(OpenApi.Summary, "List active rewards")
      .annotate(OpenApi.Description, "The API key's store's active rewards, newest first, a page at a time.")
  )
  .add(
    HttpApiEndpoint.post("redeemReward", "/v1/loyalty/redemptions")
      .setPayload(RedeemReward)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Redemption, { status: 201 })
      .addError(IdempotencyConflictResponse)
      .annotate(OpenApi.Summary, "Redeem points for a reward; returns a voucher code")
      .annotate(
        OpenApi.Description,
        "Takes the reward's `points_cost` from the customer's wallet and one from its stock, in one step: " +
          "however many redemptions race, no balance goes negative and no stock is oversold. Answers an " +
          `\`issued\` redemption with a unique voucher code. ${REFUSED} ${IDEMPOTENT}`
      )
  )
  .add(
    HttpApiEndpoint.get("redemption", "/v1/loyalty/redemptions/:id")
      .setPath(Schema.Struct({ id: RedemptionId }))
      .addSuccess(Redemption)
      .annotate(OpenApi.Summary, "Retrieve a redemption")
      .annotate(OpenApi.Description, "A redemption of the API key's store and mode; any other id is 404.")
  )
  .pipe(authenticated("apiKey"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Loyalty")
  .annotate(OpenApi.Description, "Loyalty through the merchant API: rewards, point redemptions.")
{}

const READ = "Needs a user session with customer.read (Owner, Admin, Developer, Analyst)."
const CONFIGURE = "Needs marketing.manage (Owner, Admin)."
const WRITE = "Needs customer.write (Owner, Admin)."

export class LoyaltyConsoleGroup extends HttpApiGroup.make("loyaltyConsole")
  .add(
    HttpApiEndpoint.get("program", "/dashboard/stores/:storeId/loyalty")
      .setPath(StorePath)
      .addSuccess(LoyaltyProgram)
      .annotate(OpenApi.Summary, "Loyalty program config")
      .annotate(
        OpenApi.Description,
        "A store that never configured its program has an inactive one earning 10 points per USD and 0.0025 " +
          `per KHR. ${READ}`
      )
  )
  .add(
    HttpApiEndpoint.put("configure", "/dashboard/stores/:storeId/loyalty")
      .setPath(StorePath)
      .setPayload(UpdateProgram)
      .addSuccess(LoyaltyProgram)
      .annotate(OpenApi.Summary, "Configure the program")
      .annotate(
        OpenApi.Description,
        "Send any of `active` and `points_per_unit.USD` / `.KHR`; the rest stays. Earning applies the program " +
          "as it is when the payment's paid event is processed (within about a second of payment); " +
          `payments earn nothing while the program is inactive. ${CONFIGURE}`
      )
  )
  .add(
    HttpApiEndpoint.get("customerLoyalty", "/dashboard/customers/:id/loyalty")
      .setPath(Schema.Struct({ id: CustomerId }))
      .setUrlParams(ListParams)
      .addSuccess(CustomerLoyalty)
      .annotate(OpenApi.Summary, "Points balance and ledger")
      .annotate(OpenApi.Description, `The customer's balance, lifetime points, tier and points entries, newest first. ${READ}`)
  )
  .add(
    HttpApiEndpoint.get("liability", "/dashboard/stores/:storeId/loyalty/liability")
      .setPath(StorePath)
      .setUrlParams(LiabilityParams)
      .addSuccess(LoyaltyLiability)
      .annotate(OpenApi.Summary, "Outstanding points liability")
      .annotate(
        OpenApi.Description,
        "The points the store's customers (test ones unless `livemode=true`) hold, valued at `point_value` " +
          `per point in \`currency\`. ${READ}`
      )
  )
  .add(
    HttpApiEndpoint.post("adjust", "/dashboard/customers/:id/loyalty/adjust")
      .setPath(Schema.Struct({ id: CustomerId }))
      .setPayload(Adjust)
      .addSuccess(PointsEntry, { status: 201 })
      .annotate(OpenApi.Summary, "Adjust points up or down")
      .annotate(
        OpenApi.Description,
        "Credits (positive `points`) or debits (negative) the wallet with a reason, as one `adjust` entry. A " +
          "debit past the balance is 409 `invalid_state`; a credit never counts toward lifetime points or " +
          `tiers. ${WRITE}`
      )
  )
  .add(
    HttpApiEndpoint.get("tiers", "/dashboard/stores/:storeId/tiers")
      .setPath(StorePath)
      .setUrlParams(ListParams)
      .addSuccess(TierList)
      .annotate(OpenApi.Summary, "List tiers")
      .annotate(OpenApi.Description, `The store's tiers, newest first. ${READ}`)
  )
  .add(
    HttpApiEndpoint.post("createTier", "/dashboard/stores/:storeId/tiers")
      .setPath(StorePath)
      .setPayload(CreateTier)
      .addSuccess(Tier, { status: 201 })
      .annotate(OpenApi.Summary, "Create a tier")
      .annotate(
        OpenApi.Description,
        "A customer is in the tier with the highest `threshold` ≤ its lifetime points; its payments earn " +
          "`earn_multiplier` (default \"1\") times the program's points. Two tiers of a store cannot share a " +
          `threshold (409 \`invalid_state\`). ${CONFIGURE}`
      )
  )
  .add(
    HttpApiEndpoint.patch("updateTier", "/dashboard/tiers/:id")
      .setPath(Schema.Struct({ id: TierId }))
      .setPayload(UpdateTier)
      .addSuccess(Tier)
      .annotate(OpenApi.Summary, "Update a tier")
      .annotate(OpenApi.Description, `Send any of name, threshold, earn_multiplier; the rest stays. ${CONFIGURE}`)
  )
  .add(
    HttpApiEndpoint.del("deleteTier", "/dashboard/tiers/:id")
      .setPath(Schema.Struct({ id: TierId }))
      .addSuccess(Tier)
      .annotate(OpenApi.Summary, "Delete a tier")
      .annotate(
        OpenApi.Description,
        `Answers the deleted tier; its customers fall to the next tier down (or none). ${CONFIGURE}`
      )
  )
  .add(
    HttpApiEndpoint.get("rewards", "/dashboard/stores/:storeId/rewards")
      .setPath(StorePath)
      .setUrlParams(ListParams)
      .addSuccess(RewardList)
      .annotate(OpenApi.Summary, "Reward catalog")
      .annotate(OpenApi.Description, `Every reward of the store, active or not, newest first. ${READ}`)
  )
  .add(
    HttpApiEndpoint.post("createReward", "/dashboard/stores/:storeId/rewards")
      .setPath(StorePath)
      .setPayload(CreateReward)
      .addSuccess(Reward, { status: 201 })
      .annotate(OpenApi.Summary, "Create a reward")
      .annotate(OpenApi.Description, `\`stock\` omitted or null: unlimited. ${CONFIGURE}`)
  )
  .add(
    HttpApiEndpoint.patch("updateReward", "/dashboard/rewards/:id")
      .setPath(Schema.Struct({ id: RewardId }))
      .setPayload(UpdateReward)
      .addSuccess(Reward)
      .annotate(OpenApi.Summary, "Update a reward")
      .annotate(
        OpenApi.Description,
        "Send any field; the rest stays. Setting `stock` replaces what is left. Issued redemptions keep the " +
          `points they took. ${CONFIGURE}`
      )
  )
  .add(
    HttpApiEndpoint.del("deleteReward", "/dashboard/rewards/:id")
      .setPath(Schema.Struct({ id: RewardId }))
      .addSuccess(Reward)
      .annotate(OpenApi.Summary, "Delete or deactivate a reward")
      .annotate(
        OpenApi.Description,
        "A reward that was ever redeemed is deactivated (answered with `active: false`), so its redemptions " +
          `keep their reward; one never redeemed is deleted (answered as it was). ${CONFIGURE}`
      )
  )
  .add(
    HttpApiEndpoint.get("redemptions", "/dashboard/stores/:storeId/redemptions")
      .setPath(StorePath)
      .setUrlParams(StoreRedemptionListParams)
      .addSuccess(RedemptionList)
      .annotate(OpenApi.Summary, "List redemptions")
      .annotate(OpenApi.Description, `The store's redemptions (test ones unless \`livemode=true\`), newest first. ${READ}`)
  )
  .add(
    HttpApiEndpoint.post("fulfill", "/dashboard/redemptions/:id/fulfill")
      .setPath(Schema.Struct({ id: RedemptionId }))
      .addSuccess(Redemption, { status: 201 })
      .annotate(OpenApi.Summary, "Mark fulfilled")
      .annotate(
        OpenApi.Description,
        `Only an \`issued\` redemption can be fulfilled; any other is 409 \`invalid_state\`. ${WRITE}`
      )
  )
  .add(
    HttpApiEndpoint.post("cancel", "/dashboard/redemptions/:id/cancel")
      .setPath(Schema.Struct({ id: RedemptionId }))
      .addSuccess(Redemption, { status: 201 })
      .annotate(OpenApi.Summary, "Cancel; refunds points and restores stock")
      .annotate(
        OpenApi.Description,
        "Returns the points to the wallet (a `redeem_cancel` entry) and one to the reward's stock, once: only " +
          `an \`issued\` redemption can be cancelled; a cancelled or fulfilled one is 409 \`invalid_state\`. ${WRITE}`
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Loyalty (console)")
  .annotate(OpenApi.Description, "The loyalty program of a store: points per currency unit, tiers, rewards, redemptions, balances and liability.")
{}

/** The `t` of a public customer link; missing or wrong is 404, as for an unknown id. */
export const PublicLinkParams = Schema.Struct({
  t: Schema.optional(Schema.String.annotations({
    description: "The link's token, as in the `wallet_url` (or `card_url`) the API handed out"
  }))
})

export class WalletGroup extends HttpApiGroup.make("wallet")
  .add(
    HttpApiEndpoint.get("view", "/wallet/:customerId")
      .setPath(Schema.Struct({ customerId: CustomerId }))
      .setUrlParams(PublicLinkParams)
      .addSuccess(Wallet)
      .annotate(OpenApi.Summary, "Public customer loyalty wallet")
      .annotate(
        OpenApi.Description,
        "Opened through the customer's `wallet_url` (`/wallet/{customerId}?t=…`): the token `t` is the credential, " +
          "the id alone opens nothing — a missing, wrong or revoked `t` is 404 `not_found`, exactly as an unknown " +
          "id. The store's name and branding, the customer's name masked, the balance, the tier and the next one " +
          `with the points still needed, the store's active rewards, the ${RECENT_ENTRIES} newest points entries ` +
          "(type, points, date and a label: never a payment id, another customer's id or the merchant's note), " +
          "the customer's own voucher codes not yet handed over, the games open for play with this customer's " +
          "play links, and its referral share link. JSON by default; a request that prefers `text/html` (a " +
          "browser) gets the wallet page."
      )
  )
  .addError(NotFoundResponse)
  .addError(RateLimitedResponse)
  .annotate(OpenApi.Title, "Wallet")
  .annotate(OpenApi.Description, "The customer's wallet page: points balance, tier and rewards (opened with its capability token).")
{}
