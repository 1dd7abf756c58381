/**
 * The customer 360: who they are, their points and tier (live), what they paid per currency, their recent
 * payments, their referral code with its QR, the points ledger with manual adjustments and counter
 * redemptions, their contact preferences with the consent log, and erasure.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { Customer360 } from "../../../../../domain/Customers.ts"
import type { CustomerId } from "../../../../../domain/Ids.ts"
import type { PointsEntryType } from "../../../../../domain/Loyalty.ts"
import { Link, navigate } from "../../router.tsx"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery, useLiveFeed } from "../../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatAmount, formatTime, Loading, newIdempotencyKey, StatusBadge } from "../../ui.tsx"
import { CheckField, LoadError, SelectField } from "../../ui/Fields.tsx"
import { usePermission } from "../../permissions.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { useMemberNames } from "./promotionParts.tsx"

export const ENTRY_LABELS: Record<PointsEntryType, string> = {
  earn: "Earned on a payment",
  reverse: "Reversed (refund)",
  redeem: "Redeemed",
  redeem_cancel: "Redemption cancelled",
  adjust: "Manual adjustment",
  referral: "Referral bonus",
  promotion: "Promotion bonus",
  game: "Game prize"
}

const customerName = (customer: Customer360) =>
  customer.erased_at !== null ? "Erased customer" : customer.name ?? customer.email ?? customer.external_id ?? customer.id

export const CustomerDetailPage = ({ id }: { readonly id: string }) => {
  const customerId = id as CustomerId
  const queryClient = useQueryClient()
  const overview = useConsoleQuery(["customer", id], (client) => client.CustomerOverview({ id: customerId }))
  const points = useConsoleQuery(["customer-points", id], (client) => client.CustomerPoints({ id: customerId, limit: 20 }))
  const [dialog, setDialog] = useState<"adjust" | "redeem" | "erase" | undefined>(undefined)

  // Points arrive as payments are paid, games played, referrals converted: the page follows the wallet.
  useLiveFeed(`wallet:${id}`, (client) => client.WalletFeed({ customer_id: customerId }), () => {
    void queryClient.invalidateQueries({ queryKey: ["customer", id] })
    void queryClient.invalidateQueries({ queryKey: ["customer-points", id] })
  })

  if (overview.isPending) return <div className="page"><Loading /></div>
  if (overview.error !== null) {
    return (
      <div className="page">
        <p><Link to="/customers">← Customers</Link></p>
        <LoadError error={overview.error} retry={() => void overview.refetch()} />
      </div>
    )
  }
  const customer = overview.data
  const erased = customer.erased_at !== null
  const metrics = customer.metrics
  return (
    <div className="page">
      <p className="breadcrumb"><Link to="/customers">← Customers</Link></p>
      <div className="page-header">
        <div>
          <p className="muted mono">{customer.id}</p>
          <h1>{customerName(customer)} {erased ? <span className="badge badge-expired">Erased</span> : null}</h1>
          {erased ? <p className="muted">Personal data erased {formatTime(customer.erased_at)}. Payments and points stay.</p> : (
            <p className="muted">
              {[customer.email, customer.phone, customer.external_id === null ? null : `External id ${customer.external_id}`].filter((part) => part !== null).join(" · ") || "No contact details"}
            </p>
          )}
        </div>
        <div className="actions">
          <PermittedButton permission="customer.write" onClick={() => setDialog("redeem")}>Redeem reward</PermittedButton>
          <PermittedButton permission="customer.write" onClick={() => setDialog("adjust")}>Adjust points</PermittedButton>
          {erased ? null : (
            <PermittedButton permission="customer.erase" kind="danger" onClick={() => setDialog("erase")}>
              Erase personal data
            </PermittedButton>
          )}
        </div>
      </div>
      <PermissionNote permission="customer.write" />

      <div className="metrics" aria-label="Loyalty and lifetime figures">
        <div className="metric"><div className="metric-label">Points balance</div><div className="metric-value" data-testid="points-balance">{customer.points_balance.toLocaleString("en-US")}</div></div>
        <div className="metric"><div className="metric-label">Tier</div><div className="metric-value">{customer.tier?.name ?? "None"}</div><div className="muted small">{customer.lifetime_points.toLocaleString("en-US")} lifetime points</div></div>
        <div className="metric"><div className="metric-label">Paid payments</div><div className="metric-value">{metrics.payments_count}</div><div className="muted small">Last {formatTime(metrics.last_payment_at)}</div></div>
        {(["USD", "KHR"] as const).map((currency) => (
          <div className="metric" key={currency}>
            <div className="metric-label">Lifetime value ({currency})</div>
            <div className="metric-value">{formatAmount(metrics.lifetime_value[currency], currency)}</div>
            <div className="muted small">Refunded {formatAmount(metrics.refunded[currency], currency)}</div>
          </div>
        ))}
      </div>

      <div className="detail-grid">
        <section className="card table-card" aria-labelledby="recent-title">
          <div className="card-header card-pad"><h2 id="recent-title">Recent payments</h2></div>
          {customer.recent_payments.length === 0
            ? <Empty title="No payments yet"><p>Payments that name this customer appear here.</p></Empty>
            : (
              <table className="table">
                <caption className="visually-hidden">The customer's newest payments</caption>
                <thead><tr><th scope="col">Amount</th><th scope="col">Status</th><th scope="col" className="hide-narrow">Created</th></tr></thead>
                <tbody>
                  {customer.recent_payments.map((payment) => (
                    <tr key={payment.id}>
                      <td className="amount"><Link to={`/payments/${payment.id}`}>{formatAmount(payment.amount, payment.currency)}</Link></td>
                      <td><StatusBadge status={payment.status} /></td>
                      <td className="hide-narrow nowrap">{formatTime(payment.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
        </section>
        <ReferralCard customer={customer} />
        <section className="card table-card" aria-labelledby="ledger-title">
          <div className="card-header card-pad"><h2 id="ledger-title">Points ledger</h2></div>
          {points.isPending ? <Loading /> : points.error !== null ? <LoadError error={points.error} retry={() => void points.refetch()} /> : points.data.entries.data.length === 0
            ? <Empty title="No points yet"><p>Paid payments earn points while the loyalty program is on.</p></Empty>
            : (
              <table className="table">
                <caption className="visually-hidden">Points entries, newest first</caption>
                <thead><tr><th scope="col">Entry</th><th scope="col">Points</th><th scope="col" className="hide-narrow">Balance after</th><th scope="col" className="hide-narrow">When</th></tr></thead>
                <tbody>
                  {points.data.entries.data.map((entry) => (
                    <tr key={entry.id} data-entry-type={entry.type}>
                      <td>{ENTRY_LABELS[entry.type]}{entry.reason === undefined ? null : <div className="muted small">{entry.reason}</div>}</td>
                      <td className={`numeric ${entry.points < 0 ? "negative" : "positive"}`}>{entry.points > 0 ? "+" : ""}{entry.points.toLocaleString("en-US")}</td>
                      <td className="hide-narrow numeric">{entry.balance_after.toLocaleString("en-US")}</td>
                      <td className="hide-narrow nowrap">{formatTime(entry.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
        </section>
      </div>
      <PreferencesCard customer={customer} />
      <AdjustDialog open={dialog === "adjust"} onClose={() => setDialog(undefined)} customerId={customerId} />
      <RedeemDialog open={dialog === "redeem"} onClose={() => setDialog(undefined)} customer={customer} />
      <EraseDialog open={dialog === "erase"} onClose={() => setDialog(undefined)} customer={customer} />
    </div>
  )
}

const ReferralCard = ({ customer }: { readonly customer: Customer360 }) => {
  const queryClient = useQueryClient()
  const [wanted, setWanted] = useState(false)
  const show = customer.erased_at === null && (customer.referral_code !== null || wanted)
  const qr = useConsoleQuery(["referral-qr", customer.id], (client) => client.CustomerReferralQr({ id: customer.id }), { enabled: show })
  useEffect(() => {
    if (wanted && qr.data !== undefined) void queryClient.invalidateQueries({ queryKey: ["customer", customer.id] })
  }, [wanted, qr.data])
  return (
    <section className="card qr-card" aria-labelledby="referral-title">
      <h2 id="referral-title">Referral code</h2>
      {customer.erased_at !== null
        ? <p className="muted">Erased customers keep no referral code.</p>
        : !show
        ? (
          <>
            <p className="muted">This customer has no referral code yet. Make one to let them invite friends.</p>
            <Button onClick={() => setWanted(true)}>Create referral code</Button>
          </>
        )
        : qr.isPending
        ? <Loading />
        : qr.error !== null
        ? <LoadError error={qr.error} retry={() => void qr.refetch()} />
        : (
          <>
            <img className="qr small-qr" src={qr.data.png_data_url} width={200} height={200} alt={`QR code of the referral link ${qr.data.share_url}`} />
            <p className="referral-code mono" data-testid="referral-code">{qr.data.code}</p>
            <a className="break small" href={qr.data.share_url} target="_blank" rel="noopener noreferrer">{qr.data.share_url}</a>
          </>
        )}
    </section>
  )
}

const PURPOSES = [
  { key: "email", label: "E-mail" },
  { key: "sms", label: "SMS" },
  { key: "telegram", label: "Telegram" },
  { key: "marketing", label: "Marketing offers" }
] as const
type Purpose = (typeof PURPOSES)[number]["key"]

const PreferencesCard = ({ customer }: { readonly customer: Customer360 }) => {
  const queryClient = useQueryClient()
  const preferences = useConsoleQuery(["customer-preferences", customer.id], (client) => client.CustomerPreferences({ id: customer.id }))
  const log = useConsoleQuery(["consent-log", customer.id], (client) => client.CustomerConsentLog({ id: customer.id, limit: 50 }))
  const [flags, setFlags] = useState<Record<Purpose, boolean> | undefined>(undefined)
  const [source, setSource] = useState("")
  const [policyVersion, setPolicyVersion] = useState("")
  const [saved, setSaved] = useState(false)
  useEffect(() => {
    if (preferences.data !== undefined) {
      const { email, marketing, sms, telegram } = preferences.data
      setFlags({ email, sms, telegram, marketing })
    }
  }, [preferences.data])
  const save = useConsoleMutation((client, _: void) =>
    client.SetCustomerPreferences({
      id: customer.id,
      ...flags!,
      ...(source.trim() === "" ? {} : { source: source.trim() }),
      ...(policyVersion.trim() === "" ? {} : { policy_version: policyVersion.trim() })
    }), {
    onSuccess: () => {
      setSaved(true)
      void queryClient.invalidateQueries({ queryKey: ["customer-preferences", customer.id] })
      void queryClient.invalidateQueries({ queryKey: ["consent-log", customer.id] })
    }
  })
  const erased = customer.erased_at !== null
  const writable = usePermission("customer.write").allowed && !erased
  const memberName = useMemberNames()
  const actorName = (actor: { readonly type: string; readonly id: string }) =>
    actor.type === "api_key" ? `API key ${actor.id}` : memberName(actor.id)
  const error: ConsoleFailure | null = save.error
  return (
    <section className="card" aria-labelledby="preferences-title">
      <div className="card-header">
        <h2 id="preferences-title">Contact preferences and consent</h2>
      </div>
      {preferences.error !== null ? <LoadError error={preferences.error} retry={() => void preferences.refetch()} /> : flags === undefined ? <Loading /> : (
        <form onSubmit={(event) => {
          event.preventDefault()
          setSaved(false)
          save.mutate()
        }} noValidate>
          <FormError error={error} fields={["source", "policy_version"]} />
          <fieldset className="events">
            <legend>The customer agrees to be contacted by</legend>
            <div className="event-grid">
              {PURPOSES.map((purpose) => (
                <CheckField
                  key={purpose.key}
                  label={purpose.label}
                  checked={flags[purpose.key]}
                  disabled={!writable}
                  onChange={(checked) => {
                    setSaved(false)
                    setFlags({ ...flags, [purpose.key]: checked })
                  }}
                />
              ))}
            </div>
          </fieldset>
          <div className="field-row even">
            <Field label="Source (optional)" name="source" value={source} onChange={setSource} error={error} placeholder="dashboard" hint="Where the customer said so: pos, phone, form…" />
            <Field label="Policy version (optional)" name="policy_version" value={policyVersion} onChange={setPolicyVersion} error={error} placeholder="2026-01" />
          </div>
          <div className="actions">
            <PermittedButton permission="customer.write" kind="primary" type="submit" busy={save.isPending} disabled={erased}>Save preferences</PermittedButton>
            {erased ? <span className="muted">An erased customer's preferences cannot change.</span> : null}
            {saved ? <span className="muted" role="status">Saved; each change is in the consent log below.</span> : null}
          </div>
        </form>
      )}
      <h3 className="subheading">Consent log</h3>
      {log.isPending ? <Loading /> : log.error !== null ? <LoadError error={log.error} retry={() => void log.refetch()} /> : log.data.data.length === 0
        ? <p className="muted">No consent given or withdrawn yet.</p>
        : (
          <div className="table-scroll">
            <table className="table">
              <caption className="visually-hidden">Consent changes, newest first</caption>
              <thead><tr><th scope="col">Change</th><th scope="col">Who</th><th scope="col" className="hide-narrow">Source</th><th scope="col" className="hide-narrow">Policy</th><th scope="col">When</th></tr></thead>
              <tbody>
                {log.data.data.map((event) => (
                  <tr key={event.id}>
                    <td>{PURPOSES.find((purpose) => purpose.key === event.purpose)?.label} <span className={`badge ${event.granted ? "badge-paid" : "badge-expired"}`}>{event.granted ? "Given" : "Withdrawn"}</span></td>
                    <td>{actorName(event.actor)}</td>
                    <td className="hide-narrow">{event.source ?? "—"}</td>
                    <td className="hide-narrow">{event.policy_version ?? "—"}</td>
                    <td className="nowrap">{formatTime(event.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
    </section>
  )
}

const AdjustDialog = ({ customerId, onClose, open }: { readonly open: boolean; readonly onClose: () => void; readonly customerId: CustomerId }) => {
  const queryClient = useQueryClient()
  const [direction, setDirection] = useState<"credit" | "debit">("credit")
  const [points, setPoints] = useState("")
  const [reason, setReason] = useState("")
  const adjust = useConsoleMutation((client, _: void) =>
    client.AdjustPoints({ id: customerId, points: (direction === "debit" ? -1 : 1) * Number(points.trim() === "" ? Number.NaN : points), reason: reason.trim() }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["customer", customerId] })
      void queryClient.invalidateQueries({ queryKey: ["customer-points", customerId] })
      onClose()
    }
  })
  useEffect(() => {
    if (open) {
      setDirection("credit")
      setPoints("")
      setReason("")
      adjust.reset()
    }
  }, [open])
  const error = adjust.error
  return (
    <Dialog title="Adjust points" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        adjust.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={error} fields={["points", "reason"]} />
          <SelectField label="Adjustment" name="direction" value={direction} onChange={setDirection} options={[{ value: "credit", label: "Add points" }, { value: "debit", label: "Remove points" }]} />
          <Field label="Points" name="points" value={points} onChange={setPoints} inputMode="numeric" error={error} required autoFocus />
          <Field label="Reason" name="reason" value={reason} onChange={setReason} error={error} required hint="Required: kept on the entry, e.g. “Goodwill for a late order”." />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={adjust.isPending}>Adjust points</Button>
        </footer>
      </form>
    </Dialog>
  )
}

const RedeemDialog = ({ customer, onClose, open }: { readonly open: boolean; readonly onClose: () => void; readonly customer: Customer360 }) => {
  const queryClient = useQueryClient()
  const rewards = useConsoleQuery(["rewards", customer.store_id], (client) => client.ListRewards({ store_id: customer.store_id, limit: 100 }), { enabled: open })
  const active = rewards.data?.data.filter((reward) => reward.active) ?? []
  const [rewardId, setRewardId] = useState("")
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey)
  const redeem = useConsoleMutation((client, _: void) =>
    client.RedeemReward({ customer_id: customer.id, reward_id: rewardId as never, idempotency_key: idempotencyKey }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["customer", customer.id] })
      void queryClient.invalidateQueries({ queryKey: ["customer-points", customer.id] })
      void queryClient.invalidateQueries({ queryKey: ["redemptions"] })
      void queryClient.invalidateQueries({ queryKey: ["rewards"] })
      onClose()
      navigate("/loyalty#redemptions")
    }
  })
  useEffect(() => setIdempotencyKey(newIdempotencyKey()), [rewardId])
  useEffect(() => {
    if (open) redeem.reset()
  }, [open])
  useEffect(() => {
    if (active.length > 0 && !active.some((reward) => reward.id === rewardId)) setRewardId(active[0]!.id)
  }, [active.length])
  const chosen = active.find((reward) => reward.id === rewardId)
  const short = chosen !== undefined && chosen.points_cost > customer.points_balance
  return (
    <Dialog title="Redeem a reward" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        redeem.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={redeem.error} fields={["reward_id"]} />
          <p>Balance: <strong>{customer.points_balance.toLocaleString("en-US")} points</strong></p>
          {rewards.isPending ? <Loading /> : active.length === 0
            ? <p className="muted">No active reward. <Link to="/loyalty">Create one on the Loyalty page.</Link></p>
            : (
              <SelectField
                label="Reward"
                name="reward_id"
                value={rewardId}
                onChange={setRewardId}
                error={redeem.error}
                options={active.map((reward) => ({
                  value: reward.id,
                  label: `${reward.name} — ${reward.points_cost.toLocaleString("en-US")} points${reward.stock === null ? "" : ` (${reward.stock} left)`}`
                }))}
                hint={short ? "More points than the customer has." : "The points are taken now; cancel the redemption to give them back."}
              />
            )}
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={redeem.isPending} disabled={chosen === undefined || short}>Redeem</Button>
        </footer>
      </form>
    </Dialog>
  )
}

const EraseDialog = ({ customer, onClose, open }: { readonly open: boolean; readonly onClose: () => void; readonly customer: Customer360 }) => {
  const queryClient = useQueryClient()
  const [understood, setUnderstood] = useState(false)
  const erase = useConsoleMutation((client, _: void) => client.EraseCustomer({ id: customer.id }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["customer", customer.id] })
      void queryClient.invalidateQueries({ queryKey: ["customer-preferences", customer.id] })
      void queryClient.invalidateQueries({ queryKey: ["consent-log", customer.id] })
      void queryClient.invalidateQueries({ queryKey: ["customers"] })
      onClose()
    }
  })
  useEffect(() => {
    if (open) {
      setUnderstood(false)
      erase.reset()
    }
  }, [open])
  return (
    <Dialog title="Erase personal data" open={open} onClose={onClose}>
      <div className="dialog-body">
        <FormError error={erase.error} fields={[]} />
        <p>This answers the customer's right to erasure. It cannot be undone.</p>
        <div className="erase-lists">
          <div>
            <h3 className="subheading">Removed</h3>
            <ul>
              <li>E-mail, name, phone and external id</li>
              <li>Your metadata on the customer</li>
              <li>Every consent (withdrawn), and the consent log's sources and policy versions</li>
              <li>Their wallet, game and scratch-card links</li>
            </ul>
          </div>
          <div>
            <h3 className="subheading">Kept</h3>
            <ul>
              <li>Payments and refunds</li>
              <li>The ledger</li>
              <li>Points, lifetime figures and the consent log's entries</li>
            </ul>
          </div>
        </div>
        <CheckField label="I understand the personal data is gone for good" checked={understood} onChange={setUnderstood} />
      </div>
      <footer className="dialog-footer">
        <Button onClick={onClose}>Cancel</Button>
        <Button kind="danger" busy={erase.isPending} disabled={!understood} onClick={() => erase.mutate()}>Erase personal data</Button>
      </footer>
    </Dialog>
  )
}
