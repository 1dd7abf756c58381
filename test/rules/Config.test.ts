/**
 * Timing settings read from the environment: their defaults, and a refusal naming the variable for a
 * value the service cannot run with (the process prints that line and exits: test/runtime/Process.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { AppConfig } from "../../src/platform/Config.ts"

const configFrom = (variables: Record<string, string>) =>
  AppConfig.pipe(
    Effect.provide(AppConfig.layer),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(variables)))),
    Effect.either
  )

describe("configuration", () => {
  it.effect("pings live status streams every 15 s, holds a dead request's Idempotency-Key 30 s and exports spans every 5 s by default", () =>
    Effect.gen(function*() {
      const config = yield* Effect.map(configFrom({}), Either.getOrThrow)
      expect(config.ssePingSeconds).toBe(15)
      expect(config.idempotencyLeaseSeconds).toBe(30)
      expect(config.telemetry.exportDelayMillis).toBe(5000)
    }))

  it.effect("takes other values of each", () =>
    Effect.gen(function*() {
      const config = yield* Effect.map(
        configFrom({ SSE_PING_SECONDS: "5", IDEMPOTENCY_LEASE_SECONDS: "5", OTEL_BSP_SCHEDULE_DELAY: "250" }),
        Either.getOrThrow
      )
      expect(config.ssePingSeconds).toBe(5)
      expect(config.idempotencyLeaseSeconds).toBe(5)
      expect(config.telemetry.exportDelayMillis).toBe(250)
    }))

  it.effect("refuses a lease under 5 s, and a ping interval or export delay that is not a positive whole number, naming the variable", () =>
    Effect.gen(function*() {
      for (const [name, value] of [
        ["IDEMPOTENCY_LEASE_SECONDS", "4"],
        ["SSE_PING_SECONDS", "0"],
        ["SSE_PING_SECONDS", "soon"],
        ["OTEL_BSP_SCHEDULE_DELAY", "-1"]
      ] as const) {
        const refused = yield* configFrom({ [name]: value })
        expect(Either.isLeft(refused), `${name}=${value}`).toBe(true)
        if (Either.isLeft(refused)) expect(refused.left.message).toContain(name)
      }
    }))
})
