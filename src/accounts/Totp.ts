/**
 * Time-based one-time passwords (RFC 6238) through otplib: 30-second steps, 6 digits, one step of
 * clock drift tolerated either way.
 */
import { Clock, Effect, Option } from "effect"
import { generate, generateSecret, generateURI, verify } from "otplib"

export const PRODUCT_NAME = "KHQR Merchant Platform"

export const newTotpSecret = (): string => generateSecret()

export const otpauthUrl = (secret: string, accountEmail: string): string =>
  generateURI({ issuer: PRODUCT_NAME, label: accountEmail, secret })

/** Now in Unix seconds, from Effect's Clock, so the code windows follow TestClock in tests. */
const currentEpochSeconds = Effect.map(Clock.currentTimeMillis, (millis) => Math.floor(millis / 1000))

/**
 * The time step the code belongs to when it is valid now (or one step away); None otherwise.
 * otplib rejects (rather than answering "not valid") when the code is not six digits or the secret is not
 * base32, so a rejection is a non-match too: a caller's bad code must never become a 500.
 */
export const matchTotp = (secret: string, code: string): Effect.Effect<Option.Option<number>> =>
  Effect.flatMap(currentEpochSeconds, (epoch) => Effect.tryPromise(() => verify({ secret, token: code, epoch, epochTolerance: 30 }))).pipe(
    Effect.map((result) =>
      result.valid && "timeStep" in result && typeof result.timeStep === "number"
        ? Option.some(result.timeStep)
        : Option.none()
    ),
    Effect.orElseSucceed(() => Option.none<number>())
  )

/** The code of a secret at `at` (Unix seconds; by default now); used by tests and by nothing in the service. */
export const currentTotp = (secret: string, at?: number) =>
  Effect.flatMap(currentEpochSeconds, (now) => Effect.promise(() => generate({ secret, epoch: at ?? now })))
