/** A customer named as people know them (name, else e-mail or external id), linking to their page. */
import type { CustomerId } from "../../../../../domain/Ids.ts"
import { Link } from "../../router.tsx"
import { useConsoleQuery } from "../../rpc.ts"

export const CustomerName = ({ id }: { readonly id: string }) => {
  const customer = useConsoleQuery(["customer", id], (client) => client.CustomerOverview({ id: id as CustomerId }))
  const data = customer.data
  const name = data === undefined
    ? undefined
    : data.erased_at !== null
    ? "Erased customer"
    : data.name ?? data.email ?? data.external_id ?? undefined
  return <Link to={`/customers/${id}`}>{name === undefined ? <span className="id-text">{id}</span> : name}</Link>
}
