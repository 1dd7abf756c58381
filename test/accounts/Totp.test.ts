/**
 * TOTP matching: a code otplib refuses to even check (not six digits, a secret that is not base32) is a
 * non-match, never a defect — a caller's malformed code must answer 401, not 500.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { currentTotp, matchTotp, newTotpSecret } from "../../src/accounts/Totp.ts"
import { signUp } from "../support/Accounts.ts"
import { clientAs, expectFailure } from "../support/Client.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

describe("matchTotp", () => {
  it.effect("matches the current code and answers its time step", () =>
    Effect.gen(function*() {
      // Both read the Clock: the test clock, set to a known time.
      yield* TestClock.setTime(Date.parse("2026-03-01T09:00:00Z"))
      const secret = newTotpSecret()
      const step = yield* matchTotp(secret, yield* currentTotp(secret))
      expect(Option.isSome(step)).toBe(true)
      expect(Option.getOrThrow(step)).toBe(Math.floor(Date.parse("2026-03-01T09:00:00Z") / 1000 / 30))
    }))

  it.effect("answers no match for a well-formed wrong code", () =>
    Effect.gen(function*() {
      const secret = newTotpSecret()
      const wrong = (yield* currentTotp(secret)) === "000000" ? "111111" : "000000"
      expect(yield* matchTotp(secret, wrong)).toEqual(Option.none())
    }))

  // Each of these makes otplib reject its promise instead of answering "not valid".
  for (
    const [label, secret, code] of [
      ["a code of five digits", newTotpSecret(), "12345"],
      ["a code with letters", newTotpSecret(), "12ab56"],
      ["an empty code", newTotpSecret(), ""],
      ["a secret that is not base32", "!!!not-base32!!!", "123456"],
      ["an empty secret", "", "123456"]
    ] as const
  ) {
    it.effect(`answers no match, not a defect, for ${label}`, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(matchTotp(secret, code))
        expect(exit._tag).toBe("Success")
        expect(yield* matchTotp(secret, code)).toEqual(Option.none())
      }))
  }
})

describe("a malformed MFA code over HTTP", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("login", (it) => {
    it.effect("is a 401 at login, as a wrong code is, never a 500", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const user = yield* Effect.promise(() => signUp(app))
        const api = yield* clientAs(app, user.token)
        const setup = yield* api.session.mfaSetup()
        const enabled = yield* api.session.mfaEnable({ payload: { code: yield* currentTotp(setup.secret) } })
        expect(enabled.mfa_enabled).toBe(true)

        // `mfa_code` at login is any string on the wire, so a malformed one reaches the TOTP check.
        for (const malformed of ["12ab", "1234567", "12 34 56"]) {
          const login = app.client.auth.login({ payload: { email: user.email, password: user.password, mfa_code: malformed } })
          yield* expectFailure(login, "Unauthorized", undefined, `mfa_code ${JSON.stringify(malformed)}`)
        }
      }))
  })
})
