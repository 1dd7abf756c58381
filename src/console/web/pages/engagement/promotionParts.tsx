/** What the promotion pages share: status labels, who a user is, the draft form, the simulation card. */
import type { Promotion, PromotionStatus } from "../../../../../domain/Promotions.ts"
import { type ConsoleFailure, useConsoleQuery } from "../../rpc.ts"
import { Field, formatAmount, Loading } from "../../ui.tsx"
import { LoadError, SelectField } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"

export const PROMOTION_STATUS: Record<PromotionStatus, { readonly label: string; readonly badge: string }> = {
  draft: { label: "Draft", badge: "badge-pending" },
  pending_approval: { label: "Awaiting approval", badge: "badge-scanned" },
  approved: { label: "Approved", badge: "badge-paid" },
  rejected: { label: "Rejected", badge: "badge-failed" },
  active: { label: "Active", badge: "badge-paid" },
  paused: { label: "Paused", badge: "badge-refunded" },
  ended: { label: "Ended", badge: "badge-expired" }
}

export const PromotionStatusBadge = ({ status }: { readonly status: PromotionStatus }) => (
  <span className={`badge ${PROMOTION_STATUS[status].badge}`} data-status={status}>{PROMOTION_STATUS[status].label}</span>
)

/** Names of the organization's members, to say who submitted, approved and moved a promotion. */
export const useMemberNames = () => {
  const { context, store } = useWorkspace()
  const organizationId = store!.organization_id
  const members = useConsoleQuery(["members", organizationId], (client) => client.MemberDirectory({ organization_id: organizationId }))
  return (userId: string | null): string => {
    if (userId === null) return "The schedule"
    if (userId === context.me.user.id) return "You"
    const member = members.data?.data.find((candidate) => candidate.user_id === userId)
    return member === undefined ? userId : `${member.name ?? member.email} (${member.role})`
  }
}

export interface PromotionForm {
  readonly name: string
  readonly segment_id: string
  readonly bonus_points: string
  readonly min_amount: string
  readonly min_currency: "USD" | "KHR"
  readonly starts_at: string
  readonly ends_at: string
}

/** `datetime-local` text in the user's own time zone. */
const localInput = (date: Date) => {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000)
  return shifted.toISOString().slice(0, 16)
}

export const emptyPromotionForm = (): PromotionForm => {
  const start = new Date(Date.now() + 60 * 60_000)
  start.setMinutes(0, 0, 0)
  return {
    name: "",
    segment_id: "",
    bonus_points: "",
    min_amount: "",
    min_currency: "USD",
    starts_at: localInput(start),
    ends_at: localInput(new Date(start.getTime() + 30 * 24 * 3600_000))
  }
}

export const formOfPromotion = (promotion: Promotion): PromotionForm => ({
  name: promotion.name,
  segment_id: promotion.segment_id ?? "",
  bonus_points: String(promotion.bonus_points),
  min_amount: promotion.min_amount?.amount ?? "",
  min_currency: promotion.min_amount?.currency ?? "USD",
  starts_at: localInput(new Date(promotion.starts_at)),
  ends_at: localInput(new Date(promotion.ends_at))
})

/** The form as the service takes it; dates read in the user's time zone. */
export const promotionInput = (form: PromotionForm) => ({
  name: form.name.trim(),
  segment_id: form.segment_id === "" ? null : form.segment_id as never,
  bonus_points: form.bonus_points.trim() === "" ? Number.NaN : Number(form.bonus_points.trim()),
  min_amount: form.min_amount.trim() === "" ? null : { amount: form.min_amount.trim(), currency: form.min_currency },
  starts_at: new Date(form.starts_at),
  ends_at: new Date(form.ends_at)
})

export const PROMOTION_FIELDS = ["name", "segment_id", "bonus_points", "min_amount.amount", "starts_at", "ends_at"]

export const PromotionFields = (
  { error, form, onChange }: { readonly form: PromotionForm; readonly onChange: (form: PromotionForm) => void; readonly error: ConsoleFailure | null }
) => {
  const { store } = useWorkspace()
  const segments = useConsoleQuery(["segments", store!.id], (client) => client.ListSegments({ store_id: store!.id, limit: 100 }))
  const set = <K extends keyof PromotionForm>(field: K) => (value: PromotionForm[K]) => onChange({ ...form, [field]: value })
  return (
    <>
      <Field label="Name" name="name" value={form.name} onChange={set("name")} error={error} placeholder="Double-up weekend" required />
      <SelectField
        label="Who"
        name="segment_id"
        value={form.segment_id}
        onChange={set("segment_id")}
        error={error}
        options={[{ value: "", label: "Every customer" }, ...(segments.data?.data ?? []).map((segment) => ({ value: segment.id, label: `Segment: ${segment.name}` }))]}
      />
      <Field label="Bonus points per payment" name="bonus_points" value={form.bonus_points} onChange={set("bonus_points")} inputMode="numeric" error={error} placeholder="50" required />
      <div className="field-row">
        <Field label="Minimum amount (optional)" name="min_amount.amount" value={form.min_amount} onChange={set("min_amount")} inputMode="decimal" error={error} placeholder="5.00" />
        <SelectField label="Currency" name="min_amount.currency" value={form.min_currency} onChange={set("min_currency")} options={[{ value: "USD", label: "USD" }, { value: "KHR", label: "KHR" }]} />
      </div>
      <div className="field-row even">
        <Field label="Starts" name="starts_at" type="datetime-local" value={form.starts_at} onChange={set("starts_at")} error={error} required />
        <Field label="Ends" name="ends_at" type="datetime-local" value={form.ends_at} onChange={set("ends_at")} error={error} required />
      </div>
    </>
  )
}

/** The 30-day dry run of a saved promotion: who it would have reached and what it would have cost. */
export const SimulationSummary = ({ promotion }: { readonly promotion: Promotion }) => {
  const { livemode } = useWorkspace()
  const simulation = useConsoleQuery(["promotion-simulation", promotion.id, livemode, promotion.updated_at], (client) =>
    client.SimulatePromotion({ id: promotion.id, livemode }))
  if (simulation.error !== null) return <LoadError error={simulation.error} retry={() => void simulation.refetch()} />
  if (simulation.data === undefined) return <Loading label="Replaying the last 30 days…" />
  const result = simulation.data
  return (
    <div className="simulation" data-testid="simulation">
      <div className="metric"><div className="metric-label">Customers reached</div><div className="metric-value">{result.eligible_customers.toLocaleString("en-US")}</div></div>
      <div className="metric"><div className="metric-label">Qualifying payments</div><div className="metric-value">{result.qualifying_payments.toLocaleString("en-US")}</div></div>
      <div className="metric"><div className="metric-label">Bonus points</div><div className="metric-value">{result.estimated_bonus_points.toLocaleString("en-US")}</div></div>
      <p className="muted small simulation-note">
        Had it run over the last {result.window_days} days: {promotion.bonus_points} points on each payment
        {promotion.min_amount === undefined ? "" : ` of at least ${formatAmount(promotion.min_amount.amount, promotion.min_amount.currency)}`}.
      </p>
    </div>
  )
}
