/**
 * The console's webhook procedures beyond the core ones: edit an endpoint (URL, events), rotate its signing
 * secret (the previous one keeps verifying during a grace window), and the deliveries sent about one payment.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { PaymentId, WebhookEndpointId } from "../Ids.ts"
import { UpdateWebhookEndpoint, WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from "../Webhooks.ts"

/** A rotated secret, and until when deliveries are also signed with the one it replaces. */
export class RotatedWebhookSecret extends Schema.Class<RotatedWebhookSecret>("RotatedWebhookSecret")({
  endpoint: WebhookEndpointWithSecret,
  previous_secret_expires_at: Schema.String
}) {}

export class ConsoleWebhooksRpcs extends RpcGroup.make(
  Rpc.make("UpdateWebhookEndpoint", {
    payload: { id: WebhookEndpointId, ...UpdateWebhookEndpoint.fields },
    success: WebhookEndpoint,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  Rpc.make("RotateWebhookSecret", {
    payload: { id: WebhookEndpointId },
    success: RotatedWebhookSecret,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  }),
  /** The delivery attempts of the events about a payment and its refunds, on every endpoint of its store. */
  Rpc.make("PaymentWebhookDeliveries", {
    payload: { id: PaymentId },
    success: Schema.Array(WebhookDelivery),
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  })
).middleware(ConsoleAuthentication) {}
