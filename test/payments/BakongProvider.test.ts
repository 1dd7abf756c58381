import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import {
  BakongConfig,
  BakongProvider,
  type BakongSettingsInput,
  DEFAULT_BAKONG_BASE_URL,
  MockProvider,
  type PaymentProviderShape,
  ProviderUnavailable,
  readBakongSettings
} from "../../src/payments/Provider.ts"

const TOKEN = "bakong-secret-token-e3b0c44298fc1c149afbf4c8996fb924"
const MD5 = "83b2121b39edd1de3521ddb0c560b0a3"

// ---------------------------------------------------------------------------------------------
// A fake Bakong on a loopback port
// ---------------------------------------------------------------------------------------------

interface RecordedRequest {
  readonly method: string | undefined
  readonly path: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

interface Reply {
  readonly status?: number
  /** An object is sent as JSON; a string as it is. */
  readonly body?: unknown
  readonly delayMs?: number
}

interface FakeBakong {
  readonly baseUrl: string
  readonly requests: ReadonlyArray<RecordedRequest>
}

const startFakeBakong = (reply: (request: RecordedRequest, index: number) => Reply) =>
  Effect.acquireRelease(
    Effect.async<{ server: Server; fake: FakeBakong }>((resume) => {
      const requests: Array<RecordedRequest> = []
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const recorded: RecordedRequest = {
            method: req.method,
            path: req.url,
            headers: req.headers,
            body: Buffer.concat(chunks).toString("utf8")
          }
          requests.push(recorded)
          const { status = 200, body = "", delayMs = 0 } = reply(recorded, requests.length - 1)
          const text = typeof body === "string" ? body : JSON.stringify(body)
          setTimeout(() => {
            if (res.destroyed) return
            res.writeHead(status, { "content-type": "application/json" })
            res.end(text)
          }, delayMs)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, fake: { baseUrl: `http://127.0.0.1:${port}`, requests } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ fake }) => fake))

const providerWith = (settings: BakongSettingsInput) =>
  BakongProvider.DefaultWithoutDependencies.pipe(
    Layer.provide(BakongConfig.layer(settings)),
    Layer.provide(FetchHttpClient.layer)
  )

/** Runs one check against the fake with the given settings (the fake's URL and TOKEN unless overridden). */
const check = (fake: FakeBakong, settings: BakongSettingsInput = {}) =>
  Effect.gen(function*() {
    const provider: PaymentProviderShape = yield* BakongProvider
    return yield* Effect.either(provider.checkTransaction(MD5))
  }).pipe(Effect.provide(providerWith({ baseUrl: fake.baseUrl, token: TOKEN, ...settings })))

const unavailableFrom = (result: Either.Either<unknown, ProviderUnavailable>): ProviderUnavailable => {
  if (Either.isRight(result)) throw new Error(`expected ProviderUnavailable, got ${JSON.stringify(result.right)}`)
  expect(result.left).toBeInstanceOf(ProviderUnavailable)
  expect(result.left._tag).toBe("ProviderUnavailable")
  // Whatever went wrong, the token stays out of the error.
  expect(result.left.message).not.toContain(TOKEN)
  expect(String(result.left)).not.toContain(TOKEN)
  expect(JSON.stringify(result.left)).not.toContain(TOKEN)
  return result.left
}

const paidAnswer = {
  responseCode: 0,
  responseMessage: "Getting transaction successfully.",
  errorCode: null,
  data: {
    hash: "8465d722d7d5065f2886b0d2fbb3c4ba4c1bf3a6c4d4f0f5d1a1d1a5e7b4c3a2",
    fromAccountId: "payer@abaa",
    toAccountId: "test_merchant@devb",
    currency: "USD",
    amount: 12.5,
    description: "",
    createdDateMs: 1_714_557_650_000,
    acknowledgedDateMs: 1_714_557_660_000
  }
}

const notFoundAnswer = {
  responseCode: 1,
  responseMessage: "Transaction could not be found. Please check and try again.",
  errorCode: 1,
  data: null
}

// These tests use the live clock: the fake server answers in real time.
describe("BakongProvider", () => {
  it.live("reports a paid transaction with its acknowledgement time and hash", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: paidAnswer }))
      const result = yield* check(fake)
      expect(result).toEqual(Either.right({
        _tag: "Paid",
        paidAt: new Date(1_714_557_660_000),
        reference: paidAnswer.data.hash
      }))
    })))

  it.live("posts the md5 as JSON with the bearer token to /v1/check_transaction_by_md5", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: notFoundAnswer }))
      yield* check(fake)
      expect(fake.requests).toHaveLength(1)
      const [request] = fake.requests
      expect(request?.method).toBe("POST")
      expect(request?.path).toBe("/v1/check_transaction_by_md5")
      expect(request?.headers.authorization).toBe(`Bearer ${TOKEN}`)
      expect(request?.headers["content-type"]).toMatch(/^application\/json/)
      expect(JSON.parse(request?.body ?? "")).toEqual({ md5: MD5 })
    })))

  it.live("keeps a path prefix of the base URL and drops a trailing slash", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: notFoundAnswer }))
      yield* check(fake, { baseUrl: `${fake.baseUrl}/sandbox/` })
      expect(fake.requests[0]?.path).toBe("/sandbox/v1/check_transaction_by_md5")
    })))

  it.live("falls back to the creation time without an acknowledgement time, and to no reference without a hash", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({
        body: { ...paidAnswer, data: { createdDateMs: 1_714_557_650_000 } }
      }))
      const result = yield* check(fake)
      expect(result).toEqual(Either.right({ _tag: "Paid", paidAt: new Date(1_714_557_650_000), reference: null }))
    })))

  it.live("uses the current time when the answer has no timestamps at all", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: { responseCode: 0, errorCode: null, data: { hash: "h" } } }))
      const before = Date.now()
      const result = yield* check(fake)
      if (Either.isLeft(result) || result.right._tag !== "Paid") throw new Error("expected Paid")
      expect(result.right.paidAt.getTime()).toBeGreaterThanOrEqual(before)
      expect(result.right.paidAt.getTime()).toBeLessThanOrEqual(Date.now())
    })))

  it.live("reports a transaction Bakong does not know as NotFound", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: notFoundAnswer }))
      expect(yield* check(fake)).toEqual(Either.right({ _tag: "NotFound" }))
    })))

  it.live("reports a failed transaction (errorCode 3) as Failed with Bakong's reason", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({
        body: { responseCode: 1, responseMessage: "Transaction failed.", errorCode: 3, data: null }
      }))
      expect(yield* check(fake)).toEqual(Either.right({ _tag: "Failed", reason: "Transaction failed." }))
    })))

  it.live("fails with ProviderUnavailable on HTTP 401, naming the token problem but not the token, without retrying", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ status: 401, body: { message: `invalid token ${TOKEN}` } }))
      const error = unavailableFrom(yield* check(fake))
      expect(error.message).toMatch(/rejected the API token \(HTTP 401\)/)
      expect(fake.requests).toHaveLength(1)
    })))

  it.live("treats errorCode 6 in a 200 answer as a rejected token", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({
        body: { responseCode: 1, responseMessage: "Unauthorized, not yet requested for token or code invalid", errorCode: 6, data: null }
      }))
      const error = unavailableFrom(yield* check(fake))
      expect(error.message).toMatch(/rejected the API token/)
      expect(fake.requests).toHaveLength(1)
    })))

  it.live("retries a 500 and reports the answer of the next attempt", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong((_, index) =>
        index === 0 ? { status: 500, body: "Internal Server Error" } : { body: paidAnswer }
      )
      const result = yield* check(fake)
      expect(Either.isRight(result) && result.right._tag).toBe("Paid")
      expect(fake.requests).toHaveLength(2)
      expect(fake.requests[1]?.headers.authorization).toBe(`Bearer ${TOKEN}`)
    })))

  it.live("gives up after two retries of a persistent 503", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ status: 503, body: "" }))
      const error = unavailableFrom(yield* check(fake))
      expect(error.message).toBe("Bakong answered HTTP 503")
      expect(fake.requests).toHaveLength(3)
    })))

  it.live("does not retry another 4xx", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ status: 400, body: { responseMessage: "bad request" } }))
      const error = unavailableFrom(yield* check(fake))
      expect(error.message).toBe("Bakong answered HTTP 400")
      expect(fake.requests).toHaveLength(1)
    })))

  it.live("fails with ProviderUnavailable when the answer is slower than the configured timeout", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: paidAnswer, delayMs: 3_000 }))
      const started = Date.now()
      const error = unavailableFrom(yield* check(fake, { timeout: Duration.millis(200) }))
      expect(error.message).toMatch(/did not answer within/)
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(fake.requests).toHaveLength(1)
    })))

  it.live("fails with ProviderUnavailable on a body that is not JSON", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: "<html>Bad Gateway</html>" }))
      const error = unavailableFrom(yield* check(fake))
      expect(error.message).toBe("Bakong answered HTTP 200 with a body that is not JSON")
      expect(fake.requests).toHaveLength(1)
    })))

  it.live("fails with ProviderUnavailable on JSON of another shape", () =>
    Effect.scoped(Effect.gen(function*() {
      for (const body of [{ status: "ok" }, { responseCode: "0" }, { responseCode: 0, data: null }, { responseCode: 7 }, [1, 2]]) {
        const fake = yield* startFakeBakong(() => ({ body }))
        const error = unavailableFrom(yield* check(fake))
        expect(error.message).toMatch(/^Bakong answered/)
      }
    })))

  it.live("fails with ProviderUnavailable on an unknown errorCode instead of guessing", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({
        body: { responseCode: 1, responseMessage: "Cannot connect to server.", errorCode: 9, data: null }
      }))
      const error = unavailableFrom(yield* check(fake))
      expect(error.message).toBe("Bakong could not check the transaction (errorCode 9): Cannot connect to server.")
    })))

  it.live("fails with ProviderUnavailable without asking Bakong when no token is configured", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: paidAnswer }))
      for (const token of [undefined, "", "   "]) {
        const error = unavailableFrom(yield* check(fake, { token }))
        expect(error.message).toBe("no Bakong API token configured")
      }
      expect(fake.requests).toHaveLength(0)
    })))

  it.live("fails with ProviderUnavailable, after retrying, when nothing listens at the base URL", () =>
    Effect.gen(function*() {
      // A port that was just free: the fake is started and stopped at once.
      const baseUrl = yield* Effect.scoped(Effect.map(startFakeBakong(() => ({})), (fake) => fake.baseUrl))
      const error = unavailableFrom(yield* check({ baseUrl, requests: [] }))
      expect(error.message).toBe(`could not reach Bakong at ${baseUrl} (Transport)`)
    }))

  it.live("checks with another token through withToken", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: notFoundAnswer }))
      const result = yield* Effect.gen(function*() {
        const bakong = yield* BakongProvider
        const storeProvider = bakong.withToken(Redacted.make("store-token"))
        expect(storeProvider.name).toBe("bakong")
        return yield* storeProvider.checkTransaction(MD5)
      }).pipe(Effect.provide(providerWith({ baseUrl: fake.baseUrl })))
      expect(result).toEqual({ _tag: "NotFound" })
      expect(fake.requests[0]?.headers.authorization).toBe("Bearer store-token")
    })))

  it.live("reads its settings at every check through BakongConfig.make, and fails the check when they cannot be read", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* startFakeBakong(() => ({ body: notFoundAnswer }))
      let reads = 0
      const layer = BakongProvider.DefaultWithoutDependencies.pipe(
        Layer.provide(BakongConfig.make(Effect.suspend(() => {
          reads++
          return reads === 3
            ? Effect.fail("settings store down")
            : Effect.succeed({ baseUrl: fake.baseUrl, token: Option.some(Redacted.make(`t${reads}`)), timeout: Duration.seconds(5) })
        }))),
        Layer.provide(FetchHttpClient.layer)
      )
      const results = yield* Effect.gen(function*() {
        const bakong = yield* BakongProvider
        return yield* Effect.all([1, 2, 3].map(() => Effect.either(bakong.checkTransaction(MD5))))
      }).pipe(Effect.provide(layer))
      expect(fake.requests.map((request) => request.headers.authorization)).toEqual(["Bearer t1", "Bearer t2"])
      expect(unavailableFrom(results[2] ?? Either.right(null)).message).toBe("could not read the Bakong settings")
    })))
})

describe("readBakongSettings", () => {
  // What the platform settings answer (the database first, then BAKONG_BASE_URL / BAKONG_API_TOKEN).
  const settingsFrom = (values: Partial<Record<"bakong_base_url" | "bakong_api_token", string>>) =>
    readBakongSettings((key) => Effect.succeed(Option.map(Option.fromNullable(values[key]), Redacted.make)))

  it.effect("defaults to Bakong's production API, no token and a 10 second timeout", () =>
    Effect.gen(function*() {
      const settings = yield* settingsFrom({})
      expect(settings.baseUrl).toBe(DEFAULT_BAKONG_BASE_URL)
      expect(settings.baseUrl).toBe("https://api-bakong.nbc.gov.kh")
      expect(Option.isNone(settings.token)).toBe(true)
      expect(Duration.toMillis(settings.timeout)).toBe(10_000)
    }))

  it.effect("reads bakong_base_url and bakong_api_token, keeping the token redacted", () =>
    Effect.gen(function*() {
      const settings = yield* settingsFrom({
        bakong_base_url: " https://sit-api-bakong.nbc.gov.kh/ ",
        bakong_api_token: TOKEN
      })
      expect(settings.baseUrl).toBe("https://sit-api-bakong.nbc.gov.kh")
      expect(Option.map(settings.token, Redacted.value)).toEqual(Option.some(TOKEN))
      expect(String(settings.token)).not.toContain(TOKEN)
    }))

  it.effect("treats an empty token as no token", () =>
    Effect.gen(function*() {
      expect(Option.isNone((yield* settingsFrom({ bakong_api_token: " " })).token)).toBe(true)
    }))

  it.effect("refuses a base URL that is not an http(s) URL, naming the setting and its variable", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(settingsFrom({ bakong_base_url: "api-bakong.nbc.gov.kh" }))
      if (Either.isRight(result)) throw new Error("accepted")
      expect(result.left).toBeInstanceOf(ProviderUnavailable)
      expect(result.left.message).toContain("bakong_base_url")
      expect(result.left.message).toContain("BAKONG_BASE_URL")
    }))
})

describe("MockProvider", () => {
  it.effect("never finds a transaction: test payments move only through simulate", () =>
    Effect.gen(function*() {
      expect(MockProvider.name).toBe("mock")
      expect(yield* MockProvider.checkTransaction(MD5)).toEqual({ _tag: "NotFound" })
    }))
})
