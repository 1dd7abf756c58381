/**
 * A payment named as the merchant knows it — their own reference and the amount — linking to its page,
 * with the payment's id after it, smaller, for a search or a support request. Shares the payment page's
 * query, so a payment already opened is not asked for again.
 */
import type { PaymentId } from "../../../../domain/Ids.ts"
import { Link } from "../router.tsx"
import { useConsoleQuery } from "../rpc.ts"
import { formatAmount } from "../ui.tsx"

export const PaymentName = ({ id, prefix }: { readonly id: string; readonly prefix?: string }) => {
  const detail = useConsoleQuery(["payment", id], (client) => client.PaymentDetail({ id: id as PaymentId }))
  const payment = detail.data?.payment
  const name = payment === undefined
    ? undefined
    : [payment.reference_id, formatAmount(payment.amount, payment.currency)].filter((part) => part !== null).join(" · ")
  return (
    <span className="named">
      <Link to={`/payments/${id}`}>{prefix === undefined ? null : `${prefix} `}{name ?? <span className="id-text">{id}</span>}</Link>
      {name === undefined ? null : <span className="id-text muted"> {id}</span>}
    </span>
  )
}
