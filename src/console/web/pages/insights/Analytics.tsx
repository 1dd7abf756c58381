/**
 * Analytics: the store's revenue per currency over a chosen date range, charted with the forecast after it
 * (dashed), and the organization's executive summary across its stores (the last 30 days against the 30
 * before).
 */
import { type FormEvent, useId, useMemo, useState } from "react"
import type { Forecast, Timeseries } from "../../../../../domain/Analytics.ts"
import { fromMinor, toMinor } from "../../money.ts"
import { useConsoleQuery } from "../../rpc.ts"
import { Button, Empty, formatAmount, Loading } from "../../ui.tsx"
import { compactAmount, TimeSeriesChart } from "../../ui/Chart.tsx"
import { ErrorNotice, formatPercent } from "../../ui/Forms.tsx"
import { useWorkspace } from "../../workspace.tsx"

const CURRENCIES = ["USD", "KHR"] as const
type Currency = (typeof CURRENCIES)[number]
const FORECAST_DAYS = 14

const isoDay = (date: Date) => date.toISOString().slice(0, 10)
const daysAgo = (days: number) => isoDay(new Date(Date.now() - days * 86_400_000))

export const AnalyticsPage = () => {
  const { context, livemode, store } = useWorkspace()
  const storeId = store!.id
  const [range, setRange] = useState({ from: daysAgo(29), to: isoDay(new Date()) })
  const [draft, setDraft] = useState(range)
  const fromId = useId()
  const toId = useId()
  const series = useConsoleQuery(["analytics", storeId, livemode, range], (client) =>
    client.RevenueTimeseries({ store_id: storeId, livemode, from: range.from, to: range.to }))
  const forecast = useConsoleQuery(["forecast", storeId, livemode], (client) =>
    client.RevenueForecast({ store_id: storeId, livemode, days: FORECAST_DAYS }))
  const apply = (event: FormEvent) => {
    event.preventDefault()
    setRange(draft)
  }
  const organizationId = store!.organization_id
  const organization = context.me.organizations.find((candidate) => candidate.id === organizationId)

  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Analytics</h1>
          <p className="muted">Revenue of paid payments per day (UTC), {livemode ? "live" : "test"} mode, with a {FORECAST_DAYS}-day forecast.</p>
        </div>
      </div>
      <form className="filters" onSubmit={apply} aria-label="Date range">
        <div className="filter">
          <label htmlFor={fromId}>From</label>
          <input id={fromId} type="date" required value={draft.from} max={draft.to} onChange={(event) => setDraft({ ...draft, from: event.target.value })} />
        </div>
        <div className="filter">
          <label htmlFor={toId}>To</label>
          <input id={toId} type="date" required value={draft.to} min={draft.from} onChange={(event) => setDraft({ ...draft, to: event.target.value })} />
        </div>
        <div className="filter-actions">
          <Button type="submit">Apply</Button>
        </div>
      </form>
      <ErrorNotice error={series.error ?? forecast.error} />
      {series.isPending ? <Loading /> : series.data === undefined ? null : (
        <>
          <RangeTotals series={series.data} />
          <section className="card chart-cards" aria-label="Revenue per currency">
            {CURRENCIES.map((currency) => (
              <RevenueChart key={currency} currency={currency} series={series.data} forecast={forecast.data} />
            ))}
          </section>
        </>
      )}
      <ExecutiveSummaryCard organizationId={organizationId} organizationName={organization?.name ?? "Your organization"} />
    </div>
  )
}

const sumOf = (series: Timeseries, currency: Currency, field: "revenue" | "refunds") =>
  fromMinor(series.data.reduce((total, day) => total + toMinor(day[field][currency], currency), 0n), currency)

const RangeTotals = ({ series }: { readonly series: Timeseries }) => (
  <section className="metrics" aria-label="Totals over the range">
    {CURRENCIES.map((currency) => (
      <div className="metric" key={currency}>
        <h2 className="metric-label">Revenue · {currency}</h2>
        <p className="metric-value">{formatAmount(sumOf(series, currency, "revenue"), currency)}</p>
      </div>
    ))}
    <div className="metric">
      <h2 className="metric-label">Payments paid</h2>
      <p className="metric-value">{series.data.reduce((total, day) => total + day.count, 0)}</p>
    </div>
    <div className="metric">
      <h2 className="metric-label">Refunded · USD</h2>
      <p className="metric-value">{formatAmount(sumOf(series, "USD", "refunds"), "USD")}</p>
    </div>
  </section>
)

/**
 * One currency's revenue, then its forecast: the forecast line starts at the last real day (so the two
 * join) and runs on after it, dashed.
 */
const RevenueChart = (props: { readonly currency: Currency; readonly series: Timeseries; readonly forecast: Forecast | undefined }) => {
  const { currency, forecast, series } = props
  const { days, lines } = useMemo(() => {
    const actual = series.data.map((day) => Number(day.revenue[currency]))
    const ahead = forecast === undefined || series.to !== isoDay(new Date()) ? [] : forecast.data.filter((day) => day.date > series.to)
    const lastActual = actual.at(-1) ?? null
    return {
      days: [...series.data.map((day) => day.date), ...ahead.map((day) => day.date)],
      lines: [
        { label: "Revenue", values: [...actual, ...ahead.map(() => null)] },
        ...(ahead.length === 0 ? [] : [{
          label: "Forecast",
          dashed: true,
          values: [...actual.map((_, i) => (i === actual.length - 1 ? lastActual : null)), ...ahead.map((day) => Number(day.revenue[currency]))]
        }])
      ]
    }
  }, [currency, series, forecast])
  const format = useMemo(() => (value: number) => formatAmount(value.toFixed(currency === "KHR" ? 0 : 2), currency), [currency])
  const axisFormat = useMemo(() => (value: number) => compactAmount(value, currency), [currency])
  return <TimeSeriesChart title={`Revenue · ${currency}`} days={days} series={lines} format={format} axisFormat={axisFormat} height={220} />
}

const change = (now: string, before: string) => {
  const current = Number(now)
  const previous = Number(before)
  if (previous === 0) return current === 0 ? "no change" : "new"
  const delta = (current - previous) / previous
  return `${delta >= 0 ? "+" : "−"}${Math.abs(delta * 100).toFixed(1)} % on the 30 days before`
}

const ExecutiveSummaryCard = ({ organizationId, organizationName }: { readonly organizationId: string; readonly organizationName: string }) => {
  const { livemode } = useWorkspace()
  const summary = useConsoleQuery(["executive", organizationId, livemode], (client) =>
    client.ExecutiveSummary({ organization_id: organizationId as never, livemode }))
  return (
    <section className="card table-card" aria-labelledby="executive-title">
      <div className="card-header">
        <h2 id="executive-title">Executive summary · {organizationName}</h2>
        <span className="muted small">Last 30 days, all stores</span>
      </div>
      <ErrorNotice error={summary.error} />
      {summary.isPending ? <Loading /> : summary.data === undefined ? null : (
        <>
          <dl className="details executive">
            {CURRENCIES.map((currency) => (
              <div key={currency} className="executive-row">
                <dt>Revenue · {currency}</dt>
                <dd>{formatAmount(summary.data.revenue[currency], currency)} <span className="muted small">({change(summary.data.revenue[currency], summary.data.previous_revenue[currency])})</span></dd>
              </div>
            ))}
            <div className="executive-row"><dt>Payments paid</dt><dd>{summary.data.payments_count}</dd></div>
            <div className="executive-row"><dt>Success rate</dt><dd>{formatPercent(summary.data.success_rate)}</dd></div>
            <div className="executive-row"><dt>Refund rate</dt><dd>{formatPercent(summary.data.refund_rate)}</dd></div>
            <div className="executive-row"><dt>Active customers</dt><dd>{summary.data.active_customers}</dd></div>
            <div className="executive-row"><dt>Loyalty points outstanding</dt><dd>{summary.data.loyalty_liability_points.toLocaleString("en-US")}</dd></div>
          </dl>
          {summary.data.stores.length === 0 ? <Empty title="No stores yet" /> : (
            <table className="table">
              <caption className="visually-hidden">Revenue per store, last 30 days</caption>
              <thead>
                <tr><th scope="col">Store</th><th scope="col">USD</th><th scope="col">KHR</th></tr>
              </thead>
              <tbody>
                {summary.data.stores.map((row) => (
                  <tr key={row.store_id}>
                    <td>{row.name}</td>
                    <td>{formatAmount(row.revenue.USD, "USD")}</td>
                    <td>{formatAmount(row.revenue.KHR, "KHR")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  )
}
