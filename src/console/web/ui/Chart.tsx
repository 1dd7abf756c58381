/**
 * A time-series chart on uPlot (small, fast, no runtime download; it draws on a canvas and styles through
 * the DOM, which the console's CSP allows). Screen readers get the chart's title and a table of the same
 * figures, visually hidden, so nothing is only in the picture.
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

export const TimeSeriesChart = (props: {
  readonly title: string
  /** The x axis: ISO days (`2026-11-26`), one per value. */
  readonly days: ReadonlyArray<string>
  readonly series: ReadonlyArray<ChartSeries>
  /** How a value is written on the axis, in the tooltip legend and in the table. */
  readonly format: (value: number) => string
  readonly height?: number
}) => {
  const holder = useRef<HTMLDivElement>(null)
  const titleId = useId()
  const { days, format, height = 220, series } = props

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
          { stroke: "#5b6675", grid: { stroke: "#eef0f3" }, size: 72, values: (_chart, ticks) => ticks.map((tick) => format(tick)) }
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
  }, [days, series, format, height])

  return (
    <figure className="chart" aria-labelledby={titleId}>
      <figcaption id={titleId} className="chart-title">{props.title}</figcaption>
      <div ref={holder} className="chart-canvas" aria-hidden="true" />
      {/* Hidden in a box: a table's height follows its rows whatever its own height says, so on its own it would lengthen the page. */}
      <div className="visually-hidden">
        <table>
          <caption>{props.title}</caption>
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
    </figure>
  )
}
