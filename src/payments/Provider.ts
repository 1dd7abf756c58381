/**
 * Payment providers: who is asked whether a KHQR was paid.
 *
 * A payment's QR is identified at the provider by the MD5 of its payload (see Khqr.ts). Live payments ask
 * Bakong, the National Bank of Cambodia's KHQR switch, over HTTP; test payments use the mock provider,
 * which never reports a payment, so a test payment moves only when the merchant simulates it.
 */
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import {
  Context,
  Data,
  Duration,
  Effect,
  Layer,
  Option,
  ParseResult,
  Redacted,
  Schedule,
  Schema
} from "effect"
import { currentDate } from "../platform/Time.ts"
import { SettingsService } from "../settings/Service.ts"
import { traced } from "../platform/Traced.ts"

export type ProviderTransactionStatus =
  | { readonly _tag: "Paid"; readonly paidAt: Date; readonly reference: string | null }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "Failed"; readonly reason: string }

/** The provider could not be asked, or did not answer usably; the payment's state is unknown, not changed. */
export class ProviderUnavailable extends Data.TaggedError("ProviderUnavailable")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface PaymentProviderShape {
  readonly name: "mock" | "bakong"
  /** Asks the provider whether the transaction of this QR (by its md5) was paid. */
  readonly checkTransaction: (md5: string) => Effect.Effect<ProviderTransactionStatus, ProviderUnavailable>
}

const NOT_FOUND: ProviderTransactionStatus = { _tag: "NotFound" }

/** Test mode: no real money moves, so nothing is ever found paid; the simulate route moves test payments. */
export const MockProvider: PaymentProviderShape = {
  name: "mock",
  checkTransaction: () => Effect.succeed(NOT_FOUND)
}

// ---------------------------------------------------------------------------------------------
// Bakong configuration
// ---------------------------------------------------------------------------------------------

export const DEFAULT_BAKONG_BASE_URL = "https://api-bakong.nbc.gov.kh"
export const DEFAULT_BAKONG_TIMEOUT = Duration.seconds(10)

export interface BakongSettings {
  /** Origin (and optional path prefix) of the Bakong open API, without a trailing slash. */
  readonly baseUrl: string
  /** Bakong's API token; without one every check fails with `ProviderUnavailable`. */
  readonly token: Option.Option<Redacted.Redacted<string>>
  /** How long one request may take before it counts as unanswered. */
  readonly timeout: Duration.Duration
}

export interface BakongSettingsInput {
  readonly baseUrl?: string | undefined
  readonly token?: string | Redacted.Redacted<string> | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

/** Fills in the defaults; an empty token counts as none. */
export const makeBakongSettings = (input: BakongSettingsInput = {}): BakongSettings => {
  const token = input.token === undefined
    ? Option.none<Redacted.Redacted<string>>()
    : Option.some(Redacted.isRedacted(input.token) ? input.token : Redacted.make(input.token))
  return {
    baseUrl: (input.baseUrl ?? DEFAULT_BAKONG_BASE_URL).replace(/\/+$/, ""),
    token: Option.filter(token, (value) => Redacted.value(value).trim().length > 0),
    timeout: Duration.decode(input.timeout ?? DEFAULT_BAKONG_TIMEOUT)
  }
}

/**
 * The one reader of the Bakong settings: `bakong_base_url` and `bakong_api_token` as `get` answers them
 * (the platform settings: the database first, then `BAKONG_BASE_URL` / `BAKONG_API_TOKEN`). A base URL
 * that is not http(s) fails the read, naming the setting, rather than sending the token somewhere else.
 */
export const readBakongSettings = <E, R>(
  get: (key: "bakong_base_url" | "bakong_api_token") => Effect.Effect<Option.Option<Redacted.Redacted<string>>, E, R>
): Effect.Effect<BakongSettings, E | ProviderUnavailable, R> =>
  Effect.gen(function*() {
    const token = yield* get("bakong_api_token")
    const baseUrl = Option.map(yield* get("bakong_base_url"), (value) => Redacted.value(value).trim())
    if (Option.isSome(baseUrl) && !/^https?:\/\/[^\s/]+/i.test(baseUrl.value)) {
      return yield* new ProviderUnavailable({
        message: `bakong_base_url (BAKONG_BASE_URL) must be an http(s) URL such as ${DEFAULT_BAKONG_BASE_URL}`
      })
    }
    return makeBakongSettings({ baseUrl: Option.getOrUndefined(baseUrl), token: Option.getOrUndefined(token) })
  })

/**
 * Where and how the Bakong provider connects. The settings are an effect, read at every check, so they
 * can come from a source that changes at run time: the service uses `fromSettings`, the platform settings.
 */
export class BakongConfig extends Context.Tag("payments/BakongConfig")<
  BakongConfig,
  { readonly current: Effect.Effect<BakongSettings, ProviderUnavailable> }
>() {
  /** Fixed values (tests, or a caller that already holds them). */
  static readonly layer = (input: BakongSettingsInput): Layer.Layer<BakongConfig> =>
    Layer.succeed(BakongConfig, { current: Effect.succeed(makeBakongSettings(input)) })

  /** Settings looked up at every check; when the lookup fails, so does the check (ProviderUnavailable). */
  static readonly make = <E, R>(current: Effect.Effect<BakongSettings, E, R>): Layer.Layer<BakongConfig, never, R> =>
    Layer.effect(
      BakongConfig,
      Effect.map(Effect.context<R>(), (context) => ({
        current: current.pipe(
          Effect.provide(context),
          Effect.mapError((cause) => new ProviderUnavailable({ message: "could not read the Bakong settings", cause }))
        )
      }))
    )

  /** The platform settings, read at every check so that an administrator's change applies to the next one. */
  static readonly fromSettings: Layer.Layer<BakongConfig, never, SettingsService> = BakongConfig.make(
    Effect.flatMap(SettingsService, (settings) => readBakongSettings(settings.get))
  )
}

// ---------------------------------------------------------------------------------------------
// Bakong: POST /v1/check_transaction_by_md5
// ---------------------------------------------------------------------------------------------

const CHECK_PATH = "/v1/check_transaction_by_md5"

// Bakong's errorCode values that this check distinguishes.
const BAKONG_ERROR = { notFound: 1, failed: 3, unauthorized: 6 } as const

const TRANSIENT_RETRIES = 2
const RETRY_BASE_DELAY = Duration.millis(100)
const MAX_QUOTED_MESSAGE = 200

const OptionalNullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

const CheckTransactionAnswer = Schema.Struct({
  responseCode: Schema.Number,
  responseMessage: OptionalNullable(Schema.String),
  errorCode: OptionalNullable(Schema.Number),
  data: OptionalNullable(
    Schema.Struct({
      hash: OptionalNullable(Schema.String),
      createdDateMs: OptionalNullable(Schema.Number),
      acknowledgedDateMs: OptionalNullable(Schema.Number)
    })
  )
})
type CheckTransactionAnswer = typeof CheckTransactionAnswer.Type

/** One attempt's failure, and whether trying again soon could help. */
class AttemptFailed extends Data.TaggedError("AttemptFailed")<{
  readonly error: ProviderUnavailable
  readonly transient: boolean
}> {}

const unavailable = (message: string, transient: boolean, cause?: unknown) =>
  new AttemptFailed({
    error: new ProviderUnavailable(cause === undefined ? { message } : { message, cause }),
    transient
  })

// Text from Bakong is quoted in messages to help whoever reads the log, never at any length.
const quote = (text: string | null | undefined): string =>
  text === null || text === undefined || text.length === 0
    ? ""
    : `: ${text.length > MAX_QUOTED_MESSAGE ? `${text.slice(0, MAX_QUOTED_MESSAGE)}…` : text}`

const dateFromEpochMs = (ms: number | null | undefined): Option.Option<Date> =>
  typeof ms === "number" && Number.isFinite(ms) && ms > 0 && !Number.isNaN(new Date(ms).getTime())
    ? Option.some(new Date(ms))
    : Option.none()

const readAnswer = (answer: CheckTransactionAnswer): Effect.Effect<ProviderTransactionStatus, AttemptFailed> => {
  // Bakong answers a bad token with HTTP 200 and errorCode 6 as often as with a 401.
  if (answer.errorCode === BAKONG_ERROR.unauthorized) {
    return Effect.fail(unavailable(`Bakong rejected the API token${quote(answer.responseMessage)}; renew the token`, false))
  }
  if (answer.responseCode === 0) {
    const data = answer.data
    if (data === null || data === undefined) {
      return Effect.fail(unavailable("Bakong answered success without transaction data", false))
    }
    return Effect.map(currentDate, (now): ProviderTransactionStatus => ({
      _tag: "Paid",
      // When Bakong omits the acknowledgement time, the creation time is the next best; failing both, now.
      paidAt: Option.getOrElse(
        Option.orElse(dateFromEpochMs(data.acknowledgedDateMs), () => dateFromEpochMs(data.createdDateMs)),
        () => now
      ),
      reference: data.hash !== null && data.hash !== undefined && data.hash.length > 0 ? data.hash : null
    }))
  }
  if (answer.responseCode === 1) {
    if (answer.errorCode === BAKONG_ERROR.failed) {
      return Effect.succeed({ _tag: "Failed", reason: answer.responseMessage || "Transaction failed." })
    }
    if (answer.errorCode === BAKONG_ERROR.notFound || answer.errorCode === null || answer.errorCode === undefined) {
      return Effect.succeed(NOT_FOUND)
    }
    return Effect.fail(
      unavailable(`Bakong could not check the transaction (errorCode ${answer.errorCode})${quote(answer.responseMessage)}`, false)
    )
  }
  return Effect.fail(unavailable(`Bakong answered an unknown responseCode ${answer.responseCode}`, false))
}

const readResponse = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<ProviderTransactionStatus, AttemptFailed> => {
  const status = response.status
  if (status === 401 || status === 403) {
    return Effect.fail(unavailable(`Bakong rejected the API token (HTTP ${status}); renew the token`, false))
  }
  if (status >= 500) return Effect.fail(unavailable(`Bakong answered HTTP ${status}`, true))
  if (status < 200 || status >= 300) return Effect.fail(unavailable(`Bakong answered HTTP ${status}`, false))
  return response.json.pipe(
    Effect.mapError((error) => unavailable(`Bakong answered HTTP ${status} with a body that is not JSON`, false, error.cause)),
    Effect.flatMap((body) =>
      Effect.mapError(
        Schema.decodeUnknown(CheckTransactionAnswer)(body),
        (error) =>
          unavailable(
            `Bakong answered HTTP ${status} with an unexpected body: ${ParseResult.TreeFormatter.formatErrorSync(error)}`,
            false
          )
      )
    ),
    Effect.flatMap(readAnswer)
  )
}

/** The Bakong check with given settings; the token never appears in an error or a log. */
const checkTransactionWith = (client: HttpClient.HttpClient, settings: BakongSettings) => (md5: string) => {
  if (Option.isNone(settings.token)) {
    return Effect.fail(new ProviderUnavailable({ message: "no Bakong API token configured" }))
  }
  const url = settings.baseUrl + CHECK_PATH
  const request = HttpClientRequest.post(url).pipe(
    HttpClientRequest.bearerToken(settings.token.value),
    HttpClientRequest.acceptJson,
    HttpClientRequest.bodyUnsafeJson({ md5 })
  )
  const attempt = client.execute(request).pipe(
    // The HTTP client's own error holds the request, headers and all; only its underlying cause is kept.
    Effect.mapError((error) =>
      unavailable(`could not reach Bakong at ${settings.baseUrl} (${error.reason})`, error.reason === "Transport", error.cause)
    ),
    Effect.flatMap(readResponse),
    // A timeout is not retried: whoever asked checks again on its own schedule, and three slow attempts
    // would hold this check for three times the timeout.
    Effect.timeoutFail({
      duration: settings.timeout,
      onTimeout: () => unavailable(`Bakong did not answer within ${Duration.format(settings.timeout)}`, false)
    })
  )
  return attempt.pipe(
    Effect.retry({
      while: (failure) => failure.transient,
      times: TRANSIENT_RETRIES,
      schedule: Schedule.jittered(Schedule.exponential(RETRY_BASE_DELAY))
    }),
    Effect.mapError((failure) => failure.error)
  )
}

/** Live payments: asks Bakong's open API whether a KHQR (by its md5) was paid. */
export class BakongProvider extends Effect.Service<BakongProvider>()("payments/BakongProvider", {
  effect: Effect.gen(function*() {
    const config = yield* BakongConfig
    const client = yield* HttpClient.HttpClient

    const checkTransaction = traced("BakongProvider.checkTransaction")(function*(md5: string) {
      yield* Effect.annotateCurrentSpan("md5", md5)
      const settings = yield* config.current
      return yield* checkTransactionWith(client, settings)(md5)
    })

    /** The same provider under another token, e.g. a store's own Bakong credentials. */
    const withToken = (token: Redacted.Redacted<string>): PaymentProviderShape => ({
      name: "bakong",
      checkTransaction: traced("BakongProvider.checkTransaction")(function*(md5: string) {
        yield* Effect.annotateCurrentSpan("md5", md5)
        const settings = yield* config.current
        return yield* checkTransactionWith(client, { ...settings, token: Option.some(token) })(md5)
      })
    })

    return { name: "bakong" as const, checkTransaction, withToken }
  }),
  dependencies: [FetchHttpClient.layer]
}) {}
