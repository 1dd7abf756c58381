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
 * A fixed Argon2id hash with the same parameters as real ones, of a password nobody knows. A login for
 * an unknown e-mail verifies against it, so it does exactly the work of a wrong password for a known
 * e-mail and the answer's timing does not tell which it was. (Computing a decoy at run time would add a
 * hash to the unknown-e-mail path, the very difference to hide.)
 */
export const DECOY_PASSWORD_HASH =
  "$argon2id$v=19$m=19456,t=2,p=1$44DPAd6Suo46vZXxKgBjCg$Wvk2qC7kPsjOdJhYG8CLtfShCLil2Ykj3g5KLkiYFPo"
