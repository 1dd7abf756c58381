/**
 * The console's segment procedures: saved segments and the live preview of rules being built. Each
 * calls the service the `/dashboard/…/segments` routes call, under the same rules (an invalid rule is
 * refused naming it: `rules.2`).
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { ConsoleAuthentication } from "../Console.ts"
import { SegmentId, StoreId } from "../Ids.ts"
import { CreateSegment, PreviewRules, Segment, SegmentList, SegmentPreview, UpdateSegment } from "../Promotions.ts"
import { ConsoleLivemode, ConsolePage, EngagementErrors } from "./Customers.ts"

export class ConsoleSegmentRpcs extends RpcGroup.make(
  Rpc.make("ListSegments", {
    payload: { store_id: StoreId, ...ConsolePage },
    success: SegmentList,
    error: EngagementErrors
  }),
  Rpc.make("CreateSegment", {
    payload: { store_id: StoreId, ...CreateSegment.fields },
    success: Segment,
    error: EngagementErrors
  }),
  Rpc.make("UpdateSegment", {
    payload: { id: SegmentId, ...UpdateSegment.fields },
    success: Segment,
    error: EngagementErrors
  }),
  /** A segment a promotion still uses is refused (InvalidState). */
  Rpc.make("DeleteSegment", {
    payload: { id: SegmentId },
    success: Segment,
    error: EngagementErrors
  }),
  /** How many of the store's customers of the mode match the rules now, with a sample; saves nothing. */
  Rpc.make("PreviewSegmentRules", {
    payload: { store_id: StoreId, livemode: ConsoleLivemode, ...PreviewRules.fields },
    success: SegmentPreview,
    error: EngagementErrors
  })
).middleware(ConsoleAuthentication) {}
