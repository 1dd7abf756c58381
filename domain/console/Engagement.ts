/**
 * The engagement half of the console: customers, loyalty, referrals, segments and promotions, one group
 * for ConsoleRpcs to merge.
 */
import { ConsoleCustomerRpcs } from "./Customers.ts"
import { ConsoleLoyaltyRpcs } from "./Loyalty.ts"
import { ConsolePromotionRpcs } from "./Promotions.ts"
import { ConsoleReferralRpcs } from "./Referrals.ts"
import { ConsoleSegmentRpcs } from "./Segments.ts"

export const ConsoleEngagementRpcs = ConsoleCustomerRpcs
  .merge(ConsoleLoyaltyRpcs)
  .merge(ConsoleReferralRpcs)
  .merge(ConsoleSegmentRpcs)
  .merge(ConsolePromotionRpcs)
