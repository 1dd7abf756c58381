/**
 * Secrets at rest, bearer tokens and their display.
 *
 * - Sealed secrets (provider credentials, MFA secrets, revealable webhook secrets) are AES-256-GCM under
 *   the master key, stored as the text `v1.<iv>.<tag>.<ciphertext>` (each part base64url), so a future
 *   algorithm or key scheme can be told apart by its version.
 * - Tokens (session tokens, API key secrets, reset tokens) are shown once and stored only as SHA-256
 *   hashes, compared in constant time.
 */
import * as nodeCrypto from "node:crypto"
import { createCipheriv, createDecipheriv, randomBytes, randomFillSync, timingSafeEqual } from "node:crypto"
import { Context, Data, Effect } from "effect"
import { traced } from "./Traced.ts"

// ---------------------------------------------------------------------------------------------
// Random base62
// ---------------------------------------------------------------------------------------------

const BASE62_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// 248 = 4 × 62. A byte below it maps onto the alphabet evenly with `% 62`; bytes from 248 up would
// favour the first eight characters, so they are thrown away (rejection sampling).
const UNBIASED_BYTE_LIMIT = 248

/**
 * Bytes from the system CSPRNG, drawn a block at a time and each handed out once. Asking the CSPRNG for
 * the few bytes of one identifier (a Buffer and a call into the native layer each time) was ~4 µs of an
 * id's ~4.5 µs, and a payment's creation makes several; Node's own `randomUUID` keeps such a block too.
 */
const RANDOM_BLOCK_BYTES = 4096
const randomBlock = Buffer.allocUnsafe(RANDOM_BLOCK_BYTES)
let randomBlockUsed = RANDOM_BLOCK_BYTES

const nextRandomByte = (): number => {
  if (randomBlockUsed === RANDOM_BLOCK_BYTES) {
    randomFillSync(randomBlock)
    randomBlockUsed = 0
  }
  return randomBlock[randomBlockUsed++]!
}

/** A string of `length` characters drawn uniformly from [0-9A-Za-z] with the system CSPRNG. */
export const randomBase62 = (length: number): string => {
  let result = ""
  while (result.length < length) {
    const byte = nextRandomByte()
    if (byte < UNBIASED_BYTE_LIMIT) result += BASE62_ALPHABET[byte % 62]
  }
  return result
}

// ---------------------------------------------------------------------------------------------
// Sealed secrets: AES-256-GCM under the master key
// ---------------------------------------------------------------------------------------------

const MASTER_KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
const FORMAT_VERSION = "v1"
// The version is authenticated too, so a sealed text cannot be relabelled as another format.
const FORMAT_AAD = Buffer.from(FORMAT_VERSION, "utf8")

/** A sealed secret could not be opened: wrong key, altered text, or a format this code does not know. */
export class DecryptionFailed extends Data.TaggedError("DecryptionFailed")<{ readonly message: string }> {}

const assertMasterKey = (key: Uint8Array): void => {
  // A key of the wrong size is a configuration bug, never a request's fault: fail loudly.
  if (key.length !== MASTER_KEY_BYTES) {
    throw new Error(`The master key must be ${MASTER_KEY_BYTES} bytes, got ${key.length}`)
  }
}

/**
 * Base64url decoding that accepts only the one canonical spelling of each byte string. Node's decoder
 * skips unknown characters and ignores the spare low bits of the last character, so without this
 * check some edits of the sealed text would go unnoticed before the authentication tag is even used.
 */
const decodeCanonicalBase64Url = (text: string): Buffer | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  const bytes = Buffer.from(text, "base64url")
  return bytes.toString("base64url") === text ? bytes : undefined
}

/** Encrypts `plaintext` under the 32-byte master key; every call uses a fresh random IV. */
export const encryptSecret = (key: Uint8Array, plaintext: string): string => {
  assertMasterKey(key)
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  cipher.setAAD(FORMAT_AAD)
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  const tag = cipher.getAuthTag()
  return [FORMAT_VERSION, iv.toString("base64url"), tag.toString("base64url"), ciphertext.toString("base64url")]
    .join(".")
}

/** Opens a text made by `encryptSecret`; fails with `DecryptionFailed` unless it is intact and under `key`. */
export const decryptSecret = (key: Uint8Array, sealed: string): Effect.Effect<string, DecryptionFailed> =>
  Effect.suspend(() => {
    assertMasterKey(key)
    const parts = sealed.split(".")
    if (parts.length !== 4) {
      return Effect.fail(new DecryptionFailed({ message: "Not a sealed secret: expected four dot-separated parts" }))
    }
    const [version, ivText, tagText, ciphertextText] = parts as [string, string, string, string]
    if (version !== FORMAT_VERSION) {
      return Effect.fail(new DecryptionFailed({ message: `Unknown sealed secret format "${version}"` }))
    }
    const iv = decodeCanonicalBase64Url(ivText)
    const tag = decodeCanonicalBase64Url(tagText)
    const ciphertext = decodeCanonicalBase64Url(ciphertextText)
    if (iv?.length !== IV_BYTES || tag?.length !== TAG_BYTES || ciphertext === undefined) {
      return Effect.fail(new DecryptionFailed({ message: "Malformed sealed secret" }))
    }
    return Effect.try({
      try: () => {
        const decipher = createDecipheriv("aes-256-gcm", key, iv)
        decipher.setAAD(FORMAT_AAD)
        decipher.setAuthTag(tag)
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8")
      },
      catch: () => new DecryptionFailed({ message: "Sealed secret failed authentication: wrong key or altered data" })
    })
  })

/** The 32-byte key that seals secrets at rest; the runtime provides it from `MASTER_KEY`. */
export class MasterKey extends Context.Tag("platform/MasterKey")<MasterKey, { readonly key: Uint8Array }>() {}

/** Seals and opens secrets at rest under the master key. */
export class SecretBox extends Effect.Service<SecretBox>()("platform/SecretBox", {
  effect: Effect.gen(function*() {
    const { key } = yield* MasterKey
    if (key.length !== MASTER_KEY_BYTES) {
      return yield* Effect.dieMessage(`The master key must be ${MASTER_KEY_BYTES} bytes, got ${key.length}`)
    }

    const seal = traced("SecretBox.seal")(function*(plaintext: string) {
      return yield* Effect.sync(() => encryptSecret(key, plaintext))
    })

    // Everything we open was sealed by us under this key, so a failure means lost or corrupted data
    // (or a changed master key): a defect to alert on, not an error a caller could handle.
    const open = traced("SecretBox.open")(function*(sealed: string) {
      return yield* Effect.orDie(decryptSecret(key, sealed))
    })

    return { seal, open } as const
  })
}) {}

// ---------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------

/**
 * A bearer secret with `bytes` bytes of entropy, spelled in base62 ([0-9A-Za-z]): 43 characters for the
 * default 32 bytes. Base62 rather than base64url because it has no `_` or `-`: a prefixed secret such
 * as `sk_live_<token>` keeps one unambiguous prefix (see `maskSecret`) and selects with a double click.
 */
export const randomToken = (bytes = 32): string => randomBase62(Math.ceil((bytes * 8) / Math.log2(62)))

/**
 * The SHA-256 hex digest of a text (as UTF-8). The one-shot `hash` (Node 20.12+) where there is one: a
 * third of a Hash object's cost for a short input, and every API request hashes its key. Runtimes without
 * it (older Node, Deno) make the Hash object.
 */
export const sha256Hex: (text: string) => string = typeof nodeCrypto.hash === "function"
  ? (text) => nodeCrypto.hash("sha256", text, "hex")
  : (text) => nodeCrypto.createHash("sha256").update(text, "utf8").digest("hex")

/** The SHA-256 hex digest under which a token is stored; the token itself is never stored. */
export const hashToken = (token: string): string => sha256Hex(token)

/** Whether `token` is the one whose `hashToken` is `storedHash`, compared in constant time. */
export const tokensMatch = (token: string, storedHash: string): boolean => {
  const candidate = Buffer.from(hashToken(token), "utf8")
  const stored = Buffer.from(storedHash, "utf8")
  // timingSafeEqual throws on unequal lengths; a stored hash of another length simply does not match.
  return candidate.length === stored.length && timingSafeEqual(candidate, stored)
}

// ---------------------------------------------------------------------------------------------
// Display
// ---------------------------------------------------------------------------------------------

const MASK_CHARACTER = "*"
// A label such as `sk_test_` or `whsec_`: lowercase words ending in `_`. Anything else before the last
// `_` might be random secret material, so it is not shown.
const SECRET_LABEL = /^[a-z]+(?:_[a-z]+)*_$/
const VISIBLE_TAIL = 4
// With fewer characters after the label, the last four would give away too large a share of the secret.
const SHORTEST_BODY_WITH_TAIL = 16

/**
 * A secret as it may be shown again after creation: its label and last four characters, e.g.
 * `sk_test_***…***a1B2`, with every other character replaced by `*` (ASCII, safe in logs and CSV).
 * Short secrets are masked entirely.
 */
export const maskSecret = (secret: string): string => {
  const characters = Array.from(secret)
  const labelEnd = secret.lastIndexOf("_") + 1
  const label = labelEnd > 0 && SECRET_LABEL.test(secret.slice(0, labelEnd)) ? secret.slice(0, labelEnd) : ""
  const body = Array.from(secret.slice(label.length))
  if (body.length < SHORTEST_BODY_WITH_TAIL) return MASK_CHARACTER.repeat(characters.length)
  return label + MASK_CHARACTER.repeat(body.length - VISIBLE_TAIL) + body.slice(-VISIBLE_TAIL).join("")
}
