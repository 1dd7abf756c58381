/**
 * The service's configuration in a test: loopback, a free port, the suite's database and data directory,
 * and public limits no suite reaches by accident. Apart from the whole service (TestApp.ts), so the
 * in-process rules load only what their rules need.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { AppConfig, type AppConfigOverrides } from "../../src/platform/Config.ts"
import { TestDatabase } from "./TestDatabase.ts"

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
