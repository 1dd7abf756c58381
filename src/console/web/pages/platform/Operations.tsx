/**
 * The platform's operations (platform administrators): the security posture with each check, monitoring
 * that refreshes itself, AI usage by store, and the ledger across every store.
 */
import { useState } from "react"
import type { PostureCheck } from "../../../../../domain/Security.ts"
import { useConsoleQuery } from "../../rpc.ts"
import { Empty, formatTime, Loading } from "../../ui.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"
import { ReconciliationCard, TrialBalanceCard } from "../insights/Ledger.tsx"

const CHECK_BADGES: Record<PostureCheck["status"], { readonly label: string; readonly badge: string }> = {
  pass: { label: "Pass", badge: "paid" },
  warn: { label: "Warning", badge: "refunded" },
  fail: { label: "Fail", badge: "failed" }
}

export const SecurityPosturePage = () => {
  const posture = useConsoleQuery(["security-posture"], (client) => client.SecurityPosture())
  const data = posture.data
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Security posture</h1>
          <p className="muted">The platform's security checks: a pass counts fully, a warning half, a failure nothing.</p>
        </div>
      </div>
      <ErrorNotice error={posture.error} />
      {posture.isPending ? <Loading /> : data === undefined ? null : (
        <>
          <section className="metrics" aria-label="Score">
            <div className="metric">
              <h2 className="metric-label">Score</h2>
              <p className="metric-value" data-score>{data.score} / 100</p>
            </div>
            {(["pass", "warn", "fail"] as const).map((status) => (
              <div className="metric" key={status}>
                <h2 className="metric-label">{CHECK_BADGES[status].label}</h2>
                <p className="metric-value">{data.checks.filter((check) => check.status === status).length}</p>
              </div>
            ))}
          </section>
          <section className="card table-card">
            <table className="table wrapping-table">
              <caption className="visually-hidden">Security checks</caption>
              <thead>
                <tr><th scope="col">Check</th><th scope="col">Result</th><th scope="col">Detail</th></tr>
              </thead>
              <tbody>
                {data.checks.map((check) => (
                  <tr key={check.id}>
                    <td>{check.title}</td>
                    <td><span className={`badge badge-${CHECK_BADGES[check.status].badge}`}>{CHECK_BADGES[check.status].label}</span></td>
                    <td className="small">{check.detail}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </>
      )}
    </div>
  )
}

const REFRESH_MS = 5000

const seconds = (value: number) => (value < 60 ? `${Math.round(value)} s` : value < 3600 ? `${Math.round(value / 60)} min` : `${(value / 3600).toFixed(1)} h`)
const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(0)} MB`

export const MonitoringPage = () => {
  const monitoring = useConsoleQuery(["monitoring"], (client) => client.Monitoring(), { refetchIntervalMs: REFRESH_MS })
  const data = monitoring.data
  const [shown] = useState(() => Date.now())
  const tile = (label: string, value: string, state: "ok" | "warn" | "bad" = "ok") => (
    <div className={`metric metric-${state}`} key={label}>
      <h2 className="metric-label">{label}</h2>
      <p className="metric-value" data-metric={label}>{value}</p>
    </div>
  )
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Monitoring <span className="live-dot" aria-label="Live">Live</span></h1>
          <p className="muted" role="status">
            Refreshes every {REFRESH_MS / 1000} s{monitoring.dataUpdatedAt > shown ? ` · updated ${formatTime(new Date(monitoring.dataUpdatedAt).toISOString())}` : ""}.
          </p>
        </div>
      </div>
      <ErrorNotice error={monitoring.error} />
      {data === undefined ? <Loading /> : (
        <section className="metrics" aria-label="Service health">
          {tile("Database", data.database.ok ? `Up · ${data.database.latency_ms.toFixed(1)} ms` : "Down", data.database.ok ? "ok" : "bad")}
          {tile("Cluster runners", String(data.cluster.runners), data.cluster.runners > 0 ? "ok" : "bad")}
          {tile("Shards", String(data.cluster.shards))}
          {tile("Outbox pending", String(data.outbox.pending), data.outbox.oldest_age_seconds > 60 ? "warn" : "ok")}
          {tile("Outbox lag", seconds(data.outbox.oldest_age_seconds), data.outbox.oldest_age_seconds > 60 ? "warn" : "ok")}
          {tile("Webhook backlog", String(data.webhooks.pending), data.webhooks.pending > 100 ? "warn" : "ok")}
          {tile("Webhooks failed, last hour", String(data.webhooks.failed_last_hour), data.webhooks.failed_last_hour > 0 ? "warn" : "ok")}
          {tile("Payments, last minute", String(data.throughput.payments_last_minute))}
          {tile("Requests, last minute", String(data.throughput.requests_last_minute))}
          {tile("Uptime", seconds(data.process.uptime_seconds))}
          {tile("Memory (RSS)", megabytes(data.process.rss_bytes))}
        </section>
      )}
    </div>
  )
}

const usd = (value: number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 4 }).format(value)

export const PlatformAiUsagePage = () => {
  const usage = useConsoleQuery(["platform-ai-usage"], (client) => client.PlatformAiUsage())
  const data = usage.data
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>AI usage</h1>
          <p className="muted">Calls, tokens and cost of every store{data === undefined ? "" : `, last ${data.window_days} days`}.</p>
        </div>
      </div>
      <ErrorNotice error={usage.error} />
      {usage.isPending ? <Loading /> : data === undefined ? null : (
        <>
          <section className="metrics" aria-label="Totals">
            <div className="metric"><h2 className="metric-label">Calls</h2><p className="metric-value">{data.calls}</p></div>
            <div className="metric"><h2 className="metric-label">Tokens</h2><p className="metric-value">{(data.input_tokens + data.output_tokens).toLocaleString("en-US")}</p></div>
            <div className="metric"><h2 className="metric-label">Cost</h2><p className="metric-value">{usd(data.cost_usd)}</p></div>
            <div className="metric"><h2 className="metric-label">Failed calls</h2><p className="metric-value">{data.failed_calls}</p></div>
          </section>
          <section className="card table-card" aria-labelledby="by-store-title">
            <div className="card-header"><h2 id="by-store-title">By store</h2></div>
            {data.by_store.length === 0 ? <Empty title="No AI calls yet"><p>Stores' calls to the assistant, marketing copy and summaries appear here with their cost.</p></Empty> : (
              <table className="table">
                <caption className="visually-hidden">AI usage by store</caption>
                <thead>
                  <tr><th scope="col">Store</th><th scope="col">Calls</th><th scope="col" className="hide-narrow">Tokens</th><th scope="col">Cost</th></tr>
                </thead>
                <tbody>
                  {data.by_store.map((row) => (
                    <tr key={row.store_id}>
                      <td>{row.store_name ?? "Removed store"}<div className="id-text muted">{row.store_id}</div></td>
                      <td>{row.calls}{row.failed_calls > 0 ? <span className="muted small"> ({row.failed_calls} failed)</span> : null}</td>
                      <td className="hide-narrow">{(row.input_tokens + row.output_tokens).toLocaleString("en-US")}</td>
                      <td>{usd(row.cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section className="card table-card" aria-labelledby="by-feature-title">
            <div className="card-header"><h2 id="by-feature-title">By feature</h2></div>
            {data.by_feature.length === 0 ? <Empty title="No AI calls yet" /> : (
              <table className="table">
                <caption className="visually-hidden">AI usage by feature</caption>
                <thead>
                  <tr><th scope="col">Feature</th><th scope="col">Calls</th><th scope="col">Cost</th></tr>
                </thead>
                <tbody>
                  {data.by_feature.map((row) => (
                    <tr key={row.feature}><td>{row.feature.replaceAll("_", " ")}</td><td>{row.calls}</td><td>{usd(row.cost_usd)}</td></tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      )}
    </div>
  )
}

export const PlatformLedgerPage = () => {
  const [livemode, setLivemode] = useState(false)
  const balance = useConsoleQuery(["platform-trial-balance", livemode], (client) => client.PlatformTrialBalance({ livemode }))
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Ledger across stores</h1>
          <p className="muted">The trial balance of every store together, and reconciliation over all of them.</p>
        </div>
        <div className="tabs" role="group" aria-label="Mode">
          <button type="button" className="tab" aria-pressed={!livemode} onClick={() => setLivemode(false)}>Test</button>
          <button type="button" className="tab" aria-pressed={livemode} onClick={() => setLivemode(true)}>Live</button>
        </div>
      </div>
      <ErrorNotice error={balance.error} />
      {balance.isPending ? <Loading /> : balance.data === undefined ? null : <TrialBalanceCard balance={balance.data} />}
      <ReconciliationCard run={(client) => client.PlatformReconcile()} showStore />
    </div>
  )
}
