/**
 * The time rules of accounts under TestClock, through AccountsService against the suite's database:
 * session lifetime, password-reset and e-mail-verification links, the login and registration throttles
 * (blocked within the window, released after it, no wait for the owner) and TOTP's time steps. The clock
 * moves; nothing sleeps.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { currentTotp, matchTotp, newTotpSecret } from "../../src/accounts/Totp.ts"
import {
  AccountsService,
  EMAIL_VERIFICATION_LIFETIME_MS,
  loginLimits,
  PASSWORD_RESET_LIFETIME_MS,
  SESSION_LIFETIME_MS
} from "../../src/accounts/Service.ts"
import { AppConfig } from "../../src/platform/Config.ts"
import { TEST_PASSWORD, uniqueEmail, verificationToken } from "../support/Accounts.ts"
import { actingAs, FUTURE_START, servicesOnTestApp } from "../support/Services.ts"
import { TestApp } from "../support/TestApp.ts"
import { pause, withTestClockAt } from "../support/TestTime.ts"

const REGISTRATIONS_PER_HOUR = 3
const MINUTE = 60_000
const HOUR = 60 * MINUTE

let addresses = 0
/** A client address of its own, so one test's throttle counts never reach another's. */
const newAddress = () => Option.some(`198.51.100.${++addresses}`)

/** The sign-in limits as configured for the suite (the defaults). */
const signInLimits = Effect.map(AppConfig, (config) => loginLimits(config.rateLimits))

describe("account time rules", () => {
  layer(servicesOnTestApp({ registrationsPerAddressPerHour: REGISTRATIONS_PER_HOUR }), {
    timeout: 120_000,
    excludeTestServices: true
  })("with TestClock", (it) => {
    const register = (email = uniqueEmail(), address = newAddress()) =>
      Effect.flatMap(AccountsService, (accounts) => accounts.register({ email, password: TEST_PASSWORD }, address))

    /** A newly registered account's e-mail, and a client address of its own to log in from. */
    const newAccount = (label: string) =>
      Effect.gen(function*() {
        const email = uniqueEmail(label)
        yield* register(email)
        return { email, address: newAddress() }
      })

    // The test clock never moves by itself: a login that waited on it would never answer.
    const login = (email: string, password: string, address: Option.Option<string>) =>
      Effect.flatMap(AccountsService, (accounts) => accounts.login({ email, password }, address))

    /** The reset tokens mailed to `email`, oldest first, once `count` have arrived (the mail is sent in the background). */
    const resetTokens = (email: string, count: number) =>
      Effect.gen(function*() {
        const app = yield* TestApp
        while (true) {
          const mails = yield* Effect.promise(() => app.mailTo(email))
          const tokens = mails.flatMap((mail) => mail.body.match(/Reset token: (\S+)/)?.slice(1) ?? [])
          if (tokens.length >= count) return tokens
          yield* pause
        }
      })

    it.effect("a session is accepted until it expires, and refused from that moment", () =>
      withTestClockAt(FUTURE_START)(Effect.gen(function*() {
        const accounts = yield* AccountsService
        const grant = yield* register()
        expect(Date.parse(grant.expires_at)).toBe(FUTURE_START + SESSION_LIFETIME_MS)

        yield* TestClock.setTime(FUTURE_START + SESSION_LIFETIME_MS - 1)
        expect(Option.isSome(yield* accounts.authenticateSession(grant.access_token))).toBe(true)
        yield* TestClock.setTime(FUTURE_START + SESSION_LIFETIME_MS)
        expect(yield* accounts.authenticateSession(grant.access_token)).toEqual(Option.none())
      })))

    it.effect("a reset token works within its hour and is refused once the hour is over", () =>
      withTestClockAt(FUTURE_START)(Effect.gen(function*() {
        const accounts = yield* AccountsService
        const email = uniqueEmail("reset")
        yield* register(email)

        yield* accounts.forgotPassword({ email }, newAddress())
        const [expired] = yield* resetTokens(email, 1)
        yield* TestClock.setTime(FUTURE_START + PASSWORD_RESET_LIFETIME_MS)
        const refused = yield* Effect.flip(accounts.resetPassword({ token: expired!, password: "a new password 1" }))
        expect(refused._tag).toBe("Unauthorized")

        // A link asked for now is valid for the hour from now, to its last millisecond.
        yield* accounts.forgotPassword({ email }, newAddress())
        const [, fresh] = yield* resetTokens(email, 2)
        yield* TestClock.adjust(PASSWORD_RESET_LIFETIME_MS - 1)
        yield* accounts.resetPassword({ token: fresh!, password: "a new password 2" })
        const session = yield* login(email, "a new password 2", newAddress())
        expect(session.user.email).toBe(email)
      })))

    it.effect("a verification link works for 24 hours; one resent later works for its own 24 hours", () =>
      withTestClockAt(FUTURE_START)(Effect.gen(function*() {
        const app = yield* TestApp
        const accounts = yield* AccountsService
        const email = uniqueEmail("verify")
        const grant = yield* register(email)
        const first = yield* Effect.promise(() => verificationToken(app, email))
        const principal = Option.getOrThrow(yield* accounts.authenticateSession(grant.access_token))

        yield* TestClock.setTime(FUTURE_START + EMAIL_VERIFICATION_LIFETIME_MS)
        expect((yield* Effect.flip(accounts.verifyEmail({ token: first })))._tag).toBe("Unauthorized")

        yield* actingAs(principal)(accounts.resendVerification(newAddress()))
        const second = yield* Effect.promise(() => verificationToken(app, email))
        yield* TestClock.adjust(EMAIL_VERIFICATION_LIFETIME_MS - 1)
        yield* accounts.verifyEmail({ token: second })
        const me = yield* actingAs(principal)(accounts.me())
        expect(me.user.email_verified).toBe(true)
      })))

    it.effect("failed logins block an e-mail from one address for 15 minutes; the owner gets in elsewhere at once", () =>
      withTestClockAt(FUTURE_START)(Effect.gen(function*() {
        const { blockSeconds, limit } = (yield* signInLimits).perEmailAndAddress
        const { address: guesser, email } = yield* newAccount("throttled")

        for (let i = 0; i < limit; i++) {
          expect((yield* Effect.flip(login(email, "wrong password", guesser)))._tag).toBe("Unauthorized")
        }
        const blockedAt = yield* TestClock.currentTimeMillis
        // Blocked from that address, even with the right password, until the block is over.
        yield* TestClock.setTime(blockedAt + blockSeconds * 1000 - 1_000)
        const blocked = yield* Effect.flip(login(email, TEST_PASSWORD, guesser))
        expect(blocked).toMatchObject({ _tag: "RateLimited", retryAfterSeconds: 1 })

        // From another address the owner gets in, without waiting.
        const session = yield* login(email, TEST_PASSWORD, newAddress())
        expect(session.user.email).toBe(email)

        // Once the block is over, the first address is let in too.
        yield* TestClock.setTime(blockedAt + blockSeconds * 1000)
        expect((yield* login(email, TEST_PASSWORD, guesser)).user.email).toBe(email)
      })))

    it.effect("failures are counted per window: those of a window that is over do not add up to a block", () =>
      withTestClockAt(FUTURE_START)(Effect.gen(function*() {
        const { limit, windowSeconds } = (yield* signInLimits).perEmailAndAddress
        const { address, email } = yield* newAccount("window")

        for (let i = 0; i < limit - 1; i++) yield* Effect.flip(login(email, "wrong password", address))
        // One more failure just after the window: it opens a new window instead of completing the count…
        yield* TestClock.adjust(windowSeconds * 1000 + 1)
        yield* Effect.flip(login(email, "wrong password", address))
        // …so the next attempt is checked (a wrong password), not refused as throttled.
        expect((yield* Effect.flip(login(email, "wrong password", address)))._tag).toBe("Unauthorized")
      })))

    it.effect("registrations from one address are limited per hour, and allowed again after the hour", () =>
      withTestClockAt(FUTURE_START)(Effect.gen(function*() {
        const address = newAddress()
        for (let i = 0; i < REGISTRATIONS_PER_HOUR; i++) yield* register(uniqueEmail("bulk"), address)
        const blockedAt = yield* TestClock.currentTimeMillis

        yield* TestClock.setTime(blockedAt + HOUR - 1_000)
        const refused = yield* Effect.flip(register(uniqueEmail("bulk"), address))
        expect(refused).toMatchObject({ _tag: "RateLimited", retryAfterSeconds: 1 })
        // Another address is not affected.
        yield* register(uniqueEmail("other"), newAddress())

        yield* TestClock.setTime(blockedAt + HOUR)
        const grant = yield* register(uniqueEmail("bulk"), address)
        expect(grant.token_type).toBe("Bearer")
      })))
  })
})

describe("TOTP time steps", () => {
  it.effect("a code is accepted one 30-second step either side of now, not two", () =>
    withTestClockAt(FUTURE_START)(Effect.gen(function*() {
      const secret = newTotpSecret()
      const nowSeconds = FUTURE_START / 1000
      const codeAt = (offsetSeconds: number) => currentTotp(secret, nowSeconds + offsetSeconds)
      const step = Math.floor(nowSeconds / 30)

      expect(yield* matchTotp(secret, yield* codeAt(0))).toEqual(Option.some(step))
      expect(yield* matchTotp(secret, yield* codeAt(-30))).toEqual(Option.some(step - 1))
      expect(yield* matchTotp(secret, yield* codeAt(30))).toEqual(Option.some(step + 1))
      expect(yield* matchTotp(secret, yield* codeAt(-60))).toEqual(Option.none())
      expect(yield* matchTotp(secret, yield* codeAt(60))).toEqual(Option.none())

      // The same code, a minute later on the clock, is no longer valid.
      const code = yield* currentTotp(secret)
      yield* TestClock.adjust("60 seconds")
      expect(yield* matchTotp(secret, code)).toEqual(Option.none())
    })))
})
