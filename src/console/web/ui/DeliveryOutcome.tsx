/** A webhook delivery attempt's outcome: the receiver's status (or that it gave none) and how long it took. */
import type { WebhookDelivery } from "../../../../domain/Webhooks.ts"

export const DeliveryOutcome = ({ delivery }: { readonly delivery: WebhookDelivery }) => (
  <>
    {delivery.status_code !== null && delivery.status_code < 300
      ? <span className="badge badge-paid">{delivery.status_code} OK</span>
      : <span className="badge badge-failed" title={delivery.error ?? undefined}>{delivery.status_code ?? "No answer"}</span>}
    <span className="muted small"> {delivery.duration_ms} ms</span>
  </>
)
