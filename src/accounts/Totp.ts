/**
 * Time-based one-time passwords (RFC 6238) through otplib: 30-second steps, 6 digits, one step of
 * clock drift tolerated either way.
 */
import { Effect, Option } from "effect"
import { generate, generateSecret, generateURI, verify } from "otplib"

export const PRODUCT_NAME = "KHQR Merchant Platform"

export const newTotpSecret = (): string => generateSecret()

export const otpauthUrl = (secret: string, accountEmail: string): string =>
  generateURI({ issuer: PRODUCT_NAME, label: accountEmail, secret })

/**
 * The time step the code belongs to when it is valid now (or one step away); None otherwise.
 * otplib rejects (rather than answering "not valid") when the code is not six digits or the secret is not
 * base32, so a rejection is a non-match too: a caller's bad code must never become a 500.
 */
export const matchTotp = (secret: string, code: string): Effect.Effect<Option.Option<number>> =>
  Effect.tryPromise(() => verify({ secret, token: code, epochTolerance: 30 })).pipe(
    Effect.map((result) =>
      result.valid && "timeStep" in result && typeof result.timeStep === "number"
        ? Option.some(result.timeStep)
        : Option.none()
    ),
    Effect.orElseSucceed(() => Option.none<number>())
  )

/** The current code for a secret; used by tests and by nothing in the service. */
export const currentTotp = (secret: string, at?: number) =>
  Effect.promise(() => generate(at === undefined ? { secret } : { secret, epoch: at }))
