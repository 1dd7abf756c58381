/**
 * The console's promotion procedures: drafts, the 30-day simulation, and the four-eyes workflow (submit;
 * approve or reject by an Owner who did not submit; activate, pause, end), each move in the promotion's
 * audit trail. Each calls the service the `/dashboard/…/promotions` routes call, under the same rules.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { MemberList } from "../Accounts.ts"
import { ConsoleAuthentication } from "../Console.ts"
import { OrganizationId, PromotionId, StoreId } from "../Ids.ts"
import { CreatePromotion, Promotion, PromotionList, PromotionSimulation, RejectPromotion, UpdatePromotion } from "../Promotions.ts"
import { ConsoleLivemode, ConsolePage, EngagementErrors } from "./Customers.ts"

const move = <const Tag extends string>(tag: Tag) =>
  Rpc.make(tag, { payload: { id: PromotionId }, success: Promotion, error: EngagementErrors })

export class ConsolePromotionRpcs extends RpcGroup.make(
  /** The store's promotions, newest first, each with its audit trail. */
  Rpc.make("ListPromotions", {
    payload: { store_id: StoreId, ...ConsolePage },
    success: PromotionList,
    error: EngagementErrors
  }),
  Rpc.make("GetPromotion", {
    payload: { id: PromotionId },
    success: Promotion,
    error: EngagementErrors
  }),
  /** Creates a draft (marketing.manage). */
  Rpc.make("CreatePromotion", {
    payload: { store_id: StoreId, ...CreatePromotion.fields },
    success: Promotion,
    error: EngagementErrors
  }),
  /** Changes a draft or a rejected promotion (which goes back to draft). */
  Rpc.make("UpdatePromotion", {
    payload: { id: PromotionId, ...UpdatePromotion.fields },
    success: Promotion,
    error: EngagementErrors
  }),
  Rpc.make("DeletePromotion", {
    payload: { id: PromotionId },
    success: Promotion,
    error: EngagementErrors
  }),
  /** The last 30 days replayed: eligible customers, qualifying payments, bonus points it would have cost. */
  Rpc.make("SimulatePromotion", {
    payload: { id: PromotionId, livemode: ConsoleLivemode },
    success: PromotionSimulation,
    error: EngagementErrors
  }),
  move("SubmitPromotion"),
  /** Owner only (promotion.approve), never the user who submitted it (Forbidden). */
  move("ApprovePromotion"),
  /** Owner only, never the submitter; the reason is kept on the promotion and in its audit trail. */
  Rpc.make("RejectPromotion", {
    payload: { id: PromotionId, ...RejectPromotion.fields },
    success: Promotion,
    error: EngagementErrors
  }),
  move("ActivatePromotion"),
  move("PausePromotion"),
  move("EndPromotion"),
  /** The organization's members, to name who submitted and moved a promotion or recorded a consent. */
  Rpc.make("MemberDirectory", {
    payload: { organization_id: OrganizationId },
    success: MemberList,
    error: EngagementErrors
  })
).middleware(ConsoleAuthentication) {}
