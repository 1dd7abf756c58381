/**
 * Object ids: a type prefix, `_`, and 24 random base62 characters (about 143 bits), e.g.
 * `pay_3kTMd92JxQeLp0aZ7yNcB1vW`. The prefix tells a reader (and a support engineer) what an id
 * points at; the random part guesses nothing about other objects, not even their creation order.
 *
 * Every kind of id is its own branded type (`PaymentId`, `StoreId`, …), so passing a store id where a
 * payment id belongs is a type error. On the wire an id schema stays lenient: any string of at most
 * 64 characters decodes, so an id of the wrong shape is answered like an unknown one (404), as Stripe
 * does; only an absurd one (too long, NUL) is 400. The brand is a promise about where the value came
 * from, not about its shape: a request's id may name nothing.
 */
import { type Brand, Schema } from "effect"
import { maxText, MAX_ID_LENGTH } from "./Text.ts"

export const IdPrefixes = [
  "pay", // payment
  "re", // refund
  "cus", // customer
  "org", // organization
  "str", // store
  "br", // branch
  "key", // API key
  "we", // webhook endpoint
  "evt", // event
  "whd", // webhook delivery
  "usr", // user
  "lnk", // payment link
  "inv", // invoice
  "je", // ledger journal entry
  "sess", // session
  "kyc", // merchant verification (KYC) submission
  "cns", // customer consent record
  "lpe", // loyalty points entry
  "tier", // loyalty tier
  "seg", // customer segment
  "promo", // promotion
  "rwd", // loyalty reward
  "rdm", // loyalty redemption
  "rs", // revenue share
  "risk", // risk case
  "ref", // referral
  "com", // affiliate commission
  "con", // connector
  "ntf", // notification message
  "game", // game
  "prz", // game prize
  "play", // game play (or scratch card)
  "ivt" // invitation to an organization
] as const

export type IdPrefix = (typeof IdPrefixes)[number]

/** An id of the kind `P`: a string branded with its prefix. */
export type Id<P extends IdPrefix> = string & Brand.Brand<`Id<${P}>`>

export const ID_RANDOM_PART_LENGTH = 24

// A fixed, well-formed sample for documentation, so the OpenAPI document does not change between builds.
const SAMPLE_RANDOM_PART = "3kTMd92JxQeLp0aZ7yNcB1vW"

const idPattern = (prefix: IdPrefix): RegExp => new RegExp(`^${prefix}_[0-9A-Za-z]{${ID_RANDOM_PART_LENGTH}}$`)

/** Whether `value` is a well-formed id of the given kind (it says nothing about whether it exists). */
export const isIdOf = <P extends IdPrefix>(prefix: P, value: unknown): value is Id<P> =>
  typeof value === "string" && idPattern(prefix).test(value)

/**
 * The schema of an id of the kind `prefix`, for payloads, paths, rows and the OpenAPI document. It
 * decodes any short string (see above) to the branded type; `.make(text)` brands a string in code.
 */
export const IdOf = <P extends IdPrefix>(prefix: P) =>
  maxText(MAX_ID_LENGTH).pipe(Schema.brand(`Id<${prefix}>` as `Id<${P}>`)).annotations({
    description: `An opaque id: "${prefix}_" followed by ${ID_RANDOM_PART_LENGTH} letters and digits.`,
    examples: [`${prefix}_${SAMPLE_RANDOM_PART}` as Id<P>]
  })

/**
 * The strict schema of an id of the kind `prefix`: only the exact shape the service makes decodes.
 * For values the service itself stored and reads back, or a check that must refuse a foreign string.
 */
export const StrictIdOf = <P extends IdPrefix>(prefix: P) =>
  IdOf(prefix).pipe(
    Schema.filter((text) => idPattern(prefix).test(text), {
      message: () => `must be an id starting with "${prefix}_" followed by ${ID_RANDOM_PART_LENGTH} letters or digits`,
      jsonSchema: { pattern: idPattern(prefix).source }
    })
  )

export const PaymentId = IdOf("pay")
export type PaymentId = typeof PaymentId.Type
export const RefundId = IdOf("re")
export type RefundId = typeof RefundId.Type
export const CustomerId = IdOf("cus")
export type CustomerId = typeof CustomerId.Type
export const OrganizationId = IdOf("org")
export type OrganizationId = typeof OrganizationId.Type
export const StoreId = IdOf("str")
export type StoreId = typeof StoreId.Type
export const BranchId = IdOf("br")
export type BranchId = typeof BranchId.Type
export const ApiKeyId = IdOf("key")
export type ApiKeyId = typeof ApiKeyId.Type
export const WebhookEndpointId = IdOf("we")
export type WebhookEndpointId = typeof WebhookEndpointId.Type
export const EventId = IdOf("evt")
export type EventId = typeof EventId.Type
export const WebhookDeliveryId = IdOf("whd")
export type WebhookDeliveryId = typeof WebhookDeliveryId.Type
export const UserId = IdOf("usr")
export type UserId = typeof UserId.Type
export const PaymentLinkId = IdOf("lnk")
export type PaymentLinkId = typeof PaymentLinkId.Type
export const InvoiceId = IdOf("inv")
export type InvoiceId = typeof InvoiceId.Type
export const JournalId = IdOf("je")
export type JournalId = typeof JournalId.Type
export const RevenueShareId = IdOf("rs")
export type RevenueShareId = typeof RevenueShareId.Type
export const RiskCaseId = IdOf("risk")
export type RiskCaseId = typeof RiskCaseId.Type
export const ReferralId = IdOf("ref")
export type ReferralId = typeof ReferralId.Type
export const CommissionId = IdOf("com")
export type CommissionId = typeof CommissionId.Type
export const ConnectorId = IdOf("con")
export type ConnectorId = typeof ConnectorId.Type
export const NotificationId = IdOf("ntf")
export type NotificationId = typeof NotificationId.Type
export const SessionId = IdOf("sess")
export type SessionId = typeof SessionId.Type
export const VerificationId = IdOf("kyc")
export type VerificationId = typeof VerificationId.Type
export const ConsentRecordId = IdOf("cns")
export type ConsentRecordId = typeof ConsentRecordId.Type
export const PointsEntryId = IdOf("lpe")
export type PointsEntryId = typeof PointsEntryId.Type
export const TierId = IdOf("tier")
export const SegmentId = IdOf("seg")
export type SegmentId = typeof SegmentId.Type
export const PromotionId = IdOf("promo")
export type PromotionId = typeof PromotionId.Type
export type TierId = typeof TierId.Type
export const RewardId = IdOf("rwd")
export type RewardId = typeof RewardId.Type
export const RedemptionId = IdOf("rdm")
export type RedemptionId = typeof RedemptionId.Type
export const GameId = IdOf("game")
export type GameId = typeof GameId.Type
export const PrizeId = IdOf("prz")
export type PrizeId = typeof PrizeId.Type
export const PlayId = IdOf("play")
export type PlayId = typeof PlayId.Type
