/**
 * A time-series chart on uPlot (small, fast, no runtime download; it draws on a canvas and styles through
 * the DOM, which the console's CSP allows). Under it a "Figures" disclosure holds a table of the same
 * figures, so nothing is only in the picture (a keyboard or a screen reader opens it).
 *
 *   <TimeSeriesChart title="Revenue, USD" days={["2026-11-01", …]}
 *     series={[{ label: "Revenue", values: [12.5, …] }, { label: "Forecast", values: [null, …], dashed: true }]}
 *     format={(v) => formatMoney(v, "USD")} />
 */
import { useEffect, useId, useRef } from "react"
import uPlot from "uplot"

export interface ChartSeries {
  readonly label: string
  /** One value per day; null where the series has no point (a forecast before today). */
  readonly values: ReadonlyArray<number | null>
  /** Drawn dashed: a forecast or a comparison. */
  readonly dashed?: boolean
}

const PALETTE = ["#4f46e5", "#0d9488", "#c2410c", "#7c3aed"]
const AXIS_FONT = "12px system-ui, -apple-system, \"Segoe UI\", Roboto, sans-serif"
/** The tick marks and the gap between a label and the plot, in CSS pixels. */
const AXIS_GAP = 20

let measuring: CanvasRenderingContext2D | null = null
const axisWidth = (labels: ReadonlyArray<string> | null | undefined) => {
  if (labels == null || labels.length === 0) return 48
  measuring ??= document.createElement("canvas").getContext("2d")
  if (measuring === null) return 12 + 8 * Math.max(...labels.map((label) => label.length))
  measuring.font = AXIS_FONT
  return Math.ceil(Math.max(...labels.map((label) => measuring!.measureText(label).width))) + AXIS_GAP
}

/**
 * An amount in few characters for an axis: `$1.2K`, `KHR 1.2M` (the riel by its code, as the console writes it
 * everywhere: the canvas draws with the system's fonts, and many have no riel sign).
 */
export const compactAmount = (value: number, currency: string) => {
  const number = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 }).format(value)
  if (currency === "USD") return value < 0 ? `-$${number.slice(1)}` : `$${number}`
  return `${currency} ${number}`
}

export const TimeSeriesChart = (props: {
  readonly title: string
  /** The x axis: ISO days (`2026-11-26`), one per value. */
  readonly days: ReadonlyArray<string>
  readonly series: ReadonlyArray<ChartSeries>
  /** How a value is written in the tooltip legend and in the table (in full). */
  readonly format: (value: number) => string
  /** How a value is written on the y axis, where space is short (compact: `1.2M ៛`); `format` if not given. */
  readonly axisFormat?: (value: number) => string
  readonly height?: number
}) => {
  const holder = useRef<HTMLDivElement>(null)
  const titleId = useId()
  const { days, format, height = 220, series } = props
  const axisFormat = props.axisFormat ?? format

  useEffect(() => {
    const element = holder.current
    if (element === null) return
    const xs = days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000)
    const data: uPlot.AlignedData = [xs, ...series.map((s) => s.values.map((v) => v ?? null))]
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 280),
        height,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "UTC"),
        legend: { show: series.length > 1 },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true } },
        axes: [
          { stroke: "#5b6675", grid: { stroke: "#eef0f3" } },
          {
            stroke: "#5b6675",
            grid: { stroke: "#eef0f3" },
            font: AXIS_FONT,
            // As wide as its widest label: a fixed width clipped large amounts and wasted space on small ones.
            size: (_chart, values) => axisWidth(values),
            values: (_chart, ticks) => ticks.map((tick) => axisFormat(tick))
          }
        ],
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: PALETTE[i % PALETTE.length]!,
            width: 2,
            ...(s.dashed === true ? { dash: [6, 4] } : { fill: `${PALETTE[i % PALETTE.length]!}14` }),
            value: (_chart: uPlot, value: number | null) => (value === null ? "–" : format(value)),
            spanGaps: false
          }))
        ]
      },
      data,
      element
    )
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 280), height }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [days, series, format, axisFormat, height])

  return (
    <figure className="chart" aria-labelledby={titleId}>
      <figcaption id={titleId} className="chart-title">{props.title}</figcaption>
      <div ref={holder} className="chart-canvas" aria-hidden="true" />
      {/* The figures behind the picture, for a screen reader and for whoever wants the exact amounts (the
          canvas's hover legend needs a pointer). */}
      <details className="chart-figures">
        <summary>Figures<span className="visually-hidden"> of {props.title}</span></summary>
        {/* Scrolls on its own: focusable, so the keyboard scrolls it too. */}
        <div className="table-scroll" tabIndex={0} role="region" aria-label={`Figures of ${props.title}`}>
          <table className="table compact">
            <caption className="visually-hidden">{props.title}</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {series.map((s) => <th key={s.label} scope="col">{s.label}</th>)}
              </tr>
            </thead>
            <tbody>
              {days.map((day, i) => (
                <tr key={day}>
                  <th scope="row">{day}</th>
                  {series.map((s) => <td key={s.label}>{s.values[i] == null ? "–" : format(s.values[i]!)}</td>)}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}
