/**
 * The whole service, started in the test process on a free loopback port against the suite's own
 * database, with a typed HttpApiClient and a raw fetch for what the typed client cannot send
 * (malformed JSON, wrong methods, unknown paths).
 */
import { FetchHttpClient, HttpServer } from "@effect/platform"
import { Context, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { SqlClient } from "@effect/sql"
import { randomBytes } from "node:crypto"
import { type ApiClient, makeApiClient } from "../../domain/Client.ts"
import { ServiceLive } from "../../runtime/App.ts"
import { AppConfig, type AppConfigOverrides } from "../../src/platform/Config.ts"
import { decryptSecret, MasterKey } from "../../src/platform/Crypto.ts"
import { TestDatabase } from "./TestDatabase.ts"

export interface TestAppShape {
  readonly baseUrl: string
  readonly client: ApiClient
  readonly fetch: (path: string, init?: RequestInit) => Promise<Response>
  readonly database: TestDatabase["Type"]
  /** The mail the service sent to `recipient`, oldest first, opened (it is stored sealed). */
  readonly mailTo: (recipient: string) => Promise<ReadonlyArray<SentMail>>
}

export interface SentMail {
  readonly subject: string
  readonly body: string
}

export class TestApp extends Context.Tag("test/TestApp")<TestApp, TestAppShape>() {}

const generousPublicRateLimits = {
  publicPageViewsPerAddressPerMinute: 100_000,
  hostedPlaysPerAddressPerMinute: 100_000,
  hostedPlaysPerCustomerPerMinute: 100_000,
  cardRevealsPerPlayPerMinute: 100_000,
  linkPaymentsPerAddressPerMinute: 100_000,
  linkPaymentsPerLinkPerMinute: 100_000,
  referralVisitsPerAddressPerMinute: 100_000,
  referralVisitsPerCodePerMinute: 100_000,
  passwordResetsPerAddressPerHour: 100_000,
  passwordResetsPerEmailPerHour: 100_000,
  verificationResendsPerAddressPerHour: 100_000,
  verificationResendsPerEmailPerHour: 100_000
} as const

/** Configuration a test run needs: loopback, a free port, the suite's database and data directory. */
export const testConfigLayer = (overrides: AppConfigOverrides = {}) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const database = yield* TestDatabase
    return AppConfig.make({
      port: 0,
      host: "127.0.0.1",
      databaseUrl: database.url,
      dataDir: database.dataDir,
      masterKey: Option.some(Redacted.make(new Uint8Array(randomBytes(32)))),
      webhookAllowPrivateNetworks: true,
      shutdownGraceSeconds: 1,
      // Suites register many users from one address; the throttle's own test sets a small limit.
      registrationsPerAddressPerHour: 100_000,
      ...overrides,
      // Suites play, pay and visit from one address far faster than a person; the limits' own tests set
      // small ones. The sign-in limits stay as configured.
      rateLimits: { ...generousPublicRateLimits, ...overrides.rateLimits }
    })
  }))

const makeTestApp = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const database = yield* TestDatabase
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${server.address.port}`
  const client = yield* makeApiClient(baseUrl).pipe(Effect.provide(FetchHttpClient.layer))
  const sql = yield* SqlClient.SqlClient
  const { key } = yield* MasterKey
  const mailTo = (recipient: string) =>
    Effect.runPromise(Effect.gen(function*() {
      const rows = yield* sql<{ subject: string; body_sealed: string }>`
        SELECT subject, body_sealed FROM outgoing_mail WHERE recipient = ${recipient} AND body_sealed IS NOT NULL ORDER BY id`
      return yield* Effect.forEach(rows, (row) =>
        Effect.map(decryptSecret(key, row.body_sealed), (body): SentMail => ({ subject: row.subject, body })))
    }))
  return TestApp.of({
    baseUrl,
    client,
    fetch: (path, init) => fetch(new URL(path, baseUrl), init),
    database,
    mailTo
  })
})

/**
 * Collects every log line (logfmt, all levels) of a service, for tests that check what is logged;
 * without one, only warnings and errors reach the console.
 */
export const collectLogs = (sink: Array<string>) =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, Logger.map(Logger.logfmtLogger, (line) => void sink.push(line))),
    Logger.minimumLogLevel(LogLevel.All)
  )

/** The running service for one suite; torn down (server, cluster, database) when the suite ends. */
export const testAppLayer = (overrides: AppConfigOverrides = {}, options: { readonly logs?: Array<string> } = {}) =>
  Layer.effect(TestApp, makeTestApp).pipe(
    Layer.provideMerge(ServiceLive),
    Layer.provideMerge(testConfigLayer(overrides)),
    Layer.provideMerge(TestDatabase.layer),
    // Request lines would drown the test report; warnings and errors still show.
    Layer.provide(options.logs ? collectLogs(options.logs) : Logger.minimumLogLevel(LogLevel.Warning))
  )
