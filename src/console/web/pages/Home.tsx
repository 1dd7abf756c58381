/** Home: today's and the last 30 days' revenue per currency, success and refund rates, the live feed. */
import { useQueryClient } from "@tanstack/react-query"
import type { HomeMetrics } from "../../../../domain/Console.ts"
import { Link, navigate } from "../router.tsx"
import { useConsoleQuery, useLiveFeed } from "../rpc.ts"
import { Empty, formatAmount, formatTime, Loading, StatusBadge } from "../ui.tsx"
import { useWorkspace } from "../workspace.tsx"
import { toMinor, fromMinor } from "../money.ts"
import { TimeSeriesChart } from "../ui/Chart.tsx"
import { useMemo } from "react"

const CURRENCIES = ["USD", "KHR"] as const

const rates = (metrics: HomeMetrics) => {
  const byStatus = metrics.summary.payments.by_status
  const succeeded = byStatus.paid + byStatus.refunded + byStatus.partially_refunded
  const settled = succeeded + byStatus.failed + byStatus.expired + byStatus.cancelled
  const refunded = byStatus.refunded + byStatus.partially_refunded
  return {
    success: settled === 0 ? null : succeeded / settled,
    refund: succeeded === 0 ? null : refunded / succeeded
  }
}

const percent = (value: number | null) => value === null ? "—" : `${(value * 100).toFixed(1)}%`

export const HomePage = () => {
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const metrics = useConsoleQuery(["home", storeId, livemode], (client) => client.HomeMetrics({ store_id: storeId, livemode }))
  const recent = useConsoleQuery(["recent", storeId, livemode], (client) => client.ListPayments({ store_id: storeId, livemode, limit: 8 }))

  useLiveFeed(`home:${storeId}:${livemode}`, (client) => client.PaymentFeed({ store_id: storeId, livemode }), () => {
    void queryClient.invalidateQueries({ queryKey: ["recent", storeId, livemode] })
    void queryClient.invalidateQueries({ queryKey: ["home", storeId, livemode] })
  })

  const today = metrics.data?.revenue.data.at(-1)
  const sum30 = (currency: (typeof CURRENCIES)[number]) =>
    fromMinor((metrics.data?.revenue.data ?? []).reduce((total, day) => total + toMinor(day.revenue[currency], currency), 0n), currency)
  const computed = metrics.data === undefined ? undefined : rates(metrics.data)

  return (
    <div className="page">
      <div className="page-header">
        <h1>Home</h1>
        <p className="muted">{store!.name}</p>
      </div>
      {metrics.error ? <div className="alert alert-error" role="alert">{metrics.error.message}</div> : null}
      <section className="metrics" aria-label="Key figures">
        {CURRENCIES.map((currency) => (
          <div className="metric" key={`today-${currency}`}>
            <h2 className="metric-label">Today · {currency}</h2>
            <p className="metric-value">{today === undefined ? "—" : formatAmount(today.revenue[currency], currency)}</p>
          </div>
        ))}
        {CURRENCIES.map((currency) => (
          <div className="metric" key={`month-${currency}`}>
            <h2 className="metric-label">Last 30 days · {currency}</h2>
            <p className="metric-value">{metrics.data === undefined ? "—" : formatAmount(sum30(currency), currency)}</p>
          </div>
        ))}
        <div className="metric">
          <h2 className="metric-label">Success rate</h2>
          <p className="metric-value">{percent(computed?.success ?? null)}</p>
        </div>
        <div className="metric">
          <h2 className="metric-label">Refund rate</h2>
          <p className="metric-value">{percent(computed?.refund ?? null)}</p>
        </div>
      </section>
      {metrics.data === undefined ? null : <RevenueCharts revenue={metrics.data.revenue} />}
      <section className="card" aria-labelledby="recent-title">
        <div className="card-header">
          <h2 id="recent-title">Recent payments <span className="live-dot" aria-label="Live">Live</span></h2>
          <Link to="/payments">View all</Link>
        </div>
        {recent.isPending ? <Loading /> : recent.data === undefined || recent.data.data.length === 0
          ? <Empty title="No payments yet">{livemode ? null : <p>Create a test payment on the <Link to="/payments">Payments</Link> page.</p>}</Empty>
          : (
            <ul className="feed">
              {recent.data.data.map((payment) => (
                <li key={payment.id}>
                  <button type="button" className="feed-row" onClick={() => navigate(`/payments/${payment.id}`)}>
                    <span className="feed-amount">{formatAmount(payment.amount, payment.currency)}</span>
                    <StatusBadge status={payment.status} />
                    <span className="feed-reference">{payment.reference_id ?? payment.description ?? payment.id}</span>
                    <span className="feed-time">{formatTime(payment.created_at)}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
      </section>
    </div>
  )
}

/** The last 30 days' revenue, a chart per currency that took any (USD first when neither did). */
const RevenueCharts = ({ revenue }: { readonly revenue: HomeMetrics["revenue"] }) => {
  const days = useMemo(() => revenue.data.map((day) => day.date), [revenue])
  const shown = CURRENCIES.filter((currency) => revenue.data.some((day) => toMinor(day.revenue[currency], currency) > 0n))
  return (
    <section className="card chart-cards" aria-label="Revenue, last 30 days">
      {(shown.length === 0 ? (["USD"] as const) : shown).map((currency) => (
        <CurrencyChart key={currency} currency={currency} days={days} revenue={revenue} />
      ))}
    </section>
  )
}

const CurrencyChart = (props: {
  readonly currency: (typeof CURRENCIES)[number]
  readonly days: ReadonlyArray<string>
  readonly revenue: HomeMetrics["revenue"]
}) => {
  const { currency, days, revenue } = props
  const series = useMemo(() => [{ label: "Revenue", values: revenue.data.map((day) => Number(day.revenue[currency])) }], [revenue, currency])
  const format = useMemo(() => (value: number) => formatAmount(value.toFixed(currency === "KHR" ? 0 : 2), currency), [currency])
  return <TimeSeriesChart title={`Revenue, last 30 days · ${currency}`} days={days} series={series} format={format} height={200} />
}
