/** What pages say beside their forms: a failure that belongs to no field, and percentages. */
import type { ConsoleFailure } from "../rpc.ts"

/** A failure of a query or an action that belongs to no field: said at the top of the card it concerns. */
export const ErrorNotice = ({ error }: { readonly error: ConsoleFailure | null | undefined }) =>
  error === null || error === undefined ? null : <div className="alert alert-error" role="alert">{error.message}</div>

/** A fraction as a percentage with one decimal ("12.5 %"); a dash when there is none. */
export const formatPercent = (fraction: number | null) => fraction === null || !Number.isFinite(fraction) ? "—" : `${(fraction * 100).toFixed(1)} %`
