/**
 * `GET /metrics` over HTTP: who may read it (METRICS_TOKEN, a platform administrator; everyone else 401
 * or 403 in the shared error shape), the Prometheus text format, and that the service's metrics move
 * with what happens: requests, payments created and changed, webhook attempts, the outbox lag.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { PaymentId } from "../../domain/Ids.ts"
import { PROMETHEUS_CONTENT_TYPE } from "../../domain/System.ts"
import { MetricsService, runnerMetrics } from "../../src/system/Metrics.ts"
import { signUp } from "../support/Accounts.ts"
import { expectFailure, makeClientAs } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { createPayment, newMerchant, refund, retrievePayment, simulate } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"
import { TestReceiver } from "../webhooks/Receiver.ts"

/** Every response body, so that an error's whole envelope can be checked as it was on the wire. */
const responses: Array<string> = []
const clientAs = makeClientAs(responses)
// Raw calls only for what is not an operation of the API: an unknown path, the OpenAPI document.
const call = makeCall()

const METRICS_TOKEN = "metrics-scraper-token-for-tests"
const ADMIN_EMAIL = "metrics-admin@example.test"

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/gy

/**
 * Reads an exposition strictly: every line is a comment, a `# HELP`/`# TYPE` line or a well-formed
 * sample, and every sample belongs to a family whose `# TYPE` came before it.
 */
const parseExposition = (text: string): ReadonlyArray<Sample> => {
  expect(text.endsWith("\n")).toBe(true)
  const samples: Array<Sample> = []
  const declared = new Map<string, string>()
  for (const line of text.slice(0, -1).split("\n")) {
    const type = line.match(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/)
    if (type) {
      expect(declared.has(type[1]!), `family ${type[1]} declared twice`).toBe(false)
      declared.set(type[1]!, type[2]!)
      continue
    }
    if (line.startsWith("#")) {
      expect(line, "a comment line").toMatch(/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* /)
      continue
    }
    const match = line.match(SAMPLE_LINE)
    expect(match, `a sample line: ${line}`).not.toBeNull()
    const [, name, labelText, valueText] = match!
    const family = [...declared.keys()].find((base) =>
      name === base || (["histogram", "summary"].includes(declared.get(base)!) && /^_(bucket|sum|count)$/.test(name!.slice(base.length)) && name!.startsWith(base))
    )
    expect(family, `sample ${name} after its # TYPE`).toBeDefined()
    const labels: Record<string, string> = {}
    if (labelText !== undefined && labelText.length > 0) {
      LABEL.lastIndex = 0
      let consumed = 0
      for (let label = LABEL.exec(labelText); label !== null; label = LABEL.exec(labelText)) {
        labels[label[1]!] = label[2]!.replace(/\\n/g, "\n").replace(/\\"/g, "\"").replace(/\\\\/g, "\\")
        consumed = LABEL.lastIndex
      }
      expect(consumed, `labels of ${line}`).toBe(labelText.length)
    }
    const value = valueText === "+Inf" ? Infinity : valueText === "-Inf" ? -Infinity : Number(valueText)
    expect(valueText === "NaN" || !Number.isNaN(value), `value of ${line}`).toBe(true)
    samples.push({ name: name!, labels, value })
  }
  return samples
}

/** The value of the one sample with exactly these labels; 0 when the series does not exist yet. */
const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string>): number => {
  const wanted = JSON.stringify(Object.entries(labels).sort())
  const found = samples.filter((sample) =>
    sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted
  )
  expect(found.length).toBeLessThanOrEqual(1)
  return found[0]?.value ?? 0
}

/** `GET /metrics` with `token`; answers the exposition text and the response, whose headers it keeps. */
const readMetrics = (app: TestAppShape, token: string) =>
  Effect.flatMap(clientAs(app, token), (api) => api.system.metrics({ withResponse: true }))

const scrape = (app: TestAppShape) =>
  Effect.map(readMetrics(app, METRICS_TOKEN), ([text]) => parseExposition(text))

/** Scrapes until `check` holds (metrics of background work, such as webhook delivery, arrive later). */
const scrapeUntil = (app: TestAppShape, check: (samples: ReadonlyArray<Sample>) => boolean) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 15_000
    while (true) {
      const samples = yield* scrape(app)
      if (check(samples)) return samples
      if (Date.now() > deadline) return yield* Effect.dieMessage("the metric did not reach the expected value")
      yield* Effect.sleep("100 millis")
    }
  })

/** Reading `/metrics` with `token` is refused with `tag`; the whole envelope on the wire is `{ error: { code, message } }`. */
const expectRefused = (app: TestAppShape, token: string, tag: "Unauthorized" | "Forbidden") =>
  Effect.gen(function*() {
    responses.length = 0
    const error = yield* expectFailure(readMetrics(app, token), tag)
    expect(responses.map((text) => JSON.parse(text))).toEqual([
      { error: { code: tag === "Unauthorized" ? "unauthorized" : "forbidden", message: error.message } }
    ])
  })

const suite = Layer.merge(
  testAppLayer({
    platformAdminEmails: [ADMIN_EMAIL],
    metricsToken: Option.some(Redacted.make(METRICS_TOKEN))
  }),
  TestReceiver.layer
)

describe("GET /metrics", () => {
  layer(suite, { timeout: 120_000, excludeTestServices: true })("with METRICS_TOKEN set", (it) => {
    it.effect("answers 401 without a credential or with an unknown one, in the shared error shape", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        yield* expectRefused(app, "", "Unauthorized")
        yield* expectRefused(app, "not-the-metrics-token-at-all", "Unauthorized")
        yield* expectRefused(app, `${METRICS_TOKEN}x`, "Unauthorized")
      }))

    it.effect("answers 403 to a signed-in user who is not a platform administrator, and to an API key", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { owner, key } = yield* newMerchant(app)
        yield* expectRefused(app, owner.token, "Forbidden")
        yield* expectRefused(app, key, "Forbidden")
      }))

    it.effect("serves Prometheus text to the token holder and to a platform administrator", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const [text, withToken] = yield* readMetrics(app, METRICS_TOKEN)
        expect(withToken.status).toBe(200)
        expect(withToken.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4(;|$)/)
        const samples = parseExposition(text)
        expect(samples.length).toBeGreaterThan(0)

        const admin = yield* Effect.promise(() => signUp(app, { email: ADMIN_EMAIL }))
        const [adminText, asAdmin] = yield* readMetrics(app, admin.token)
        expect(asAdmin.status).toBe(200)
        expect(asAdmin.headers["content-type"]).toBe(PROMETHEUS_CONTENT_TYPE)
        parseExposition(adminText)
      }))

    it.effect("counts requests by method, route pattern and status class, with their durations", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const healthOk = { method: "GET", route: "/health", status_class: "2xx" }
        const paymentMissing = { method: "GET", route: "/v1/payments/:id", status_class: "4xx" }
        const before = yield* scrape(app)
        for (let i = 0; i < 3; i++) expect(yield* app.client.system.health()).toEqual({ status: "ok" })
        const { key } = yield* newMerchant(app)
        yield* expectFailure(retrievePayment(app, key, PaymentId.make("pay_doesnotexist")), "NotFound")
        // Raw: a path no operation has.
        expect((yield* call(app, "GET", "/no/such/path")).status).toBe(404)

        const after = yield* scrape(app)
        expect(valueOf(after, "http_server_requests_total", healthOk) - valueOf(before, "http_server_requests_total", healthOk))
          .toBe(3)
        expect(valueOf(after, "http_server_requests_total", paymentMissing) - valueOf(before, "http_server_requests_total", paymentMissing))
          .toBe(1)
        // Paths nobody routes share one series, so a scanner cannot multiply them.
        expect(valueOf(after, "http_server_requests_total", { method: "GET", route: "unmatched", status_class: "4xx" }))
          .toBeGreaterThanOrEqual(1)
        expect(after.some((sample) => sample.labels.route === "/no/such/path")).toBe(false)
        // The histogram: cumulative buckets ending at +Inf, whose count is the requests'.
        const durationCount = valueOf(after, "http_server_request_duration_seconds_count", healthOk)
        expect(durationCount).toBe(valueOf(after, "http_server_requests_total", healthOk))
        expect(valueOf(after, "http_server_request_duration_seconds_bucket", { ...healthOk, le: "+Inf" })).toBe(durationCount)
        const buckets = after.filter((sample) =>
          sample.name === "http_server_request_duration_seconds_bucket" && sample.labels.route === "/health" &&
          sample.labels.status_class === "2xx"
        )
        expect(buckets.map((bucket) => bucket.value)).toEqual([...buckets.map((bucket) => bucket.value)].sort((a, b) => a - b))
        expect(valueOf(after, "http_server_request_duration_seconds_sum", healthOk)).toBeGreaterThan(0)
      }))

    it.effect("counts a payment created and each change of its status", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { key } = yield* newMerchant(app)
        const created = { from: "none", to: "pending", mode: "test" }
        const scanned = { from: "pending", to: "scanned", mode: "test" }
        const paid = { from: "scanned", to: "paid", mode: "test" }
        const refunded = { from: "paid", to: "refunded", mode: "test" }
        const name = "payment_status_transitions_total"
        const before = yield* scrape(app)

        const payment = yield* createPayment(app, key, { amount: "4.00" }, "metrics-create-1")
        const afterCreate = yield* scrape(app)
        expect(valueOf(afterCreate, name, created) - valueOf(before, name, created)).toBe(1)

        // A replayed create is the same payment: nothing more is counted.
        const replayed = yield* createPayment(app, key, { amount: "4.00" }, "metrics-create-1")
        expect(replayed.id).toBe(payment.id)

        yield* simulate(app, key, payment.id, "scanned")
        yield* simulate(app, key, payment.id, "paid")
        expect((yield* refund(app, key, payment.id)).amount).toBe("4.00")

        const after = yield* scrape(app)
        expect(valueOf(after, name, created) - valueOf(before, name, created)).toBe(1)
        expect(valueOf(after, name, scanned) - valueOf(before, name, scanned)).toBe(1)
        expect(valueOf(after, name, paid) - valueOf(before, name, paid)).toBe(1)
        expect(valueOf(after, name, refunded) - valueOf(before, name, refunded)).toBe(1)
      }))

    it.effect("counts webhook delivery attempts by outcome", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const receiver = yield* TestReceiver
        const { owner, storeId } = yield* newMerchant(app)
        const delivered = { outcome: "delivered" }
        const before = valueOf(yield* scrape(app), "webhook_delivery_attempts_total", delivered)

        const route = receiver.route()
        const api = yield* clientAs(app, owner.token)
        const endpoint = yield* api.webhooks.create({ payload: { store_id: storeId, url: route.url, events: ["*"] } })
        yield* api.webhooks.sendTest({ path: { id: endpoint.id } })
        yield* receiver.waitFor(route.path, 1)

        yield* scrapeUntil(app, (samples) => valueOf(samples, "webhook_delivery_attempts_total", delivered) >= before + 1)
      }))

    it.effect("reports the age of the oldest undispatched outbox event", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const samples = yield* scrape(app)
        const lag = samples.filter((sample) => sample.name === "outbox_oldest_undispatched_age_seconds")
        expect(lag).toHaveLength(1)
        expect(lag[0]!.value).toBeGreaterThanOrEqual(0)
        expect(lag[0]!.value).toBeLessThan(60)
      }))

    // The service under test runs in this process, so its figures are this process's.
    it.effect("reports the process's memory, CPU time, start and event-loop delay", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const first = yield* scrape(app)
        const one = (samples: ReadonlyArray<Sample>, name: string) => {
          const found = samples.filter((sample) => sample.name === name)
          expect(found, name).toHaveLength(1)
          return found[0]!.value
        }
        const rss = process.memoryUsage().rss
        expect(one(first, "process_resident_memory_bytes")).toBeGreaterThan(rss / 2)
        expect(one(first, "process_resident_memory_bytes")).toBeLessThan(rss * 2)
        expect(one(first, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0)
        expect(one(first, "nodejs_heap_size_used_bytes")).toBeLessThanOrEqual(one(first, "nodejs_heap_size_total_bytes"))
        expect(one(first, "nodejs_external_memory_bytes")).toBeGreaterThan(0)
        const started = one(first, "process_start_time_seconds")
        expect(started).toBeLessThanOrEqual(Date.now() / 1000)
        expect(started).toBeGreaterThan(Date.now() / 1000 - process.uptime() - 5)

        // The loop held for a second: CPU time grows by about that, and the next scrape's longest delay is
        // at least that long; the scrape after it reports only what came since.
        const cpuBefore = one(first, "process_cpu_seconds_total")
        // A scrape restarts the histogram, whose next sample only starts an interval: wait for it first.
        yield* Effect.sleep("100 millis")
        // Busy for a second of the clock and of the process's own CPU time: on a loaded machine a second of
        // the clock holds less CPU time, and the collector's threads can add CPU time faster than the clock.
        const cpuAtStart = process.cpuUsage()
        const spentMicros = () => {
          const spent = process.cpuUsage(cpuAtStart)
          return spent.user + spent.system
        }
        const blockedUntil = Date.now() + 1_000
        while (Date.now() < blockedUntil || spentMicros() < 1_000_000) {
          // busy: the event loop cannot turn
        }
        // The delay is recorded when the sampling timer fires, at the loop's next turn of timers.
        yield* Effect.sleep("50 millis")
        const second = yield* scrape(app)
        expect(one(second, "process_cpu_seconds_total") - cpuBefore).toBeGreaterThanOrEqual(0.9)
        expect(one(second, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(0.95)
        expect(one(second, "nodejs_eventloop_lag_p99_seconds")).toBeLessThanOrEqual(one(second, "nodejs_eventloop_lag_max_seconds"))
        yield* Effect.sleep("100 millis")
        const third = yield* scrape(app)
        expect(one(third, "nodejs_eventloop_lag_max_seconds")).toBeLessThan(0.95)
      }))

    it.effect("is served on a runner's health port to the METRICS_TOKEN holder only", () =>
      Effect.gen(function*() {
        const onRunner = (authorization?: string) =>
          runnerMetrics.pipe(
            Effect.provideService(
              HttpServerRequest.HttpServerRequest,
              HttpServerRequest.fromWeb(
                new Request("http://runner/metrics", { headers: authorization ? { authorization } : {} })
              )
            ),
            Effect.provide(MetricsService.Default),
            Effect.map(HttpServerResponse.toWeb),
            Effect.flatMap((response) =>
              Effect.promise(async () => ({ status: response.status, type: response.headers.get("content-type"), body: await response.text() }))
            )
          )
        const anonymous = yield* onRunner()
        expect(anonymous.status).toBe(401)
        expect(JSON.parse(anonymous.body).error.code).toBe("unauthorized")
        expect((yield* onRunner("Bearer wrong-token-of-some-length")).status).toBe(401)
        const scraper = yield* onRunner(`Bearer ${METRICS_TOKEN}`)
        expect(scraper.status).toBe(200)
        expect(scraper.type).toMatch(/^text\/plain; version=0\.0\.4(;|$)/)
        expect(parseExposition(scraper.body).some((sample) => sample.name === "outbox_oldest_undispatched_age_seconds"))
          .toBe(true)
      }))

    it.effect("is documented in the OpenAPI document, in the system group, as Prometheus text", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        // Raw: the OpenAPI document is not an operation of the API.
        const document = (yield* call(app, "GET", "/openapi.json")).body
        const operation = document.paths["/metrics"]?.get
        expect(operation).toBeDefined()
        expect(operation.tags).toEqual(["System"])
        expect(operation.summary).toMatch(/Prometheus/)
        expect(operation.description).toMatch(/METRICS_TOKEN/)
        expect(Object.keys(operation.responses["200"].content)).toEqual(["text/plain; version=0.0.4; charset=utf-8"])
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "401", "403"]))
        expect(operation.security).toBeDefined()
      }))
  })
})
