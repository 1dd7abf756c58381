/**
 * The Prometheus text encoder against the exposition format: names and labels it must sanitize or
 * escape, and each kind of Effect metric as the format spells it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric, MetricBoundaries } from "effect"
import { encodePrometheus, metricName, sampleValue } from "../../src/platform/Prometheus.ts"

// Each test names its metrics uniquely: Effect's registry is one per process.
const unique = (base: string) => `${base}_${Math.random().toString(36).slice(2, 8)}`

/** The lines of the families whose name starts with `prefix`. */
const linesOf = (exposition: string, prefix: string) =>
  exposition.split("\n").filter((line) => line.includes(prefix))

describe("encodePrometheus", () => {
  it.effect("writes a counter with HELP, TYPE and one sample per label set, values escaped", () =>
    Effect.gen(function*() {
      const name = unique("test_requests_total")
      const counter = Metric.counter(name, { description: "Requests\\answered\nby route", incremental: true })
      yield* Metric.incrementBy(Metric.tagged(counter, "route", "/v1/payments/:id"), 2)
      yield* Metric.increment(Metric.tagged(counter, "route", "say \"hi\"\\\n"))
      const lines = linesOf(encodePrometheus(yield* Metric.snapshot), name)
      expect(lines.slice(0, 2)).toEqual([
        `# HELP ${name} Requests\\\\answered\\nby route`,
        `# TYPE ${name} counter`
      ])
      expect(lines.slice(2).sort()).toEqual([
        `${name}{route="/v1/payments/:id"} 2`,
        `${name}{route="say \\"hi\\"\\\\\\n"} 1`
      ].sort())
    }))

  it.effect("writes a histogram as cumulative buckets up to +Inf, then _sum and _count", () =>
    Effect.gen(function*() {
      const name = unique("test_duration_seconds")
      const histogram = Metric.histogram(name, MetricBoundaries.fromIterable([0.1, 1]), "How long")
      for (const seconds of [0.05, 0.5, 0.7, 3]) yield* Metric.update(Metric.tagged(histogram, "method", "GET"), seconds)
      expect(linesOf(encodePrometheus(yield* Metric.snapshot), name)).toEqual([
        `# HELP ${name} How long`,
        `# TYPE ${name} histogram`,
        `${name}_bucket{method="GET",le="0.1"} 1`,
        `${name}_bucket{method="GET",le="1"} 3`,
        `${name}_bucket{method="GET",le="+Inf"} 4`,
        `${name}_sum{method="GET"} 4.25`,
        `${name}_count{method="GET"} 4`
      ])
    }))

  it.effect("writes gauges (NaN spelled out, bigint whole), frequencies as counters, and summaries", () =>
    Effect.gen(function*() {
      const gauge = unique("test_lag_seconds")
      yield* Metric.set(Metric.gauge(gauge), Number.NaN)
      const bigGauge = unique("test_shards")
      yield* Metric.set(Metric.gauge(bigGauge, { bigint: true }), 300n)
      const frequency = unique("test_outcomes")
      yield* Metric.update(Metric.frequency(frequency), "gone")
      yield* Metric.update(Metric.frequency(frequency), "gone")
      const summary = unique("test_sizes")
      const sizes = Metric.summary({ name: summary, maxAge: "1 minute", maxSize: 10, error: 0, quantiles: [0.5] })
      for (const size of [1, 2, 3]) yield* Metric.update(sizes, size)

      const exposition = encodePrometheus(yield* Metric.snapshot)
      expect(linesOf(exposition, gauge)).toEqual([`# TYPE ${gauge} gauge`, `${gauge} NaN`])
      expect(linesOf(exposition, bigGauge)).toEqual([`# TYPE ${bigGauge} gauge`, `${bigGauge} 300`])
      expect(linesOf(exposition, frequency)).toEqual([`# TYPE ${frequency} counter`, `${frequency}{key="gone"} 2`])
      // The quantile's value is Effect's estimate; the format is what is checked here.
      const summaryLines = linesOf(exposition, summary)
      expect(summaryLines).toHaveLength(4)
      expect(summaryLines[0]).toBe(`# TYPE ${summary} summary`)
      expect(summaryLines[1]).toMatch(new RegExp(`^${summary}\\{quantile="0\\.5"\\} [123]$`))
      expect(summaryLines.slice(2)).toEqual([`${summary}_sum 6`, `${summary}_count 3`])
    }))

  it.effect("writes a counter that may go down (not incremental) as a gauge", () =>
    Effect.gen(function*() {
      const name = unique("test_active")
      const upDown = Metric.counter(name)
      yield* Metric.incrementBy(upDown, 3)
      yield* Metric.incrementBy(upDown, -1)
      expect(linesOf(encodePrometheus(yield* Metric.snapshot), name)).toEqual([`# TYPE ${name} gauge`, `${name} 2`])
    }))

  it.effect("makes library metric names and label names valid, and ends with a newline", () =>
    Effect.gen(function*() {
      const suffix = unique("")
      yield* Metric.increment(
        Metric.tagged(Metric.counter(`lib.requests-total${suffix}`, { incremental: true }), "http.method", "GET")
      )
      const exposition = encodePrometheus(yield* Metric.snapshot)
      expect(linesOf(exposition, `lib_requests_total${suffix}`)).toEqual([
        `# TYPE lib_requests_total${suffix} counter`,
        `lib_requests_total${suffix}{http_method="GET"} 1`
      ])
      expect(exposition.endsWith("\n")).toBe(true)
      expect(metricName("2xx_ratio")).toBe("_2xx_ratio")
      expect(sampleValue(Infinity)).toBe("+Inf")
      expect(sampleValue(-Infinity)).toBe("-Inf")
      expect(sampleValue(0.25)).toBe("0.25")
    }))

  it("writes nothing for an empty registry", () => {
    expect(encodePrometheus([])).toBe("")
  })
})
