/**
 * The service's configuration: every environment variable of the Configuration table in API.md,
 * read only through `Config`, with the documented defaults. The rules in `src/` read it through the
 * `AppConfig` tag; the process wiring in `runtime/` provides `AppConfig.layer` at start-up.
 */
import { Config, ConfigError, Context, Effect, Either, Layer, Option, Redacted } from "effect"
import { DECIMAL_AMOUNT } from "../../domain/Money.ts"

const booleanFlag = (name: string) =>
  Config.string(name).pipe(
    Config.mapOrFail((raw) => {
      const value = raw.trim().toLowerCase()
      if (["true", "1", "yes", "on"].includes(value)) return Either.right(true)
      if (["false", "0", "no", "off", ""].includes(value)) return Either.right(false)
      return Either.left(ConfigError.InvalidData([], `expected true or false, got "${raw}"`))
    }),
    Config.withDefault(false)
  )

const positiveInteger = (name: string, fallback: number) => wholeNumberFrom(name, 1, fallback)

/** A whole number of at least `least`, or `fallback` when the variable is not set. */
const wholeNumberFrom = (name: string, least: number, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({
      message: least === 1 ? "expected a positive whole number" : `expected a whole number of at least ${least}`,
      validation: (n) => n >= least
    }),
    Config.withDefault(fallback)
  )

const positiveNumber = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.validate({ message: "expected a positive number", validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

/** `smtp://user:pass@host:port` or `smtps://…`; kept redacted, since it may carry the password. */
const smtpUrl = Config.string("SMTP_URL").pipe(
  Config.mapOrFail((raw) => {
    const value = raw.trim()
    if (value.length === 0) return Either.right(Option.none<Redacted.Redacted<string>>())
    try {
      const url = new URL(value)
      return url.protocol === "smtp:" || url.protocol === "smtps:"
        ? Either.right(Option.some(Redacted.make(value)))
        : Either.left(ConfigError.InvalidData([], `expected smtp:// or smtps://, got ${url.protocol}//`))
    } catch {
      return Either.left(ConfigError.InvalidData([], "expected a URL such as smtp://user:password@smtp.example.com:587"))
    }
  }),
  Config.withDefault(Option.none<Redacted.Redacted<string>>())
)

// Read as a string and wrapped afterwards: a failure inside Config.redacted would lose the variable's name.
const masterKey = Config.string("MASTER_KEY").pipe(
  Config.mapOrFail((value) => {
    const bytes = Buffer.from(value.trim(), "base64")
    return bytes.length === 32
      ? Either.right(Redacted.make(new Uint8Array(bytes)))
      : Either.left(
        ConfigError.InvalidData([], `expected 32 bytes encoded in base64, got ${bytes.length} bytes`)
      )
  }),
  Config.option
)

export const appConfig = Config.all({
  // Config.port refuses 0, which API.md documents as "pick a free port".
  port: Config.integer("PORT").pipe(
    Config.validate({ message: "expected a port number from 0 to 65535", validation: (n) => n >= 0 && n <= 65535 }),
    Config.withDefault(3000)
  ),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  // Connections each process may hold at once: every runner and API node keeps its own pool, and together
  // they must stay under the server's max_connections (100 by default), with room for the LISTEN connection
  // each process adds.
  databasePoolSize: Config.integer("DATABASE_POOL_SIZE").pipe(
    Config.validate({ message: "expected a number of connections from 1 to 1000", validation: (n) => n >= 1 && n <= 1000 }),
    Config.withDefault(20)
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  masterKey,
  publicBaseUrl: Config.url("PUBLIC_BASE_URL").pipe(
    Config.map((url) => url.toString().replace(/\/$/, "")),
    Config.option
  ),
  webhookAllowPrivateNetworks: booleanFlag("WEBHOOK_ALLOW_PRIVATE_NETWORKS"),
  platformAdminEmails: Config.string("PLATFORM_ADMIN_EMAILS").pipe(
    Config.map((raw) =>
      raw.split(",").map((email) => email.trim().toLowerCase()).filter((email) => email.length > 0)
    ),
    Config.withDefault([] as ReadonlyArray<string>)
  ),
  paymentDefaultExpirySeconds: positiveInteger("PAYMENT_DEFAULT_EXPIRY_SECONDS", 900),
  refundMfaThreshold: Config.string("REFUND_MFA_THRESHOLD").pipe(
    Config.validate({ message: "expected a positive decimal amount such as 500.00", validation: (s) => DECIMAL_AMOUNT.test(s) }),
    Config.option
  ),
  production: Config.string("NODE_ENV").pipe(
    Config.map((env) => env === "production"),
    Config.withDefault(false)
  ),
  /** How long processed cluster messages, dispatched outbox rows and webhook deliveries are kept. */
  retention: Config.all({
    clusterMessagesDays: positiveInteger("RETENTION_CLUSTER_MESSAGES_DAYS", 7),
    outboxDays: positiveInteger("RETENTION_OUTBOX_DAYS", 7),
    webhookDeliveriesDays: positiveInteger("RETENTION_WEBHOOK_DELIVERIES_DAYS", 30),
    /** Delivered (or given-up) mail keeps its sealed body this long, then only its record stays. */
    mailBodiesHours: positiveInteger("RETENTION_MAIL_BODIES_HOURS", 1),
    mailDays: positiveInteger("RETENTION_MAIL_DAYS", 30)
  }),
  /** Outgoing mail: where it goes, who sends it, and how a failed send is retried. */
  mail: Config.all({
    smtpUrl,
    from: Config.string("MAIL_FROM").pipe(Config.withDefault("KHQR Platform <no-reply@localhost>")),
    /** The wait before the first retry; each further one doubles, up to `retryMaxSeconds`. */
    retryFirstSeconds: positiveNumber("MAIL_RETRY_FIRST_SECONDS", 30),
    retryMaxSeconds: positiveNumber("MAIL_RETRY_MAX_SECONDS", 30 * 60),
    /** A mail still not accepted this long after it was queued is given up (status `failed`). */
    giveUpHours: positiveNumber("MAIL_GIVE_UP_HOURS", 48),
    /** How long one SMTP connection attempt or answer may take. */
    timeoutSeconds: positiveNumber("MAIL_TIMEOUT_SECONDS", 20)
  }),
  /** Where spans go: OTLP over HTTP to this base URL (`/v1/traces` appended); unset (or empty) exports nothing. */
  telemetry: Config.all({
    otlpEndpoint: Config.string("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(
      Config.mapOrFail((raw) => {
        const value = raw.trim()
        if (value.length === 0) return Either.right(Option.none<string>())
        try {
          const url = new URL(value)
          return url.protocol === "http:" || url.protocol === "https:"
            ? Either.right(Option.some(url.toString().replace(/\/$/, "")))
            : Either.left(ConfigError.InvalidData([], `expected an http or https URL, got "${raw}"`))
        } catch {
          return Either.left(ConfigError.InvalidData([], `expected a URL such as http://127.0.0.1:4318, got "${raw}"`))
        }
      }),
      Config.withDefault(Option.none<string>())
    ),
    otlpProtocol: Config.literal("http/protobuf", "http/json")("OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
      Config.withDefault("http/protobuf" as const)
    ),
    serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("khqr-merchant-platform")),
    /** The batch span processor's delay between exports, in milliseconds (OpenTelemetry's own variable). */
    exportDelayMillis: positiveInteger("OTEL_BSP_SCHEDULE_DELAY", 5000)
  }),
  /** A bearer token for a scraper of `GET /metrics`; platform administrators use their session instead. */
  metricsToken: Config.string("METRICS_TOKEN").pipe(
    Config.mapOrFail((raw) => {
      const token = raw.trim()
      if (token.length === 0) return Either.right(Option.none<Redacted.Redacted<string>>())
      // A short token could be guessed by a scraper's neighbours; ask for a real secret.
      return token.length >= 16
        ? Either.right(Option.some(Redacted.make(token)))
        : Either.left(ConfigError.InvalidData([], `expected at least 16 characters, got ${token.length}`))
    }),
    Config.withDefault(Option.none<Redacted.Redacted<string>>())
  ),
  /** How long shutdown waits for in-flight requests before closing the remaining connections. */
  shutdownGraceSeconds: positiveInteger("SHUTDOWN_GRACE_SECONDS", 10),
  /** Live status streams (`GET /checkout/{id}/events`) one client address may hold open at once. */
  sseMaxStreamsPerAddress: positiveInteger("SSE_MAX_STREAMS_PER_ADDRESS", 100),
  /** How often a live status stream is pinged (a comment line proxies see) and its payment read again. */
  ssePingSeconds: positiveInteger("SSE_PING_SECONDS", 15),
  /**
   * How long a claimed Idempotency-Key whose request never answered (its process died) blocks retries
   * before one takes it over. Longer than any create or refund takes; at least 5 s.
   */
  idempotencyLeaseSeconds: wholeNumberFrom("IDEMPOTENCY_LEASE_SECONDS", 5, 30),
  /** Registrations one client address may make in an hour; more are answered 429 for the next hour. */
  registrationsPerAddressPerHour: positiveInteger("REGISTRATIONS_PER_ADDRESS_PER_HOUR", 20),
  /**
   * Limits of the public and unauthenticated routes (README "Rate limits"), set far above what a person
   * does, so that only scripts meet them.
   */
  rateLimits: Config.all({
    publicPageViewsPerAddressPerMinute: positiveInteger("PUBLIC_PAGE_VIEWS_PER_ADDRESS_PER_MINUTE", 300),
    hostedPlaysPerAddressPerMinute: positiveInteger("HOSTED_PLAYS_PER_ADDRESS_PER_MINUTE", 60),
    hostedPlaysPerCustomerPerMinute: positiveInteger("HOSTED_PLAYS_PER_CUSTOMER_PER_MINUTE", 10),
    cardRevealsPerPlayPerMinute: positiveInteger("CARD_REVEALS_PER_PLAY_PER_MINUTE", 10),
    linkPaymentsPerAddressPerMinute: positiveInteger("LINK_PAYMENTS_PER_ADDRESS_PER_MINUTE", 10),
    linkPaymentsPerLinkPerMinute: positiveInteger("LINK_PAYMENTS_PER_LINK_PER_MINUTE", 60),
    referralVisitsPerAddressPerMinute: positiveInteger("REFERRAL_VISITS_PER_ADDRESS_PER_MINUTE", 30),
    referralVisitsPerCodePerMinute: positiveInteger("REFERRAL_VISITS_PER_CODE_PER_MINUTE", 300),
    passwordResetsPerAddressPerHour: positiveInteger("PASSWORD_RESETS_PER_ADDRESS_PER_HOUR", 20),
    passwordResetsPerEmailPerHour: positiveInteger("PASSWORD_RESETS_PER_EMAIL_PER_HOUR", 5),
    verificationResendsPerAddressPerHour: positiveInteger("VERIFICATION_RESENDS_PER_ADDRESS_PER_HOUR", 20),
    verificationResendsPerEmailPerHour: positiveInteger("VERIFICATION_RESENDS_PER_EMAIL_PER_HOUR", 5),
    loginFailuresPerEmailAndAddress: positiveInteger("LOGIN_FAILURES_PER_EMAIL_AND_ADDRESS", 5),
    loginFailuresPerAddress: positiveInteger("LOGIN_FAILURES_PER_ADDRESS", 100),
    loginFailuresPerEmail: positiveInteger("LOGIN_FAILURES_PER_EMAIL", 100)
  }),
  /** The largest request body read; a larger one is refused with 413 before it is parsed. */
  maxBodyBytes: positiveInteger("MAX_BODY_BYTES", 1024 * 1024),
  /** Minutes a console session may stay unused before it ends (its fixed lifetime still applies). */
  consoleIdleMinutes: positiveInteger("CONSOLE_IDLE_MINUTES", 30)
})

export type AppConfigShape = Config.Config.Success<typeof appConfig>

/** Rules across variables, checked before anything (such as the database) is touched. */
const checkConsistency = (config: AppConfigShape) =>
  config.production && Option.isNone(config.masterKey)
    ? Effect.fail(new ConfigurationError("Configuration error: MASTER_KEY is required when NODE_ENV=production"))
    : Effect.succeed(config)

export class AppConfig extends Context.Tag("platform/AppConfig")<AppConfig, AppConfigShape>() {
  static readonly layer = Layer.effect(
    AppConfig,
    Effect.flatMap(Effect.mapError(appConfig, describeConfigError), checkConsistency)
  )
  static readonly make = (overrides: AppConfigOverrides = {}) =>
    Layer.effect(
      AppConfig,
      Effect.map(Effect.mapError(appConfig, describeConfigError), (config) => ({
        ...config,
        ...overrides,
        rateLimits: { ...config.rateLimits, ...overrides.rateLimits }
      }))
    )
}

/** Values that replace what the environment says; rate limits one by one. */
export type AppConfigOverrides = Partial<Omit<AppConfigShape, "rateLimits">> & {
  readonly rateLimits?: Partial<AppConfigShape["rateLimits"]>
}

/** A start-up failure in configuration: one line naming the variable. */
export class ConfigurationError extends Error {
  readonly _tag = "ConfigurationError"
}

export function describeConfigError(error: ConfigError.ConfigError): ConfigurationError {
  const lines: Array<string> = []
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      case "InvalidData":
      case "MissingData":
      case "SourceUnavailable":
      case "Unsupported": {
        const name = e.path.join("_") || "configuration"
        const reason = e._op === "MissingData" ? "is required" : `is invalid: ${e.message}`
        lines.push(`${name} ${reason}`)
        return
      }
    }
  }
  walk(error)
  return new ConfigurationError(`Configuration error: ${[...new Set(lines)].join("; ")}`)
}
