/**
 * Segments: a rule builder (field, operator, value; all or any) whose preview (how many customers match
 * now, and a sample) follows the rules as they change, and the saved segments. A rule the service refuses,
 * or a value that is not one, is shown at that rule's value.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { Rule, RuleField, Segment } from "../../../../../domain/Promotions.ts"
import { Link } from "../../router.tsx"
import { type ConsoleFailure, useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Empty, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { toMinor } from "../../money.ts"
import { LoadError, SelectField } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"
import { usePermission } from "../../permissions.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { useDebounced } from "./useDebounced.ts"

const FIELDS: ReadonlyArray<{ readonly value: RuleField; readonly label: string; readonly kind: "money-USD" | "money-KHR" | "count" | "tier" | "consent" }> = [
  { value: "lifetime_value_usd", label: "Lifetime value (USD)", kind: "money-USD" },
  { value: "lifetime_value_khr", label: "Lifetime value (KHR)", kind: "money-KHR" },
  { value: "payments_count", label: "Paid payments", kind: "count" },
  { value: "payments_last_30d", label: "Payments in the last 30 days", kind: "count" },
  { value: "days_since_last_payment", label: "Days since last payment", kind: "count" },
  { value: "days_since_created", label: "Days as a customer", kind: "count" },
  { value: "points_balance", label: "Points balance", kind: "count" },
  { value: "lifetime_points", label: "Lifetime points", kind: "count" },
  { value: "tier_id", label: "Tier", kind: "tier" },
  { value: "marketing_opt_in", label: "Accepts marketing", kind: "consent" }
]
type Op = "eq" | "neq" | "gt" | "gte" | "lt" | "lte" | "in"
const OPS: ReadonlyArray<{ readonly value: Op; readonly label: string }> = [
  { value: "gte", label: "at least" },
  { value: "gt", label: "more than" },
  { value: "lte", label: "at most" },
  { value: "lt", label: "less than" },
  { value: "eq", label: "is" },
  { value: "neq", label: "is not" },
  { value: "in", label: "is one of" }
]
const EQUALITY: ReadonlyArray<Op> = ["eq", "neq"]

interface DraftRule {
  readonly key: number
  readonly field: RuleField
  readonly op: Op
  /** As typed: an amount, a count, comma-separated values for `in`, a tier id ("" = no tier), "true"/"false". */
  readonly value: string
}

const kindOf = (field: RuleField) => FIELDS.find((candidate) => candidate.value === field)!.kind
const opsOf = (field: RuleField) => {
  const kind = kindOf(field)
  return kind === "consent" ? OPS.filter((op) => EQUALITY.includes(op.value)) : kind === "tier" ? OPS.filter((op) => EQUALITY.includes(op.value) || op.value === "in") : OPS
}

const WHOLE = /^-?\d+$/

/** One typed value as the rule's wire value, or why it is not one. */
const valueOf = (rule: DraftRule, text: string): number | string | boolean | null | { readonly error: string } => {
  const kind = kindOf(rule.field)
  const trimmed = text.trim()
  if (kind === "consent") return trimmed === "true"
  if (kind === "tier") return trimmed === "" ? null : trimmed
  if (trimmed === "") return { error: "Enter a value" }
  if (kind === "count") return WHOLE.test(trimmed) ? Number(trimmed) : { error: "Enter a whole number" }
  const currency = kind === "money-USD" ? "USD" : "KHR"
  const pattern = currency === "USD" ? /^\d+(\.\d{1,2})?$/ : /^\d+$/
  return pattern.test(trimmed) ? Number(toMinor(trimmed, currency)) : { error: currency === "USD" ? "Enter an amount such as 25.00" : "Enter whole riel, such as 40000" }
}

/** The rule as the service takes it, or the message to show at its value. */
export const toRule = (rule: DraftRule): Rule | { readonly error: string } => {
  if (rule.op === "in") {
    const parts = rule.value.split(",").map((part) => part.trim()).filter((part) => part !== "")
    if (parts.length === 0) return { error: "Enter one or more values, separated by commas" }
    const values = parts.map((part) => valueOf(rule, part))
    const wrong = values.find((value): value is { readonly error: string } => typeof value === "object" && value !== null)
    if (wrong !== undefined) return wrong
    return { field: rule.field, op: "in", value: values } as unknown as Rule
  }
  const value = valueOf(rule, rule.value)
  if (typeof value === "object" && value !== null) return value
  return { field: rule.field, op: rule.op, value } as unknown as Rule
}

/** Back from a saved rule to what the builder shows. */
const fromRule = (rule: Rule, key: number): DraftRule => {
  const kind = kindOf(rule.field)
  const show = (value: unknown): string =>
    value === null ? "" : kind === "money-USD" ? (Number(value) / 100).toFixed(2) : String(value)
  return { key, field: rule.field, op: rule.op, value: Array.isArray(rule.value) ? rule.value.map(show).join(", ") : show(rule.value) }
}

let nextKey = 1
const newRule = (): DraftRule => ({ key: nextKey++, field: "payments_count", op: "gte", value: "1" })

export const SegmentsPage = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const segments = useConsoleQuery(["segments", storeId], (client) => client.ListSegments({ store_id: storeId, limit: 100 }))
  const tiers = useConsoleQuery(["tiers", storeId], (client) => client.ListTiers({ store_id: storeId, limit: 100 }))
  const [editing, setEditing] = useState<Segment | undefined>(undefined)
  const [name, setName] = useState("")
  const [match, setMatch] = useState<"all" | "any">("all")
  const [rules, setRules] = useState<ReadonlyArray<DraftRule>>(() => [newRule()])
  const [saved, setSaved] = useState<string | undefined>(undefined)

  const built = rules.map(toRule)
  const localErrors = built.map((rule) => ("error" in rule ? rule.error : undefined))
  const valid = localErrors.every((error) => error === undefined)
  const ruleSet = useDebounced(JSON.stringify({ match, rules: valid ? built : null }), 350)
  const wanted = JSON.parse(ruleSet) as { readonly match: "all" | "any"; readonly rules: ReadonlyArray<Rule> | null }
  const preview = useConsoleQuery(
    ["segment-preview", storeId, livemode, ruleSet],
    (client) => client.PreviewSegmentRules({ store_id: storeId, livemode, match: wanted.match, rules: wanted.rules ?? [] }),
    { enabled: wanted.rules !== null && wanted.rules.length > 0 }
  )
  const stale = ruleSet !== JSON.stringify({ match, rules: valid ? built : null })

  const load = (segment: Segment | undefined) => {
    setEditing(segment)
    setSaved(undefined)
    setName(segment?.name ?? "")
    setMatch(segment?.match ?? "all")
    setRules(segment === undefined ? [newRule()] : segment.rules.map((rule) => fromRule(rule, nextKey++)))
  }
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["segments", storeId] })
  const save = useConsoleMutation((client, _: void) => {
    const payload = { name: name.trim(), match, rules: built as ReadonlyArray<Rule> }
    return editing === undefined ? client.CreateSegment({ store_id: storeId, ...payload }) : client.UpdateSegment({ id: editing.id, ...payload })
  }, {
    onSuccess: (segment) => {
      setEditing(segment)
      setSaved(`Segment “${segment.name}” saved.`)
      refresh()
    }
  })
  const remove = useConsoleMutation((client, segment: Segment) => client.DeleteSegment({ id: segment.id }), {
    onSuccess: (segment) => {
      if (editing?.id === segment.id) load(undefined)
      refresh()
    }
  })
  const serverError = save.error ?? preview.error
  /** A refusal naming a rule (`rules.2`, or a field inside it) belongs at that rule's value. */
  const errorOfRule = (index: number): string | undefined => {
    if (localErrors[index] !== undefined) return localErrors[index]
    const param = serverError?.param
    return param !== undefined && (param === `rules.${index}` || param.startsWith(`rules.${index}.`)) ? serverError!.message.replace(/^rules\.\d+: /, "") : undefined
  }
  const ruleFailure = serverError?.param?.startsWith("rules.") === true
  const writable = usePermission("marketing.manage").allowed
  const tierOptions = [{ value: "", label: "No tier" }, ...(tiers.data?.data ?? []).map((tier) => ({ value: tier.id, label: tier.name }))]
  const update = (index: number, change: Partial<DraftRule>) =>
    setRules(rules.map((rule, at) => {
      if (at !== index) return rule
      const next = { ...rule, ...change }
      if (change.field !== undefined && change.field !== rule.field) {
        const kind = kindOf(change.field)
        const op = opsOf(change.field).some((candidate) => candidate.value === rule.op) ? rule.op : "eq"
        return { ...next, op, value: kind === "consent" ? "true" : kind === "tier" ? (tiers.data?.data[0]?.id ?? "") : "" }
      }
      return next
    }))

  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Segments</h1>
          <p className="muted">Groups of customers by what they did, for promotions and campaigns.</p>
        </div>
        <Button onClick={() => load(undefined)}>New segment</Button>
      </div>
      <PermissionNote permission="marketing.manage" />
      <div className="segment-layout">
        <section className="card" aria-labelledby="builder-title">
          <h2 id="builder-title">{editing === undefined ? "New segment" : `Edit “${editing.name}”`}</h2>
          <form onSubmit={(event) => {
            event.preventDefault()
            setSaved(undefined)
            save.mutate()
          }} noValidate>
            <FormError error={ruleFailure ? null : save.error} fields={["name", "match"]} />
            <Field label="Segment name" name="name" value={name} onChange={setName} error={save.error} placeholder="Big spenders" />
            <SelectField label="Customers who match" name="match" value={match} onChange={setMatch} options={[{ value: "all", label: "all of these rules" }, { value: "any", label: "any of these rules" }]} />
            <ol className="rules" aria-label="Rules">
              {rules.map((rule, index) => (
                <RuleRow
                  key={rule.key}
                  index={index}
                  rule={rule}
                  error={errorOfRule(index)}
                  tierOptions={tierOptions}
                  onChange={(change) => update(index, change)}
                  onRemove={rules.length > 1 ? () => setRules(rules.filter((_, at) => at !== index)) : undefined}
                />
              ))}
            </ol>
            <div className="actions">
              <Button onClick={() => setRules([...rules, newRule()])}>Add rule</Button>
              <PermittedButton permission="marketing.manage" kind="primary" type="submit" busy={save.isPending} disabled={!valid}>
                {editing === undefined ? "Save segment" : "Save changes"}
              </PermittedButton>
            </div>
            {saved === undefined ? null : <div className="alert alert-success" role="status">{saved}</div>}
          </form>
        </section>
        <section className="card" aria-labelledby="preview-title" aria-live="polite">
          <h2 id="preview-title">Preview</h2>
          {!valid || ruleFailure && preview.error !== null
            ? <p className="muted">Fix the rule marked in red to see who matches.</p>
            : preview.error !== null
            ? <LoadError error={preview.error} retry={() => void preview.refetch()} />
            : preview.data === undefined
            ? <Loading label="Counting customers…" />
            : (
              <>
                <p className={`big-figure${stale || preview.isFetching ? " is-stale" : ""}`}>
                  <span className="metric-value" data-testid="preview-count">{preview.data.count.toLocaleString("en-US")}</span>
                  <span className="muted">{preview.data.count === 1 ? "customer matches" : "customers match"} now {livemode ? "(live)" : "(test)"}</span>
                </p>
                {preview.data.sample.length === 0 ? <p className="muted">No customer matches these rules yet.</p> : (
                  <ul className="sample">
                    {preview.data.sample.map((customer) => (
                      <li key={customer.id}><Link to={`/customers/${customer.id}`}>{customer.name ?? customer.email ?? customer.external_id ?? customer.id}</Link> <span className="muted small">{customer.points_balance} pts</span></li>
                    ))}
                  </ul>
                )}
              </>
            )}
        </section>
      </div>
      <section className="card table-card" aria-labelledby="saved-title">
        <div className="card-header card-pad"><h2 id="saved-title">Saved segments</h2></div>
        {segments.error !== null ? <LoadError error={segments.error} retry={() => void segments.refetch()} /> : null}
        {remove.error !== null ? <div className="alert alert-error" role="alert">{remove.error.message}</div> : null}
        {segments.isPending ? <Loading /> : segments.data === undefined || segments.data.data.length === 0
          ? <Empty title="No saved segments yet"><p>Build rules above and save them to use in a promotion.</p></Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Saved segments</caption>
              <thead><tr><th scope="col">Segment</th><th scope="col">Rules</th><th scope="col" className="hide-narrow">Updated</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {segments.data.data.map((segment) => (
                  <tr key={segment.id}>
                    <td><strong>{segment.name}</strong></td>
                    <td>{segment.rules.length} rule{segment.rules.length === 1 ? "" : "s"}, {segment.match === "all" ? "all" : "any"} must hold</td>
                    <td className="hide-narrow nowrap">{formatTime(segment.updated_at)}</td>
                    <td className="row-actions">
                      <Button kind="ghost" onClick={() => load(segment)}>Edit<span className="visually-hidden"> {segment.name}</span></Button>
                      {writable ? <Button kind="ghost" busy={remove.isPending} onClick={() => remove.mutate(segment)}>Delete<span className="visually-hidden"> {segment.name}</span></Button> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
    </div>
  )
}

const RuleRow = (
  props: {
    readonly index: number
    readonly rule: DraftRule
    readonly error: string | undefined
    readonly tierOptions: ReadonlyArray<{ readonly value: string; readonly label: string }>
    readonly onChange: (change: Partial<DraftRule>) => void
    readonly onRemove: (() => void) | undefined
  }
) => {
  const { error, index, onChange, rule } = props
  const kind = kindOf(rule.field)
  const label = `Rule ${index + 1}`
  const failure: ConsoleFailure | undefined = error === undefined ? undefined : { param: "value", message: error } as ConsoleFailure
  return (
    <li className="rule" aria-label={label}>
      <SelectField label={`${label} field`} name="field" value={rule.field} onChange={(field) => onChange({ field })} options={FIELDS} />
      <SelectField label={`${label} operator`} name="op" value={rule.op} onChange={(op) => onChange({ op })} options={opsOf(rule.field)} />
      {kind === "consent"
        ? <SelectField label={`${label} value`} name="value" value={rule.value} onChange={(value) => onChange({ value })} options={[{ value: "true", label: "yes" }, { value: "false", label: "no" }]} />
        : kind === "tier" && rule.op !== "in"
        ? <SelectField label={`${label} value`} name="value" value={rule.value} onChange={(value) => onChange({ value })} options={props.tierOptions} error={failure} />
        : (
          <Field
            label={`${label} value`}
            name="value"
            value={rule.value}
            onChange={(value) => onChange({ value })}
            inputMode={kind === "tier" ? "text" : "decimal"}
            error={failure}
            placeholder={rule.op === "in" ? "1, 2, 3" : kind === "money-USD" ? "25.00" : "1"}
          />
        )}
      {props.onRemove === undefined ? <span className="rule-spacer" aria-hidden="true" /> : (
        <button type="button" className="icon-button rule-remove" aria-label={`Remove rule ${index + 1}`} onClick={props.onRemove}>×</button>
      )}
    </li>
  )
}
