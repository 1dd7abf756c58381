/**
 * Effect's metric registry as the Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). Neither `effect` nor
 * `@effect/opentelemetry` ships an encoder for it (the latter only bridges Effect's registry to the
 * OpenTelemetry SDK, whose Prometheus exporter would bring the SDK in at run time and apply OpenTelemetry's
 * naming rules to our names), and the format is small: one family per metric name, `# HELP` and `# TYPE`
 * lines, then one sample per label set.
 */
import { Option } from "effect"
import * as MetricKeyType from "effect/MetricKeyType"
import type { MetricPair } from "effect/MetricPair"
import * as MetricState from "effect/MetricState"

type FamilyType = "counter" | "gauge" | "histogram" | "summary"

interface Family {
  readonly name: string
  readonly type: FamilyType
  help: string | undefined
  readonly samples: Array<string>
}

type Labels = ReadonlyArray<readonly [name: string, value: string]>

/** Metric names allow `[a-zA-Z_:][a-zA-Z0-9_:]*`; libraries' metrics may use dots or dashes. */
export const metricName = (name: string): string => {
  const sanitized = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return /^[a-zA-Z_:]/.test(sanitized) ? sanitized : `_${sanitized}`
}

/** Label names allow `[a-zA-Z_][a-zA-Z0-9_]*` (no colon). */
const labelName = (name: string): string => {
  const sanitized = name.replace(/[^a-zA-Z0-9_]/g, "_")
  return /^[a-zA-Z_]/.test(sanitized) ? sanitized : `_${sanitized}`
}

const escapeLabelValue = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

/** Sample values are Go floats: `+Inf`, `-Inf` and `NaN` are spelled out; bigint counters print whole. */
export const sampleValue = (value: number | bigint): string => {
  if (typeof value === "bigint") return value.toString()
  if (Number.isNaN(value)) return "NaN"
  if (value === Number.POSITIVE_INFINITY) return "+Inf"
  if (value === Number.NEGATIVE_INFINITY) return "-Inf"
  return String(value)
}

const sample = (name: string, labels: Labels, value: number | bigint): string => {
  const rendered = labels.map(([label, text]) => `${labelName(label)}="${escapeLabelValue(text)}"`).join(",")
  return `${name}${rendered.length > 0 ? `{${rendered}}` : ""} ${sampleValue(value)}`
}

/** The samples of one metric key, and the family type they belong to. */
const samplesOf = (
  name: string,
  labels: Labels,
  state: MetricState.MetricState.Untyped,
  incremental: boolean
): { readonly type: FamilyType; readonly samples: ReadonlyArray<string> } | undefined => {
  if (MetricState.isCounterState(state)) {
    // An Effect counter made without `incremental: true` may go down; Prometheus counters never do.
    return { type: incremental ? "counter" : "gauge", samples: [sample(name, labels, state.count)] }
  }
  if (MetricState.isGaugeState(state)) return { type: "gauge", samples: [sample(name, labels, state.value)] }
  if (MetricState.isHistogramState(state)) {
    // Effect keeps the buckets cumulative, the last one at +Inf, as the format wants them.
    const buckets = state.buckets.map(([boundary, cumulative]) =>
      sample(`${name}_bucket`, [...labels, ["le", sampleValue(boundary)]], cumulative)
    )
    return {
      type: "histogram",
      samples: [...buckets, sample(`${name}_sum`, labels, state.sum), sample(`${name}_count`, labels, state.count)]
    }
  }
  if (MetricState.isSummaryState(state)) {
    const quantiles = state.quantiles.flatMap(([quantile, value]) =>
      Option.isSome(value) ? [sample(name, [...labels, ["quantile", String(quantile)]], value.value)] : []
    )
    return {
      type: "summary",
      samples: [...quantiles, sample(`${name}_sum`, labels, state.sum), sample(`${name}_count`, labels, state.count)]
    }
  }
  if (MetricState.isFrequencyState(state)) {
    // A frequency counts occurrences of each string it saw: a counter per value, the value as a label.
    return {
      type: "counter",
      samples: [...state.occurrences].map(([key, count]) => sample(name, [...labels, ["key", key]], count))
    }
  }
  return undefined
}

/**
 * The exposition of a registry snapshot (`Metric.snapshot`). Families are sorted by name so scrapes are
 * comparable; a name registered with two different types keeps the first and drops the other, because
 * Prometheus refuses a family declared twice.
 */
export const encodePrometheus = (snapshot: ReadonlyArray<MetricPair.Untyped>): string => {
  const families = new Map<string, Family>()
  for (const { metricKey, metricState } of snapshot) {
    const name = metricName(metricKey.name)
    const labels: Labels = metricKey.tags.map((tag) => [tag.key, tag.value] as const)
    const incremental = MetricKeyType.isCounterKey(metricKey.keyType) && metricKey.keyType.incremental
    const rendered = samplesOf(name, labels, metricState, incremental)
    if (rendered === undefined) continue
    const family = families.get(name) ?? { name, type: rendered.type, help: undefined, samples: [] }
    if (family.type !== rendered.type) continue
    family.help ??= Option.getOrUndefined(metricKey.description)
    family.samples.push(...rendered.samples)
    families.set(name, family)
  }
  const lines: Array<string> = []
  for (const family of [...families.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (family.help !== undefined) lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`)
    lines.push(`# TYPE ${family.name} ${family.type}`)
    lines.push(...family.samples)
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`
}
