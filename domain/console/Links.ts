/**
 * The console's payment links and invoices: list, create, deactivate (the `/v1/payment-links` rules; the
 * public page's address is in each link's `url`).
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { StoreId } from "../Ids.ts"
import { CreateLink, LinkId, LinkKind, LinkListParams, PaymentLink, PaymentLinkList } from "../Links.ts"

export class ConsoleLinksRpcs extends RpcGroup.make(
  /** A store's links or invoices, newest first. */
  Rpc.make("ListLinks", {
    payload: { store_id: StoreId, kind: Schema.optional(LinkKind), cursor: LinkListParams.fields.cursor },
    success: PaymentLinkList,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  }),
  Rpc.make("CreateLink", {
    payload: { store_id: StoreId, ...CreateLink.fields },
    success: PaymentLink,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  /** Stops new payments through a link (`active: false`), or allows them again. */
  Rpc.make("SetLinkActive", {
    payload: { id: LinkId, active: Schema.Boolean },
    success: PaymentLink,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  })
).middleware(ConsoleAuthentication) {}
