/**
 * The process's own health in `GET /metrics`: memory, CPU and event-loop delay, read at each scrape and
 * named as Prometheus's Node.js client names them (`process_*`, `nodejs_*`), so the dashboards operators
 * already have for Node services read them unchanged.
 *
 * Memory is the figure capacity planning asks for: the live status streams, thousands per process, are
 * sized by it (README "Benchmarks", `bench:sse`), and the resident size alone cannot tell the streams' own
 * heap from the pages the collector keeps after a burst; the heap's used and total sizes beside it can.
 * The event-loop delay says whether a process is saturated before its latency does.
 */
import { Effect, Metric } from "effect"
import * as PerfHooks from "node:perf_hooks"

const residentMemory = Metric.gauge("process_resident_memory_bytes", {
  description: "Resident memory size of the process in bytes, read at each scrape"
})
const heapTotal = Metric.gauge("nodejs_heap_size_total_bytes", {
  description: "Size of the JavaScript heap in bytes, used or not, read at each scrape"
})
const heapUsed = Metric.gauge("nodejs_heap_size_used_bytes", {
  description: "Bytes of the JavaScript heap in use (live objects and garbage not yet collected), read at each scrape"
})
const externalMemory = Metric.gauge("nodejs_external_memory_bytes", {
  description: "Memory of C++ objects bound to JavaScript objects (buffers among them), in bytes, read at each scrape"
})
const cpuSeconds = Metric.counter("process_cpu_seconds_total", {
  description: "CPU time the process has used, user and system, in seconds",
  incremental: true
})
const startTime = Metric.gauge("process_start_time_seconds", {
  description: "When the process started, in seconds since the Unix epoch"
})
const loopDelayP50 = Metric.gauge("nodejs_eventloop_lag_p50_seconds", {
  description: "Median event-loop delay since the previous scrape, in seconds (absent where the runtime cannot measure it)"
})
const loopDelayP99 = Metric.gauge("nodejs_eventloop_lag_p99_seconds", {
  description: "99th percentile of the event-loop delay since the previous scrape, in seconds"
})
const loopDelayMax = Metric.gauge("nodejs_eventloop_lag_max_seconds", {
  description: "Longest event-loop delay since the previous scrape, in seconds"
})

const PROCESS_STARTED_SECONDS = (Date.now() - performance.now()) / 1000

/** Sampled every 20 ms: finer than any delay worth an alert, and a native timer, not a JavaScript one. */
const LOOP_DELAY_RESOLUTION_MS = 20

/**
 * The event-loop delay histogram, from when the metrics service starts until it stops; none on a runtime
 * that does not implement it (Deno's Node compatibility), whose scrapes then leave the lag out.
 */
const openLoopDelay = Effect.acquireRelease(
  Effect.sync((): PerfHooks.IntervalHistogram | undefined => {
    // Read off the module rather than imported by name: a runtime without it must still load this file.
    const monitor: typeof PerfHooks.monitorEventLoopDelay | undefined = PerfHooks.monitorEventLoopDelay
    if (typeof monitor !== "function") return undefined
    try {
      const histogram = monitor({ resolution: LOOP_DELAY_RESOLUTION_MS })
      histogram.enable()
      return histogram
    } catch {
      return undefined
    }
  }),
  (histogram) => Effect.sync(() => histogram?.disable())
)

const NANOS_PER_SECOND = 1e9
const MICROS_PER_SECOND = 1e6

// The CPU time already added to the counter, per process like the counter itself: a second metrics
// service in the same process (tests build several) adds only what the first has not.
let cpuCountedMicros = 0

/**
 * The process metrics of one metrics service, with its event-loop histogram: `refresh` sets every gauge
 * to the process's figures now and adds the CPU time used since the last refresh.
 */
export const makeProcessMetrics = Effect.gen(function*() {
  const loopDelay = yield* openLoopDelay
  yield* Metric.set(startTime, PROCESS_STARTED_SECONDS)

  const refresh = Effect.suspend(() => {
    const memory = process.memoryUsage()
    const cpu = process.cpuUsage()
    const cpuMicros = cpu.user + cpu.system
    const newCpuMicros = Math.max(0, cpuMicros - cpuCountedMicros)
    cpuCountedMicros = Math.max(cpuCountedMicros, cpuMicros)
    const updates = [
      Metric.set(residentMemory, memory.rss),
      Metric.set(heapTotal, memory.heapTotal),
      Metric.set(heapUsed, memory.heapUsed),
      Metric.set(externalMemory, memory.external),
      Metric.update(cpuSeconds, newCpuMicros / MICROS_PER_SECOND)
    ]
    if (loopDelay !== undefined && loopDelay.count > 0) {
      updates.push(
        Metric.set(loopDelayP50, loopDelay.percentile(50) / NANOS_PER_SECOND),
        Metric.set(loopDelayP99, loopDelay.percentile(99) / NANOS_PER_SECOND),
        Metric.set(loopDelayMax, loopDelay.max / NANOS_PER_SECOND)
      )
      // Each scrape reports the delays since the previous one, as a gauge should. Node's histogram starts
      // measuring again at its next sample, so a stall that begins within one resolution (20 ms) of a
      // scrape goes unseen; a per-scrape figure is worth that.
      loopDelay.reset()
    }
    return Effect.all(updates, { discard: true })
  })

  return { refresh } as const
})
