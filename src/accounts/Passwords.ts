/**
 * Password hashing with Argon2id at the OWASP minimum (19 MiB memory, 2 iterations, 1 lane), through
 * the Rust binding `@node-rs/argon2` (prebuilt binaries from the registry, no compiler needed).
 */
import { hash, verify } from "@node-rs/argon2"
import { Effect } from "effect"

// `algorithm: 2` is Argon2id (the package's const enum cannot be imported under verbatimModuleSyntax).
const OWASP_ARGON2ID = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export const hashPassword = (password: string) => Effect.promise(() => hash(password, OWASP_ARGON2ID))

export const verifyPassword = (passwordHash: string, password: string) =>
  Effect.promise(() => verify(passwordHash, password).catch(() => false))

/**
 * A hash no password matches, verified against when the e-mail is unknown, so an unknown e-mail costs
 * the same time as a wrong password and the answer's timing does not tell which it was.
 */
export const decoyPasswordHash = Effect.cached(hashPassword(crypto.randomUUID()))
