/** The webhook group's handlers beyond the core ones: each a call of the webhooks service. */
import { Effect } from "effect"
import { ConsoleWebhooksRpcs, RotatedWebhookSecret } from "../../../domain/console/Webhooks.ts"
import { currentDate, addMillis } from "../../platform/Time.ts"
import { PaymentsService } from "../../payments/Service.ts"
import { SECRET_OVERLAP_MILLIS, WebhooksService } from "../../webhooks/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsoleWebhooksLive = ConsoleWebhooksRpcs.toLayer(Effect.gen(function*() {
  const webhooks = yield* WebhooksService
  const payments = yield* PaymentsService
  return ConsoleWebhooksRpcs.of({
    UpdateWebhookEndpoint: ({ id, ...changes }) => hideDefects(webhooks.update(id, changes)),
    RotateWebhookSecret: ({ id }) =>
      hideDefects(Effect.gen(function*() {
        const endpoint = yield* webhooks.rotateSecret(id)
        const previousUntil = addMillis(yield* currentDate, SECRET_OVERLAP_MILLIS)
        return new RotatedWebhookSecret({ endpoint, previous_secret_expires_at: previousUntil.toISOString() })
      })),
    // The payment first: it is what the user asked about (another tenant's is 404), then its store's deliveries.
    PaymentWebhookDeliveries: ({ id }) =>
      hideDefects(payments.retrieve(id).pipe(Effect.flatMap((payment) => webhooks.deliveriesOfPayment(payment.store_id, payment.id))))
  })
}))
