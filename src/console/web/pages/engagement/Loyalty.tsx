/**
 * The store's loyalty program: earning on or off and the points per unit of each currency, what the
 * points customers hold are worth (the liability), tiers, rewards (stock, deactivate) and redemptions
 * (fulfil, cancel).
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { Redemption, Reward, Tier } from "../../../../../domain/Loyalty.ts"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatAmount, formatTime, Loading } from "../../ui.tsx"
import { CheckField, LoadError, SelectField } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"
import { CustomerName } from "./CustomerName.tsx"
import { usePermission } from "../../permissions.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { useDebounced } from "./useDebounced.ts"

const toInt = (text: string) => (text.trim() === "" ? Number.NaN : Number(text.trim()))

export const LoyaltyPage = () => {
  useEffect(() => {
    if (window.location.hash !== "") document.getElementById(window.location.hash.slice(1))?.scrollIntoView()
  }, [])
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Loyalty</h1>
          <p className="muted">Customers earn points on paid payments and spend them on rewards.</p>
        </div>
      </div>
      <PermissionNote permission="marketing.manage" />
      <div className="two-columns">
        <ProgramCard />
        <LiabilityCard />
      </div>
      <TiersCard />
      <RewardsCard />
      <RedemptionsCard />
    </div>
  )
}

const ProgramCard = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const program = useConsoleQuery(["loyalty-program", storeId], (client) => client.LoyaltyProgram({ store_id: storeId }))
  const [form, setForm] = useState({ active: false, USD: "", KHR: "" })
  const [saved, setSaved] = useState(false)
  useEffect(() => {
    if (program.data !== undefined) setForm({ active: program.data.active, ...program.data.points_per_unit })
  }, [program.data])
  const save = useConsoleMutation((client, _: void) =>
    client.ConfigureLoyalty({ store_id: storeId, active: form.active, points_per_unit: { USD: form.USD.trim(), KHR: form.KHR.trim() } }), {
    onSuccess: (updated) => {
      setSaved(true)
      queryClient.setQueryData(["loyalty-program", storeId], updated)
    }
  })
  const writable = usePermission("marketing.manage").allowed
  const error: ConsoleFailure | null = save.error
  return (
    <section className="card" aria-labelledby="program-title">
      <div className="card-header">
        <h2 id="program-title">Program</h2>
        {program.data === undefined ? null : <span className={`badge ${program.data.active ? "badge-paid" : "badge-expired"}`}>{program.data.active ? "Earning on" : "Earning off"}</span>}
      </div>
      {program.error !== null ? <LoadError error={program.error} retry={() => void program.refetch()} /> : program.isPending ? <Loading /> : (
        <form onSubmit={(event) => {
          event.preventDefault()
          setSaved(false)
          save.mutate()
        }} noValidate>
          <FormError error={error} fields={["points_per_unit.USD", "points_per_unit.KHR"]} />
          <CheckField label="Paid payments earn points" checked={form.active} disabled={!writable} onChange={(active) => setForm({ ...form, active })} hint="Redemptions stay open either way." />
          <div className="field-row even">
            <Field label="Points per 1 USD" name="points_per_unit.USD" value={form.USD} onChange={(USD) => setForm({ ...form, USD })} inputMode="decimal" error={error} />
            <Field label="Points per 1 KHR" name="points_per_unit.KHR" value={form.KHR} onChange={(KHR) => setForm({ ...form, KHR })} inputMode="decimal" error={error} />
          </div>
          <p className="field-hint">Fractions of a point are rounded down. A tier's multiplier applies on top.</p>
          <div className="actions">
            <PermittedButton permission="marketing.manage" kind="primary" type="submit" busy={save.isPending}>Save program</PermittedButton>
            {saved ? <span className="muted" role="status">Saved.</span> : null}
          </div>
        </form>
      )}
    </section>
  )
}

const LiabilityCard = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const [pointValue, setPointValue] = useState("0.01")
  const [currency, setCurrency] = useState<"USD" | "KHR">("USD")
  const value = useDebounced(pointValue.trim())
  const liability = useConsoleQuery(["loyalty-liability", storeId, livemode, value, currency], (client) =>
    client.LoyaltyLiability({ store_id: storeId, livemode, point_value: value, currency }))
  return (
    <section className="card" aria-labelledby="liability-title">
      <h2 id="liability-title">Liability</h2>
      <p className="muted">What the points your customers hold are worth, if every point were spent.</p>
      <div className="field-row even">
        <Field label="One point is worth" name="point_value" value={pointValue} onChange={setPointValue} inputMode="decimal" error={liability.error} />
        <SelectField label="Currency" name="currency" value={currency} onChange={setCurrency} options={[{ value: "USD", label: "USD" }, { value: "KHR", label: "KHR" }]} />
      </div>
      {liability.data === undefined ? (liability.isPending ? <Loading /> : null) : (
        <div className="big-figure" role="status">
          <span className="metric-value" data-testid="liability">{formatAmount(liability.data.amount, liability.data.currency)}</span>
          <span className="muted">{liability.data.outstanding_points.toLocaleString("en-US")} points outstanding</span>
        </div>
      )}
    </section>
  )
}

const TiersCard = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const tiers = useConsoleQuery(["tiers", storeId], (client) => client.ListTiers({ store_id: storeId, limit: 100 }))
  const [form, setForm] = useState({ name: "", threshold: "", earn_multiplier: "1" })
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["tiers", storeId] })
  const create = useConsoleMutation((client, _: void) =>
    client.CreateTier({ store_id: storeId, name: form.name.trim(), threshold: toInt(form.threshold), earn_multiplier: form.earn_multiplier.trim() }), {
    onSuccess: () => {
      setForm({ name: "", threshold: "", earn_multiplier: "1" })
      refresh()
    }
  })
  const remove = useConsoleMutation((client, id: string) => client.DeleteTier({ id: id as never }), { onSuccess: refresh })
  const [editing, setEditing] = useState<Tier | undefined>(undefined)
  const writable = usePermission("marketing.manage").allowed
  const sorted = [...(tiers.data?.data ?? [])].sort((a, b) => a.threshold - b.threshold)
  return (
    <section className="card" aria-labelledby="tiers-title">
      <h2 id="tiers-title">Tiers</h2>
      <p className="muted">A customer is in the highest tier whose threshold their lifetime points reach.</p>
      {tiers.error !== null ? <LoadError error={tiers.error} retry={() => void tiers.refetch()} /> : null}
      {remove.error !== null ? <div className="alert alert-error" role="alert">{remove.error.message}</div> : null}
      {tiers.isPending ? <Loading /> : sorted.length === 0 ? <p className="muted">No tiers: every customer earns at the program's rate.</p> : (
        <div className="table-scroll"><table className="table">
          <caption className="visually-hidden">Tiers by threshold</caption>
          <thead><tr><th scope="col">Tier</th><th scope="col">From</th><th scope="col">Multiplier</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {sorted.map((tier) => (
              <tr key={tier.id}>
                <td>{tier.name}</td>
                <td className="numeric">{tier.threshold.toLocaleString("en-US")}</td>
                <td className="numeric">×{tier.earn_multiplier}</td>
                <td className="row-actions">
                  {writable
                    ? (
                      <>
                        <Button kind="ghost" onClick={() => setEditing(tier)}>Edit<span className="visually-hidden"> tier {tier.name}</span></Button>
                        <Button kind="ghost" busy={remove.isPending} onClick={() => remove.mutate(tier.id)}>Delete<span className="visually-hidden"> tier {tier.name}</span></Button>
                      </>
                    )
                    : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table></div>
      )}
      {writable ? (
        <form className="inline-form" aria-label="Add a tier" onSubmit={(event) => {
          event.preventDefault()
          create.mutate()
        }} noValidate>
          <FormError error={create.error} fields={["name", "threshold", "earn_multiplier"]} />
          <div className="field-row even">
            <Field label="Tier name" name="name" value={form.name} onChange={(name) => setForm({ ...form, name })} error={create.error} placeholder="Gold" />
            <Field label="Threshold" name="threshold" value={form.threshold} onChange={(threshold) => setForm({ ...form, threshold })} inputMode="numeric" error={create.error} placeholder="1000" />
            <Field label="Multiplier" name="earn_multiplier" value={form.earn_multiplier} onChange={(earn_multiplier) => setForm({ ...form, earn_multiplier })} inputMode="decimal" error={create.error} />
          </div>
          <div><Button type="submit" busy={create.isPending}>Add tier</Button></div>
        </form>
      ) : null}
      <TierDialog tier={editing} onClose={() => setEditing(undefined)} />
    </section>
  )
}

const TierDialog = ({ onClose, tier }: { readonly tier: Tier | undefined; readonly onClose: () => void }) => {
  const queryClient = useQueryClient()
  const [form, setForm] = useState({ name: "", threshold: "", earn_multiplier: "" })
  const update = useConsoleMutation((client, _: void) =>
    client.UpdateTier({ id: tier!.id, name: form.name.trim(), threshold: toInt(form.threshold), earn_multiplier: form.earn_multiplier.trim() }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["tiers"] })
      onClose()
    }
  })
  useEffect(() => {
    if (tier !== undefined) {
      setForm({ name: tier.name, threshold: String(tier.threshold), earn_multiplier: tier.earn_multiplier })
      update.reset()
    }
  }, [tier])
  return (
    <Dialog title={`Edit tier ${tier?.name ?? ""}`} open={tier !== undefined} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        update.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={update.error} fields={["name", "threshold", "earn_multiplier"]} />
          <Field label="Tier name" name="name" value={form.name} onChange={(name) => setForm({ ...form, name })} error={update.error} />
          <Field label="Threshold (lifetime points)" name="threshold" value={form.threshold} onChange={(threshold) => setForm({ ...form, threshold })} inputMode="numeric" error={update.error} />
          <Field label="Earn multiplier" name="earn_multiplier" value={form.earn_multiplier} onChange={(earn_multiplier) => setForm({ ...form, earn_multiplier })} inputMode="decimal" error={update.error} hint="Points a payment earns in this tier are multiplied by it, e.g. 1.5." />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={update.isPending}>Save tier</Button>
        </footer>
      </form>
    </Dialog>
  )
}

const RewardsCard = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const rewards = useConsoleQuery(["rewards", storeId], (client) => client.ListRewards({ store_id: storeId, limit: 100 }))
  const [creating, setCreating] = useState(false)
  const [stocking, setStocking] = useState<Reward | undefined>(undefined)
  const toggle = useConsoleMutation((client, reward: Reward) => client.UpdateReward({ id: reward.id, active: !reward.active }), {
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["rewards", storeId] })
  })
  const writable = usePermission("marketing.manage").allowed
  return (
    <section className="card table-card" aria-labelledby="rewards-title">
      <div className="card-header card-pad">
        <div>
          <h2 id="rewards-title">Rewards</h2>
          <p className="muted">What customers spend points on. Redeem one for a customer from their page.</p>
        </div>
        <PermittedButton permission="marketing.manage" onClick={() => setCreating(true)}>New reward</PermittedButton>
      </div>
      {rewards.error !== null ? <LoadError error={rewards.error} retry={() => void rewards.refetch()} /> : null}
      {toggle.error !== null ? <div className="alert alert-error" role="alert">{toggle.error.message}</div> : null}
      {rewards.isPending ? <Loading /> : rewards.data === undefined || rewards.data.data.length === 0
        ? <Empty title="No rewards yet"><p>Create a reward, such as a free coffee for 500 points.</p></Empty>
        : (
          <table className="table">
            <caption className="visually-hidden">Rewards</caption>
            <thead><tr><th scope="col">Reward</th><th scope="col">Cost</th><th scope="col">Stock</th><th scope="col">Status</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {rewards.data.data.map((reward) => (
                <tr key={reward.id} data-reward={reward.name}>
                  <td><strong>{reward.name}</strong>{reward.description === null ? null : <div className="muted small">{reward.description}</div>}</td>
                  <td className="numeric nowrap">{reward.points_cost.toLocaleString("en-US")} pts</td>
                  <td className="numeric" data-testid="reward-stock">{reward.stock === null ? "Unlimited" : reward.stock.toLocaleString("en-US")}</td>
                  <td><span className={`badge ${reward.active ? "badge-paid" : "badge-expired"}`}>{reward.active ? "Active" : "Inactive"}</span></td>
                  <td className="row-actions">
                    {writable
                      ? (
                        <>
                          <Button kind="ghost" onClick={() => setStocking(reward)}>Stock<span className="visually-hidden"> of {reward.name}</span></Button>
                          <Button kind="ghost" busy={toggle.isPending} onClick={() => toggle.mutate(reward)}>{reward.active ? "Deactivate" : "Activate"}<span className="visually-hidden"> {reward.name}</span></Button>
                        </>
                      )
                      : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      <RewardDialog open={creating} onClose={() => setCreating(false)} />
      <StockDialog reward={stocking} onClose={() => setStocking(undefined)} />
    </section>
  )
}

const RewardDialog = ({ onClose, open }: { readonly open: boolean; readonly onClose: () => void }) => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const empty = { name: "", description: "", points_cost: "", stock: "" }
  const [form, setForm] = useState(empty)
  const create = useConsoleMutation((client, _: void) =>
    client.CreateReward({
      store_id: storeId,
      name: form.name.trim(),
      ...(form.description.trim() === "" ? {} : { description: form.description.trim() }),
      points_cost: toInt(form.points_cost),
      stock: form.stock.trim() === "" ? null : toInt(form.stock)
    }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["rewards", storeId] })
      onClose()
    }
  })
  useEffect(() => {
    if (open) {
      setForm(empty)
      create.reset()
    }
  }, [open])
  const set = (field: keyof typeof empty) => (value: string) => setForm((previous) => ({ ...previous, [field]: value }))
  return (
    <Dialog title="New reward" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={create.error} fields={Object.keys(empty)} />
          <Field label="Name" name="name" value={form.name} onChange={set("name")} error={create.error} placeholder="Free iced latte" required autoFocus />
          <Field label="Description (optional)" name="description" value={form.description} onChange={set("description")} error={create.error} />
          <div className="field-row even">
            <Field label="Cost in points" name="points_cost" value={form.points_cost} onChange={set("points_cost")} inputMode="numeric" error={create.error} required />
            <Field label="Stock (optional)" name="stock" value={form.stock} onChange={set("stock")} inputMode="numeric" error={create.error} hint="Empty: unlimited." />
          </div>
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Create reward</Button>
        </footer>
      </form>
    </Dialog>
  )
}

const StockDialog = ({ onClose, reward }: { readonly reward: Reward | undefined; readonly onClose: () => void }) => {
  const queryClient = useQueryClient()
  const [stock, setStock] = useState("")
  const update = useConsoleMutation((client, _: void) =>
    client.UpdateReward({ id: reward!.id, stock: stock.trim() === "" ? null : toInt(stock) }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["rewards"] })
      onClose()
    }
  })
  useEffect(() => {
    if (reward !== undefined) {
      setStock(reward.stock === null ? "" : String(reward.stock))
      update.reset()
    }
  }, [reward])
  return (
    <Dialog title={`Stock of ${reward?.name ?? "reward"}`} open={reward !== undefined} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        update.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={update.error} fields={["stock"]} />
          <Field label="Stock" name="stock" value={stock} onChange={setStock} inputMode="numeric" error={update.error} hint="How many can still be redeemed; empty for unlimited." autoFocus />
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={update.isPending}>Save stock</Button>
        </footer>
      </form>
    </Dialog>
  )
}

const REDEMPTION_LABELS: Record<Redemption["status"], string> = { issued: "Issued", fulfilled: "Fulfilled", cancelled: "Cancelled" }

const RedemptionsCard = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const redemptions = useConsoleQuery(["redemptions", storeId, livemode], (client) => client.ListRedemptions({ store_id: storeId, livemode, limit: 50 }))
  const rewards = useConsoleQuery(["rewards", storeId], (client) => client.ListRewards({ store_id: storeId, limit: 100 }))
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ["redemptions", storeId] })
    void queryClient.invalidateQueries({ queryKey: ["rewards", storeId] })
    void queryClient.invalidateQueries({ queryKey: ["loyalty-liability", storeId] })
  }
  const fulfil = useConsoleMutation((client, redemption: Redemption) => client.FulfilRedemption({ id: redemption.id }), { onSuccess: refresh })
  const cancel = useConsoleMutation((client, redemption: Redemption) => client.CancelRedemption({ id: redemption.id }), { onSuccess: refresh })
  const writable = usePermission("customer.write").allowed
  const rewardName = (id: string | null) => id === null ? "Points" : rewards.data?.data.find((reward) => reward.id === id)?.name ?? id
  const failure = fulfil.error ?? cancel.error
  return (
    <section className="card table-card" id="redemptions" aria-labelledby="redemptions-title">
      <div className="card-header card-pad">
        <div>
          <h2 id="redemptions-title">Redemptions</h2>
          <p className="muted">Fulfil when the reward is handed over; cancelling gives the points and the stock back.</p>
        </div>
      </div>
      {redemptions.error !== null ? <LoadError error={redemptions.error} retry={() => void redemptions.refetch()} /> : null}
      {failure !== null ? <div className="alert alert-error" role="alert">{failure.message}</div> : null}
      {redemptions.isPending ? <Loading /> : redemptions.data === undefined || redemptions.data.data.length === 0
        ? <Empty title="No redemptions yet"><p>Redemptions made at the counter or through the API appear here.</p></Empty>
        : (
          <table className="table">
            <caption className="visually-hidden">Redemptions, newest first</caption>
            <thead><tr><th scope="col">Reward</th><th scope="col">Customer</th><th scope="col" className="hide-narrow">Voucher</th><th scope="col">Status</th><th scope="col" className="hide-narrow">Made</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {redemptions.data.data.map((redemption) => (
                <tr key={redemption.id} data-redemption-id={redemption.id}>
                  <td>{rewardName(redemption.reward_id)}<div className="muted small">{redemption.points.toLocaleString("en-US")} pts</div></td>
                  <td><CustomerName id={redemption.customer_id} /></td>
                  <td className="hide-narrow mono">{redemption.voucher_code}</td>
                  <td><span className={`badge badge-redemption-${redemption.status}`} data-status={redemption.status}>{REDEMPTION_LABELS[redemption.status]}</span></td>
                  <td className="hide-narrow nowrap">{formatTime(redemption.created_at)}</td>
                  <td className="row-actions">
                    {writable && redemption.status === "issued"
                      ? (
                        <>
                          <Button kind="ghost" busy={fulfil.isPending} onClick={() => fulfil.mutate(redemption)}>Fulfil<span className="visually-hidden"> {redemption.voucher_code}</span></Button>
                          <Button kind="ghost" busy={cancel.isPending} onClick={() => cancel.mutate(redemption)}>Cancel<span className="visually-hidden"> {redemption.voucher_code}</span></Button>
                        </>
                      )
                      : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
    </section>
  )
}
